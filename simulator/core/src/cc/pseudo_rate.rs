//! Pseudo-Rate TCP (Chen & Chen, "Pseudo-Rate TCP: a congestion avoidance scheme with nearly
//! optimized fairness and throughput", Computer Communications 1999), as paper 003 §3.4
//! describes it: Vegas with two changes.
//!
//! 1. One RTT measurement per cycle: one timed segment, rather than Vegas's per-packet
//!    timing; BaseRTT is the least of these measurements.
//! 2. Each cycle a window bound = BaseRTT × service rate + queue length. If it is above cwnd,
//!    cwnd grows to it exponentially (one segment per ACK, never past it); if below, cwnd drops
//!    to it directly (Vegas takes one segment a round).
//!
//! Choices where the description is open:
//! - The service rate is the flow's pseudo-rate, cwnd / RTT of the cycle's measurement, so the
//!   bound is cwnd · BaseRTT / RTT + q: the window that keeps exactly q segments of this flow
//!   queued at the bottleneck. A single target instead of Vegas's [alpha, beta] band makes
//!   every flow settle at the same backlog whatever its RTT (the fairness paper 003 §4.2
//!   reports). q is `PseudoRateParams::queue_pkts`, 2 segments by default.
//! - The timed segment is the first one sent once cwnd has reached the bound (or dropped to
//!   it), so its RTT sees the queue the new window makes; the cycle ends when it is
//!   acknowledged. Timing the first segment of each round instead sees the queue of the
//!   window before, and the exponential increase then overshoots and oscillates.
//! - Slow start doubles per round trip until a bound falls below cwnd, then drops to it
//!   (Vegas's early exit, with direct drop). Losses are repaired as Reno repairs them, as this
//!   crate's Vegas does. Behaviour: `tests/behaviour.rs`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{aimd, CongestionControl};
use crate::tcp::{Recovery, SocketState};
use crate::time::SimTime;

/// Pseudo-Rate's knob, a flow's `tcp.pseudo_rate` (`{"queue_pkts": 2.0}`).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct PseudoRateParams {
    /// The queue length q in the window bound, segments (> 0): the backlog of its own the flow
    /// keeps at the bottleneck. Neither paper 003 nor the description at hand gives Chen &
    /// Chen's value; 2 sits between Vegas's default alpha (1) and beta (3), the band
    /// Pseudo-Rate replaces with one target.
    pub queue_pkts: f64,
}

impl Default for PseudoRateParams {
    fn default() -> Self {
        PseudoRateParams { queue_pkts: 2.0 }
    }
}

pub struct PseudoRate {
    /// q, segments.
    queue_pkts: f64,
    /// The least RTT of the timed segments: the propagation delay estimate.
    base_rtt: Option<SimTime>,
    /// The RTT the latest ACK measured (the timed segment's, when its ACK is the one at hand).
    last_rtt: Option<SimTime>,
    /// The timed segment: the cycle ends when it is acknowledged. None while cwnd still grows
    /// toward the bound.
    timed: Option<u32>,
    /// The last window bound, segments; cwnd grows toward it and never past it.
    bound: Option<f64>,
}

impl PseudoRate {
    pub fn new(params: &PseudoRateParams) -> Self {
        PseudoRate {
            queue_pkts: params.queue_pkts,
            base_rtt: None,
            last_rtt: None,
            timed: None,
            bound: None,
        }
    }

    /// The cycle's measurement is in: BaseRTT × (cwnd / RTT) + q, and the direct drop.
    fn end_cycle(&mut self, s: &mut SocketState) {
        let (Some(rtt), Some(base)) = (self.last_rtt, self.base_rtt) else {
            return;
        };
        let bound = (s.cwnd * base as f64 / rtt as f64 + self.queue_pkts).max(2.0);
        self.bound = Some(bound);
        if bound < s.cwnd {
            s.cwnd = bound;
            s.ssthresh = s.ssthresh.min(s.cwnd); // slow start, if it was on, is over
        }
    }
}

impl CongestionControl for PseudoRate {
    fn own_slow_start(&self) -> bool {
        true
    }

