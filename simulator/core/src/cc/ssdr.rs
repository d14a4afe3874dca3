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

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{aimd, CongestionControl};
use crate::tcp::{Recovery, SocketState};
use crate::time::SimTime;

/// Smooth start's two knobs, a flow's `tcp.ssdr` (`{"grain": 2, "depth": 2}`). The defaults
/// are the ns-3 SmoothStart model's (grain number 2, depth 2), the one published reading at
/// hand (the module comment above).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct SsdrParams {
    /// The grain number: ACKs the first one-segment step of the smooth phase takes (each
    /// later step one more), at least 1; larger ramps up more gently.
    pub grain: u32,
    /// The depth: the smooth phase begins at ssthresh / 2^depth, 0 to 30; a greater depth
    /// begins it earlier, 0 leaves none (plain slow start up to ssthresh).
    pub depth: u32,
}

impl Default for SsdrParams {
    fn default() -> Self {
        SsdrParams { grain: 2, depth: 2 }
    }
}

impl SsdrParams {
    /// The coarsest `grain` a scenario may ask for; the step count grows from it by one a
    /// step and must not overflow.
    pub const MAX_GRAIN: u32 = 1_000_000;
    /// The deepest `depth`: any ssthresh a loss leaves (at most the 10⁷-segment receiver
    /// window) over 2^30 is below a segment.
    pub const MAX_DEPTH: u32 = 30;
}

pub struct Ssdr {
    /// ACKs the first step of a smooth phase takes.
    grain: u32,
    /// 2^depth: the smooth phase begins at ssthresh divided by this.
    depth_divisor: f64,
    /// ACKs the next one-segment step of the smooth phase needs (0: not in the smooth phase).
    acks_per_step: u32,
    /// ACKs counted toward it.
    acks: u32,
}

impl Ssdr {
    pub fn new(params: &SsdrParams) -> Self {
        Ssdr {
            grain: params.grain,
            depth_divisor: 2f64.powi(params.depth.min(SsdrParams::MAX_DEPTH) as i32),
            acks_per_step: 0,
            acks: 0,
        }
    }
}

impl CongestionControl for Ssdr {
    fn own_slow_start(&self) -> bool {
        true
    }

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
        if s.cwnd < s.ssthresh / self.depth_divisor {
            aimd::increase(s); // the filling phase: slow start
            return;
        }
        if self.acks_per_step == 0 {
            self.acks_per_step = self.grain;
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
        let mut cc = Ssdr::new(&SsdrParams::default());
        for _ in 0..8 {
            cc.on_ack(&mut s, 1, 0);
        }
        assert_eq!(s.cwnd, 10.0);
    }

    #[test]
    fn above_it_each_step_takes_one_ack_more_than_the_last() {
        assert_eq!(steps(&SsdrParams::default(), 10.0, 14.0), vec![2, 3, 4, 5]);
    }

    #[test]
    fn smooth_start_is_slower_than_slow_start_and_faster_than_congestion_avoidance() {
        let smooth = acks_to_reach(&mut Ssdr::new(&SsdrParams::default()), 2.0, 40.0, 40.0);
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
        assert_eq!(
            acks_to_reach(&mut Ssdr::new(&SsdrParams::default()), 2.0, f64::INFINITY, 100.0),
            98
        );
    }

    /// The window at which the first ACK no longer adds a segment: where the smooth phase begins.
    fn smooth_phase_start(params: &SsdrParams, ssthresh: f64) -> f64 {
        let mut s = SocketState::new(2.0, ssthresh, 100_000);
        let mut cc = Ssdr::new(params);
        loop {
            let before = s.cwnd;
            cc.on_ack(&mut s, 1, 0);
            if s.cwnd == before {
                return before;
            }
        }
    }

    /// ACKs each one-segment step of the smooth phase took, from `from` to `to`.
    fn steps(params: &SsdrParams, from: f64, to: f64) -> Vec<u32> {
        let mut s = SocketState::new(from, 40.0, 100_000);
        let mut cc = Ssdr::new(params);
        let (mut steps, mut since) = (Vec::new(), 0);
        while s.cwnd < to {
            let before = s.cwnd;
            cc.on_ack(&mut s, 1, 0);
            since += 1;
            if s.cwnd > before {
                steps.push(since);
                since = 0;
            }
        }
        steps
    }

    #[test]
    fn a_greater_depth_begins_the_smooth_phase_earlier() {
        let depth = |depth| SsdrParams {
            depth,
            ..SsdrParams::default()
        };
        assert_eq!(smooth_phase_start(&depth(2), 40.0), 10.0, "40 / 2²");
        assert_eq!(smooth_phase_start(&depth(3), 40.0), 5.0, "40 / 2³");
        assert_eq!(smooth_phase_start(&depth(1), 40.0), 20.0, "40 / 2");
        assert_eq!(
            acks_to_reach(&mut Ssdr::new(&depth(0)), 2.0, 40.0, 40.0),
            38,
            "depth 0: slow start all the way"
        );
    }

    #[test]
    fn a_larger_grain_makes_every_step_of_the_smooth_phase_take_more_acks() {
        assert_eq!(steps(&SsdrParams::default(), 10.0, 13.0), vec![2, 3, 4]);
        let coarse = SsdrParams {
            grain: 5,
            ..SsdrParams::default()
        };
        assert_eq!(steps(&coarse, 10.0, 13.0), vec![5, 6, 7]);
        let fine = SsdrParams {
            grain: 1,
            ..SsdrParams::default()
        };
        assert_eq!(steps(&fine, 10.0, 13.0), vec![1, 2, 3]);
    }
}
