//! BBR version 1 (Cardwell, Cheng, Gunn, Hassas Yeganeh, Jacobson, "BBR: Congestion-Based
//! Congestion Control", ACM Queue 14(5), 2016; draft-cardwell-iccrg-bbr-congestion-control-00
//! §4, whose section numbers are cited below; Linux's tcp_bbr.c where the draft defers to it).
//!
//! BBR models the path by two numbers: BtlBw, the windowed maximum of delivery-rate samples
//! over 10 round trips (§4.1.1), and RTprop, the windowed minimum RTT over 10 s (§4.1.2). It
//! paces at pacing_gain·BtlBw (§4.2.1) and caps what is in flight at cwnd_gain·BDP (§4.2.3).
//! A state machine (§4.3) sets the gains: Startup doubles the rate each round trip with gain
//! 2/ln 2 until BtlBw stops growing by 25 % for three rounds; Drain empties the queue Startup
//! built; ProbeBW cycles the pacing gain through 1.25, 0.75 and six times 1, one phase per
//! RTprop; ProbeRTT, when RTprop is 10 s old, holds cwnd at 4 segments for 200 ms and a round
//! trip to measure the empty-queue RTT again.
//!
//! Losses matter little to BBRv1's model but do bound its window (§4.2.3.5,
//! BBRModulateCwndForRecovery; Linux's bbr_set_cwnd_to_recover_or_restore): every ACK that
//! marks segments lost takes them off cwnd; entering fast recovery sets cwnd to what is in
//! flight plus what the ACK delivered (packet conservation for one round trip); cwnd then
//! grows back towards its target, and leaving recovery restores the window it had. A timeout
//! leaves cwnd at one segment (RFC 5681, the sender), from which BBR grows by what each ACK
//! delivers back to its target; the model (BtlBw, RTprop) survives both.
//!
//! Linux's BBRv1 has parts beyond the draft's core; each is a switch of `BbrParams` (a flow's
//! `tcp.bbr`), off by default so that results stay those of the draft's BBR, with ns-3.44's
//! `TcpBbr` and Linux's settings as presets (`BbrParams::ns3`, `BbrParams::linux`; the `ns3`
//! and `linux` TCP profiles set them):
//! - the **ACK-aggregation allowance** (Linux `bbr_update_ack_aggregation`,
//!   `bbr_ack_aggregation_cwnd`): the windowed maximum, over 5–10 round trips, of the data an
//!   ACK epoch delivered beyond BtlBw·epoch, added to the cwnd target, at most cwnd and
//!   0.1 s of BtlBw. ns-3.44 has it on (`m_extraAckedGain` 1) with two differences of its
//!   own: the epoch's length is truncated to whole seconds (`uint32_t epochProp`), so nothing
//!   is expected in an epoch under 1 s, and the epoch restarts after 4096 *bytes*
//!   (`AckEpochAckedResetThresh`, Linux: 2^20 packets); `whole_second_epochs` and
//!   `epoch_reset_pkts` reproduce them.
//! - **long-term bandwidth sampling** for token-bucket policers (Linux `bbr_lt_bw_sampling`):
//!   two consecutive lossy (lost/delivered ≥ 50/256) intervals of 4–16 round trips with a
//!   consistent delivery rate (within 1/8 or 4 kb/s) make that rate BtlBw, paced at gain 1,
//!   for 48 round trips. ns-3.44 has no such part.
//! - the **lost-segment deduction** in recovery (§4.2.3.5; on by default, as in Linux and
//!   ns-3). Without SACK no loss is counted (the deduction needs the scoreboard's IsLost;
//!   Linux would count the one hole NewReno marks).
//! - **idle restart** (Linux `bbr_cwnd_event(CA_EVENT_TX_START)`; the draft's restart from idle):
//!   when data leaves with nothing in flight after the application ran dry, ProbeBW paces at
//!   BtlBw (gain 1) instead of its phase's gain, ProbeRTT may end at once, and ProbeRTT is not
//!   entered until an ACK delivers data again.
//! - the **quantization extras**: 2 segments more on the target in the 1.25 phase
//!   (`bbr_quantization_budget`; ns-3 `InFlight`), the **1 % pacing margin**
//!   (`bbr_pacing_margin_percent`; ns-3 `m_pacingMargin`), and ns-3's **fixed send quantum**
//!   of one segment (`SetSendQuantum`) in place of the draft's rate-dependent one.
//!
//! Still left out: TSO autosizing (the send quantum of §4.2.3.2 stands in for it) and Linux's
//! rounding of the target up to an even number. RTprop is refreshed by a strictly lower sample
//! or by expiry: the draft, Linux's tcp_bbr.c and ns-3 take an equal sample too (`<=`), which
//! would let a simulator's exactly repeated propagation delay postpone ProbeRTT forever. The first
//! ProbeBW phase is chosen from the entry time (deterministic, and different between flows)
//! instead of at random, never the 0.75 phase, as the draft asks.

use std::collections::VecDeque;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::CongestionControl;
use crate::scenario::TcpConfig;
use crate::tcp::{CaState, PartialAckTimer, RateSample, Recovery, SocketState};
use crate::time::{to_secs, SimTime};

/// §4.3.1.1: 2/ln 2, the smallest gain that doubles the sending rate every round trip.
pub const HIGH_GAIN: f64 = 2.885;
/// §4.3.2: the inverse of Startup's gain drains its queue in about one round trip.
pub const DRAIN_GAIN: f64 = 1.0 / HIGH_GAIN;
/// §4.2.3.2: cwnd_gain in ProbeBW.
pub const CWND_GAIN: f64 = 2.0;
/// §4.3.3: ProbeBW's pacing_gain cycle, one phase per RTprop.
pub const PACING_GAIN_CYCLE: [f64; 8] = [1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0];
/// §4.1.1: BtlBw filter window, round trips.
pub const BTLBW_FILTER_ROUNDS: u64 = 10;
/// §4.1.2: RTprop filter window.
pub const RTPROP_FILTER: SimTime = 10_000_000_000;
/// §4.3.4: how long ProbeRTT holds the window at its minimum.
pub const PROBE_RTT_DURATION: SimTime = 200_000_000;
/// §4.2.3.3: the smallest cwnd, segments.
pub const MIN_CWND: f64 = 4.0;
/// §4.3.1.2: Startup ends when BtlBw grew less than 25 % in three rounds.
const FULL_BW_GROWTH: f64 = 1.25;
const FULL_BW_ROUNDS: u32 = 3;

