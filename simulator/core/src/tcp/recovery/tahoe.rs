//! Tahoe (4.3BSD-Tahoe; Jacobson 1988): fast retransmit without fast recovery.

use super::LossRecovery;
use crate::packet::Packet;
use crate::tcp::{CaState, TcpSender};
use crate::time::SimTime;

pub struct Tahoe;

impl LossRecovery for Tahoe {
    /// Slow start from one segment and go-back-N, as after a timeout (without its backoff).
    fn enter(&mut self, tx: &mut TcpSender, _now: SimTime, _out: &mut Vec<Packet>) {
        tx.s.cwnd = 1.0;
        tx.s.ca_state = CaState::Loss;
        tx.s.snd_nxt = tx.s.snd_una;
    }
}
