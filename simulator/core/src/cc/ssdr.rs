//! SSDR: Smooth-Start and Dynamic Recovery (Wang & Williamson, "A New Scheme for TCP
//! Congestion Control: Smooth-Start and Dynamic Recovery", MASCOTS 1998; paper 003 §3.3), two
//! sender-only changes to Reno.
//!
//! **Smooth start** replaces slow start with "a more graceful ramp of cwnd" so that the ramp
//! ends without the burst of losses slow start causes. The original's text was not at hand;
//! its two parameters and their defaults follow one published reading (the ns-3 SmoothStart
//! model, grain number 2 and depth 2): below ssthresh / 2^depth the window grows as in slow
//! start, one segment per ACK; from there to ssthresh it grows one segment per N ACKs, N
//! starting at the grain number and growing by one at each step, so growth slows as the
//! window nears ssthresh while staying faster than congestion avoidance. With no ssthresh yet
//! (a new connection without `initial_ssthresh_pkts`) there is nothing to approach, and the
//! start is slow start; after a timeout, or with an initial ssthresh, it is smooth.
//!
//! **Dynamic recovery** replaces fast recovery (`Recovery::Dynamic`, `tcp/recovery/dynamic.rs`):
//! a damping phase sending one segment per two ACKs, as Rate-Halving does, then one per ACK
//! while partial ACKs repair the other holes, for as long as the losses take; no SACK.
//! Behaviour: `tests/behaviour.rs`.

use super::{aimd, CongestionControl};
use crate::tcp::{Recovery, SocketState};
use crate::time::SimTime;

/// ACKs per one-segment step when the smooth phase begins.
pub const GRAIN_NUMBER: u32 = 2;
/// The smooth phase begins at ssthresh / 2^DEPTH.
pub const DEPTH: i32 = 2;

#[derive(Default)]
pub struct Ssdr {
    /// ACKs the next one-segment step of the smooth phase needs (0: not in the smooth phase).
    acks_per_step: u32,
    /// ACKs counted toward it.
    acks: u32,
}

impl Ssdr {
    pub fn new() -> Self {
        Ssdr::default()
    }
}

impl CongestionControl for Ssdr {
    fn name(&self) -> &'static str {
        "ssdr"
    }

    fn recovery(&self) -> Recovery {
        Recovery::Dynamic
    }

    fn on_ack(&mut self, s: &mut SocketState, _acked: u32, _now: SimTime) {
        if !s.in_slow_start() {
            self.acks_per_step = 0;
            aimd::increase(s);
            return;
        }
        if s.cwnd < s.ssthresh / 2f64.powi(DEPTH) {
            aimd::increase(s); // the filling phase: slow start
            return;
        }
        if self.acks_per_step == 0 {
            self.acks_per_step = GRAIN_NUMBER;
            self.acks = 0;
        }
        self.acks += 1;
        if self.acks >= self.acks_per_step {
            s.cwnd = (s.cwnd + 1.0).min(s.max_window as f64);
            self.acks_per_step += 1;
            self.acks = 0;
        }
    }

    fn on_timeout(&mut self, _s: &mut SocketState, _now: SimTime) {
        self.acks_per_step = 0; // the next ramp starts afresh
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ACKs until cwnd reaches `target` from `from`, one ACK per segment of window per round.
    fn acks_to_reach(cc: &mut dyn CongestionControl, from: f64, ssthresh: f64, target: f64) -> u32 {
        let mut s = SocketState::new(from, ssthresh, 100_000);
        let mut n = 0;
        while s.cwnd < target {
            cc.on_ack(&mut s, 1, 0);
            n += 1;
        }
        n
    }

    #[test]
    fn smooth_start_grows_like_slow_start_below_a_quarter_of_ssthresh() {
        let mut s = SocketState::new(2.0, 40.0, 100_000);
        let mut cc = Ssdr::new();
        for _ in 0..8 {
            cc.on_ack(&mut s, 1, 0);
        }
        assert_eq!(s.cwnd, 10.0);
    }

    #[test]
    fn above_it_each_step_takes_one_ack_more_than_the_last() {
        let mut s = SocketState::new(10.0, 40.0, 100_000);
        let mut cc = Ssdr::new();
        let mut steps = Vec::new();
        let mut since = 0;
        while s.cwnd < 14.0 {
            let before = s.cwnd;
            cc.on_ack(&mut s, 1, 0);
            since += 1;
            if s.cwnd > before {
                steps.push(since);
                since = 0;
            }
        }
        assert_eq!(steps, vec![2, 3, 4, 5]);
    }

    #[test]
    fn smooth_start_is_slower_than_slow_start_and_faster_than_congestion_avoidance() {
        let smooth = acks_to_reach(&mut Ssdr::new(), 2.0, 40.0, 40.0);
        let slow = acks_to_reach(&mut aimd::Aimd::new("x", Recovery::Reno), 2.0, 40.0, 40.0);
        let avoidance = acks_to_reach(&mut aimd::Aimd::new("x", Recovery::Reno), 10.0, 10.0, 40.0);
        assert_eq!(slow, 38);
        assert!(
            slow * 5 < smooth && smooth < avoidance,
            "slow {slow}, smooth {smooth}, avoidance {avoidance}"
        );
    }

    #[test]
    fn without_a_threshold_the_start_is_slow_start() {
        assert_eq!(acks_to_reach(&mut Ssdr::new(), 2.0, f64::INFINITY, 100.0), 98);
    }
}
