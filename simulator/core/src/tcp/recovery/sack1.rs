//! ns-2's `Agent/TCP/Sack1` (Fall & Floyd, "Simulation-based Comparisons of Tahoe, Reno, and
//! SACK TCP", CCR 1996, as ns-2.35's tcp-sack1.cc has it): SACK recovery driven by a pipe
//! *counter* rather than RFC 6675's SetPipe over the scoreboard.
//!
//! - Entry: pipe = segments outstanding minus the duplicate-ACK threshold (everything beyond
//!   the three that left, holes and SACKed segments included); cwnd = half the window in use,
//!   unrounded (`slowdown(CLOSE_SSTHRESH_HALF|CLOSE_CWND_HALF)`); the first hole is resent.
//! - Every ACK of the recovery takes one off pipe, a partial ACK one more (its retransmission
//!   left too; `partial_ack_` false, ns-2.35's default); every segment sent adds one.
//! - While pipe < ⌊cwnd⌋: the next hole below the highest SACKed segment not yet resent (every
//!   such hole is taken as lost: no DupThresh rule), else new data inside the receiver window.
//! - Recovery ends when everything sent before it is acknowledged; cwnd stays where it is.
//! - After a timeout the scoreboard is forgotten: go-back-N resends SACKed segments too.
//! - Outside recovery an ACK is a duplicate only if it SACKs something new (CheckUpdate()), so
//!   the duplicates of needless resends neither count nor let limited transmit send.
//!
//! With several holes in a window the counter lets less out than SetPipe would, and the sender
//! can stall into a timeout where RFC 6675 repairs every hole (docs/validation/ns2-crosscheck.md).

use super::{LossRecovery, PartialAck};
use crate::packet::Packet;
use crate::tcp::{CaState, TcpSender};
use crate::time::SimTime;

#[derive(Default)]
pub struct Sack1 {
    /// ns-2's `pipe_`: may go below zero when many ACKs arrive for little sent.
    pipe: i64,
}

impl LossRecovery for Sack1 {
    fn enter(&mut self, tx: &mut TcpSender, now: SimTime, out: &mut Vec<Packet>) {
        let seq = tx.s.snd_una;
        self.pipe = i64::from(tx.s.high_tx - seq) - i64::from(tx.cfg.dupack_threshold);
        let half_window = tx.s.window_in_use() / 2.0; // not yet in recovery: min(cwnd, rwnd)
        tx.board.clear_retransmitted();
        tx.board.mark_retransmitted(seq);
        tx.transmit(seq, now, out);
        tx.s.cwnd = half_window.max(1.0);
        tx.s.cwnd_uninflated_in_recovery = true;
        tx.s.ca_state = CaState::Recovery;
        tx.counters.fast_recoveries += 1;
    }

    fn on_duplicate_ack(&mut self, _tx: &mut TcpSender) {
        self.pipe -= 1;
    }

    fn on_partial_ack(
        &mut self,
        _tx: &mut TcpSender,
        _acked: u32,
        _now: SimTime,
        _out: &mut Vec<Packet>,
    ) -> PartialAck {
        self.pipe -= 2;
        PartialAck::Stay { restart_timer: true }
    }

    fn exit_window(&self, tx: &TcpSender) -> f64 {
        tx.s.cwnd
    }

