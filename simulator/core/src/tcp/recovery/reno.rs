//! Reno fast retransmit and fast recovery (RFC 5681 §3.2).

use super::{LossRecovery, PartialAck};
use crate::packet::Packet;
use crate::tcp::{CaState, TcpSender};
use crate::time::SimTime;

pub struct Reno;

/// Step 3: retransmit, ssthresh plus the segments that left the network (the duplicate ACKs).
pub(super) fn enter_inflated(tx: &mut TcpSender, now: SimTime, out: &mut Vec<Packet>) {
    let seq = tx.s.snd_una;
    tx.transmit(seq, now, out);
    tx.s.cwnd = tx.s.ssthresh + tx.cfg.dupack_threshold as f64;
    tx.s.ca_state = CaState::Recovery;
    tx.counters.fast_recoveries += 1;
}

/// Step 4: each further duplicate ACK is a segment that left; inflate the window by one.
pub(super) fn inflate(tx: &mut TcpSender) {
    tx.s.cwnd += 1.0;
}

impl LossRecovery for Reno {
    fn enter(&mut self, tx: &mut TcpSender, now: SimTime, out: &mut Vec<Packet>) {
        enter_inflated(tx, now, out);
    }

    fn on_duplicate_ack(&mut self, tx: &mut TcpSender) {
        inflate(tx);
    }

    /// Step 6: any new ACK deflates the window and ends recovery.
    fn on_partial_ack(
        &mut self,
        _tx: &mut TcpSender,
        _acked: u32,
        _now: SimTime,
        _out: &mut Vec<Packet>,
    ) -> PartialAck {
        PartialAck::Exit
    }
}
