//! YeAH-TCP, Yet Another Highspeed TCP (Baiocchi, Castellani & Vacirca, PFLDnet 2007): a
//! high-speed variant that switches between a *fast* mode, Scalable TCP's increase, and a
//! *slow* mode, Reno's, by a Vegas-like estimate of the packets it keeps queued at the
//! bottleneck, Q = cwnd·(RTT_min − RTT_base)/RTT_min, and the queueing delay over the base,
//! L = (RTT_min − RTT_base)/RTT_base. Once a round trip (RTT_min the lowest RTT of the round):
//! - Q < α and L < 1/φ: fast mode (the paper's "fast" state).
//! - otherwise slow mode; and with Q > α, *precautionary decongestion*: the window gives back
//!   the queue it built, cwnd −= min(Q/γ, cwnd/2^ε), not below `reno_count`, and
//!   ssthresh = cwnd (the paper's decongestion of the queue it measured).
//! - A loss while not competing with Reno flows (fewer than ρ slow-mode rounds in a row) takes
//!   away max(Q_last, cwnd/2^δ), at most half; when competing, half, as Reno (the paper's
//!   Reno detection: a Reno flow sharing the queue keeps it above α, so YeAH stays in slow mode
//!   and must decrease as Reno does to stay fair). `reno_count`, the floor of decongestion,
//!   starts at half the window on entering slow mode and grows one a slow round; it is halved at
//!   a loss and reset to 2 after ζ fast rounds.
//!
//! The paper's section numbers were not checked against its text here; the rules and the
//! constants are as ns-3.44's `TcpYeah` and Linux's tcp_yeah.c implement them, with ns-3's
//! defaults (`YeahParams`): α 80, γ 1, δ 3, ε 1, φ 8, ρ 16, ζ 50, and Scalable's increase of
//! one segment per min(cwnd, 100) ACKs (`StcpAiFactor`).
//!
//! Where ns-3 and Linux differ, and what tcpsim does:
//! - **L > 1/φ.** Linux tests RTT_min − RTT_base > RTT_base/φ. ns-3 writes `L > (1 / m_phy)`
//!   with φ an integer, so 1/φ is 0 and *any* queueing delay puts it in slow mode. tcpsim
//!   follows Linux and the paper (1/8 of the base RTT).
//! - **The loss reduction** is taken from the window (Linux's snd_cwnd); ns-3 takes it from
//!   bytes in flight. tcpsim uses the window in use (cwnd without fast recovery's inflation),
//!   as its other variants do; the two agree outside fast recovery. Both keep at least 2.
//! - **Slow start** is RFC 5681's (cwnd < ssthresh, ns-3); Linux also slow-starts at
//!   cwnd = ssthresh.
//! - ns-3 and Linux restart the round at the return to the Open state after a recovery; tcpsim
//!   restarts it at the first ACK after a loss reduction (the first ACK outside recovery).
//! - The fast mode's increase is 1/min(cwnd, 100) per ACK, ns-3's and Linux's Scalable (not
//!   `scalable.rs`'s 0.01 of Kelly's paper, which is the same above 100 segments).
//! - SACK (RFC 6675) recovery, NewReno with `sack: false`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{aimd, CongestionControl};
use crate::tcp::{Recovery, SocketState};
use crate::time::SimTime;

/// YeAH's knobs, a flow's `tcp.yeah`, named and defaulted as ns-3.44's `TcpYeah` attributes
/// (and Linux's TCP_YEAH_* constants).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct YeahParams {
    /// α, packets: the most this flow may keep queued at the bottleneck in fast mode (80).
    pub alpha: u32,
    /// γ: precautionary decongestion removes Q/γ packets a round trip (1: the whole queue).
    pub gamma: u32,
    /// δ: a loss removes at least cwnd/2^δ (3: an eighth).
    pub delta: u32,
    /// ε: precautionary decongestion removes at most cwnd/2^ε (1: half).
    pub epsilon: u32,
    /// φ: slow mode when the queueing delay passes RTT_base/φ (8).
    pub phy: u32,
    /// ρ: slow-mode rounds in a row after which a loss is taken as competition with Reno (16).
    pub rho: u32,
    /// ζ: fast-mode rounds after which `reno_count` is reset to 2 (50).
    pub zeta: u32,
    /// Fast mode adds one segment per min(cwnd, this) ACKs (ns-3's `StcpAiFactor`, 100).
    pub stcp_ai_factor: u32,
}

impl Default for YeahParams {
    fn default() -> Self {
        YeahParams {
            alpha: 80,
            gamma: 1,
            delta: 3,
            epsilon: 1,
            phy: 8,
            rho: 16,
            zeta: 50,
            stcp_ai_factor: 100,
        }
    }
}

