//! SSDR's dynamic recovery (Wang & Williamson, "A New Scheme for TCP Congestion Control:
//! Smooth-Start and Dynamic Recovery", MASCOTS 1998), as paper 003 §3.3 describes it: it
//! replaces fast recovery, needs no SACK, damps the sending rate as Rate-Halving does, lasts as
//! long as the losses take to repair (a variable-length recovery period), and keeps sending
//! new segments meanwhile.
//!
//! Without SACK every ACK in recovery stands for one segment that left the network. The
//! choices where the description is open:
//! - Damping phase, from the fast retransmit to the first new ACK: half a segment of sending
//!   credit per ACK (the three duplicate ACKs that started recovery included), so one segment
//!   goes out per two ACKs and the window comes down to about half over one round trip
//!   instead of at once.
//! - After it, while partial ACKs show more holes: one segment per ACK (packet conservation);
//!   each partial ACK retransmits the next hole at once, as NewReno does, and restarts the
//!   retransmit timer (Slow-but-Steady), so m holes take about m round trips and no timeout.
//! - On the full ACK, cwnd = min(ssthresh, segments in flight): the more segments were lost,
//!   the fewer ACKs came back to clock new ones out, and the smaller the window it resumes
//!   from (slow start brings it back to ssthresh).
//!
//! cwnd during recovery follows the damping (half a segment less per ACK, never below one)
//! for the traces and for a timeout's threshold; the credit decides what is sent.

use super::{LossRecovery, PartialAck};
use crate::packet::Packet;
use crate::tcp::{CaState, TcpSender};
use crate::time::SimTime;

/// Credit never piles up past this while nothing can be sent (no data, receiver window).
const MAX_CREDIT: f64 = 2.0;

#[derive(Default)]
pub struct Dynamic {
    /// Segments it may send now (half a segment per ACK while damping).
    credit: f64,
    /// Still in the damping phase (before the first partial ACK).
    damping: bool,
}

impl LossRecovery for Dynamic {
    fn enter(&mut self, tx: &mut TcpSender, now: SimTime, out: &mut Vec<Packet>) {
        let seq = tx.s.snd_una;
        let half_per_dupack = tx.cfg.dupack_threshold as f64 / 2.0;
        tx.s.cwnd = (tx.s.window_in_use() - half_per_dupack).max(1.0);
        tx.transmit(seq, now, out);
        // The duplicate ACKs that got us here earned half a segment each; the retransmission
        // spends one.
        self.credit = (half_per_dupack - 1.0).min(MAX_CREDIT);
        self.damping = true;
        tx.s.ca_state = CaState::Recovery;
        tx.counters.fast_recoveries += 1;
    }

    fn on_duplicate_ack(&mut self, tx: &mut TcpSender) {
        let share = if self.damping { 0.5 } else { 1.0 };
        self.credit = (self.credit + share).min(MAX_CREDIT);
        if self.damping {
            tx.s.cwnd = (tx.s.cwnd - 0.5).max(1.0);
        }
    }

    /// Damping is over; the next hole goes out in place of the segment that left, and the
    /// retransmit timer restarts (Slow-but-Steady).
    fn on_partial_ack(&mut self, tx: &mut TcpSender, _acked: u32, now: SimTime, out: &mut Vec<Packet>) -> PartialAck {
        tx.partial_acks += 1;
        if self.damping {
            tx.s.cwnd = (tx.s.cwnd - 0.5).max(1.0);
        }
        self.damping = false;
        let seq = tx.s.snd_una;
        tx.transmit(seq, now, out);
        PartialAck::Stay { restart_timer: true }
    }

    /// What is really in flight, at most ssthresh.
    fn exit_window(&self, tx: &TcpSender) -> f64 {
        (tx.s.flight().max(1) as f64).min(tx.s.ssthresh)
    }

    /// New segments while the credit lasts.
    fn send(&mut self, tx: &mut TcpSender, now: SimTime, out: &mut Vec<Packet>) -> bool {
        while self.credit >= 1.0 && tx.may_send_new_data() {
            let seq = tx.s.high_tx;
            tx.s.snd_nxt += 1;
            tx.transmit(seq, now, out);
            self.credit -= 1.0;
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use crate::packet::{Packet, PacketKind};
    use crate::scenario::TcpConfig;
    use crate::tcp::{CaState, TcpSender};

    fn ack(cum: u32) -> Packet {
        Packet::new(0, PacketKind::Ack, 0, cum, 40, 0)
    }

    fn sender() -> (TcpSender, Vec<Packet>) {
        let cfg = TcpConfig {
            initial_cwnd_pkts: 20.0,
            initial_ssthresh_pkts: Some(20.0),
            ..TcpConfig::default()
        };
        let mut s = TcpSender::new(0, "ssdr", cfg.clone().into());
        let mut out = Vec::new();
        s.start(None, 0, 0, 0, &mut out);
        out.clear();
        (s, out)
    }

    #[test]
    fn dynamic_recovery_sends_one_new_segment_per_two_duplicate_acks_while_damping() {
        let (mut s, mut out) = sender();
        for _ in 0..3 {
            s.on_ack(&ack(0), 1, &mut out);
        }
        assert_eq!(s.s.ca_state, CaState::Recovery);
        assert!(!s.sack_enabled(), "SSDR is sender-only");
        assert_eq!(out.len(), 1, "the retransmission; half a segment of credit left");
        for _ in 0..16 {
            s.on_ack(&ack(0), 1, &mut out);
        }
        assert_eq!(out.len(), 1 + 8);
        assert_eq!(s.s.cwnd, 20.0 - 1.5 - 8.0);
    }

    #[test]
    fn after_a_partial_ack_it_retransmits_the_next_hole_and_sends_one_segment_per_ack() {
        let (mut s, mut out) = sender();
        for _ in 0..17 {
            s.on_ack(&ack(0), 1, &mut out); // 0 and 5 lost: 18 of 20 arrive
        }
        out.clear();
        s.on_ack(&ack(5), 2, &mut out);
        assert_eq!(s.s.ca_state, CaState::Recovery);
        assert_eq!((out[0].seq, out[0].retransmission), (5, true));
        assert_eq!(out.len(), 1);
        for _ in 0..4 {
            s.on_ack(&ack(5), 3, &mut out);
        }
        assert_eq!(out.len(), 1 + 4, "packet conservation once damping is over");
        // The full ACK: cwnd is what is in flight, at most ssthresh (10).
        let high = s.s.high_tx;
        s.on_ack(&ack(20), 4, &mut out);
        assert_eq!(s.s.ca_state, CaState::Open);
        assert_eq!(s.s.cwnd, ((high - 20) as f64).min(10.0));
    }
}
