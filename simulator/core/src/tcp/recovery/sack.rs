//! Conservative SACK-based loss recovery (RFC 6675): the scoreboard's pipe decides how much
//! may be in flight, NextSeg what goes out.

use super::LossRecovery;
use crate::packet::Packet;
use crate::tcp::{CaState, TcpSender};
use crate::time::SimTime;

pub struct Sack;

impl LossRecovery for Sack {
    /// §5 steps (4.1)–(4.3): retransmit the first segment, cwnd = ssthresh, and HighRxt
    /// starts again: a segment retransmitted in an earlier recovery and lost again is a NextSeg
    /// candidate once more and leaves SetPipe. (Keeping the old marks — as ns-3.44 does with
    /// its m_retrans flag — counts each such hole as in flight and never resends it: the
    /// sender stalls until the retransmit timer fires.)
    fn enter(&mut self, tx: &mut TcpSender, now: SimTime, out: &mut Vec<Packet>) {
        let seq = tx.s.snd_una;
        tx.board.clear_retransmitted();
        tx.board.mark_retransmitted(seq);
        tx.transmit(seq, now, out);
        tx.s.cwnd = tx.s.ssthresh;
        tx.s.ca_state = CaState::Recovery;
        tx.counters.fast_recoveries += 1;
    }

    /// §5 step (C): while cwnd − pipe ≥ 1 segment, send NextSeg().
    fn send(&mut self, tx: &mut TcpSender, now: SimTime, out: &mut Vec<Packet>) -> bool {
        send_next_segments(tx, now, out);
        true
    }
}

/// RFC 6675 §5 step (C), shared with PRR: while cwnd − pipe ≥ 1 segment, send NextSeg();
/// returns how many segments went out.
pub(super) fn send_next_segments(tx: &mut TcpSender, now: SimTime, out: &mut Vec<Packet>) -> u32 {
    let dupthresh = tx.cfg.dupack_threshold;
    let mut pipe = tx.board.pipe(tx.s.high_tx, dupthresh) as f64;
    let mut sent = 0;
    while tx.s.cwnd - pipe >= 1.0 {
        if tx.pacing_holds(now) {
            break;
        }
        let next = if let Some(seq) = tx.board.next_hole(true, dupthresh) {
            seq // rule (1): a lost hole
        } else if tx.may_send_new_data() {
            tx.s.snd_nxt += 1;
            tx.s.high_tx // rule (2): new data
        } else if let Some(seq) = tx.board.next_hole(false, dupthresh) {
            seq // rule (3): an unSACKed hole below SACKed data
        } else {
            break;
        };
        if next < tx.s.high_tx {
            tx.board.mark_retransmitted(next);
        }
        tx.transmit(next, now, out);
        pipe += 1.0;
        sent += 1;
    }
    sent
}
