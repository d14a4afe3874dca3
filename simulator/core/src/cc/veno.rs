//! TCP Veno (Fu & Liew, "TCP Veno: TCP Enhancement for Transmission Over Wireless Access
//! Networks", IEEE JSAC 21(2), 2003, §II): Reno that reads Vegas's backlog estimate
//! N = cwnd·(RTT − BaseRTT)/RTT (packets this flow keeps queued) to tell a random loss from a
//! congestive one. A loss with N < β = 3 is taken as random and keeps 4/5 of the window; with
//! N ≥ β it halves as Reno (§II-A). In congestion avoidance the window grows Reno's one segment
//! a round trip while N < β, and one every other round trip once the link is full (§II-B).
//!
//! Choices (ns-3's `TcpVeno`, Linux's tcp_veno.c):
//! - BaseRTT is the lowest RTT seen; RTT is the lowest sample of the last complete round trip
//!   (a round ends when the segment sent at its start is acknowledged), as Vegas measures it.
//! - "Every other round trip" is half Reno's increase per ACK, 1/(2w); ns-3 and Linux add a
//!   whole segment every second round of w ACKs: the same rate, in steps.
//! - RFC 5681 slow start (N is not used there); SACK (RFC 6675) recovery, NewReno with
//!   `sack: false`.
//! - `reno_growth` (the `ns3` profile) is ns-3.44's `TcpVeno`: Reno's growth whatever N, N still
//!   choosing the decrease. Its `IncreaseWindow` runs Veno's growth only with more than two RTT
//!   samples since the last call (`m_cntRtt > 2`) and resets the count at the end of every call,
//!   that is on every ACK, so only the first ACK after a recovery gets there
//!   (docs/validation/ns3-crosscheck.md §6.2). Linux's tcp_veno.c leaves that reset commented
//!   out (`tcp_veno_cong_avoid`) and grows as the paper, as tcpsim does by default.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{aimd, CongestionControl};
use crate::tcp::{Recovery, SocketState};
use crate::time::SimTime;

/// β, packets: a backlog below this marks a loss as random (ns-3 `Beta`).
pub const BETA: f64 = 3.0;

/// Veno's switch, a flow's `tcp.veno` (`{"reno_growth": false}`: the paper's and Linux's).
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct VenoParams {
    /// Grow as Reno in congestion avoidance whatever the backlog, as ns-3.44's `TcpVeno` does
    /// (set by the `ns3` profile); off, one segment every other round trip once N ≥ β (§II-B).
    pub reno_growth: bool,
}

pub struct Veno {
    recovery: Recovery,
    /// ns-3's growth (`VenoParams::reno_growth`).
    reno_growth: bool,
    /// The lowest RTT ever seen.
    base_rtt: Option<SimTime>,
    /// The lowest RTT of the round in progress.
    round_min_rtt: Option<SimTime>,
    /// The lowest RTT of the last complete round: the RTT in N.
    rtt: Option<SimTime>,
    /// The round ends when this segment is acknowledged.
    round_end: u32,
}

impl Veno {
    pub fn new(p: &VenoParams, sack: Option<bool>) -> Self {
        Veno {
            recovery: aimd::sack_or_newreno(sack),
            reno_growth: p.reno_growth,
            base_rtt: None,
            round_min_rtt: None,
            rtt: None,
            round_end: 0,
        }
    }

    /// N, packets this flow keeps queued, at window `cwnd`; 0 before it can be measured.
    pub fn backlog(&self, cwnd: f64) -> f64 {
        match (self.base_rtt, self.rtt) {
            (Some(base), Some(rtt)) if rtt > 0 => cwnd * (rtt - base) as f64 / rtt as f64,
            _ => 0.0,
        }
    }
}

