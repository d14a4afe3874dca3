//! Proportional Rate Reduction (RFC 6937) on RFC 6675's SACK recovery: loss detection, pipe
//! and NextSeg as `sack.rs`, but cwnd is not set to ssthresh at once. Through the recovery the
//! sender sends in proportion to what the receiver reports delivered, so the window comes down
//! to ssthresh smoothly over one round trip instead of stalling for half of it, and when pipe
//! has fallen below ssthresh (losses beyond the reduction) it grows back by slow start, bounded
//! as PRR-SSRB bounds it. What Linux (since 3.2) and ns-3 (`TcpPrrRecovery`, its default) run.
//!
//! Everything is counted in segments, so RFC 6937's SMSS is 1.

use super::sack::send_next_segments;
use super::{LossRecovery, PartialAck};
use crate::packet::Packet;
use crate::tcp::{CaState, TcpSender};
use crate::time::SimTime;

#[derive(Default)]
pub struct Prr {
    /// RecoverFS: the flight when recovery began (snd.nxt − snd.una).
    recover_fs: f64,
    /// prr_delivered: segments the receiver reported delivered during this recovery.
    delivered: u32,
    /// prr_out: segments sent during this recovery.
    out: u32,
    /// snd.una and the SACKed count at the last ACK, to measure DeliveredData.
    last_una: u32,
    last_sacked: u32,
}

impl Prr {
    /// RFC 6937 §3's DeliveredData of this ACK: the change in snd.una plus the change in SACKed
    /// segments (which drops by those the cumulative ACK now covers, so nothing counts twice).
    fn account(&mut self, tx: &TcpSender) -> u32 {
        let (una, sacked) = (tx.s.snd_una, tx.board.sacked());
        let delivered = (una - self.last_una + sacked).saturating_sub(self.last_sacked);
        (self.last_una, self.last_sacked) = (una, sacked);
        self.delivered += delivered;
        delivered
    }

    /// RFC 6937 §3, on every ACK of the recovery: sndcnt, and cwnd = pipe + sndcnt.
    fn set_window(&self, tx: &mut TcpSender, delivered_now: u32) {
        let pipe = tx.board.pipe(tx.s.high_tx, tx.cfg.dupack_threshold) as f64;
        let ssthresh = tx.s.ssthresh;
        let (delivered, out) = (self.delivered as f64, self.out as f64);
        let sndcnt = if pipe > ssthresh {
            // Proportional rate reduction.
            (delivered * ssthresh / self.recover_fs).ceil() - out
        } else {
            // PRR-SSRB: slow start back toward ssthresh, at most one segment more than delivered.
            let limit = (delivered - out).max(delivered_now as f64) + 1.0;
            (ssthresh - pipe).min(limit)
        };
        tx.s.cwnd = pipe + sndcnt.max(0.0);
    }
}

impl LossRecovery for Prr {
    /// §3's initialisation, then the ACK that starts the recovery is its first: it retransmits
    /// the first hole (the fast retransmit, which PRR's first sndcnt always allows).
    fn enter(&mut self, tx: &mut TcpSender, now: SimTime, out: &mut Vec<Packet>) {
        let newly: u32 = tx.board.newly_sacked().iter().map(|&(start, end)| end - start).sum();
        *self = Prr {
            recover_fs: tx.s.high_tx.saturating_sub(tx.s.snd_una).max(1) as f64,
            delivered: newly,
            out: 0,
            last_una: tx.s.snd_una,
            last_sacked: tx.board.sacked(),
        };
        let seq = tx.s.snd_una;
        tx.board.clear_retransmitted();
        tx.board.mark_retransmitted(seq);
        tx.transmit(seq, now, out);
        self.out = 1;
        tx.s.ca_state = CaState::Recovery;
        tx.counters.fast_recoveries += 1;
        self.set_window(tx, newly);
    }

    fn on_duplicate_ack(&mut self, tx: &mut TcpSender) {
        let delivered = self.account(tx);
        self.set_window(tx, delivered);
    }

    fn on_partial_ack(&mut self, tx: &mut TcpSender, _acked: u32, _now: SimTime, _out: &mut Vec<Packet>) -> PartialAck {
        let delivered = self.account(tx);
        self.set_window(tx, delivered);
        PartialAck::Stay { restart_timer: true }
    }

    fn send(&mut self, tx: &mut TcpSender, now: SimTime, out: &mut Vec<Packet>) -> bool {
        self.out += send_next_segments(tx, now, out);
        true
    }
}