/// BBRv1's switches beyond the draft's core, a flow's `tcp.bbr` (the module's header says what
/// each part is and whose it is). The defaults are tcpsim's BBR as the draft has it: no
/// aggregation allowance, no long-term sampling, no idle restart, no quantization extras, the
/// lost-segment deduction on.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct BbrParams {
    /// The ACK-aggregation allowance on the cwnd target; absent, none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ack_aggregation: Option<AckAggregationParams>,
    /// Long-term bandwidth sampling (policer detection); absent, none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub long_term_bw: Option<LongTermBwParams>,
    /// §4.2.3.5: segments an ACK newly marks lost come off cwnd.
    pub lost_deduction: bool,
    /// Restart from idle: ProbeBW paces at BtlBw, ProbeRTT waits for the next delivery.
    pub idle_restart: bool,
    /// Segments added to every in-flight target in ProbeBW's 1.25 phase (Linux and ns-3: 2).
    pub probe_bw_extra_pkts: f64,
    /// The pacing rate is BtlBw·gain·(1 − margin) (Linux and ns-3: 0.01).
    pub pacing_margin: f64,
    /// A fixed send quantum, segments (ns-3: 1); absent, §4.2.3.2's from the pacing rate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub send_quantum_pkts: Option<f64>,
}

impl Default for BbrParams {
    fn default() -> Self {
        BbrParams {
            ack_aggregation: None,
            long_term_bw: None,
            lost_deduction: true,
            idle_restart: false,
            probe_bw_extra_pkts: 0.0,
            pacing_margin: 0.0,
            send_quantum_pkts: None,
        }
    }
}

impl BbrParams {
    /// ns-3.44's `TcpBbr` with its defaults (tcp-bbr.cc/.h): the aggregation allowance with
    /// its whole-second epochs and 4096-byte epoch reset (in segments of `mss_bytes`), idle
    /// restart, +2 segments in the 1.25 phase, a 1 % margin, a one-segment send quantum, no
    /// long-term sampling.
    pub fn ns3(mss_bytes: u32) -> Self {
        BbrParams {
            ack_aggregation: Some(AckAggregationParams {
                epoch_reset_pkts: 4096.0 / mss_bytes as f64,
                whole_second_epochs: true,
                ..AckAggregationParams::default()
            }),
            long_term_bw: None,
            lost_deduction: true,
            idle_restart: true,
            probe_bw_extra_pkts: 2.0,
            pacing_margin: 0.01,
            send_quantum_pkts: Some(1.0),
        }
    }

    /// Linux's tcp_bbr.c (v4.20 on): every part on with its constants; the send quantum stays
    /// the draft's (Linux's TSO goal is not modelled).
    pub fn linux() -> Self {
        BbrParams {
            ack_aggregation: Some(AckAggregationParams::default()),
            long_term_bw: Some(LongTermBwParams::default()),
            lost_deduction: true,
            idle_restart: true,
            probe_bw_extra_pkts: 2.0,
            pacing_margin: 0.01,
            send_quantum_pkts: None,
        }
    }
}

/// The ACK-aggregation allowance (Linux `bbr_update_ack_aggregation`); defaults are Linux's.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct AckAggregationParams {
    /// `bbr_extra_acked_gain`: the share of the measured excess added to the target.
    pub gain: f64,
    /// `bbr_extra_acked_win_rtts`: the maximum is kept over this many to twice as many rounds.
    pub window_rounds: u32,
    /// `bbr_extra_acked_max_us`: the allowance is at most this many seconds of BtlBw.
    pub max_s: f64,
    /// `bbr_ack_epoch_acked_reset_thresh`: an epoch restarts once it has delivered this many
    /// segments (Linux 2^20; ns-3.44 4096 bytes).
    pub epoch_reset_pkts: f64,
    /// ns-3.44: the epoch's expected delivery from its length truncated to whole seconds.
    pub whole_second_epochs: bool,
}

impl Default for AckAggregationParams {
    fn default() -> Self {
        AckAggregationParams {
            gain: 1.0,
            window_rounds: 5,
            max_s: 0.1,
            epoch_reset_pkts: (1u32 << 20) as f64,
            whole_second_epochs: false,
        }
    }
}

/// Long-term bandwidth sampling (Linux `bbr_lt_bw_sampling`); defaults are Linux's.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct LongTermBwParams {
    /// `bbr_lt_intvl_min_rtts`: a sampling interval lasts at least this many rounds (and is
    /// dropped past four times as many).
    pub min_rounds: u32,
    /// `bbr_lt_loss_thresh` 50/256: an interval is lossy when lost/delivered reaches this.
    pub loss_thresh: f64,
    /// `bbr_lt_bw_ratio` 1/8: two intervals' rates within this share of each other agree.
    pub bw_ratio: f64,
    /// `bbr_lt_bw_diff`: or within this many bits per second (4 kb/s).
    pub bw_diff_bps: f64,
    /// `bbr_lt_bw_max_rtts`: how many ProbeBW rounds the long-term rate is used.
    pub max_rounds: u32,
}

impl Default for LongTermBwParams {
    fn default() -> Self {
        LongTermBwParams {
            min_rounds: 4,
            loss_thresh: 50.0 / 256.0,
            bw_ratio: 1.0 / 8.0,
            bw_diff_bps: 4000.0,
            max_rounds: 48,
        }
    }
}

/// State of the ACK-aggregation estimate (Linux's ack_epoch_* and extra_acked[2]).
#[derive(Debug, Default)]
struct AckAggregation {
    /// When the current ACK epoch began.
    epoch_start: SimTime,
    /// Segments delivered in the epoch.
    epoch_acked: f64,
    /// The two windows' maxima of the excess, segments.
    extra_acked: [f64; 2],
    /// Rounds the current window has run.
    window_rounds: u32,
    idx: usize,
}

/// State of the long-term sampling (Linux's lt_* fields).
#[derive(Debug, Default)]
struct LongTerm {
    is_sampling: bool,
    /// Rounds in this interval, or in ProbeBW while the long-term rate is used.
    rounds: u32,
    use_bw: bool,
    /// The long-term rate, segments per second; 0 before the first lossy interval.
    bw: f64,
    last_delivered: u64,
    last_lost: u64,
    last_stamp: SimTime,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Mode {
    Startup,
    Drain,
    /// `phase` indexes `PACING_GAIN_CYCLE`; it began at `since`.
    ProbeBw {
        phase: usize,
        since: SimTime,
    },
    /// `done` is set once in-flight has fallen to the minimum window: then 200 ms and a round
    /// trip (`round_done`) must pass.
    ProbeRtt {
        done: Option<SimTime>,
        round_done: bool,
    },
}

/// Windowed maximum over the last `BTLBW_FILTER_ROUNDS` round trips, exact: a deque of
/// samples each larger than every later one (Linux approximates with three samples).
#[derive(Debug, Default)]
struct MaxFilter {
    samples: VecDeque<(u64, f64)>,
}

impl MaxFilter {
    fn update(&mut self, round: u64, value: f64) {
        while self.samples.back().is_some_and(|&(_, v)| v <= value) {
            self.samples.pop_back();
        }
        self.samples.push_back((round, value));
        while self
            .samples
            .front()
            .is_some_and(|&(r, _)| r + BTLBW_FILTER_ROUNDS <= round)
        {
            self.samples.pop_front();
        }
    }