impl YeahParams {
    /// The largest shift δ and ε may take (a 2^16 fraction of the window is already nothing).
    pub const MAX_SHIFT: u32 = 16;
}

pub struct Yeah {
    recovery: Recovery,
    p: YeahParams,
    /// The lowest RTT ever seen (RTT_base).
    base_rtt: Option<SimTime>,
    /// The lowest RTT of the round in progress (RTT_min) and the samples it has had.
    round_min_rtt: Option<SimTime>,
    round_samples: u32,
    /// The round ends when this segment is acknowledged.
    round_end: u32,
    /// A loss reduced the window: the next ACK starts a new round.
    restart_round: bool,
    /// Slow-mode rounds in a row (ns-3's `m_doingRenoNow`); 0 is fast mode.
    slow_rounds: u32,
    /// Fast-mode rounds since the last reset or loss.
    fast_rounds: u32,
    /// The floor of precautionary decongestion, segments.
    reno_count: f64,
    /// Q of the last judged round, packets.
    last_queue: f64,
}

impl Yeah {
    pub fn new(p: &YeahParams, sack: Option<bool>) -> Self {
        Yeah {
            recovery: aimd::sack_or_newreno(sack),
            p: p.clone(),
            base_rtt: None,
            round_min_rtt: None,
            round_samples: 0,
            round_end: 0,
            restart_round: false,
            slow_rounds: 0,
            fast_rounds: 0,
            reno_count: 2.0,
            last_queue: 0.0,
        }
    }

    /// Whether the window grows as Scalable TCP (fast mode) rather than Reno.
    pub fn fast_mode(&self) -> bool {
        self.slow_rounds == 0
    }

    /// Once a round trip: Q and L from the round's lowest RTT, the mode, and precautionary
    /// decongestion. Needs three samples, so that one was not from a delayed ACK (ns-3, Linux).
    fn judge_round(&mut self, s: &mut SocketState) {
        let (Some(base), Some(rtt), true) = (self.base_rtt, self.round_min_rtt, self.round_samples > 2) else {
            return;
        };
        let p = &self.p;
        let cwnd = s.cwnd.floor();
        let queueing = (rtt - base) as f64;
        let queue = (cwnd * queueing / rtt as f64).floor();
        let congested = queueing > base as f64 / p.phy as f64;
        if queue > p.alpha as f64 || congested {
            if queue > p.alpha as f64 && cwnd > self.reno_count {
                // Precautionary decongestion: give back the queue, at most cwnd/2^ε.
                let reduction = (queue / p.gamma as f64)
                    .floor()
                    .min((cwnd / (1u64 << p.epsilon) as f64).floor());
                s.cwnd = (cwnd - reduction).max(self.reno_count);
                s.ssthresh = s.cwnd;
            }
            self.reno_count = if self.reno_count <= 2.0 {
                (s.cwnd.floor() / 2.0).floor().max(2.0)
            } else {
                self.reno_count + 1.0
            };
            self.slow_rounds = self.slow_rounds.saturating_add(1);
        } else {
            self.fast_rounds += 1;
            if self.fast_rounds > p.zeta {
                self.reno_count = 2.0;
                self.fast_rounds = 0;
            }
            self.slow_rounds = 0;
        }
        self.last_queue = queue;
    }

    fn start_round(&mut self, s: &SocketState) {
        self.round_end = s.snd_nxt.max(s.snd_una + 1);
        self.round_samples = 0;
        self.round_min_rtt = None;
    }
}

