//! Scalable TCP (Kelly, "Scalable TCP: Improving Performance in Highspeed Wide Area
//! Networks", ACM CCR 33(2), 2003, §2): above a legacy window, every ACK in congestion
//! avoidance adds a = 0.01 segment and a congestion event takes b = 1/8 of the window away,
//! so the time to recover from a loss is the same at any rate (a multiplicative increase of
//! 1 % per round trip). At or below the legacy window it is Standard TCP (+1/w, halving).
//!
//! Choices:
//! - The legacy window is 50 segments, the window at which ns-3's `TcpScalable` (`AIFactor`)
//!   and Linux's tcp_scalable.c (TCP_SCALABLE_AI_CNT) switch.
//! - Above it ns-3 and Linux add one segment per 50 ACKs, 0.02 per ACK, twice Kelly's a; tcpsim
//!   follows the paper's 0.01 (so between 50 and 100 segments it grows more slowly than Reno,
//!   as the paper's rule does).
//! - ns-3 and Linux take 1/8 off at every window, the legacy range included; tcpsim halves
//!   there, as the paper's legacy mode does. ns-3 reduces from bytes in flight, tcpsim from
//!   the window in use (the same outside fast recovery).
//! - Slow start is RFC 5681's; recovery RFC 6675 SACK, or NewReno with `sack: false`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{aimd, CongestionControl};
use crate::tcp::{Recovery, SocketState};
use crate::time::SimTime;

/// Scalable TCP's two knobs, a flow's `tcp.scalable` (`{"a": 0.01, "b": 0.125}`), Kelly's.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct ScalableParams {
    /// a, segments added per ACK above the legacy window (Kelly §2: 0.01).
    pub a: f64,
    /// b, the fraction of the window a congestion event takes away above the legacy window
    /// (Kelly §2: 0.125).
    pub b: f64,
}

impl Default for ScalableParams {
    fn default() -> Self {
        ScalableParams { a: 0.01, b: 0.125 }
    }
}

/// Segments: at or below this window Scalable TCP is Standard TCP (ns-3's and Linux's 50).
pub const LEGACY_WINDOW: f64 = 50.0;

pub struct Scalable {
    recovery: Recovery,
    p: ScalableParams,
}

impl Scalable {
    pub fn new(p: &ScalableParams, sack: Option<bool>) -> Self {
        Scalable {
            recovery: aimd::sack_or_newreno(sack),
            p: p.clone(),
        }
    }
}

impl CongestionControl for Scalable {
    fn name(&self) -> &'static str {
        "scalable"
    }

    fn recovery(&self) -> Recovery {
        self.recovery
    }

    fn on_ack(&mut self, s: &mut SocketState, _acked: u32, _now: SimTime) {
        if s.in_slow_start() || s.cwnd <= LEGACY_WINDOW {
            aimd::increase(s);
            return;
        }
        s.cwnd = (s.cwnd + self.p.a).min(s.max_window as f64);
    }

    fn ssthresh(&mut self, s: &SocketState, _now: SimTime) -> f64 {
        let w = s.window_in_use();
        let keep = if w > LEGACY_WINDOW { 1.0 - self.p.b } else { 0.5 };
        (w * keep).max(2.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn above_the_legacy_window_each_ack_adds_a_hundredth_of_a_segment() {
        let mut cc = Scalable::new(&ScalableParams::default(), None);
        let mut s = SocketState::new(200.0, 100.0, 100_000);
        cc.on_ack(&mut s, 1, 0);
        assert!((s.cwnd - 200.01).abs() < 1e-12, "{}", s.cwnd);
        // A round trip of 200 ACKs: 1 % more window, whatever the window.
        for _ in 1..200 {
            cc.on_ack(&mut s, 1, 0);
        }
        assert!((s.cwnd - 202.0).abs() < 1e-9, "{}", s.cwnd);
    }

    #[test]
    fn above_the_legacy_window_a_loss_takes_an_eighth_of_the_window() {
        let mut cc = Scalable::new(&ScalableParams::default(), None);
        let s = SocketState::new(200.0, 100.0, 100_000);
        assert_eq!(cc.ssthresh(&s, 0), 175.0);
    }

    #[test]
    fn at_or_below_the_legacy_window_it_is_standard_tcp() {
        let mut cc = Scalable::new(&ScalableParams::default(), None);
        let mut s = SocketState::new(40.0, 20.0, 100_000);
        assert_eq!(cc.ssthresh(&s, 0), 20.0);
        cc.on_ack(&mut s, 1, 0);
        assert!((s.cwnd - 40.025).abs() < 1e-12, "+1/w: {}", s.cwnd);
    }

    #[test]
    fn slow_start_is_one_segment_per_ack_at_any_window() {
        let mut cc = Scalable::new(&ScalableParams::default(), None);
        let mut s = SocketState::new(100.0, f64::INFINITY, 100_000);
        cc.on_ack(&mut s, 1, 0);
        assert_eq!(s.cwnd, 101.0);
    }
}
