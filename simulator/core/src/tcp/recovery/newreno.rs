//! NewReno (RFC 3782; RFC 6582): fast recovery that stays in recovery across partial ACKs.

use super::{reno, LossRecovery, PartialAck, PartialAckTimer};
use crate::packet::Packet;
use crate::tcp::TcpSender;
use crate::time::SimTime;

pub struct NewReno {
    pub timer: PartialAckTimer,
}

impl LossRecovery for NewReno {
    fn enter(&mut self, tx: &mut TcpSender, now: SimTime, out: &mut Vec<Packet>) {
        reno::enter_inflated(tx, now, out);
    }

    fn on_duplicate_ack(&mut self, tx: &mut TcpSender) {
        reno::inflate(tx);
    }

    /// RFC 3782 §3 step 5: retransmit the next hole, deflate by the amount acknowledged, add
    /// back one segment, stay in recovery.
    fn on_partial_ack(&mut self, tx: &mut TcpSender, acked: u32, now: SimTime, out: &mut Vec<Packet>) -> PartialAck {
        tx.partial_acks += 1;
        let seq = tx.s.snd_una;
        tx.transmit(seq, now, out);
        tx.s.cwnd = (tx.s.cwnd - acked as f64 + 1.0).max(1.0);
        // RFC 3782 §4: the only difference between the two NewReno variants.
        let restart_timer = self.timer == PartialAckTimer::EveryPartialAck || tx.partial_acks == 1;
        PartialAck::Stay { restart_timer }
    }
}