    fn send(&mut self, tx: &mut TcpSender, now: SimTime, out: &mut Vec<Packet>) -> bool {
        while self.pipe < tx.s.cwnd.floor() as i64 {
            if tx.pacing_holds(now) {
                break;
            }
            let fack = tx.board.fack(tx.s.snd_una);
            let seq = match tx.board.next_hole_below(fack) {
                Some(seq) if seq < tx.s.snd_una + tx.s.max_window => {
                    tx.board.mark_retransmitted(seq);
                    seq
                }
                Some(_) => break,
                None if tx.may_send_new_data() => {
                    tx.s.snd_nxt += 1;
                    tx.s.high_tx
                }
                None => break,
            };
            tx.transmit(seq, now, out);
            self.pipe += 1;
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use crate::packet::{Packet, PacketKind};
    use crate::scenario::{SackRecovery, TcpConfig};
    use crate::tcp::{CaState, TcpSender};
    use crate::time::SimTime;

    fn sack_ack(cum: u32, blocks: &[(u32, u32)]) -> Packet {
        let mut p = Packet::new(0, PacketKind::Ack, 0, cum, 40, 0);
        for (i, &b) in blocks.iter().enumerate() {
            p.sack[i] = b;
        }
        p.sack_len = blocks.len() as u8;
        p
    }

    /// A `sack` sender with 20 segments out (0..20) and ns-2's Sack1 recovery.
    fn sender() -> (TcpSender, Vec<Packet>) {
        let cfg = TcpConfig {
            initial_cwnd_pkts: 20.0,
            initial_ssthresh_pkts: Some(20.0),
            sack_recovery: SackRecovery::Ns2Sack1,
            ..TcpConfig::default()
        };
        let mut s = TcpSender::new(0, "sack", cfg.into());
        let mut out = Vec::new();
        s.start(None, 0, 0, 0, &mut out);
        out.clear();
        (s, out)
    }

    const T: SimTime = 1_000_000;

    fn sent(out: &[Packet]) -> Vec<(u32, bool)> {
        out.iter().map(|p| (p.seq, p.retransmission)).collect()
    }

    #[test]
    fn the_pipe_counter_starts_at_the_flight_less_three_and_lets_one_out_per_ack_below_half_the_window() {
        // Segments 0 and 2 lost. Three duplicates: recovery, pipe = 20 − 3 = 17, cwnd = 10.
        let (mut s, mut out) = sender();
        for end in [4, 5, 6] {
            s.on_ack(&sack_ack(0, &[(3, end), (1, 2)]), T, &mut out);
        }
        assert_eq!(s.s.ca_state, CaState::Recovery);
        assert_eq!((s.s.cwnd, s.s.ssthresh), (10.0, 10.0));
        assert_eq!(sent(&out), vec![(0, true)], "only the first hole at entry");
        out.clear();
        // pipe 17 -> 11 with six more duplicates: still not below cwnd 10, nothing goes out,
        // though RFC 6675's SetPipe would already count the SACKed segments as gone.
        for end in 7..13 {
            s.on_ack(&sack_ack(0, &[(3, end), (1, 2)]), T, &mut out);
        }
        assert!(out.is_empty(), "{:?}", sent(&out));
        // Two more: pipe 9 < 10, the second hole (every hole below the highest SACK is lost).
        for end in 13..15 {
            s.on_ack(&sack_ack(0, &[(3, end), (1, 2)]), T, &mut out);
        }
        assert_eq!(sent(&out), vec![(2, true)]);
    }

    #[test]
    fn a_partial_ack_takes_two_off_the_pipe_and_recovery_keeps_its_half_window_at_the_end() {
        let (mut s, mut out) = sender();
        for end in [4, 5, 6] {
            s.on_ack(&sack_ack(0, &[(3, end), (1, 2)]), T, &mut out);
        }
        for end in 7..15 {
            s.on_ack(&sack_ack(0, &[(3, end), (1, 2)]), T, &mut out);
        }
        out.clear();
        // pipe 10 after the hole at 2 went out. The partial ACK (0 arrived): 10 − 2 = 8: two new.
        s.on_ack(&sack_ack(2, &[(3, 15)]), T, &mut out);
        assert_eq!(sent(&out), vec![(20, false), (21, false)]);
        let high = s.s.high_tx;
        s.on_ack(&sack_ack(high, &[]), T, &mut out);
        assert_eq!((s.s.ca_state, s.s.cwnd), (CaState::Open, 10.0));
    }

    #[test]
    fn outside_recovery_a_duplicate_that_sacks_nothing_new_is_not_counted() {
        let (mut s, mut out) = sender();
        s.on_ack(&sack_ack(0, &[(1, 2)]), T, &mut out);
        for _ in 0..3 {
            s.on_ack(&sack_ack(0, &[(1, 2)]), T, &mut out);
        }
        assert_ne!(
            s.s.ca_state,
            CaState::Recovery,
            "the same SACK four times is one duplicate"
        );
        assert!(out.is_empty());
    }
}
