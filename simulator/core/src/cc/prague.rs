//! TCP Prague, the L4S scalable congestion control (RFC 9331 §4.3's "Prague requirements";
//! draft-briscoe-iccrg-prague-congestion-control; Linux's `tcp_prague.c` of the L4S team): DCTCP's
//! response to marks, sent as ECT(1) so a DualPI2 queue (RFC 9332) keeps it in its low-latency
//! queue, paced, and with its additive increase made less dependent on the round trip.
//!
//! - Marks: DCTCP's α (g = 1/16, once per window, starting at 1) and cwnd·(1 − α/2) once per
//!   window of marks (`dctcp.rs`, reused). The receiver echoes the CE state of every segment:
//!   tcpsim's DCTCP echo stands in for Accurate ECN (RFC 9768), which gives the sender the same
//!   count of marked segments.
//! - ECT(1) on new data, whatever `tcp.l4s` says (RFC 9331 §4.1).
//! - Loss: halves the window as Reno (RFC 9331 §4.3: a loss is answered as a classic control
//!   would), through the flow's recovery.
//! - Reduced RTT dependence (Linux's default `RTT_CONTROL_RATE`,
//!   `prague_rate_scaled_ai_ack_increase`): once `rtt_transition_rounds` round trips have passed
//!   since slow start (Linux's `DEFAULT_RTT_TRANSITION`, 4), a flow whose SRTT is below R_virt
//!   (`prague_rtt_target`, 25 ms) adds (SRTT/R_virt)² segments per round trip rather than one, so
//!   its rate grows as a R_virt flow's, and updates α at most once per R_virt
//!   (`prague_should_update_ewma`); from R_virt up it is Reno's. Slow start is RFC 5681's.
//! - Pacing: Prague runs paced (Linux requests internal pacing): without `tcp.pacing` a Prague
//!   flow paces at Linux's default ratios (`PacingParams::default`).
//! - Growth in the round after a reduction: Linux runs Prague as its own `cong_control`
//!   (`prague_update_cwnd`), outside the stack's CWR hold, so `tcp.ecn_reduction_holds_window`
//!   does not hold Prague's window (`grows_in_cwr`). Linux's Prague also grows only on the
//!   unmarked segments an ACK covers and takes its reduction mark by mark; tcpsim grows on
//!   every ACK and reduces once per window, as DCTCP.
//!
//! Left out: classic-ECN-AQM detection (the draft's fall-back to a Reno-friendly response when
//! a bottleneck marks ECT(1) as a classic queue would), and the fractional window below 2.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{aimd, dctcp::Dctcp, CongestionControl};
use crate::tcp::{Recovery, SocketState};
use crate::time::{to_secs, SimTime};

/// Prague's knobs (`tcp.prague`).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct PragueParams {
    /// R_virt, ms: below it the additive increase shrinks by (SRTT/R_virt)² (Linux's
    /// `prague_rtt_target`, 25 ms); 0 gives every round trip Reno's one segment.
    pub rtt_virt_ms: f64,
    /// Round trips after slow start before the RTT scaling starts (Linux's
    /// `prague_rtt_transition`, 4).
    pub rtt_transition_rounds: u32,
}

impl Default for PragueParams {
    fn default() -> Self {
        PragueParams {
            rtt_virt_ms: 25.0,
            rtt_transition_rounds: 4,
        }
    }
}

pub struct Prague {
    marks: Dctcp,
    rtt_virt: SimTime,
    transition: u32,
    /// Round trips ended outside slow start, and where the current one ends (None before the
    /// first ACK).
    rounds: u32,
    round_end: Option<u32>,
}

impl Prague {
    pub fn new(params: &PragueParams, sack: Option<bool>) -> Self {
        Prague {
            marks: Dctcp::new(sack),
            rtt_virt: crate::time::from_millis(params.rtt_virt_ms),
            transition: params.rtt_transition_rounds,
            rounds: 0,
            round_end: None,
        }
    }

    /// Past slow start by `rtt_transition_rounds` round trips: the RTT scaling applies.
    fn rtt_independent(&self, s: &SocketState) -> bool {
        !s.in_slow_start() && self.rounds >= self.transition
    }

    /// Segments added per round trip in congestion avoidance: (SRTT/R_virt)² below R_virt once
    /// RTT-independent, else 1.
    fn increase_per_rtt(&self, s: &SocketState) -> f64 {
        match s.srtt {
            Some(srtt) if self.rtt_independent(s) && srtt < self.rtt_virt => {
                (to_secs(srtt) / to_secs(self.rtt_virt)).powi(2)
            }
            _ => 1.0,
        }
    }

    /// Counts the round trips that end outside slow start (a slow start starts the count again).
    fn count_rounds(&mut self, s: &SocketState) {
        if s.in_slow_start() {
            self.rounds = 0;
        }
        match self.round_end {
            Some(end) if s.snd_una < end => {}
            Some(_) => {
                self.rounds += !s.in_slow_start() as u32;
                self.round_end = Some(s.snd_nxt.max(s.snd_una));
            }
            None => self.round_end = Some(s.snd_nxt.max(s.snd_una)),
        }
    }
}