    fn name(&self) -> &'static str {
        "pseudo-rate"
    }

    fn recovery(&self) -> Recovery {
        Recovery::Reno
    }

    fn on_rtt_sample(&mut self, _s: &SocketState, rtt: SimTime, _now: SimTime) {
        self.last_rtt = Some(rtt);
        self.base_rtt = Some(self.base_rtt.map_or(rtt, |b| b.min(rtt)));
    }

    fn on_ack(&mut self, s: &mut SocketState, _acked: u32, _now: SimTime) {
        if self.timed.is_some_and(|t| s.snd_una > t) {
            self.end_cycle(s);
            self.timed = None;
        }
        let max = s.max_window as f64;
        if s.in_slow_start() {
            aimd::increase(s);
        } else {
            match self.bound {
                Some(bound) if s.cwnd < bound => s.cwnd = (s.cwnd + 1.0).min(bound).min(max),
                Some(_) => {}
                None => aimd::increase(s),
            }
        }
        let settled = s.in_slow_start() || s.cwnd >= max || self.bound.is_none_or(|b| s.cwnd >= b);
        if self.timed.is_none() && settled {
            // The last segment the window lets out after this ACK, or the next one to go.
            self.timed = Some((s.snd_una + s.window()).saturating_sub(1).max(s.snd_nxt));
        }
    }

    fn on_timeout(&mut self, _s: &mut SocketState, _now: SimTime) {
        // Measurements from before the timeout describe a different queue.
        self.timed = None;
        self.bound = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: SimTime = 1_000_000;

    #[test]
    fn a_bound_below_the_window_drops_it_there_at_once() {
        // Vegas would shrink by one segment this round (`cc/vegas.rs`); pseudo-rate drops to
        // the bound: 40 · 100/200 + 2 = 22.
        let mut cc = PseudoRate {
            base_rtt: Some(100 * MS),
            timed: Some(10),
            bound: Some(40.0),
            ..PseudoRate::new(&PseudoRateParams::default())
        };
        let mut s = SocketState::new(40.0, 20.0, 10_000);
        s.snd_una = 11;
        s.snd_nxt = 50;
        cc.on_rtt_sample(&s, 200 * MS, 0);
        cc.on_ack(&mut s, 1, 0);
        assert_eq!((s.cwnd, cc.bound), (22.0, Some(22.0)));
        assert!(!s.in_slow_start());
        assert_eq!(cc.timed, Some(50), "the next segment to go is timed");
    }

    #[test]
    fn a_bound_above_the_window_is_reached_one_segment_per_ack_and_never_passed() {
        let mut cc = PseudoRate::new(&PseudoRateParams::default());
        let mut s = SocketState::new(20.0, 1.0, 10_000);
        s.snd_nxt = 20;
        s.snd_una = 1;
        cc.on_rtt_sample(&s, 100 * MS, 0);
        cc.on_ack(&mut s, 1, 0); // no bound yet: Reno's increase; segment 20 is timed
        assert_eq!(cc.timed, Some(20));
        s.snd_una = 21;
        s.snd_nxt = 21;
        cc.on_rtt_sample(&s, 100 * MS, 0);
        cc.on_ack(&mut s, 1, 0);
        assert!((cc.bound.unwrap() - 22.05).abs() < 1e-9, "{:?}", cc.bound);
        assert!((s.cwnd - 21.05).abs() < 1e-9);
        assert_eq!(cc.timed, None, "not timed until the bound is reached");
        for _ in 0..5 {
            s.snd_una += 1;
            cc.on_ack(&mut s, 1, 0);
        }
        assert!((s.cwnd - 22.05).abs() < 1e-9, "never past the bound: {}", s.cwnd);
        assert!(cc.timed.is_some());
    }

    #[test]
    fn q_is_the_backlog_the_window_bound_keeps_queued() {
        // Measured RTT twice BaseRTT at cwnd 40: 20 segments fill the pipe, the bound keeps q
        // more of them queued.
        for q in [1.0, 2.0, 5.0] {
            let mut cc = PseudoRate {
                base_rtt: Some(100 * MS),
                timed: Some(10),
                ..PseudoRate::new(&PseudoRateParams { queue_pkts: q })
            };
            let mut s = SocketState::new(40.0, 20.0, 10_000);
            s.snd_una = 11;
            s.snd_nxt = 50;
            cc.on_rtt_sample(&s, 200 * MS, 0);
            cc.on_ack(&mut s, 1, 0);
            assert_eq!(s.cwnd - 20.0, q, "q {q}: cwnd {}", s.cwnd);
        }
    }
}