    fn get(&self) -> f64 {
        self.samples.front().map_or(0.0, |&(_, v)| v)
    }
}

pub struct Bbr {
    recovery: Recovery,
    mode: Mode,
    /// BtlBw, segments per second (§4.1.1).
    btlbw: MaxFilter,
    /// RTprop and when it was last set (§4.1.2).
    rtprop: Option<SimTime>,
    rtprop_stamp: SimTime,
    /// Round-trip counting by delivered segments (§4.1.1.3).
    round_count: u64,
    next_round_delivered: u64,
    round_start: bool,
    /// Full-pipe estimation (§4.3.1.2).
    full_bw: f64,
    full_bw_count: u32,
    filled_pipe: bool,
    pacing_gain: f64,
    cwnd_gain: f64,
    /// Segments per second (§4.2.1).
    pacing_rate: f64,
    has_seen_rtt: bool,
    /// The window saved on entering recovery or ProbeRTT, restored on leaving (§4.2.3.4–5).
    prior_cwnd: f64,
    packet_conservation: bool,
    prev_ca_state: CaState,
    initial_cwnd: f64,
    /// Bytes on the wire per full segment, for the send quantum (§4.2.3.2).
    wire_bytes: f64,
    /// Payload bytes per segment, for the long-term rate's 4 kb/s.
    mss_bytes: f64,
    params: BbrParams,
    aggregation: AckAggregation,
    long_term: LongTerm,
    /// Segments the ACKs have marked lost so far (Linux's tp->lost).
    lost_total: u64,
    /// Restarting from idle until an ACK delivers data (Linux's idle_restart).
    idle_restart: bool,
    /// Segments delivered so far, as of the last ACK.
    delivered_total: u64,
}

impl Bbr {
    pub fn new(cfg: &TcpConfig) -> Self {
        let recovery = if cfg.sack == Some(false) {
            Recovery::NewReno(PartialAckTimer::EveryPartialAck)
        } else {
            Recovery::Sack
        };
        let initial_cwnd = cfg.initial_cwnd_pkts;
        Bbr {
            recovery,
            mode: Mode::Startup,
            btlbw: MaxFilter::default(),
            rtprop: None,
            rtprop_stamp: 0,
            round_count: 0,
            next_round_delivered: 0,
            round_start: false,
            full_bw: 0.0,
            full_bw_count: 0,
            filled_pipe: false,
            pacing_gain: HIGH_GAIN,
            cwnd_gain: HIGH_GAIN,
            // §4.2.1 BBRInitPacingRate: the initial window per (not yet measured) 1 ms RTT.
            pacing_rate: HIGH_GAIN * initial_cwnd / 1e-3,
            has_seen_rtt: false,
            prior_cwnd: initial_cwnd,
            packet_conservation: false,
            prev_ca_state: CaState::Open,
            initial_cwnd,
            wire_bytes: (cfg.mss_bytes + cfg.header_bytes) as f64,
            mss_bytes: cfg.mss_bytes as f64,
            params: cfg.bbr.clone(),
            aggregation: AckAggregation::default(),
            long_term: LongTerm::default(),
            lost_total: 0,
            idle_restart: false,
            delivered_total: 0,
        }
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The windowed-maximum BtlBw, segments per second.
    pub fn btlbw(&self) -> f64 {
        self.btlbw.get()
    }

    /// The bandwidth BBR paces and sizes cwnd by: the long-term rate while a policer is
    /// assumed (Linux `bbr_bw`), else BtlBw.
    pub fn bw(&self) -> f64 {
        if self.long_term.use_bw {
            self.long_term.bw
        } else {
            self.btlbw()
        }
    }

    /// Whether long-term sampling currently takes its rate for BtlBw.
    pub fn uses_long_term_bw(&self) -> bool {
        self.long_term.use_bw
    }

    /// §4.2.3.2: segments the sender may need beyond the BDP for its own send granularity:
    /// 1 segment below 1.2 Mb/s, 2 below 24 Mb/s, else 1 ms of data up to 64 KB.
    fn send_quantum(&self) -> f64 {
        if let Some(q) = self.params.send_quantum_pkts {
            return q;
        }
        let bits = self.pacing_rate * self.wire_bytes * 8.0;
        if bits < 1.2e6 {
            1.0
        } else if bits < 24e6 {
            2.0
        } else {
            (self.pacing_rate * 1e-3).min(65536.0 / self.wire_bytes)
        }
    }

    /// §4.2.3.2 BBRInflight: gain·BDP plus three send quanta, segments, on the BtlBw filter's
    /// maximum; plus `probe_bw_extra_pkts` in the 1.25 phase (Linux bbr_quantization_budget).
    fn inflight(&self, gain: f64) -> f64 {
        self.inflight_at(self.btlbw(), gain)
    }

    fn inflight_at(&self, bw: f64, gain: f64) -> f64 {
        match self.rtprop {
            None => self.initial_cwnd,
            Some(rtprop) => {
                let extra = match self.mode {
                    Mode::ProbeBw { phase: 0, .. } => self.params.probe_bw_extra_pkts,
                    _ => 0.0,
                };
                gain * bw * to_secs(rtprop) + 3.0 * self.send_quantum() + extra
            }
        }
    }

    fn save_cwnd(&mut self, s: &SocketState) {
        let in_loss_or_probe =
            matches!(s.ca_state, CaState::Recovery | CaState::Loss) || matches!(self.mode, Mode::ProbeRtt { .. });
        self.prior_cwnd = if in_loss_or_probe {
            self.prior_cwnd.max(s.cwnd)
        } else {
            s.cwnd
        };
    }

    fn set_mode(&mut self, mode: Mode) {
        self.mode = mode;
        (self.pacing_gain, self.cwnd_gain) = match mode {
            Mode::Startup => (HIGH_GAIN, HIGH_GAIN),
            Mode::Drain => (DRAIN_GAIN, HIGH_GAIN),
            // Linux bbr_update_gains: no gain cycling while the long-term rate is used.
            Mode::ProbeBw { .. } if self.long_term.use_bw => (1.0, CWND_GAIN),
            Mode::ProbeBw { phase, .. } => (PACING_GAIN_CYCLE[phase], CWND_GAIN),
            Mode::ProbeRtt { .. } => (1.0, 1.0),
        };
    }

    /// §4.3.3: enter ProbeBW in any phase but the 0.75 one.
    fn enter_probe_bw(&mut self, now: SimTime) {
        let phase = [0, 2, 3, 4, 5, 6, 7][(mix(now) % 7) as usize];
        self.set_mode(Mode::ProbeBw { phase, since: now });
    }

    /// §4.1.1.3 and §4.1.1.5: count round trips, and take the sample into BtlBw unless it is
    /// app-limited and below the estimate.
    fn update_btlbw(&mut self, rs: &RateSample, now: SimTime) {
        self.round_start = false;
        let Some(rate) = rs.delivery_rate else { return };
        if rs.prior_delivered >= self.next_round_delivered {
            self.next_round_delivered = rs.delivered_total;
            self.round_count += 1;
            self.round_start = true;
            self.packet_conservation = false;
        }
        if self.params.long_term_bw.is_some() {
            self.long_term_sampling(rs.losses > 0, rs.is_app_limited, rs.delivered_total, now);
        }
        if !rs.is_app_limited || rate >= self.btlbw() {
            self.btlbw.update(self.round_count, rate);
        }
    }

    /// §4.3.3: move to the next gain phase after an RTprop; the 1.25 phase also waits until
    /// the extra data is in flight, the 0.75 phase leaves early once the queue is drained.
    fn update_cycle_phase(&mut self, rs: &RateSample, now: SimTime) {
        let Mode::ProbeBw { phase, since } = self.mode else {
            return;
        };
        let full_length = self.rtprop.is_some_and(|r| now.saturating_sub(since) > r);
        let prior_inflight = (rs.in_flight + rs.newly_delivered) as f64;
        let gain = self.pacing_gain;
        let next = if gain > 1.0 {
            full_length && prior_inflight >= self.inflight(gain)
        } else if gain < 1.0 {
            full_length || prior_inflight <= self.inflight(1.0)
        } else {
            full_length
        };
        if next {
            self.set_mode(Mode::ProbeBw {
                phase: (phase + 1) % PACING_GAIN_CYCLE.len(),
                since: now,
            });
        }
    }

    /// §4.3.1.2: the pipe is full once BtlBw grew less than 25 % over three round trips.
    fn check_full_pipe(&mut self, rs: &RateSample) {
        if self.filled_pipe || !self.round_start || rs.is_app_limited {
            return;
        }
        if self.btlbw() >= self.full_bw * FULL_BW_GROWTH {
            self.full_bw = self.btlbw();
            self.full_bw_count = 0;
            return;
        }
        self.full_bw_count += 1;
        self.filled_pipe = self.full_bw_count >= FULL_BW_ROUNDS;
    }

    /// §4.3.1.2 and §4.3.2: Startup → Drain once the pipe is full; Drain → ProbeBW once what
    /// is in flight fits the BDP.
    fn check_drain(&mut self, rs: &RateSample, now: SimTime) {
        if self.mode == Mode::Startup && self.filled_pipe {
            self.set_mode(Mode::Drain);
        }
        if self.mode == Mode::Drain && rs.in_flight as f64 <= self.inflight(1.0) {
            self.enter_probe_bw(now);
        }
    }

    /// §4.1.2.3 and §4.3.4: update RTprop; when it has not been lowered for 10 s, ProbeRTT.
    fn update_rtprop(&mut self, s: &mut SocketState, rs: &RateSample, now: SimTime) {
        let expired = now > self.rtprop_stamp + RTPROP_FILTER;
        if let Some(rtt) = rs.rtt {
            if self.rtprop.is_none_or(|m| rtt < m) || expired {
                self.rtprop = Some(rtt);
                self.rtprop_stamp = now;
            }
        }
        if expired && !self.idle_restart && !matches!(self.mode, Mode::ProbeRtt { .. }) {
            self.save_cwnd(s);
            self.set_mode(Mode::ProbeRtt {
                done: None,
                round_done: false,
            });
        }
        if rs.newly_delivered > 0 {
            self.idle_restart = false; // Linux: only once an ACK delivers data again
        }
        let Mode::ProbeRtt { done, round_done } = self.mode else {
            return;
        };
        match done {
            None if (rs.in_flight as f64) <= MIN_CWND => {
                self.mode = Mode::ProbeRtt {
                    done: Some(now + PROBE_RTT_DURATION),
                    round_done: false,
                };
                self.next_round_delivered = rs.delivered_total;
            }
            None => {}
            Some(done) => {
                let round_done = round_done || self.round_start;
                self.mode = Mode::ProbeRtt {
                    done: Some(done),
                    round_done,
                };
                if round_done && now > done {
                    self.exit_probe_rtt(s, now);
                }
            }
        }
    }

    /// §4.3.4.3: leave ProbeRTT with a fresh RTprop and the window from before.
    fn exit_probe_rtt(&mut self, s: &mut SocketState, now: SimTime) {
        self.rtprop_stamp = now;
        s.cwnd = s.cwnd.max(self.prior_cwnd);
        if self.filled_pipe {
            self.enter_probe_bw(now);
        } else {
            self.set_mode(Mode::Startup);
        }
    }

    /// §4.2.1: pace at pacing_gain·BtlBw; before the pipe is full, never slower than before.
    fn set_pacing_rate(&mut self, s: &SocketState, rs: &RateSample) {
        if !self.has_seen_rtt {
            if let Some(rtt) = rs.rtt.filter(|&r| r > 0) {
                self.has_seen_rtt = true;
                self.pacing_rate = HIGH_GAIN * s.cwnd / to_secs(rtt);
            }
        }
        self.pace_at(self.pacing_gain);
    }

    /// pacing_gain·bw less the margin, unless it would slow a Startup down.
    fn pace_at(&mut self, gain: f64) {
        let rate = gain * self.bw() * (1.0 - self.params.pacing_margin);
        if rate > 0.0 && (self.filled_pipe || rate > self.pacing_rate) {
            self.pacing_rate = rate;
        }
    }

    /// §4.2.3.5: newly lost segments come off cwnd; packet conservation for the first round
    /// of fast recovery; the window from before on leaving recovery or a timeout's loss state.
    /// True when conservation set cwnd.
    fn recover_or_restore(&mut self, s: &mut SocketState, rs: &RateSample) -> bool {
        if rs.losses > 0 && self.params.lost_deduction {
            s.cwnd = (s.cwnd - rs.losses as f64).max(1.0);
        }
        let state = s.ca_state;
        let in_recovery = |st: CaState| matches!(st, CaState::Recovery | CaState::Loss);
        if state == CaState::Recovery && self.prev_ca_state != CaState::Recovery {
            self.packet_conservation = true;
            self.next_round_delivered = rs.delivered_total; // the round starts now
            s.cwnd = (rs.in_flight + rs.newly_delivered) as f64;
        } else if in_recovery(self.prev_ca_state) && !in_recovery(state) {
            s.cwnd = s.cwnd.max(self.prior_cwnd);
            self.packet_conservation = false;
        }
        self.prev_ca_state = state;
        if self.packet_conservation {
            s.cwnd = s.cwnd.max((rs.in_flight + rs.newly_delivered) as f64);
        }
        self.packet_conservation
    }

    /// Linux bbr_lt_bw_sampling: look for two consecutive lossy intervals of consistent
    /// delivery rate (a token-bucket policer), then use their mean rate for `max_rounds`
    /// ProbeBW rounds. `lost` says whether this ACK (or a timeout) marked segments lost.
    fn long_term_sampling(&mut self, lost: bool, app_limited: bool, delivered_total: u64, now: SimTime) {
        let Some(p) = self.params.long_term_bw.clone() else {
            return;
        };
        if self.long_term.use_bw {
            if matches!(self.mode, Mode::ProbeBw { .. }) && self.round_start {
                self.long_term.rounds += 1;
                if self.long_term.rounds >= p.max_rounds {
                    self.reset_long_term(delivered_total, now);
                    self.enter_probe_bw(now); // restart gain cycling
                }
            }
            return;
        }
        // Wait for the first loss, so that the policer's bucket is empty when sampling starts.
        if !self.long_term.is_sampling {
            if !lost {
                return;
            }
            self.reset_long_term_interval(delivered_total, now);
            self.long_term.is_sampling = true;
        }
        if app_limited {
            self.reset_long_term(delivered_total, now); // would under-estimate the rate
            return;
        }
        if self.round_start {
            self.long_term.rounds += 1;
        }
        if self.long_term.rounds < p.min_rounds {
            return;
        }
        if self.long_term.rounds > 4 * p.min_rounds {
            self.reset_long_term(delivered_total, now); // interval too long
            return;
        }
        // End the interval at a loss: the bucket's tokens are spent.
        if !lost {
            return;
        }
        let lost_pkts = self.lost_total - self.long_term.last_lost;
        let delivered = delivered_total - self.long_term.last_delivered;
        if delivered == 0 || (lost_pkts as f64) < p.loss_thresh * delivered as f64 {
            return;
        }
        // Linux counts whole milliseconds and waits for at least one.
        let ms = (now - self.long_term.last_stamp) / 1_000_000;
        if ms < 1 {
            return;
        }
        let bw = delivered as f64 / (ms as f64 * 1e-3);
        let lt = &mut self.long_term;
        if lt.bw > 0.0 {
            let diff = (bw - lt.bw).abs();
            if diff <= p.bw_ratio * lt.bw || diff * self.mss_bytes * 8.0 <= p.bw_diff_bps {
                // Policed: the mean of the two intervals, paced at gain 1.
                lt.bw = (bw + lt.bw) / 2.0;
                lt.use_bw = true;
                lt.rounds = 0;
                if let Mode::ProbeBw { .. } = self.mode {
                    self.pacing_gain = 1.0;
                }
                return;
            }
        }
        lt.bw = bw;
        self.reset_long_term_interval(delivered_total, now);
    }

    fn reset_long_term_interval(&mut self, delivered_total: u64, now: SimTime) {
        let lt = &mut self.long_term;
        lt.last_stamp = now;
        lt.last_delivered = delivered_total;
        lt.last_lost = self.lost_total;
        lt.rounds = 0;
    }

    fn reset_long_term(&mut self, delivered_total: u64, now: SimTime) {
        self.long_term.bw = 0.0;
        self.long_term.use_bw = false;
        self.long_term.is_sampling = false;
        self.reset_long_term_interval(delivered_total, now);
    }

    /// Linux bbr_update_ack_aggregation: how much more than bw·(time since the epoch began)
    /// the ACKs of an epoch delivered, its maximum over `window_rounds` to twice as many.
    fn update_ack_aggregation(&mut self, s: &SocketState, rs: &RateSample, now: SimTime) {
        let Some(p) = &self.params.ack_aggregation else {
            return;
        };
        if rs.newly_delivered == 0 || rs.delivery_rate.is_none() {
            return;
        }
        let bw = self.bw();
        let a = &mut self.aggregation;
        if self.round_start {
            a.window_rounds = (a.window_rounds + 1).min(31);
            if a.window_rounds >= p.window_rounds {
                a.window_rounds = 0;
                a.idx = 1 - a.idx;
                a.extra_acked[a.idx] = 0.0;
            }
        }
        let mut epoch = to_secs(now.saturating_sub(a.epoch_start));
        if p.whole_second_epochs {
            epoch = epoch.floor();
        }
        let mut expected = bw * epoch;
        let acked = rs.newly_delivered as f64;
        if a.epoch_acked <= expected || a.epoch_acked + acked >= p.epoch_reset_pkts {
            a.epoch_acked = 0.0;
            a.epoch_start = now;
            expected = 0.0;
        }
        a.epoch_acked += acked;
        let extra = (a.epoch_acked - expected).min(s.cwnd);
        if extra > a.extra_acked[a.idx] {
            a.extra_acked[a.idx] = extra;
        }
    }

    /// Linux bbr_ack_aggregation_cwnd: the allowance on the cwnd target once the pipe is full.
    fn aggregation_cwnd(&self) -> f64 {
        match &self.params.ack_aggregation {
            Some(p) if self.filled_pipe => {
                let extra = self.aggregation.extra_acked[0].max(self.aggregation.extra_acked[1]);
                (p.gain * extra).min(self.bw() * p.max_s)
            }
            _ => 0.0,
        }
    }

    /// §4.2.3: grow towards cwnd_gain·BDP by what each ACK delivered, never below 4 segments;
    /// 4 at most in ProbeRTT.
    fn set_cwnd(&mut self, s: &mut SocketState, rs: &RateSample) {
        let acked = rs.newly_delivered as f64;
        if acked > 0.0 && !self.recover_or_restore(s, rs) {
            let target = self.inflight_at(self.bw(), self.cwnd_gain) + self.aggregation_cwnd();
            if self.filled_pipe {
                s.cwnd = (s.cwnd + acked).min(target);
            } else if s.cwnd < target || (rs.delivered_total as f64) < self.initial_cwnd {
                s.cwnd += acked;
            }
            s.cwnd = s.cwnd.max(MIN_CWND);
        }
        s.cwnd = s.cwnd.min(s.max_window as f64);
        if matches!(self.mode, Mode::ProbeRtt { .. }) {
            s.cwnd = s.cwnd.min(MIN_CWND);
        }
    }
}

/// SplitMix64's finaliser: spreads nanosecond timestamps over the phases.
fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl CongestionControl for Bbr {
    fn own_slow_start(&self) -> bool {
        true
    }

    fn name(&self) -> &'static str {
        "bbr"
    }

