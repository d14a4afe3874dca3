//! The TCP sender: windows, retransmission, the retransmit timer, and driving the variant's
//! loss recovery (`recovery::LossRecovery`). Sequence numbers count segments, as in ns-2's
//! one-way agents.
//!
//! The sender never touches the event queue: it appends packets to an outbox and exposes the
//! deadline of its retransmit timer (`timer_deadline`); the simulation turns those into events.
//! With RACK-TLP (`tcp.rack`) that one timer also carries RACK's reorder timer and TLP's probe
//! timer, whichever is due first, as Linux multiplexes them on icsk_retransmit_timer.

use std::sync::Arc;

use super::delivery::DeliveryRate;
use super::rack::{RackTlp, TlpEpisode, TlpOutcome};
use super::recovery::{LossRecovery, PartialAck, Recovery};
use super::rto::RtoEstimator;
use super::scoreboard::Scoreboard;
use super::socket::{CaState, SocketState};
use crate::cc::{self, CongestionControl};
use crate::packet::{ecn, Packet, PacketKind};
use crate::scenario::{RecoverGuard, RepeatedTimeoutSsthresh, RttSampling, SackRecovery, TcpConfig};
use crate::time::{from_secs, to_secs, SimTime};

/// Cumulative counters; metrics take the difference over the measurement window.
#[derive(Clone, Copy, Debug, Default)]
pub struct SenderCounters {
    /// Data segments put on the wire, retransmissions included.
    pub packets_sent: u64,
    pub retransmits: u64,
    pub wire_bytes_sent: u64,
    pub timeouts: u64,
    /// Fast retransmits triggered by duplicate ACKs (Tahoe included).
    pub fast_retransmits: u64,
    /// Entries into fast recovery (never for Tahoe).
    pub fast_recoveries: u64,
    /// Fast recoveries completed by a full ACK, and the time they took (a timeout ends a
    /// recovery without completing it).
    pub recoveries_completed: u64,
    pub recovery_ns: u128,
    pub rtt_sum_ns: u128,
    pub rtt_samples: u64,
    /// The retransmit timer's value, sampled at every RTO update (once per round trip).
    pub rto_sum_ns: u128,
    pub rto_samples: u64,
    /// Window reductions in answer to ECE (`tcp.ecn`), at most one per window of data.
    pub ecn_reductions: u64,
}

pub struct TcpSender {
    flow: u32,
    /// Shared by the flows of a group that have the same settings (one copy, not one per flow).
    pub(in crate::tcp) cfg: Arc<TcpConfig>,
    pub s: SocketState,
    /// The receiver sends SACK blocks and the scoreboard reads them.
    sack: bool,
    cc: Box<dyn CongestionControl>,
    /// The variant's loss recovery; None only while one of its own methods runs.
    recovery: Option<Box<dyn LossRecovery>>,
    /// Which recovery that is, for what the sender asks of it on every ACK.
    recovery_kind: Recovery,
    rto: RtoEstimator,
    dupacks: u32,
    /// RFC 6582 "recover": high_tx when the last recovery or timeout began.
    recover: Option<u32>,
    /// After a reduction for ECE, the cumulative ACK that covers the first segment sent after
    /// it (high_tx + 1, the one carrying CWR): no other reduction before snd_una reaches it
    /// (RFC 3168 §6.1.2's once per window of data; an ACK of only the old window may still
    /// echo a mark from it). 0 before any.
    ecn_recover: u32,
    /// The window was reduced (`tcp.ecn`): the next new segment carries CWR (§6.1.2).
    cwr_pending: bool,
    /// The flow runs ECN: `tcp.ecn`, or a variant that always does (DCTCP, `precise_ecn`).
    ecn: bool,
    /// The reduced window before `integer_ssthresh` rounds it: ns-2's `halfwin`.
    pub(in crate::tcp) halved_window: f64,
    /// Partial ACKs in the current recovery.
    pub(in crate::tcp) partial_acks: u32,
    /// When the current fast recovery began.
    recovery_start: SimTime,
    /// The one segment being timed for the RTO estimator (BSD style, Karn's rule).
    timed: Option<(u32, SimTime)>,
    /// When the retransmit timer expires, if armed.
    pub rto_deadline: Option<SimTime>,
    pub(in crate::tcp) board: Scoreboard,
    /// RACK-TLP's state (`tcp.rack`): what is lost is decided by time, and the tail of a flight
    /// is probed. None: DupThresh decides.
    rack: Option<Box<RackTlp>>,
    /// Delivery-rate snapshots, for variants that model the path from them (BBR).
    rate: Option<Box<DeliveryRate>>,
    /// Pacing, for variants with a pacing rate: the earliest time the next segment may leave.
    pace_next: Option<SimTime>,
    /// When pacing held back a segment the window allows: the pacing timer's deadline.
    pub pace_deadline: Option<SimTime>,
    /// Segments the application has handed over; None: an endless supply.
    app_limit: Option<u32>,
    last_segment_payload: u32,
    epoch: u32,
    active: bool,
    pub counters: SenderCounters,
}

impl TcpSender {
    /// `variant` must be a known name (the scenario plan checked it).
    pub fn new(flow: u32, variant: &str, cfg: Arc<TcpConfig>) -> Self {
        let cc = cc::build(variant, &cfg).expect("variant names are validated before a run");
        let recovery = match cc.recovery() {
            Recovery::Sack if cfg.sack_recovery == SackRecovery::Ns2Sack1 => Recovery::Sack1,
            Recovery::Sack if cfg.sack_recovery == SackRecovery::Prr => Recovery::Prr,
            recovery => recovery,
        };
        let sack = cfg.sack.unwrap_or(recovery.needs_sack());
        let rate = cc.wants_rate_samples().then(Box::<DeliveryRate>::default);
        let pace_next = (cc.pacing_rate().is_some() || cfg.pacing.is_some() || cc.paces()).then_some(0);
        let ecn = cfg.ecn || cfg.l4s || cc.l4s() || cc.precise_ecn();
        TcpSender {
            flow,
            s: Self::fresh_state(&cfg),
            sack,
            cc,
            recovery: Some(recovery.build()),
            recovery_kind: recovery,
            rto: RtoEstimator::new(&cfg),
            dupacks: 0,
            recover: None,
            ecn_recover: 0,
            cwr_pending: false,
            ecn,
            partial_acks: 0,
            halved_window: 0.0,
            recovery_start: 0,
            timed: None,
            rto_deadline: None,
            board: if cfg.rack {
                Scoreboard::time_based()
            } else {
                Scoreboard::default()
            },
            rack: cfg.rack.then(Box::<RackTlp>::default),
            rate,
            pace_next,
            pace_deadline: None,
            app_limit: Some(0),
            last_segment_payload: cfg.mss_bytes,
            epoch: 0,
            active: false,
            counters: SenderCounters::default(),
            cfg,
        }
    }

