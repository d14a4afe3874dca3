//! TCP Hybla (Caini & Firrincieli, "TCP Hybla: a TCP enhancement for heterogeneous networks",
//! Int. J. Satellite Communications and Networking 22(5), 2004, §3): a long-RTT flow grows its
//! window as fast, in segments per second, as a flow with the reference RTT0 does. With the
//! normalised RTT ρ = RTT/RTT0, each ACK adds 2^ρ − 1 segments in slow start and ρ²/w in
//! congestion avoidance (eqs. 6–7); losses halve the window as Reno does.
//!
//! Choices:
//! - RTT0 = 25 ms, the paper's (and Linux's tcp_hybla.c); ns-3's `TcpHybla` defaults to
//!   `RRTT` = 50 ms, so ρ is twice ns-3's on the same path: set RTT0 there (or
//!   `tcp.hybla.rtt0_ms: 50` here) for a like-for-like comparison.
//! - ρ comes from the lowest RTT seen (`SocketState::min_rtt`), held at least 1 so a path
//!   shorter than RTT0 is Standard TCP (ns-3, Linux); 1 before the first sample.
//! - Slow start stops at ssthresh rather than overshooting it by up to 2^ρ − 1 in one ACK
//!   (ns-3 does the same). The paper's pacing and its SACK/timestamps recommendations: SACK
//!   (RFC 6675) recovery is on, NewReno with `sack: false`; no pacing.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{aimd, CongestionControl};
use crate::tcp::{Recovery, SocketState};
use crate::time::{to_secs, SimTime};

/// Hybla's knob, a flow's `tcp.hybla` (`{"rtt0_ms": 25}`).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct HyblaParams {
    /// RTT0, milliseconds: the reference round-trip time whose growth every flow matches (the
    /// paper's and Linux's 25; ns-3's `RRTT` is 50).
    pub rtt0_ms: f64,
}

impl Default for HyblaParams {
    fn default() -> Self {
        HyblaParams { rtt0_ms: 25.0 }
    }
}

/// ρ = RTT/RTT0, at least 1 (1 before any RTT is known); `rtt0_s` in seconds.
pub fn rho(min_rtt: Option<SimTime>, rtt0_s: f64) -> f64 {
    min_rtt.map_or(1.0, |rtt| (to_secs(rtt) / rtt0_s).max(1.0))
}

pub struct Hybla {
    recovery: Recovery,
    /// RTT0, seconds.
    rtt0_s: f64,
}

impl Hybla {
    pub fn new(p: &HyblaParams, sack: Option<bool>) -> Self {
        Hybla {
            recovery: aimd::sack_or_newreno(sack),
            rtt0_s: p.rtt0_ms / 1e3,
        }
    }
}

impl CongestionControl for Hybla {
    fn name(&self) -> &'static str {
        "hybla"
    }

    fn recovery(&self) -> Recovery {
        self.recovery
    }

    fn on_ack(&mut self, s: &mut SocketState, _acked: u32, _now: SimTime) {
        let rho = rho(s.min_rtt, self.rtt0_s);
        if s.in_slow_start() {
            // Eq. 6: 2^ρ − 1 segments per ACK, no further than ssthresh.
            s.cwnd = (s.cwnd + rho.exp2() - 1.0).min(s.ssthresh);
        } else {
            // Eq. 7: ρ²/w per ACK.
            s.cwnd += rho * rho / s.cwnd;
        }
        s.cwnd = s.cwnd.min(s.max_window as f64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: SimTime = 1_000_000;

    #[test]
    fn rho_is_the_rtt_over_25_ms_and_never_below_one() {
        assert_eq!(rho(Some(100 * MS), 0.025), 4.0);
        assert_eq!(rho(Some(10 * MS), 0.025), 1.0);
        assert_eq!(rho(None, 0.025), 1.0);
    }

    #[test]
    fn at_four_times_the_reference_rtt_slow_start_adds_fifteen_segments_per_ack() {
        let mut cc = Hybla::new(&HyblaParams::default(), None);
        let mut s = SocketState::new(2.0, 100.0, 10_000);
        s.min_rtt = Some(100 * MS);
        cc.on_ack(&mut s, 1, 0);
        assert_eq!(s.cwnd, 17.0, "2 + 2⁴ − 1");
        for _ in 0..6 {
            cc.on_ack(&mut s, 1, 0);
        }
        assert_eq!(s.cwnd, 100.0, "17 + 6 · 15 = 107 stops at ssthresh");
    }

    #[test]
    fn at_four_times_the_reference_rtt_avoidance_adds_sixteen_segments_per_round_trip() {
        let mut cc = Hybla::new(&HyblaParams::default(), None);
        let mut s = SocketState::new(200.0, 100.0, 10_000);
        s.min_rtt = Some(100 * MS);
        for _ in 0..200 {
            cc.on_ack(&mut s, 1, 0);
        }
        assert!((s.cwnd - 216.0).abs() < 0.7, "{}", s.cwnd);
    }

    #[test]
    fn at_or_below_the_reference_rtt_it_is_standard_tcp_and_a_loss_halves_the_window() {
        let mut cc = Hybla::new(&HyblaParams::default(), None);
        let mut s = SocketState::new(20.0, 10.0, 10_000);
        s.min_rtt = Some(20 * MS);
        cc.on_ack(&mut s, 1, 0);
        assert!((s.cwnd - 20.05).abs() < 1e-12, "{}", s.cwnd);
        assert!((cc.ssthresh(&s, 0) - 10.025).abs() < 1e-12);
    }
}