    fn recovery(&self) -> Recovery {
        self.recovery
    }

    /// BBR sets its window in `on_delivery`, on every ACK.
    fn on_ack(&mut self, _s: &mut SocketState, _acked: u32, _now: SimTime) {}

    /// No multiplicative decrease: the window in use is kept (and saved, §4.2.3.5), so the
    /// sender's recovery starts from it and BBR's packet conservation takes over.
    fn ssthresh(&mut self, s: &SocketState, _now: SimTime) -> f64 {
        self.save_cwnd(s);
        s.window_in_use().max(MIN_CWND)
    }

    fn on_timeout(&mut self, _s: &mut SocketState, now: SimTime) {
        // Linux bbr_set_state(TCP_CA_Loss): a timeout ends the round and restarts the
        // full-pipe check; cwnd is the one segment the sender left. It counts as a loss for
        // long-term sampling.
        self.prev_ca_state = CaState::Loss;
        self.full_bw = 0.0;
        self.round_start = true;
        if self.params.long_term_bw.is_some() {
            self.long_term_sampling(true, false, self.delivered_total, now);
        }
    }

    /// Linux bbr_cwnd_event(CA_EVENT_TX_START) with tp->app_limited: a restart from idle.
    fn on_tx_start(&mut self, s: &mut SocketState, now: SimTime) {
        if !self.params.idle_restart {
            return;
        }
        self.idle_restart = true;
        self.aggregation.epoch_start = now;
        self.aggregation.epoch_acked = 0.0;
        match self.mode {
            // No point in a queue: the application, not the path, set the pace.
            Mode::ProbeBw { .. } => self.pace_at(1.0),
            // bbr_check_probe_rtt_done: 200 ms at the minimum have passed.
            Mode::ProbeRtt { done: Some(done), .. } if now > done => self.exit_probe_rtt(s, now),
            _ => {}
        }
    }