    fn fresh_state(cfg: &TcpConfig) -> SocketState {
        let ssthresh = cfg.initial_ssthresh_pkts.unwrap_or(f64::INFINITY);
        SocketState::new(
            cfg.initial_cwnd_pkts.min(cfg.max_window_pkts as f64),
            ssthresh,
            cfg.max_window_pkts,
        )
    }

    /// The variant's name, as the scenario gave it (every variant reports its own).
    pub fn variant(&self) -> &'static str {
        self.cc.name()
    }

    /// The flow runs ECN (`tcp.ecn`, or DCTCP, which always does).
    pub fn ecn(&self) -> bool {
        self.ecn
    }

    /// The receiver must echo every CE mark precisely (DCTCP, RFC 8257 §3.2).
    pub fn precise_ecn(&self) -> bool {
        self.cc.precise_ecn()
    }

    /// DCTCP's α averaged over the segments acknowledged since the measurement window opened;
    /// None for other variants.
    pub fn mean_alpha(&self) -> Option<f64> {
        self.cc.ecn_alpha()
    }

    /// The measurement window opens: counters (and a variant's own averages) from zero.
    pub fn open_window(&mut self) {
        self.counters = SenderCounters::default();
        self.cc.open_window();
    }

    pub fn sack_enabled(&self) -> bool {
        self.sack
    }

    /// `tcp.quickack_pkts`: the receiver's quick ACKs at a connection's start (checked ≤ 65535).
    pub fn quickacks(&self) -> u16 {
        self.cfg.quickack_pkts as u16
    }

    /// Runs `f` with the loss recovery and the sender, which it may change.
    fn with_recovery<T>(&mut self, f: impl FnOnce(&mut dyn LossRecovery, &mut Self) -> T) -> T {
        let mut recovery = self
            .recovery
            .take()
            .expect("a recovery method never calls back into recovery");
        let value = f(recovery.as_mut(), self);
        self.recovery = Some(recovery);
        value
    }

    pub fn mss(&self) -> u32 {
        self.cfg.mss_bytes
    }

    pub fn epoch(&self) -> u32 {
        self.epoch
    }

    pub fn current_rto(&self) -> SimTime {
        self.rto.current()
    }

    /// Starts a transfer on a fresh connection: `bytes` None sends forever. Each transfer of a
    /// flow (HTTP responses) gets a new epoch, so stray segments of the last one are ignored.
    /// `path_rtt`: the path's propagation round trip, what a SYN exchange would measure: with
    /// `tcp.handshake_rtt` the connection's first RTT sample.
    pub fn start(&mut self, bytes: Option<u64>, epoch: u32, now: SimTime, path_rtt: SimTime, out: &mut Vec<Packet>) {
        if epoch != self.epoch || self.s.high_tx > 0 {
            // A new connection: fresh window, timer and variant state.
            self.s = Self::fresh_state(&self.cfg);
            self.cc = cc::build(self.variant(), &self.cfg).expect("validated");
            self.rto = RtoEstimator::new(&self.cfg);
            self.dupacks = 0;
            self.recover = None;
            self.ecn_recover = 0;
            self.cwr_pending = false;
            self.timed = None;
            self.rto_deadline = None;
            self.board.reset(0);
            if let Some(r) = &mut self.rack {
                r.reset();
            }
            if let Some(r) = &mut self.rate {
                r.reset();
            }
            self.pace_next = self.pace_next.map(|_| 0);
            self.pace_deadline = None;
        }
        self.epoch = epoch;
        if self.cfg.handshake_rtt && self.rto.srtt().is_none() {
            // Not a measurement of data: the RTO's counters leave it out.
            self.rto.sample(path_rtt);
            self.s.srtt = self.rto.srtt();
        }
        let shape = bytes.map(|b| super::transfer_shape(b, self.cfg.mss_bytes));
        self.app_limit = shape.map(|(segments, _)| segments);
        self.last_segment_payload = shape.map_or(self.cfg.mss_bytes, |(_, last)| last);
        self.active = true;
        self.try_send(now, out);
    }

    /// The application stops supplying new data; what was sent is still delivered.
    pub fn stop_new_data(&mut self) {
        self.app_limit = Some(self.s.high_tx);
    }

    /// Every segment of a finite transfer is acknowledged.
    pub fn finished(&self) -> bool {
        self.app_limit == Some(self.s.snd_una) && self.s.snd_una > 0
    }

    /// Payload size of segment `seq` (only the last of a finite transfer is short).
    pub fn payload(&self, seq: u32) -> u32 {
        match self.app_limit {
            Some(limit) if seq + 1 == limit => self.last_segment_payload,
            _ => self.cfg.mss_bytes,
        }
    }

    /// Segment numbers are 32-bit: an endless transfer stops short of wrapping them (4 TB
    /// at 1000-byte segments) rather than confuse the receiver.
    fn has_new_data(&self, seq: u32) -> bool {
        seq < u32::MAX - 1 && self.app_limit.is_none_or(|l| seq < l)
    }

    /// During recovery: whether the next segment may be new data (none is being resent
    /// go-back-N, the application has one, the receiver window takes it).
    pub(in crate::tcp) fn may_send_new_data(&self) -> bool {
        let high = self.s.high_tx;
        self.s.snd_nxt == high && self.has_new_data(high) && high < self.s.snd_una + self.s.max_window
    }

    /// Whether an ACK at snd_una is a duplicate: always, unless the recovery counts only the
    /// ones that SACK something new outside recovery (ns-2's Sack1, tcp-sack1.cc; RFC 6675 §2
    /// defines a DupAck the same way).
    fn counts_as_duplicate(&self, sack: bool) -> bool {
        let needs_new_sack = sack && self.recovery_kind.duplicate_needs_new_sack();
        !needs_new_sack || self.s.ca_state == CaState::Recovery || !self.board.newly_sacked().is_empty()
    }

    /// RFC 6582 §3.2 step 2: no second fast retransmit for the same window (`recover_guard`).
    pub(in crate::tcp) fn may_start_recovery(&self) -> bool {
        self.recover.is_none_or(|r| match self.cfg.recover_guard {
            RecoverGuard::AckReachesRecover => self.s.snd_una >= r,
            RecoverGuard::AckPassesRecover => self.s.snd_una > r,
        })
    }

    /// The variant's ssthresh for a reduction, in whole segments when the scenario asks
    /// (`integer_ssthresh`, ns-2.35).
    fn reduced_ssthresh(&mut self, now: SimTime) -> f64 {
        let ssthresh = self.cc.ssthresh(&self.s, now);
        self.halved_window = ssthresh;
        if self.cfg.integer_ssthresh {
            ssthresh.floor()
        } else {
            ssthresh
        }
    }

    fn restart_timer(&mut self, now: SimTime) {
        self.rto_deadline = Some(now.saturating_add(self.rto.current()));
    }

    pub(in crate::tcp) fn transmit(&mut self, seq: u32, now: SimTime, out: &mut Vec<Packet>) {
        let idle = self.s.snd_una >= self.s.high_tx; // nothing outstanding
        let retransmission = seq < self.s.high_tx;
        if idle && !retransmission && self.rate.as_ref().is_some_and(|r| r.is_app_limited()) {
            self.cc.on_tx_start(&mut self.s, now);
        }
        let size = self.payload(seq) + self.cfg.header_bytes;
        let mut p = Packet::new(self.flow, PacketKind::Data, self.epoch, seq, size, now);
        p.retransmission = retransmission;
        let c = &mut self.counters;
        c.packets_sent += 1;
        c.wire_bytes_sent += size as u64;
        if retransmission {
            c.retransmits += 1;
            // Karn: a retransmitted segment's ACK cannot be timed, nor can what it covers.
            self.timed = None;
        } else {
            self.s.high_tx = seq + 1;
            if self.ecn {
                // RFC 3168 §6.1.5: new data is ECT(0) (ECT(1), the L4S identifier, with
                // `tcp.l4s`: RFC 9331 §4.1), a retransmission Not-ECT; CWR rides on the first
                // new segment after a reduction (§6.1.2).
                p.ecn = if self.cfg.l4s || self.cc.l4s() {
                    ecn::ECT1
                } else {
                    ecn::ECT0
                };
                if self.cwr_pending {
                    p.ecn |= ecn::CWR;
                    self.cwr_pending = false;
                }
            }
            if self.timed.is_none() && self.cfg.rtt_sampling == RttSampling::PerRtt {
                self.timed = Some((seq, now));
            }
        }
        if let Some(r) = &mut self.rate {
            r.on_send(seq, now, idle, retransmission);
        }
        if let Some(r) = &mut self.rack {
            r.on_send(seq, now, retransmission);
        }
        if let Some(next) = self.pace_next {
            let rate = self.pacing_rate();
            self.pace_next = Some(next.max(now).saturating_add(from_secs(1.0 / rate)));
        }
        if self.rto_deadline.is_none() {
            self.restart_timer(now); // RFC 6298 §5.1
        }
        out.push(p);
    }

    /// Segments per second: the variant's own rate (BBR), else the scenario's `pacing` (or Linux's
    /// default ratios for a variant that `paces`) from cwnd and SRTT, unlimited before the first
    /// RTT sample.
    fn pacing_rate(&self) -> f64 {
        if let Some(rate) = self.cc.pacing_rate() {
            return rate;
        }
        let linux = self.cc.paces().then_some(&crate::scenario::LINUX_PACING);
        match (self.cfg.pacing.as_ref().or(linux), self.s.srtt) {
            (Some(p), Some(srtt)) if srtt > 0 => p.rate(self.s.cwnd, self.s.ssthresh, self.s.flight(), to_secs(srtt)),
            _ => f64::INFINITY,
        }
    }

    /// Pacing (variants with a pacing rate, or `pacing`): true when the next segment may not leave yet, and
    /// then the pacing timer is armed for when it may.
    pub(in crate::tcp) fn pacing_holds(&mut self, now: SimTime) -> bool {
        match self.pace_next {
            Some(t) if t > now => {
                self.pace_deadline = Some(t);
                true
            }
            _ => false,
        }
    }

    /// The pacing timer expired: send what pacing held back.
    pub fn on_pace_timer(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        self.try_send(now, out);
    }

    /// Sends what the window, the application and pacing allow; with RACK-TLP, then arms the
    /// probe timer for the tail of what is in flight.
    pub fn try_send(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        let high = self.s.high_tx;
        self.send_allowed(now, out);
        if self.rack.is_some() {
            self.schedule_probe(now, self.s.high_tx > high);
        }
    }

    fn send_allowed(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        if !self.active {
            return;
        }
        self.pace_deadline = None;
        if self.s.ca_state == CaState::Recovery && self.with_recovery(|r, tx| r.send(tx, now, out)) {
            return;
        }
        // Resends skip what the receiver SACKed (unless the recovery forgets the scoreboard).
        let skips_sacked = self.sack_enabled() && self.recovery_kind.resend_skips_sacked();
        let mut window = self.s.window().max(1) as u64;
        // ns-2.35's send_one() answers duplicate ACKs 1 and 2 only (dupacks_ < numdupacks_), so
        // Tahoe's go-back-N from its fast retransmit, with three duplicates counted, sends one.
        let after_timeout = self.cfg.limited_transmit_after_timeout
            && self.s.ca_state == CaState::Loss
            && self.dupacks < self.cfg.dupack_threshold;
        if self.cfg.limited_transmit && (self.s.ca_state == CaState::Disorder || after_timeout) {
            // RFC 3042: each of the first two duplicate ACKs lets one new segment out.
            window = (window + self.dupacks.min(2) as u64).min(self.s.max_window as u64);
        }
        // Go-back-N after a timeout skips what the receiver SACKed, and those segments,
        // delivered, take no window: the window counts what is in flight.
        let resending = skips_sacked && self.s.ca_state == CaState::Loss;
        if resending {
            window += self.board.sacked_resent_over() as u64;
        }
        while (self.s.snd_nxt as u64) < self.s.snd_una as u64 + window {
            let seq = self.s.snd_nxt;
            if resending && seq >= self.s.snd_una + self.s.max_window {
                break; // the window grown by skipped SACKed segments never passes the receiver's
            }
            if seq >= self.s.high_tx && !self.has_new_data(seq) {
                if let Some(r) = &mut self.rate {
                    r.mark_app_limited(self.s.flight());
                }
                break;
            }
            let skip = skips_sacked && seq < self.s.high_tx && self.board.is_sacked(seq);
            if !skip && self.pacing_holds(now) {
                break;
            }
            if !skip {
                self.transmit(seq, now, out);
            } else if resending {
                window += 1;
            }
            if resending && seq < self.s.high_tx {
                self.board.resend_passed(seq);
            }
            self.s.snd_nxt += 1;
        }
    }

    /// An ACK for this flow arrived.
    pub fn on_ack(&mut self, ack: &Packet, now: SimTime, out: &mut Vec<Packet>) {
        if !self.active || ack.epoch != self.epoch || ack.seq > self.s.high_tx {
            return;
        }
        let cum = ack.seq;
        let acked = cum.saturating_sub(self.s.snd_una);
        let sack = self.sack_enabled();
        if sack {
            self.board.mark_sacked(ack.sack_blocks(), self.s.high_tx);
        }
        let newly_sacked = if sack { self.board.newly_sacked() } else { &[] };
        let sample = self
            .rate
            .as_mut()
            .map(|r| r.on_ack(cum, newly_sacked, now, self.s.min_rtt));
        let (una, sacks_new) = (self.s.snd_una, !newly_sacked.is_empty());
        if let (Some(rack), true) = (&mut self.rack, cum >= una) {
            rack.on_ack(cum, newly_sacked, &self.board, now, self.s.min_rtt);
            self.rack_detect_loss(now);
        }
        if cum > self.s.snd_una {
            let rtt = now.saturating_sub(ack.timestamp);
            self.counters.rtt_sum_ns += rtt as u128;
            self.counters.rtt_samples += 1;
            self.s.min_rtt = Some(self.s.min_rtt.map_or(rtt, |m| m.min(rtt)));
            self.cc.on_rtt_sample(&self.s, rtt, now);
            if self.cfg.rtt_sampling == RttSampling::Timestamps {
                self.update_rto(rtt);
            }
            self.on_new_ack(cum, now, out);
        } else if cum == self.s.snd_una && self.s.snd_una < self.s.high_tx && self.counts_as_duplicate(sack) {
            self.on_duplicate_ack(now, out);
        }
        if self.with_recovery(|r, tx| r.after_ack(tx)) {
            self.enter_fast_retransmit(now, out);
        }
        if self.rack.is_some() {
            self.rack_after_ack(cum, cum == una && !sacks_new, now, out);
        }
        if self.ecn {
            let ece = ack.has(ecn::ECE);
            self.cc.on_ecn_ack(&self.s, acked, ece, now);
            if ece {
                self.on_ecn_echo(now);
            }
        }
        if let Some(mut rs) = sample {
            rs.in_flight = match self.s.ca_state {
                // RFC 6675 SetPipe: holes taken as lost are not in flight (Linux's
                // packets_in_flight), so BBR's packet conservation does not count them.
                CaState::Open | CaState::Disorder | CaState::Recovery if self.sack => {
                    self.board.pipe(self.s.high_tx, self.cfg.dupack_threshold)
                }
                // After a timeout: what went out again since, less what is SACKed.
                _ => self
                    .s
                    .flight()
                    .saturating_sub(self.rate.as_ref().map_or(0, |r| r.sacked())),
            };
            if self.sack {
                rs.losses = self.board.mark_lost(self.s.high_tx, self.cfg.dupack_threshold);
            }
            self.cc.on_delivery(&mut self.s, &rs, now);
        }
        self.try_send(now, out);
    }

    fn update_rto(&mut self, rtt: SimTime) {
        self.rto.sample(rtt);
        self.s.srtt = self.rto.srtt();
        self.counters.rto_sum_ns += self.rto.current() as u128;
        self.counters.rto_samples += 1;
    }

    fn on_new_ack(&mut self, cum: u32, now: SimTime, out: &mut Vec<Packet>) {
        let acked = cum - self.s.snd_una;
        self.s.snd_una = cum;
        self.s.snd_nxt = self.s.snd_nxt.max(cum);
        self.board.advance(cum);
        if let Some(rack) = &mut self.rack {
            rack.rearm = true;
        }
        if let Some((seq, sent)) = self.timed {
            if cum > seq {
                self.timed = None;
                self.update_rto(now - sent);
            }
        }
        let full = self.recover.is_none_or(|r| cum >= r);
        let mut restart = true;
        match self.s.ca_state {
            CaState::Recovery => {
                let partial = if full {
                    PartialAck::Exit
                } else {
                    self.with_recovery(|r, tx| r.on_partial_ack(tx, acked, now, out))
                };
                match partial {
                    PartialAck::Stay { restart_timer } => restart = restart_timer,
                    PartialAck::Exit => {
                        self.s.cwnd = self.with_recovery(|r, tx| r.exit_window(tx));
                        self.s.ca_state = CaState::Open;
                        self.dupacks = 0;
                        self.counters.recoveries_completed += 1;
                        self.counters.recovery_ns += (now - self.recovery_start) as u128;
                    }
                }
            }
            state => {
                if state != CaState::Loss || full {
                    self.s.ca_state = CaState::Open;
                    self.board.end_resend();
                }
                self.dupacks = 0;
                if !self.in_ecn_reduction() {
                    self.cc.on_ack(&mut self.s, acked, now);
                }
            }
        }
        if self.s.snd_una >= self.s.high_tx {
            self.rto_deadline = None; // RFC 6298 §5.2: all data acknowledged
        } else if restart {
            self.restart_timer(now); // RFC 6298 §5.3
        }
    }

    fn on_duplicate_ack(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        self.dupacks += 1;
        match self.s.ca_state {
            CaState::Recovery => self.with_recovery(|r, tx| r.on_duplicate_ack(tx)),
            _ if self.dupacks == self.cfg.dupack_threshold && self.may_start_recovery() && self.rack.is_none() => {
                self.enter_fast_retransmit(now, out)
            }
            CaState::Open => self.s.ca_state = CaState::Disorder,
            _ => {}
        }
    }

    /// ECE on an ACK (`tcp.ecn`), RFC 3168 §6.1.2: as for a loss but without a retransmission —
    /// ssthresh from the variant (`on_ecn_echo`), cwnd = ssthresh, no fast-recovery inflation
    /// — at most once per window of data, and not while a loss is repaired (that reduction
    /// stands for the window). The next new segment carries CWR.
    fn on_ecn_echo(&mut self, now: SimTime) {
        let open = matches!(self.s.ca_state, CaState::Open | CaState::Disorder);
        if !open || self.s.snd_una < self.ecn_recover {
            return;
        }
        let ssthresh = self.cc.on_ecn_echo(&self.s, now);
        self.halved_window = ssthresh;
        self.s.ssthresh = if self.cfg.integer_ssthresh {
            ssthresh.floor()
        } else {
            ssthresh
        };
        self.s.cwnd = self.s.ssthresh.min(self.s.cwnd);
        self.ecn_recover = self.s.high_tx + 1;
        self.cwr_pending = true;
        self.counters.ecn_reductions += 1;
    }

    /// With `ecn_reduction_holds_window`, a window reduced for ECE that is not yet
    /// acknowledged (Linux's and ns-3's CA_CWR state) does not grow (`TcpConfig` says whose
    /// rule this is), unless the variant keeps growing through it (Prague).
    fn in_ecn_reduction(&self) -> bool {
        self.cfg.ecn_reduction_holds_window && !self.cc.grows_in_cwr() && self.s.snd_una < self.ecn_recover
    }

    /// The loss is detected: ssthresh and `recover` for the episode, then the recovery's own
    /// entry. A loss in a window already reduced for ECE keeps that ssthresh (RFC 3168 §6.1.2:
    /// ssthresh is not reduced twice within a round trip), and with `tcp.ecn` the next new
    /// segment carries CWR, as Linux sends it after any reduction (`tcp_init_cwnd_reduction`).
    fn enter_fast_retransmit(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        if self.s.snd_una >= self.ecn_recover {
            self.s.ssthresh = self.reduced_ssthresh(now);
        }
        self.cwr_pending = self.ecn;
        self.recover = Some(self.s.high_tx);
        self.counters.fast_retransmits += 1;
        self.partial_acks = 0;
        self.recovery_start = now;
        self.timed = None;
        if let Some(rack) = &mut self.rack {
            // The recovery's reduction stands for a TLP episode in progress too (Linux's
            // tcp_init_cwnd_reduction ends it), and no probe is sent while recovering.
            rack.tlp = None;
            rack.probe_deadline = None;
        }
        self.with_recovery(|r, tx| r.enter(tx, now, out));
        self.restart_timer(now);
    }

    /// When the sender's timer must fire: the retransmit timer, or with RACK-TLP whichever of
    /// it, the reorder timer and the probe timer is due first.
    pub fn timer_deadline(&self) -> Option<SimTime> {
        let Some(rack) = &self.rack else {
            return self.rto_deadline;
        };
        [self.rto_deadline, rack.reo_deadline, rack.probe_deadline]
            .into_iter()
            .flatten()
            .min()
    }

    /// The sender's timer expired: with RACK-TLP, the reorder or probe timer if due, then the
    /// retransmit timer if it still is.
    pub fn on_timeout(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        let Some(rack) = &self.rack else {
            return self.on_rto(now, out);
        };
        let due = |d: Option<SimTime>| d.is_some_and(|d| d <= now);
        if due(rack.reo_deadline) {
            self.on_reorder_timeout(now, out);
        }
        if self.rack.as_ref().is_some_and(|r| due(r.probe_deadline)) {
            self.on_probe_timeout(now, out);
        }
        if due(self.rto_deadline) {
            self.on_rto(now, out);
        }
    }

    /// RFC 8985 §6.2 steps 4–5 after an ACK or at the reorder timer: marks lost what RACK
    /// finds lost and (re)arms the reorder timer. Not after a timeout, whose go-back-N resends
    /// everything outstanding.
    fn rack_detect_loss(&mut self, now: SimTime) {
        let Some(rack) = &mut self.rack else { return };
        if self.s.ca_state == CaState::Loss {
            rack.reo_deadline = None;
            return;
        }
        let recovering = self.s.ca_state == CaState::Recovery;
        let reo_wnd = rack.reo_wnd(
            recovering,
            self.board.sacked(),
            self.cfg.dupack_threshold,
            self.s.min_rtt,
            self.s.srtt,
        );
        rack.detect_loss(now, reo_wnd, &mut self.board);
    }

    /// After an ACK's own processing: a loss RACK found starts a recovery (Linux's
    /// tcp_time_to_recover: lost_out > 0), and the ACK may end a TLP episode (§7.4).
    fn rack_after_ack(&mut self, cum: u32, pure_duplicate: bool, now: SimTime, out: &mut Vec<Packet>) {
        self.start_recovery_on_rack_loss(now, out);
        let outcome = self
            .rack
            .as_mut()
            .map_or(TlpOutcome::Pending, |r| r.on_ack_in_episode(cum, pure_duplicate));
        if outcome == TlpOutcome::Repaired && matches!(self.s.ca_state, CaState::Open | CaState::Disorder) {
            // §7.4.2: the probe repaired a loss; the congestion control reduces once, as for a
            // loss repaired by fast recovery (Linux: CWR, cwnd = ssthresh).
            self.s.ssthresh = self.reduced_ssthresh(now);
            self.s.cwnd = self.s.cwnd.min(self.s.ssthresh);
            self.cwr_pending = self.cfg.ecn;
            if let Some(rack) = &mut self.rack {
                rack.reductions += 1;
            }
        }
    }

    fn start_recovery_on_rack_loss(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        let open = matches!(self.s.ca_state, CaState::Open | CaState::Disorder);
        if open && self.may_start_recovery() && self.board.has_unrepaired_loss() {
            self.enter_fast_retransmit(now, out);
        }
    }

    /// RACK's reorder timer (§6.3): what waited out its reordering window is lost now.
    fn on_reorder_timeout(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        if let Some(rack) = &mut self.rack {
            rack.reo_deadline = None;
        }
        if !self.active || self.s.snd_una >= self.s.high_tx {
            return;
        }
        self.rack_detect_loss(now);
        self.start_recovery_on_rack_loss(now, out);
        self.try_send(now, out);
    }

    /// §7.2: after new data goes out or an ACK advances snd.una in the open state, the probe
    /// timer is (re)armed for PTO from now; otherwise, outside the open state or during a TLP
    /// episode (one probe per flight), it is off.
    fn schedule_probe(&mut self, now: SimTime, sent_new: bool) {
        let outstanding = self.s.high_tx.saturating_sub(self.s.snd_una);
        let delayed_ack = if self.cfg.delayed_ack {
            from_secs(self.cfg.delack_timeout_s)
        } else {
            0
        };
        let (srtt, rto) = (self.s.srtt, self.rto_deadline);
        let acked = self.rack.as_mut().is_some_and(|r| std::mem::take(&mut r.rearm));
        let active = self.active && self.s.ca_state == CaState::Open;
        let Some(rack) = &mut self.rack else { return };
        if !active || outstanding == 0 || rack.tlp.is_some() {
            rack.probe_deadline = None;
        } else if sent_new || acked || rack.probe_deadline.is_none() {
            rack.probe_deadline = Some(RackTlp::probe_timeout(srtt, outstanding, delayed_ack, now, rto));
        }
    }

    /// TLP's probe (§7.3): one segment whatever cwnd says — new data if the application and the
    /// receiver window have some, else the last segment again — to draw an ACK whose SACK lets
    /// RACK find a tail loss. The retransmit timer restarts from it.
    fn on_probe_timeout(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        let Some(rack) = &mut self.rack else { return };
        rack.probe_deadline = None;
        let outstanding = self.s.snd_una < self.s.high_tx;
        if !self.active || !outstanding || self.s.ca_state != CaState::Open || rack.tlp.is_some() {
            return;
        }
        let is_retrans = if self.may_send_new_data() {
            self.s.snd_nxt += 1;
            self.transmit(self.s.high_tx, now, out);
            false
        } else {
            let last = self.s.high_tx - 1;
            if self.board.is_sacked(last) {
                return;
            }
            self.transmit(last, now, out);
            true
        };
        let end_seq = self.s.high_tx;
        if let Some(rack) = &mut self.rack {
            rack.tlp = Some(TlpEpisode { end_seq, is_retrans });
            rack.probes += 1;
        }
        self.restart_timer(now);
    }

    /// The retransmit timer expired (RFC 6298 §5.4–5.6, RFC 5681 §3.1 eq. 4).
    fn on_rto(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        if let Some(rack) = &mut self.rack {
            rack.tlp = None;
            rack.probe_deadline = None;
            rack.reo_deadline = None;
        }
        if !self.active || self.s.snd_una >= self.s.high_tx {
            self.rto_deadline = None;
            return;
        }
        self.counters.timeouts += 1;
        // RFC 5681 §3.1: when the same data times out again, ssthresh is held, not halved
        // again from the one-segment window (Linux's tcp_enter_loss does the same).
        let repeated = self.s.ca_state == CaState::Loss && self.rto.backed_off();
        if !repeated || self.cfg.repeated_timeout_ssthresh == RepeatedTimeoutSsthresh::Halve {
            self.s.ssthresh = self.reduced_ssthresh(now);
        }
        self.s.cwnd = 1.0;
        self.cwr_pending = self.ecn;
        self.s.ca_state = CaState::Loss;
        self.recover = Some(self.s.high_tx);
        self.dupacks = 0;
        self.partial_acks = 0;
        self.s.snd_nxt = self.s.snd_una; // go-back-N
        self.timed = None;
        self.rto.back_off();
        self.board.clear_retransmitted();
        self.board.begin_resend();
        self.board.mark_all_lost(self.s.high_tx);
        self.cc.on_timeout(&mut self.s, now);
        self.rto_deadline = None;
        self.try_send(now, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(seq: u32, ts: SimTime) -> Packet {
        let mut p = Packet::new(0, PacketKind::Ack, 0, seq, 40, ts);
        p.timestamp = ts;
        p
    }

    fn sender(variant: &str) -> (TcpSender, Vec<Packet>) {
        let cfg = TcpConfig {
            initial_cwnd_pkts: 10.0,
            ..TcpConfig::default()
        };
        let mut s = TcpSender::new(0, variant, cfg.clone().into());
        let mut out = Vec::new();
        s.start(None, 0, 0, 0, &mut out);
        (s, out)
    }

    #[test]
    fn a_new_connection_sends_its_initial_window() {
        let (s, out) = sender("reno");
        assert_eq!(out.len(), 10);
        assert_eq!(s.s.high_tx, 10);
        assert!(s.rto_deadline.is_some());
    }

    #[test]
    fn three_duplicate_acks_trigger_one_fast_retransmit_and_halve_the_window() {
        let (mut s, mut out) = sender("newreno-sbs");
        out.clear();
        for _ in 0..3 {
            s.on_ack(&ack(0, 0), 1000, &mut out);
        }
        assert_eq!(s.counters.fast_retransmits, 1);
        assert_eq!(out[0].seq, 0);
        assert!(out[0].retransmission);
        assert_eq!(s.s.ssthresh, 5.0);
        assert_eq!(s.s.cwnd, 8.0);
        // A fourth duplicate inflates the window instead of retransmitting again.
        s.on_ack(&ack(0, 0), 1000, &mut out);
        assert_eq!(s.counters.fast_retransmits, 1);
        assert_eq!(s.s.cwnd, 9.0);
    }

    #[test]
    fn a_timeout_collapses_the_window_and_goes_back_to_the_first_unacknowledged_segment() {
        let (mut s, mut out) = sender("reno");
        out.clear();
        let rto = s.current_rto();
        s.on_timeout(rto, &mut out);
        assert_eq!(s.s.cwnd, 1.0);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].seq, 0);
        assert_eq!(s.current_rto(), 2 * rto, "exponential backoff");
    }

    fn timed_out_then_acked(sampling: RttSampling) -> (SimTime, SimTime) {
        let cfg = TcpConfig {
            initial_cwnd_pkts: 4.0,
            rtt_sampling: sampling,
            ..TcpConfig::default()
        };
        let mut s = TcpSender::new(0, "reno", cfg.clone().into());
        let mut out = Vec::new();
        s.start(None, 0, 0, 0, &mut out);
        s.on_ack(&ack(1, 0), 100_000_000, &mut out); // a first RTT sample of 100 ms
        let base = s.current_rto();
        let t = s.rto_deadline.unwrap();
        out.clear();
        s.on_timeout(t, &mut out);
        assert_eq!(s.current_rto(), 2 * base);
        // The retransmission of segment 1 is acknowledged, its timestamp echoed.
        s.on_ack(&ack(2, out[0].timestamp), t + 100_000_000, &mut out);
        (base, s.current_rto())
    }

    #[test]
    fn with_timestamps_the_ack_of_a_retransmission_ends_the_backoff() {
        let (base, after) = timed_out_then_acked(RttSampling::Timestamps);
        assert!(after < 2 * base, "{after} vs base {base}");
    }

    #[test]
    fn without_timestamps_karns_rule_keeps_the_backoff_until_a_new_segment_is_timed() {
        let (base, after) = timed_out_then_acked(RttSampling::PerRtt);
        assert_eq!(after, 2 * base);
    }

    #[test]
    fn a_second_timeout_of_the_same_data_holds_ssthresh() {
        let (mut s, mut out) = sender("reno");
        let first = s.rto_deadline.unwrap();
        s.on_timeout(first, &mut out);
        assert_eq!(s.s.ssthresh, 5.0, "half of the window of 10");
        let second = s.rto_deadline.unwrap();
        s.on_timeout(second, &mut out);
        assert_eq!(s.s.ssthresh, 5.0, "RFC 5681 §3.1: not halved again from cwnd = 1");
        assert_eq!(s.counters.timeouts, 2);
    }

    #[test]
    fn a_finite_transfer_ends_with_a_short_last_segment() {
        let cfg = TcpConfig::default();
        let mut s = TcpSender::new(0, "reno", cfg.clone().into());
        let mut out = Vec::new();
        s.start(Some(2500), 1, 0, 0, &mut out);
        let sizes: Vec<u32> = out.iter().map(|p| p.size).collect();
        assert_eq!(sizes, vec![1040, 1040]); // initial window 2
        s.on_ack(&Packet { epoch: 1, ..ack(2, 0) }, 10, &mut out);
        assert_eq!(out.last().unwrap().size, 540);
        assert!(!s.finished());
        s.on_ack(&Packet { epoch: 1, ..ack(3, 0) }, 20, &mut out);
        assert!(s.finished());
        assert_eq!(s.rto_deadline, None);
    }

    #[test]
    fn a_paced_variant_spaces_its_segments_and_a_window_based_one_never_waits() {
        let (mut bbr, out) = sender("bbr");
        assert_eq!(
            out.len(),
            1,
            "the rest of the initial window waits for the pacing timer"
        );
        let next = bbr.pace_deadline.expect("the pacing timer is armed");
        let mut out = Vec::new();
        bbr.on_pace_timer(next, &mut out);
        assert_eq!(out.len(), 1);
        assert!(bbr.pace_deadline.unwrap() > next);
        let (reno, out) = sender("reno");
        assert_eq!(
            (out.len(), reno.pace_deadline, reno.pace_next, reno.rate.is_some()),
            (10, None, None, false)
        );
    }

    #[test]
    fn acks_of_another_epoch_are_ignored() {
        let (mut s, mut out) = sender("reno");
        s.on_ack(&Packet { epoch: 7, ..ack(5, 0) }, 10, &mut out);
        assert_eq!(s.s.snd_una, 0);
    }

    fn ecn_sender(variant: &str) -> (TcpSender, Vec<Packet>) {
        ecn_sender_with(variant, false)
    }

    fn ecn_sender_with(variant: &str, ecn_reduction_holds_window: bool) -> (TcpSender, Vec<Packet>) {
        let cfg = TcpConfig {
            initial_cwnd_pkts: 10.0,
            ecn: true,
            ecn_reduction_holds_window,
            ..TcpConfig::default()
        };
        let mut s = TcpSender::new(0, variant, cfg.into());
        let mut out = Vec::new();
        s.start(None, 0, 0, 0, &mut out);
        (s, out)
    }

    fn ece(seq: u32) -> Packet {
        Packet {
            ecn: ecn::ECE,
            ..ack(seq, 0)
        }
    }

    #[test]
    fn the_sender_reduces_once_per_window_of_data_however_many_eces_arrive() {
        let (mut s, mut out) = ecn_sender("newreno-sbs");
        out.clear();
        // Every ACK of the first window echoes CE. The first grows the window to 11 in slow
        // start, then halves it, cwnd = ssthresh, no inflation; the others change nothing.
        s.on_ack(&ece(1), 1000, &mut out);
        assert_eq!((s.s.ssthresh, s.s.cwnd), (5.5, 5.5));
        for seq in 2..=5 {
            s.on_ack(&ece(seq), 1000, &mut out);
        }
        assert_eq!((s.counters.ecn_reductions, s.s.ssthresh), (1, 5.5));
        assert_eq!((s.counters.retransmits, s.counters.fast_retransmits), (0, 0));
        // The first new segment after the reduction carries CWR, and only it.
        let cwr: Vec<bool> = out.iter().map(|p| p.has(ecn::CWR)).collect();
        assert!(cwr[0] && !cwr[1..].iter().any(|&c| c), "{cwr:?}");
        // Once the window in flight at the reduction is acknowledged, an ECE reduces again.
        let high = s.ecn_recover;
        s.on_ack(&ece(high - 1), 2000, &mut out);
        assert_eq!(s.counters.ecn_reductions, 1);
        s.on_ack(&ece(high), 3000, &mut out);
        assert_eq!(s.counters.ecn_reductions, 2);
    }

    #[test]
    fn holding_the_window_it_does_not_grow_until_the_window_reduced_for_ece_is_acknowledged() {
        let (mut s, mut out) = ecn_sender_with("newreno-sbs", true);
        s.on_ack(&ece(1), 1000, &mut out);
        let (reduced, high) = (s.s.cwnd, s.ecn_recover);
        // ACKs of the window in flight at the reduction, marked or not: CWR, no growth
        // (Linux's tcp_in_cwnd_reduction; ns-3's CA_CWR).
        for seq in 2..high {
            let a = if seq % 2 == 0 { ece(seq) } else { ack(seq, 0) };
            s.on_ack(&a, 1000 + seq as SimTime, &mut out);
            assert_eq!(s.s.cwnd, reduced, "ACK {seq}");
        }
        // The ACK that covers the segment sent after the reduction ends it: growth resumes.
        s.on_ack(&ack(high, 0), 5000, &mut out);
        assert!(s.s.cwnd > reduced, "{} after CWR", s.s.cwnd);
        assert_eq!(s.counters.ecn_reductions, 1);
    }

    #[test]
    fn by_default_the_window_grows_while_the_window_reduced_for_ece_is_acknowledged() {
        let (mut s, mut out) = ecn_sender("newreno-sbs");
        s.on_ack(&ece(1), 1000, &mut out);
        let reduced = s.s.cwnd;
        s.on_ack(&ack(2, 0), 2000, &mut out);
        assert!(s.s.cwnd > reduced, "{} after {reduced}", s.s.cwnd);
    }

    #[test]
    fn with_ecn_new_data_is_ect_and_retransmissions_are_not() {
        let (mut s, mut out) = ecn_sender("reno");
        assert!(out.iter().all(|p| p.has(ecn::ECT0)));
        out.clear();
        for _ in 0..3 {
            s.on_ack(&ack(0, 0), 1000, &mut out);
        }
        assert!(out[0].retransmission && !out[0].ecn_capable());
        let (_, plain) = sender("reno");
        assert!(plain.iter().all(|p| p.ecn == 0), "ECN is off by default");
    }

    #[test]
    fn with_handshake_rtt_a_connection_starts_from_its_paths_round_trip_not_the_initial_rto() {
        let start = |handshake_rtt: bool| {
            let cfg = TcpConfig {
                handshake_rtt,
                timer_granularity_s: 0.001,
                ..TcpConfig::default()
            };
            let mut s = TcpSender::new(0, "reno", cfg.into());
            s.start(None, 0, 0, 80_000_000, &mut Vec::new());
            (s.s.srtt, s.rto.current(), s.counters.rto_samples)
        };
        // RFC 6298 §2.2: SRTT = R, RTTVAR = R/2, RTO = R + 4·R/2 = 240 ms; not a data sample.
        assert_eq!(start(true), (Some(80_000_000), 240_000_000, 0));
        assert_eq!(start(false), (None, 3_000_000_000, 0), "tcpsim's initial_rto_s 3 s");
    }

    #[test]
    fn with_l4s_new_data_is_ect1_and_ecn_is_on_without_tcp_ecn() {
        let cfg = TcpConfig {
            l4s: true,
            ..TcpConfig::default()
        };
        let mut s = TcpSender::new(0, "reno", cfg.into());
        let mut out = Vec::new();
        s.start(None, 0, 0, 0, &mut out);
        assert!(s.ecn() && !out.is_empty());
        assert!(out.iter().all(|p| p.has(ecn::ECT1) && !p.has(ecn::ECT0)), "{out:?}");
    }

    #[test]
    fn an_ece_during_fast_recovery_does_not_reduce_the_window_again() {
        let (mut s, mut out) = ecn_sender("newreno-sbs");
        for _ in 0..3 {
            s.on_ack(&ack(0, 0), 1000, &mut out);
        }
        let (ssthresh, cwnd) = (s.s.ssthresh, s.s.cwnd);
        s.on_ack(
            &Packet {
                ecn: ecn::ECE,
                ..ack(0, 0)
            },
            1000,
            &mut out,
        );
        assert_eq!(s.counters.ecn_reductions, 0);
        assert_eq!(
            (s.s.ssthresh, s.s.cwnd),
            (ssthresh, cwnd + 1.0),
            "only the usual inflation"
        );
    }
}