impl CongestionControl for Veno {
    fn name(&self) -> &'static str {
        "veno"
    }

    fn recovery(&self) -> Recovery {
        self.recovery
    }

    fn on_rtt_sample(&mut self, s: &SocketState, rtt: SimTime, _now: SimTime) {
        self.base_rtt = Some(self.base_rtt.map_or(rtt, |b| b.min(rtt)));
        self.round_min_rtt = Some(self.round_min_rtt.map_or(rtt, |m| m.min(rtt)));
        if s.snd_una >= self.round_end {
            self.rtt = self.round_min_rtt.take();
            self.round_end = s.snd_nxt.max(s.snd_una + 1);
        }
    }

    fn on_ack(&mut self, s: &mut SocketState, _acked: u32, _now: SimTime) {
        if s.in_slow_start() || self.reno_growth || self.backlog(s.cwnd) < BETA {
            aimd::increase(s);
        } else {
            // §II-B: the link is full, so one segment every other round trip.
            s.cwnd = (s.cwnd + 0.5 / s.cwnd).min(s.max_window as f64);
        }
    }

    fn ssthresh(&mut self, s: &SocketState, _now: SimTime) -> f64 {
        let w = s.window_in_use();
        // §II-A: a random loss keeps 4/5 of the window, a congestive one half.
        let keep = if self.backlog(w) < BETA { 0.8 } else { 0.5 };
        (w * keep).max(2.0)
    }

    fn on_timeout(&mut self, _s: &mut SocketState, _now: SimTime) {
        // Samples from before the timeout describe another queue.
        self.round_min_rtt = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: SimTime = 1_000_000;

    /// Veno after a round at BaseRTT 100 ms and a round at `rtt_ms`, window `cwnd`.
    fn after_rounds(cwnd: f64, rtt_ms: u64) -> (Veno, SocketState) {
        after_rounds_with(&VenoParams::default(), cwnd, rtt_ms)
    }

    fn after_rounds_with(p: &VenoParams, cwnd: f64, rtt_ms: u64) -> (Veno, SocketState) {
        let mut cc = Veno::new(p, None);
        let mut s = SocketState::new(cwnd, 10.0, 10_000);
        s.snd_nxt = 50;
        cc.on_rtt_sample(&s, 100 * MS, 0); // closes round 0, BaseRTT 100 ms
        s.snd_una = 50;
        s.snd_nxt = 100;
        cc.on_rtt_sample(&s, rtt_ms * MS, 0);
        s.snd_una = 100;
        cc.on_rtt_sample(&s, rtt_ms * MS, 0); // closes the round at rtt_ms
        (cc, s)
    }

    #[test]
    fn the_backlog_is_vegass_diff() {
        let (cc, _) = after_rounds(40.0, 125);
        assert!((cc.backlog(40.0) - 8.0).abs() < 1e-9, "40 · 25/125");
    }

    #[test]
    fn a_loss_with_fewer_than_three_packets_queued_keeps_four_fifths_of_the_window() {
        let (mut cc, s) = after_rounds(40.0, 105); // N = 1.9
        assert!((cc.ssthresh(&s, 0) - 32.0).abs() < 1e-9);
    }

    #[test]
    fn a_loss_with_three_or_more_packets_queued_halves_the_window() {
        let (mut cc, s) = after_rounds(40.0, 125); // N = 8
        assert!((cc.ssthresh(&s, 0) - 20.0).abs() < 1e-9);
    }

    #[test]
    fn once_the_backlog_reaches_beta_the_window_grows_half_as_fast() {
        let (mut cc, mut s) = after_rounds(40.0, 125);
        cc.on_ack(&mut s, 1, 0);
        assert!((s.cwnd - 40.0125).abs() < 1e-12, "{}", s.cwnd);
        let (mut cc, mut s) = after_rounds(40.0, 101);
        cc.on_ack(&mut s, 1, 0);
        assert!((s.cwnd - 40.025).abs() < 1e-12, "{}", s.cwnd);
    }

    #[test]
    fn with_ns3s_rule_the_window_grows_as_renos_whatever_the_backlog_and_the_backlog_still_sets_the_decrease() {
        // ns-3.44 tcp-veno.cc, TcpVeno::IncreaseWindow: `m_cntRtt <= 2` sends every ACK but the
        // first after a recovery to TcpNewReno::IncreaseWindow, as the count is reset at its end.
        let ns3 = VenoParams { reno_growth: true };
        let (mut cc, mut s) = after_rounds_with(&ns3, 40.0, 125); // N = 8
        cc.on_ack(&mut s, 1, 0);
        assert!((s.cwnd - 40.025).abs() < 1e-12, "+1/w: {}", s.cwnd);
        // TcpVeno::GetSsThresh still reads the backlog: halve at N ≥ β, 4/5 below.
        assert!((cc.ssthresh(&s, 0) - 40.025 / 2.0).abs() < 1e-9);
        let (mut cc, s) = after_rounds_with(&ns3, 40.0, 105); // N = 1.9
        assert!((cc.ssthresh(&s, 0) - 32.0).abs() < 1e-9);
    }
}