    fn wants_rate_samples(&self) -> bool {
        true
    }

    fn on_delivery(&mut self, s: &mut SocketState, rs: &RateSample, now: SimTime) {
        // §4.1 BBRUpdateModelAndState, then §4.2 BBRUpdateControlParameters.
        self.lost_total += rs.losses as u64;
        self.delivered_total = rs.delivered_total;
        self.update_btlbw(rs, now);
        self.update_ack_aggregation(s, rs, now);
        self.update_cycle_phase(rs, now);
        self.check_full_pipe(rs);
        self.check_drain(rs, now);
        self.update_rtprop(s, rs, now);
        self.set_pacing_rate(s, rs);
        self.set_cwnd(s, rs);
    }

    fn pacing_rate(&self) -> Option<f64> {
        Some(self.pacing_rate)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: SimTime = 1_000_000;

    /// A path of `rate` segments per second and `rtt`: feeds BBR one ACK per segment of a
    /// window-limited flight per round trip, as a bottleneck would deliver them.
    struct Path {
        bbr: Bbr,
        s: SocketState,
        delivered: u64,
        now: SimTime,
        /// Segments standing in the bottleneck queue, counted in flight.
        queued: u32,
        /// ProbeBW phases in the order visited.
        phases: Vec<usize>,
    }

    impl Path {
        fn new() -> Self {
            Path::with(BbrParams::default())
        }

        fn with(bbr: BbrParams) -> Self {
            let bbr = Bbr::new(&TcpConfig {
                initial_cwnd_pkts: 10.0,
                bbr,
                ..TcpConfig::default()
            });
            Path {
                bbr,
                s: SocketState::new(10.0, f64::INFINITY, 100_000),
                delivered: 0,
                now: 0,
                queued: 0,
                phases: Vec::new(),
            }
        }

        /// One round trip at `rate` segments/s (capped by cwnd), RTT `rtt` ms.
        fn round(&mut self, rate: f64, rtt: u64) {
            let flight = (self.s.cwnd.floor()).min(rate * rtt as f64 / 1000.0).max(1.0) as u64;
            let prior = self.delivered;
            for i in 0..flight {
                self.delivered += 1;
                let t = self.now + rtt * MS * (i + 1) / flight;
                let rs = RateSample {
                    newly_delivered: 1,
                    delivered_total: self.delivered,
                    prior_delivered: prior,
                    delivered: self.delivered - prior,
                    interval: rtt * MS,
                    delivery_rate: Some(flight as f64 / (rtt as f64 / 1000.0)),
                    is_app_limited: false,
                    rtt: Some(rtt * MS),
                    in_flight: (flight - i - 1) as u32 + self.queued,
                    losses: 0,
                };
                self.bbr.on_delivery(&mut self.s, &rs, t);
                if let Mode::ProbeBw { phase, .. } = self.bbr.mode() {
                    if self.phases.last() != Some(&phase) {
                        self.phases.push(phase);
                    }
                }
            }
            self.now += rtt * MS;
        }

        /// One round trip at `rate` segments/s in which every `every`-th segment is lost: the
        /// ACK after it marks it lost, as a policer's drops would be.
        fn lossy_round(&mut self, rate: f64, rtt: u64, every: u64) {
            let flight = (self.s.cwnd.floor()).min(rate * rtt as f64 / 1000.0).max(1.0) as u64;
            let prior = self.delivered;
            for i in 0..flight {
                let t = self.now + rtt * MS * (i + 1) / flight;
                let lost = i % every == every - 1;
                if lost {
                    continue;
                }
                self.delivered += 1;
                let rs = RateSample {
                    newly_delivered: 1,
                    delivered_total: self.delivered,
                    prior_delivered: prior,
                    delivered: self.delivered - prior,
                    interval: rtt * MS,
                    delivery_rate: Some(rate),
                    is_app_limited: false,
                    rtt: Some(rtt * MS),
                    in_flight: (flight - i - 1) as u32,
                    losses: u32::from(i > 0 && i % every == 0),
                };
                self.bbr.on_delivery(&mut self.s, &rs, t);
            }
            self.now += rtt * MS;
        }
    }

    #[test]
    fn startup_paces_at_two_over_ln2_and_ends_when_the_bandwidth_stops_growing() {
        let mut p = Path::new();
        p.round(1e9, 50);
        assert_eq!(p.bbr.mode(), Mode::Startup);
        assert!((p.bbr.pacing_rate().unwrap() / p.bbr.btlbw() - HIGH_GAIN).abs() < 1e-9);
        // A 1000 segments/s bottleneck at 50 ms: 50 segments per round trip.
        let mut rounds = 1;
        while p.bbr.mode() == Mode::Startup {
            p.round(1000.0, 50);
            rounds += 1;
            assert!(rounds < 20, "Startup never ended");
        }
        assert!((p.bbr.btlbw() - 1000.0).abs() < 1.0, "{}", p.bbr.btlbw());
        assert!(
            rounds <= 3 + 4,
            "{rounds} rounds: three without 25 % growth after reaching the rate"
        );
        // Drain, then ProbeBW once the flight fits the BDP.
        p.round(1000.0, 50);
        assert!(matches!(p.bbr.mode(), Mode::ProbeBw { .. }), "{:?}", p.bbr.mode());
    }

    #[test]
    fn probe_bw_cycles_through_the_eight_gains_once_per_rtprop() {
        let mut p = Path::new();
        for _ in 0..12 {
            p.round(1000.0, 50);
        }
        // A standing queue of 20 lets the 1.25 phase reach its in-flight target.
        p.queued = 20;
        p.phases.clear();
        for _ in 0..20 {
            p.round(1000.0, 50);
        }
        // Every phase in order, each lasting a round trip but 0.75, which ends once the
        // queue is gone (here within its round trip).
        let start = p.phases.iter().position(|&i| i == 0).expect("a 1.25 phase");
        let cycle: Vec<usize> = p.phases[start..].iter().copied().take(9).collect();
        assert_eq!(cycle, vec![0, 1, 2, 3, 4, 5, 6, 7, 0], "{:?}", p.phases);
        // 2·BDP plus three send quanta of 2 segments (1000 segments/s of 1040 bytes: 8.3 Mb/s).
        assert!((p.s.cwnd - (2.0 * 50.0 + 6.0)).abs() < 1.0, "cwnd {}", p.s.cwnd);
    }

    #[test]
    fn rtprop_older_than_ten_seconds_sends_bbr_to_probe_rtt_at_four_segments() {
        let mut p = Path::new();
        for _ in 0..12 {
            p.round(1000.0, 50);
        }
        // The queue never empties again: every RTT sample is 60 ms, none lowers RTprop.
        let mut probe_rtt_at = None;
        while p.now < 11_000 * MS {
            p.round(1000.0, 60);
            if probe_rtt_at.is_none() && matches!(p.bbr.mode(), Mode::ProbeRtt { .. }) {
                probe_rtt_at = Some(p.now);
                assert_eq!(p.s.cwnd, MIN_CWND);
            }
        }
        let at = probe_rtt_at.expect("ProbeRTT");
        assert!((10_000 * MS..10_700 * MS).contains(&at), "{} ms", at / MS);
        assert!(
            matches!(p.bbr.mode(), Mode::ProbeBw { .. }),
            "left after 200 ms: {:?}",
            p.bbr.mode()
        );
        assert!(p.s.cwnd > 50.0, "the window from before is restored: {}", p.s.cwnd);
        assert_eq!(p.bbr.rtprop, Some(60 * MS), "the expired RTprop took the new sample");
    }

    #[test]
    fn the_bandwidth_filter_forgets_a_maximum_after_ten_round_trips() {
        let mut f = MaxFilter::default();
        f.update(1, 100.0);
        f.update(2, 50.0);
        assert_eq!(f.get(), 100.0);
        f.update(10, 60.0);
        assert_eq!(f.get(), 100.0);
        f.update(11, 40.0);
        assert_eq!(f.get(), 60.0);
    }

    #[test]
    fn fast_recovery_conserves_packets_and_leaving_it_restores_the_window() {
        let mut p = Path::new();
        for _ in 0..12 {
            p.round(1000.0, 50);
        }
        let before = p.s.cwnd;
        assert_eq!(p.bbr.ssthresh(&p.s, p.now), before, "no multiplicative decrease");
        p.s.ca_state = CaState::Recovery;
        let rs = RateSample {
            newly_delivered: 1,
            delivered_total: p.delivered + 1,
            in_flight: 30,
            ..RateSample::default()
        };
        p.bbr.on_delivery(&mut p.s, &rs, p.now);
        assert_eq!(p.s.cwnd, 31.0, "packet conservation: in flight + delivered");
        p.s.ca_state = CaState::Open;
        let rs = RateSample {
            newly_delivered: 1,
            delivered_total: p.delivered + 2,
            in_flight: 30,
            ..RateSample::default()
        };
        p.bbr.on_delivery(&mut p.s, &rs, p.now);
        assert_eq!(p.s.cwnd, before, "restored on leaving recovery");
    }

    #[test]
    fn segments_marked_lost_come_off_the_window_in_recovery_but_never_below_conservation() {
        let mut p = Path::new();
        for _ in 0..12 {
            p.round(1000.0, 50);
        }
        p.s.ca_state = CaState::Recovery;
        let rs = RateSample {
            newly_delivered: 1,
            delivered_total: p.delivered + 1,
            in_flight: 80,
            ..RateSample::default()
        };
        p.bbr.on_delivery(&mut p.s, &rs, p.now);
        assert_eq!(p.s.cwnd, 81.0);
        // Ten more holes taken as lost: cwnd falls by ten, then packet conservation lifts it
        // to what is still in flight plus what this ACK delivered.
        let rs = RateSample {
            newly_delivered: 1,
            delivered_total: p.delivered + 2,
            in_flight: 60,
            losses: 10,
            ..RateSample::default()
        };
        p.bbr.on_delivery(&mut p.s, &rs, p.now);
        assert_eq!(p.s.cwnd, 71.0, "81 - 10, above the 61 conservation asks");
        let rs = RateSample {
            newly_delivered: 1,
            delivered_total: p.delivered + 3,
            in_flight: 68,
            losses: 30,
            ..RateSample::default()
        };
        p.bbr.on_delivery(&mut p.s, &rs, p.now);
        assert_eq!(
            p.s.cwnd, 69.0,
            "71 - 30 = 41 is below in flight + delivered: conservation holds 69"
        );
    }

    #[test]
    fn sack_off_recovers_as_newreno_and_the_initial_pacing_rate_assumes_one_millisecond() {
        let cfg = TcpConfig {
            sack: Some(false),
            ..TcpConfig::default()
        };
        let b = Bbr::new(&cfg);
        assert_eq!(b.recovery(), Recovery::NewReno(PartialAckTimer::EveryPartialAck));
        assert!((b.pacing_rate().unwrap() - HIGH_GAIN * 2.0 / 1e-3).abs() < 1e-6);
    }

    #[test]
    fn the_aggregation_allowance_adds_the_excess_an_ack_burst_delivered_to_the_target() {
        let aggregating = || {
            Path::with(BbrParams {
                ack_aggregation: Some(AckAggregationParams::default()),
                ..BbrParams::default()
            })
        };
        let (mut plain, mut agg) = (Path::new(), aggregating());
        for p in [&mut plain, &mut agg] {
            for _ in 0..12 {
                p.round(1000.0, 50);
            }
        }
        // Evenly spaced ACKs at BtlBw deliver nothing beyond it: at most one segment extra.
        assert!(agg.bbr.aggregation_cwnd() <= 1.0, "{}", agg.bbr.aggregation_cwnd());
        // Twenty segments acknowledged by one stretch ACK: 19 more than 1 ms of BtlBw.
        let rs = RateSample {
            newly_delivered: 20,
            delivered_total: agg.delivered + 20,
            prior_delivered: agg.delivered,
            delivered: 20,
            interval: 50 * MS,
            delivery_rate: Some(1000.0),
            rtt: Some(50 * MS),
            in_flight: 60,
            ..RateSample::default()
        };
        agg.bbr.on_delivery(&mut agg.s, &rs, agg.now + MS);
        let extra = agg.bbr.aggregation_cwnd();
        assert!((18.0..=20.0).contains(&extra), "{extra}");
        assert_eq!(plain.bbr.aggregation_cwnd(), 0.0, "off by default");
        // Capped by 100 ms of BtlBw: 100 segments here.
        let rs = RateSample {
            newly_delivered: 500,
            delivered_total: agg.delivered + 520,
            ..rs
        };
        agg.s.cwnd = 1000.0;
        agg.bbr.on_delivery(&mut agg.s, &rs, agg.now + MS);
        assert!(
            (agg.bbr.aggregation_cwnd() - 100.0).abs() < 1.0,
            "{}",
            agg.bbr.aggregation_cwnd()
        );
    }

    #[test]
    fn ns3s_whole_second_epochs_count_evenly_spaced_acks_up_to_its_4096_byte_reset_as_excess() {
        let mut p = Path::with(BbrParams::ns3(1000));
        for _ in 0..12 {
            p.round(1000.0, 50);
        }
        // Nothing is expected in an epoch under 1 s, so 4 segments (4096 B) count as excess.
        assert_eq!(p.bbr.aggregation_cwnd(), 4.0);
        // With the 1.25 phase's 2 segments, a one-segment quantum and the allowance: 2·50 + 3 + 4.
        let mut seen_probe = false;
        for _ in 0..20 {
            p.round(1000.0, 50);
            let target = p.bbr.inflight_at(p.bbr.bw(), CWND_GAIN) + p.bbr.aggregation_cwnd();
            if let Mode::ProbeBw { phase: 0, .. } = p.bbr.mode() {
                seen_probe = true;
                assert!((target - 109.0).abs() < 1.0, "{target}");
            }
        }
        assert!(seen_probe);
        assert!((p.bbr.pacing_rate().unwrap() / p.bbr.btlbw() - 0.99 * p.bbr.pacing_gain).abs() < 1e-9);
    }

    #[test]
    fn two_lossy_intervals_at_one_rate_make_it_the_long_term_bandwidth_for_48_rounds() {
        let mut p = Path::with(BbrParams {
            long_term_bw: Some(LongTermBwParams::default()),
            ..BbrParams::default()
        });
        for _ in 0..12 {
            p.round(1000.0, 50);
        }
        assert!(matches!(p.bbr.mode(), Mode::ProbeBw { .. }));
        // A policer at 600 segments/s dropping every 4th segment: lost/delivered = 1/3.
        let mut rounds = 0;
        while !p.bbr.uses_long_term_bw() {
            p.lossy_round(600.0, 50, 4);
            rounds += 1;
            assert!(rounds <= 12, "two intervals of 4-16 rounds");
        }
        assert!(rounds >= 8, "{rounds}");
        let lt = p.bbr.bw();
        assert!((lt - 600.0 * 0.75).abs() < 0.1 * 450.0, "the delivered rate: {lt}");
        assert!(p.bbr.btlbw() >= 600.0, "the max filter holds more: {}", p.bbr.btlbw());
        assert!((p.bbr.pacing_rate().unwrap() - lt).abs() < 1e-6, "paced at gain 1");
        for _ in 0..47 {
            p.lossy_round(600.0, 50, 4);
            assert!(p.bbr.uses_long_term_bw());
            assert_eq!(p.bbr.pacing_gain, 1.0);
        }
        for _ in 0..3 {
            p.lossy_round(600.0, 50, 4);
        }
        assert!(!p.bbr.uses_long_term_bw(), "48 ProbeBW rounds later it probes again");
        let plain = {
            let mut q = Path::new();
            for _ in 0..12 {
                q.round(1000.0, 50);
            }
            for _ in 0..20 {
                q.lossy_round(600.0, 50, 4);
            }
            q
        };
        assert!(!plain.bbr.uses_long_term_bw(), "off by default");
    }

    #[test]
    fn a_restart_from_idle_paces_probe_bw_at_btlbw_and_defers_probe_rtt_to_the_next_delivery() {
        let restarting = BbrParams {
            idle_restart: true,
            ..BbrParams::default()
        };
        for (params, expect_restart) in [(restarting, true), (BbrParams::default(), false)] {
            let mut p = Path::with(params);
            for _ in 0..12 {
                p.round(1000.0, 50);
            }
            // Into the 1.25 phase.
            while !matches!(p.bbr.mode(), Mode::ProbeBw { phase: 0, .. }) {
                p.round(1000.0, 50);
            }
            assert!((p.bbr.pacing_rate().unwrap() - 1.25 * p.bbr.btlbw()).abs() < 1e-6);
            // 11 s idle: RTprop has expired when data leaves again.
            p.now += 11_000 * MS;
            p.bbr.on_tx_start(&mut p.s, p.now);
            let rate = p.bbr.pacing_rate().unwrap();
            if expect_restart {
                assert!((rate - p.bbr.btlbw()).abs() < 1e-6, "{rate}");
            } else {
                assert!((rate - 1.25 * p.bbr.btlbw()).abs() < 1e-6, "{rate}");
            }
            // The first ACK after the restart takes the RTprop sample; ProbeRTT only without
            // the restart.
            let rs = RateSample {
                newly_delivered: 1,
                delivered_total: p.delivered + 1,
                prior_delivered: p.delivered,
                delivered: 1,
                interval: 50 * MS,
                delivery_rate: Some(20.0),
                is_app_limited: true,
                rtt: Some(50 * MS),
                in_flight: 9,
                losses: 0,
            };
            p.bbr.on_delivery(&mut p.s, &rs, p.now + 50 * MS);
            assert_eq!(
                matches!(p.bbr.mode(), Mode::ProbeRtt { .. }),
                !expect_restart,
                "{:?}",
                p.bbr.mode()
            );
        }
    }

    #[test]
    fn without_the_lost_segment_deduction_recovery_only_conserves_packets() {
        let mut p = Path::with(BbrParams {
            lost_deduction: false,
            ..BbrParams::default()
        });
        for _ in 0..12 {
            p.round(1000.0, 50);
        }
        p.s.ca_state = CaState::Recovery;
        let base = RateSample {
            newly_delivered: 1,
            delivered_total: p.delivered + 1,
            in_flight: 80,
            ..RateSample::default()
        };
        p.bbr.on_delivery(&mut p.s, &base, p.now);
        let rs = RateSample {
            delivered_total: p.delivered + 2,
            in_flight: 60,
            losses: 10,
            ..base
        };
        p.bbr.on_delivery(&mut p.s, &rs, p.now);
        assert_eq!(p.s.cwnd, 81.0, "kept: the ten lost segments are not taken off");
    }
}