impl CongestionControl for Prague {
    fn name(&self) -> &'static str {
        "prague"
    }

    fn recovery(&self) -> Recovery {
        self.marks.recovery()
    }

    fn on_ack(&mut self, s: &mut SocketState, _acked: u32, _now: SimTime) {
        aimd::increase_by(s, self.increase_per_rtt(s));
    }

    fn on_ecn_echo(&mut self, s: &SocketState, now: SimTime) -> f64 {
        self.marks.on_ecn_echo(s, now)
    }

    fn on_ecn_ack(&mut self, s: &SocketState, acked: u32, ece: bool, now: SimTime) {
        self.count_rounds(s);
        let min_window = if self.rtt_independent(s) { self.rtt_virt } else { 0 };
        self.marks.set_min_window(min_window);
        self.marks.on_ecn_ack(s, acked, ece, now);
    }

    fn precise_ecn(&self) -> bool {
        true
    }

    fn l4s(&self) -> bool {
        true
    }

    fn paces(&self) -> bool {
        true
    }

    fn grows_in_cwr(&self) -> bool {
        true
    }

    fn ecn_alpha(&self) -> Option<f64> {
        self.marks.ecn_alpha()
    }

    fn open_window(&mut self) {
        self.marks.open_window();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn avoiding(srtt_ms: u64) -> SocketState {
        let mut s = SocketState::new(20.0, 10.0, 10_000);
        s.srtt = Some(srtt_ms * 1_000_000);
        s
    }

    /// A Prague past its transition: `rounds` round trips of congestion avoidance counted.
    fn transitioned() -> Prague {
        let mut cc = Prague::new(&PragueParams::default(), None);
        cc.rounds = 4;
        cc
    }

    /// The window after one round trip's ACKs (one per segment) in congestion avoidance.
    fn one_round(cc: &mut Prague, s: &mut SocketState) -> f64 {
        let before = s.cwnd;
        for _ in 0..before as u32 {
            cc.on_ack(s, 1, 0);
        }
        s.cwnd - before
    }

    #[test]
    fn below_the_virtual_rtt_the_window_grows_by_the_square_of_the_rtt_ratio_per_round_trip() {
        let mut cc = transitioned();
        let mut s = avoiding(5);
        // 5 ms against 25: (1/5)² = 0.04 segment per round trip (ACK by ACK, so about that).
        let grown = one_round(&mut cc, &mut s);
        assert!((grown - 0.04).abs() < 0.001, "{grown}");
        let mut s = avoiding(50);
        let grown = one_round(&mut cc, &mut s);
        assert!(
            (grown - 1.0).abs() < 0.03,
            "at or above R_virt, Reno's one segment: {grown}"
        );
    }

    #[test]
    fn a_flow_at_a_fifth_of_the_virtual_rtt_raises_its_rate_as_fast_as_one_at_the_virtual_rtt() {
        // Rate = W/R: +0.04 segment per 5 ms round trip and +1 per 25 ms one are both
        // 1/(25 ms)² segments per second per second.
        let mut cc = transitioned();
        let per_s2 = |grown: f64, r: f64| grown / r / r;
        let short = per_s2(one_round(&mut cc, &mut avoiding(5)), 0.005);
        let long = per_s2(one_round(&mut cc, &mut avoiding(25)), 0.025);
        assert!((short / long - 1.0).abs() < 0.05, "{short} vs {long}");
    }

    #[test]
    fn the_rtt_scaling_waits_for_four_round_trips_after_slow_start() {
        let mut cc = Prague::new(&PragueParams::default(), None);
        let mut s = avoiding(5);
        s.snd_nxt = 20;
        let mut rounds_when_scaled = None;
        for _ in 0..8 {
            let scaled = one_round(&mut cc, &mut s.clone()) < 0.5;
            if scaled && rounds_when_scaled.is_none() {
                rounds_when_scaled = Some(cc.rounds);
            }
            // One round trip's ACKs: the cumulative ACK reaches what was sent at its start.
            s.snd_una = s.snd_nxt;
            s.snd_nxt += 20;
            cc.on_ecn_ack(&s, 20, false, 0);
        }
        assert_eq!(
            rounds_when_scaled,
            Some(4),
            "Reno's growth until four round trips are counted"
        );
    }

    #[test]
    fn once_rtt_independent_a_short_flow_updates_alpha_once_per_virtual_rtt_not_per_round_trip() {
        let updates_in_100_ms = |mut cc: Prague| {
            let mut s = avoiding(5);
            s.snd_nxt = 20;
            for round in 1..=20u64 {
                s.snd_una = s.snd_nxt;
                s.snd_nxt += 20;
                cc.on_ecn_ack(&s, 20, true, round * 5_000_000);
            }
            cc.marks.updates()
        };
        // 20 round trips of 5 ms: one update each before the transition, one per 25 ms after.
        let mut fresh = Prague::new(&PragueParams::default(), None);
        fresh.transition = u32::MAX;
        assert_eq!(updates_in_100_ms(fresh), 19);
        assert_eq!(updates_in_100_ms(transitioned()), 4);
    }

    #[test]
    fn marks_cut_the_window_as_dctcps_and_prague_sends_ect1_paced() {
        let mut cc = Prague::new(&PragueParams::default(), None);
        let s = avoiding(10);
        cc.on_ecn_ack(&s, 0, false, 0);
        assert_eq!(cc.on_ecn_echo(&s, 0), 10.0, "α starts at 1: the first marks halve");
        assert!(cc.precise_ecn() && cc.l4s() && cc.paces() && cc.grows_in_cwr());
        assert_eq!(cc.ssthresh(&s, 0), 10.0, "a loss halves, as Reno");
    }
}
