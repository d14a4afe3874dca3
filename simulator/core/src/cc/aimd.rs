//! Additive increase, multiplicative decrease: the window policy shared by the loss-based
//! variants, which differ only in their loss recovery. Slow start below ssthresh, then
//! congestion avoidance, per ACK rather than per segment acknowledged (no Appropriate Byte
//! Counting), as ns-2's TCP agents and paper 000's model assume (RFC 5681 §3.1 allows both).

use super::CongestionControl;
use crate::tcp::{Recovery, SocketState};
use crate::time::SimTime;

pub struct Aimd {
    name: &'static str,
    recovery: Recovery,
}

impl Aimd {
    pub const fn new(name: &'static str, recovery: Recovery) -> Self {
        Aimd { name, recovery }
    }
}

impl CongestionControl for Aimd {
    fn name(&self) -> &'static str {
        self.name
    }

    fn recovery(&self) -> Recovery {
        self.recovery
    }

    fn on_ack(&mut self, s: &mut SocketState, _acked: u32, _now: SimTime) {
        increase(s);
    }
}

/// One ACK's worth of RFC 5681 growth: +1 segment in slow start, +1/cwnd in avoidance.
pub fn increase(s: &mut SocketState) {
    increase_by(s, 1.0);
}

/// One ACK's worth of growth for a variant that slow-starts by RFC 5681 and adds `a` segments
/// per round trip in avoidance (Reno's 1, or its own a(w)): +1 or +a/cwnd.
pub fn increase_by(s: &mut SocketState, a: f64) {
    if s.in_slow_start() {
        s.cwnd += 1.0;
    } else {
        s.cwnd += a / s.cwnd;
    }
    // Growth past the receiver window would be meaningless (Linux clamps the same way).
    s.cwnd = s.cwnd.min(s.max_window as f64);
}

/// The loss recovery of the variants ns-3 and Linux run with SACK on: RFC 6675, or RFC 6582
/// NewReno (Slow-but-Steady) when the scenario turns `sack` off.
pub fn sack_or_newreno(sack: Option<bool>) -> Recovery {
    if sack == Some(false) {
        Recovery::NewReno(crate::tcp::PartialAckTimer::EveryPartialAck)
    } else {
        Recovery::Sack
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slow_start_adds_one_segment_per_ack_and_avoidance_one_per_window() {
        let mut s = SocketState::new(2.0, 8.0, 1000);
        for _ in 0..6 {
            increase(&mut s);
        }
        assert_eq!(s.cwnd, 8.0);
        for _ in 0..8 {
            increase(&mut s);
        }
        assert!((s.cwnd - 9.0).abs() < 0.1, "{}", s.cwnd);
    }

    #[test]
    fn the_window_never_grows_past_the_receiver_window() {
        let mut s = SocketState::new(2.0, 1e9, 5);
        for _ in 0..100 {
            increase(&mut s);
        }
        assert_eq!(s.cwnd, 5.0);
    }

    #[test]
    fn the_default_threshold_halves_the_uninflated_window_but_keeps_two_segments() {
        let mut cc = Aimd::new("x", Recovery::Reno);
        let mut s = SocketState::new(20.0, 1e9, 1000);
        assert_eq!(cc.ssthresh(&s, 0), 10.0);
        // In fast recovery the inflated cwnd does not count: ssthresh (10) is the window.
        s.ca_state = crate::tcp::CaState::Recovery;
        s.ssthresh = 10.0;
        s.cwnd = 25.0;
        assert_eq!(cc.ssthresh(&s, 0), 5.0);
        s.cwnd = 3.0;
        s.ca_state = crate::tcp::CaState::Open;
        assert_eq!(cc.ssthresh(&s, 0), 2.0);
    }
}
