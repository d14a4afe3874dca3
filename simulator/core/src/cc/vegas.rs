//! TCP Vegas (Brakmo & Peterson, "TCP Vegas: End to End Congestion Avoidance on a Global
//! Internet", IEEE JSAC 1995, §3.2), in the per-round form of Linux's tcp_vegas.c and ns-3:
//! once per round trip, diff = cwnd · (RTT − BaseRTT) / RTT estimates the packets this flow
//! keeps queued. In congestion avoidance the window grows by one when diff < alpha, shrinks by
//! one when diff > beta, and holds in between; slow start ends when diff > gamma. Losses are
//! handled as Reno handles them (Vegas was built on Reno).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{aimd, CongestionControl};
use crate::tcp::{Recovery, SocketState};
use crate::time::SimTime;

/// Brakmo & Peterson's thresholds, a flow's `tcp.vegas`, in packets this flow keeps queued in
/// the network. The defaults are ns-2's `Agent/TCP/Vegas` (`v_alpha_ 1`, `v_beta_ 3`,
/// `v_gamma_ 1`); Brakmo & Peterson's experiments ran alpha 1 and beta 3 too.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct VegasParams {
    /// Below this many packets queued, the window grows by one a round (>= 0).
    pub alpha: f64,
    /// Above this many, it shrinks by one a round (>= alpha).
    pub beta: f64,
    /// Above this many, slow start ends (>= 0).
    pub gamma: f64,
}

impl Default for VegasParams {
    fn default() -> Self {
        VegasParams {
            alpha: 1.0,
            beta: 3.0,
            gamma: 1.0,
        }
    }
}

pub struct Vegas {
    alpha: f64,
    beta: f64,
    gamma: f64,
    /// The lowest RTT ever seen: the propagation delay estimate.
    base_rtt: Option<SimTime>,
    /// The lowest RTT seen in the current round (Brakmo's "actual" uses it).
    round_min_rtt: Option<SimTime>,
    /// The round ends when this segment is acknowledged.
    round_end: u32,
}

impl Vegas {
    pub fn new(p: &VegasParams) -> Self {
        Vegas {
            alpha: p.alpha,
            beta: p.beta,
            gamma: p.gamma,
            base_rtt: None,
            round_min_rtt: None,
            round_end: 0,
        }
    }

    /// A decrease must not drop the window below ssthresh, or the next ACK would slow-start
    /// again (Linux: tcp_vegas_ssthresh = min(ssthresh, cwnd - 1)).
    fn stay_in_avoidance(s: &mut SocketState) {
        s.ssthresh = s.ssthresh.min(s.cwnd - 1.0);
    }

    /// Packets this flow keeps in queues: (expected − actual) · BaseRTT.
    fn diff(&self, cwnd: f64) -> Option<f64> {
        let (base, rtt) = (self.base_rtt? as f64, self.round_min_rtt? as f64);
        Some(cwnd * (rtt - base) / rtt)
    }
}

impl CongestionControl for Vegas {
    fn own_slow_start(&self) -> bool {
        true
    }

    fn name(&self) -> &'static str {
        "vegas"
    }

    fn recovery(&self) -> Recovery {
        Recovery::Reno
    }

    fn on_rtt_sample(&mut self, _s: &SocketState, rtt: SimTime, _now: SimTime) {
        self.base_rtt = Some(self.base_rtt.map_or(rtt, |b| b.min(rtt)));
        self.round_min_rtt = Some(self.round_min_rtt.map_or(rtt, |b| b.min(rtt)));
    }

    fn on_ack(&mut self, s: &mut SocketState, _acked: u32, _now: SimTime) {
        if s.snd_una < self.round_end {
            if s.in_slow_start() {
                aimd::increase(s);
            }
            return;
        }
        // A round trip has passed: decide once, on this round's measurements.
        self.round_end = s.snd_nxt;
        let Some(diff) = self.diff(s.cwnd) else {
            aimd::increase(s);
            return;
        };
        self.round_min_rtt = None;
        if s.in_slow_start() {
            if diff > self.gamma {
                // Leave slow start at the window that just fits the path (Linux: target + 1).
                s.cwnd = (s.cwnd - diff + 1.0).max(2.0);
                Self::stay_in_avoidance(s);
            } else {
                aimd::increase(s);
            }
        } else if diff < self.alpha {
            s.cwnd += 1.0;
        } else if diff > self.beta {
            s.cwnd = (s.cwnd - 1.0).max(2.0);
            Self::stay_in_avoidance(s);
        }
        s.cwnd = s.cwnd.min(s.max_window as f64);
    }

    fn on_timeout(&mut self, _s: &mut SocketState, _now: SimTime) {
        // Measurements from before the timeout describe a different queue.
        self.round_min_rtt = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vegas_after_round(cwnd: f64, rtt_ms: u64) -> f64 {
        let mut v = Vegas::new(&VegasParams::default());
        let mut s = SocketState::new(cwnd, 1.0, 10_000);
        v.on_rtt_sample(&s, 100_000_000, 0); // base RTT 100 ms
        v.round_min_rtt = None;
        v.on_rtt_sample(&s, rtt_ms * 1_000_000, 0);
        s.snd_una = 1;
        s.snd_nxt = 20;
        v.on_ack(&mut s, 1, 0);
        s.cwnd
    }

    #[test]
    fn fewer_than_alpha_packets_queued_grows_the_window_by_one() {
        // diff = 20 · (101 − 100) / 101 ≈ 0.2 < alpha = 1.
        assert_eq!(vegas_after_round(20.0, 101), 21.0);
    }

    #[test]
    fn between_alpha_and_beta_the_window_holds() {
        // diff = 20 · 10 / 110 ≈ 1.8.
        assert_eq!(vegas_after_round(20.0, 110), 20.0);
    }

    #[test]
    fn more_than_beta_packets_queued_shrinks_the_window_by_one() {
        // diff = 20 · 50 / 150 ≈ 6.7 > beta = 3.
        assert_eq!(vegas_after_round(20.0, 150), 19.0);
    }

    #[test]
    fn a_decrease_keeps_the_window_in_congestion_avoidance() {
        let mut v = Vegas::new(&VegasParams::default());
        let mut s = SocketState::new(20.0, 20.0, 10_000);
        v.on_rtt_sample(&s, 100_000_000, 0);
        v.round_min_rtt = Some(150_000_000);
        s.snd_una = 1;
        s.snd_nxt = 20;
        v.on_ack(&mut s, 1, 0);
        assert_eq!(s.cwnd, 19.0);
        assert!(!s.in_slow_start());
    }
}