impl CongestionControl for Yeah {
    fn name(&self) -> &'static str {
        "yeah"
    }

    fn recovery(&self) -> Recovery {
        self.recovery
    }

    fn on_rtt_sample(&mut self, _s: &SocketState, rtt: SimTime, _now: SimTime) {
        self.base_rtt = Some(self.base_rtt.map_or(rtt, |b| b.min(rtt)));
        self.round_min_rtt = Some(self.round_min_rtt.map_or(rtt, |m| m.min(rtt)));
        self.round_samples += 1;
    }

    fn on_ack(&mut self, s: &mut SocketState, _acked: u32, _now: SimTime) {
        if self.restart_round {
            self.restart_round = false;
            self.start_round(s);
        }
        if s.in_slow_start() || !self.fast_mode() {
            aimd::increase(s);
        } else {
            let per = s.cwnd.floor().min(self.p.stcp_ai_factor as f64).max(1.0);
            s.cwnd = (s.cwnd + 1.0 / per).min(s.max_window as f64);
        }
        if s.snd_una >= self.round_end {
            self.judge_round(s);
            self.start_round(s);
        }
    }

    fn ssthresh(&mut self, s: &SocketState, _now: SimTime) -> f64 {
        let w = s.window_in_use().floor();
        let half = (w / 2.0).floor().max(2.0);
        let reduction = if self.slow_rounds < self.p.rho {
            // Not competing with Reno: the queue it measured, at least w/2^δ, at most half.
            self.last_queue
                .max((w / (1u64 << self.p.delta) as f64).floor())
                .min(half)
        } else {
            half
        };
        self.fast_rounds = 0;
        self.reno_count = (self.reno_count / 2.0).floor().max(2.0);
        self.restart_round = true;
        (w - reduction).max(2.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: SimTime = 1_000_000;

    /// A flow in congestion avoidance at `cwnd`, a base RTT of 100 ms, and one round of three
    /// samples at `rtt_ms` about to end.
    fn round_at(cwnd: f64, rtt_ms: u64) -> (Yeah, SocketState) {
        let mut cc = Yeah::new(&YeahParams::default(), None);
        let mut s = SocketState::new(cwnd, 10.0, 100_000);
        cc.on_rtt_sample(&s, 100 * MS, 0);
        cc.start_round(&s);
        for _ in 0..3 {
            cc.on_rtt_sample(&s, rtt_ms * MS, 0);
        }
        s.snd_una = 1;
        s.snd_nxt = 1000;
        (cc, s)
    }

    #[test]
    fn with_no_queue_it_stays_in_fast_mode_and_adds_a_segment_per_hundred_acks() {
        let (mut cc, mut s) = round_at(400.0, 100);
        cc.on_ack(&mut s, 1, 0);
        assert!(cc.fast_mode());
        assert!((s.cwnd - 400.01).abs() < 1e-9, "{}", s.cwnd);
        let (mut cc, mut s) = round_at(50.0, 100);
        cc.on_ack(&mut s, 1, 0);
        assert!((s.cwnd - 50.02).abs() < 1e-9, "1/min(cwnd, 100): {}", s.cwnd);
    }

    #[test]
    fn a_queue_above_alpha_gives_it_back_and_enters_slow_mode() {
        // 400 segments over a base RTT of 100 ms: at 110 ms Q = 400 · 10/110 = 36 (fast); at
        // 140 ms Q = 114 > 80: cwnd gives back 114 and ssthresh follows.
        let (mut cc, mut s) = round_at(400.0, 110);
        cc.on_ack(&mut s, 1, 0);
        assert!(cc.fast_mode(), "Q = 36, L = 0.1 < 1/8");
        let (mut cc, mut s) = round_at(400.0, 140);
        cc.on_ack(&mut s, 1, 0);
        assert!(!cc.fast_mode());
        assert_eq!((s.cwnd, s.ssthresh), (400.0 - 114.0, 286.0));
        assert_eq!(cc.reno_count, 143.0, "half the window on entering slow mode");
    }

    #[test]
    fn a_queueing_delay_past_an_eighth_of_the_base_is_slow_mode_without_decongestion() {
        // 200 segments at 130 ms: Q = 46 < 80, but L = 0.3 > 1/8.
        let (mut cc, mut s) = round_at(200.0, 130);
        cc.on_ack(&mut s, 1, 0);
        assert!(!cc.fast_mode());
        assert!((s.cwnd - 200.01).abs() < 1e-9, "no decongestion: {}", s.cwnd);
        let before = s.cwnd;
        cc.on_ack(&mut s, 1, 0);
        assert!((s.cwnd - before - 1.0 / before).abs() < 1e-12, "Reno's 1/w: {}", s.cwnd);
    }

    #[test]
    fn a_loss_in_fast_mode_takes_away_the_measured_queue_at_least_an_eighth() {
        let (mut cc, mut s) = round_at(400.0, 110);
        cc.on_ack(&mut s, 1, 0);
        assert_eq!(cc.last_queue, 36.0);
        assert_eq!(cc.ssthresh(&s, 0), 400.0 - 50.0, "an eighth (50) is more than Q = 36");
        cc.last_queue = 70.0;
        assert_eq!(cc.ssthresh(&s, 0), 400.0 - 70.0);
    }

    #[test]
    fn after_rho_slow_rounds_a_loss_halves_as_reno() {
        let (mut cc, s) = round_at(400.0, 110);
        cc.slow_rounds = 16;
        assert_eq!(cc.ssthresh(&s, 0), 200.0);
        cc.slow_rounds = 15;
        cc.last_queue = 10.0;
        assert_eq!(cc.ssthresh(&s, 0), 350.0);
    }

    #[test]
    fn fewer_than_three_samples_leave_the_round_unjudged() {
        let mut cc = Yeah::new(&YeahParams::default(), None);
        let mut s = SocketState::new(400.0, 10.0, 100_000);
        cc.on_rtt_sample(&s, 100 * MS, 0);
        cc.on_rtt_sample(&s, 200 * MS, 0);
        s.snd_nxt = 1000;
        cc.on_ack(&mut s, 1, 0);
        assert!(cc.fast_mode());
        assert_eq!(cc.last_queue, 0.0);
    }
}
