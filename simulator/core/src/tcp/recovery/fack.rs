//! Forward-acknowledgment recovery (Mathis & Mahdavi, "Forward Acknowledgment: Refining TCP
//! Congestion Control", SIGCOMM 1996) and its Rate-Halving window reduction (Mathis, Semke,
//! Mahdavi & Lahey, "The Rate-Halving Algorithm for TCP Congestion Control", draft 1999).
//!
//! - snd.fack is one past the highest segment the receiver reported holding; every
//!   unSACKed segment below it is taken as lost (FACK's loss assumption).
//! - awnd = snd.nxt − snd.fack + retran_data is what is in the network; the sender sends
//!   (holes below snd.fack first, then new data) while awnd < cwnd.
//! - Recovery starts on the duplicate-ACK threshold or as soon as snd.fack − snd.una exceeds
//!   it (the receiver holds more than three segments beyond a hole), and ends, as NewReno's and
//!   RFC 6675's do, when everything outstanding at its start is acknowledged: one halving
//!   per loss episode.
//! - Halve (FACK): cwnd = ssthresh when recovery starts. RateHalving: cwnd starts from the
//!   old window and loses half a segment for every segment snd.fack advances over (every
//!   segment that leaves the network, lost ones included), never below ssthresh; awnd then
//!   lets one segment out per two that leave, and after about one round trip cwnd is
//!   ssthresh, which it is set to when recovery ends. This is ns-2's FACK `rampdown` (the
//!   `wintrim` window) written as a cwnd that shrinks, as Linux's tcp_cwnd_down did.
//!
//! A retransmission lost again is found by the retransmit timer only (as in ns-2's FACK).
//!
//! `fack_recovery: ns2_fack` is ns-2.35's Agent/TCP/Fack (tcp-fack.cc) instead: cwnd restarts
//! from one segment when recovery starts and grows on every ACK of the recovery as outside it
//! (slowdown(CLOSE_CWND_RESTART), opencwnd()), so cwnd, not ssthresh, is the window a timeout
//! halves; and keeps that window when recovery ends. Not modelled (docs/validation/
//! ns2-crosscheck.md): ns-2's FACK also restarts the retransmit timer and takes an RTT sample
//! on every ACK, duplicates included (oldack() → newtimer(), rtt_update()), and stops sending
//! once a retransmission is known lost again (ScoreBoard::CheckSndNxt) until the timer fires.

use super::{LossRecovery, PartialAck, WindowReduction};
use crate::packet::Packet;
use crate::scenario::FackRecovery;
use crate::tcp::{CaState, TcpSender};
use crate::time::SimTime;

pub struct Fack {
    reduction: WindowReduction,
    /// snd.fack when last looked at: rate-halving counts its advance.
    fack: u32,
}

impl Fack {
    pub fn new(reduction: WindowReduction) -> Self {
        Fack { reduction, fack: 0 }
    }

    /// ns-2's FACK (`fack_recovery: ns2_fack`; not rate-halving).
    fn is_ns2(&self, tx: &TcpSender) -> bool {
        self.reduction == WindowReduction::Halve && tx.cfg.fack_recovery == FackRecovery::Ns2Fack
    }
}

/// snd.fack.
fn fack(tx: &TcpSender) -> u32 {
    tx.board.fack(tx.s.snd_una)
}

/// cwnd after one more ACK, as outside recovery: ns-2's TcpAgent::opencwnd (one segment below
/// ssthresh, 1/cwnd above it), which its FACK agent calls on every ACK of a recovery.
fn opened(tx: &TcpSender) -> f64 {
    let cwnd = tx.s.cwnd;
    if cwnd < tx.s.ssthresh {
        cwnd + 1.0
    } else {
        cwnd + 1.0 / cwnd
    }
}

/// FACK's awnd: segments believed to be in the network.
fn awnd(tx: &TcpSender) -> u32 {
    tx.s.high_tx.saturating_sub(fack(tx)) + tx.board.retransmitted_in_flight()
}

impl LossRecovery for Fack {
    fn enter(&mut self, tx: &mut TcpSender, now: SimTime, out: &mut Vec<Packet>) {
        let seq = tx.s.snd_una;
        let fack = fack(tx);
        let old_window = tx.s.window_in_use();
        tx.board.mark_retransmitted(seq);
        tx.transmit(seq, now, out);
        tx.s.cwnd = match self.reduction {
            WindowReduction::Halve if tx.cfg.fack_recovery == FackRecovery::Ns2Fack => 1.0,
            WindowReduction::Halve => tx.s.ssthresh,
            // What left the network before the loss was detected already counts.
            WindowReduction::RateHalving => (old_window - (fack - seq) as f64 / 2.0).max(tx.s.ssthresh),
        };
        self.fack = fack;
        tx.s.cwnd_uninflated_in_recovery = self.is_ns2(tx);
        tx.s.ca_state = CaState::Recovery;
        tx.counters.fast_recoveries += 1;
    }

    fn on_duplicate_ack(&mut self, tx: &mut TcpSender) {
        if self.is_ns2(tx) {
            tx.s.cwnd = opened(tx);
        }
    }

    fn on_partial_ack(&mut self, tx: &mut TcpSender, _acked: u32, _now: SimTime, _out: &mut Vec<Packet>) -> PartialAck {
        if self.is_ns2(tx) {
            tx.s.cwnd = opened(tx);
        }
        PartialAck::Stay { restart_timer: true }
    }

    fn exit_window(&self, tx: &TcpSender) -> f64 {
        if self.is_ns2(tx) {
            opened(tx)
        } else {
            tx.s.ssthresh
        }
    }

    /// In recovery, while awnd < cwnd: a hole below snd.fack, else new data. (Before recovery
    /// the ordinary window rule applies, as in ns-2's FACK agent.)
    fn send(&mut self, tx: &mut TcpSender, now: SimTime, out: &mut Vec<Packet>) -> bool {
        let fack = fack(tx);
        let mut awnd = awnd(tx);
        while awnd < tx.s.window() {
            if let Some(seq) = tx.board.next_hole_below(fack) {
                tx.board.mark_retransmitted(seq);
                tx.transmit(seq, now, out);
            } else if tx.may_send_new_data() {
                tx.s.snd_nxt += 1;
                let seq = tx.s.high_tx;
                tx.transmit(seq, now, out);
            } else {
                break;
            }
            awnd += 1;
        }
        true
    }

    /// Rate-halving's reduction in recovery; outside it, FACK's early trigger.
    fn after_ack(&mut self, tx: &mut TcpSender) -> bool {
        let fack = fack(tx);
        match tx.s.ca_state {
            CaState::Recovery => {
                let left = fack.saturating_sub(self.fack);
                if self.reduction == WindowReduction::RateHalving && left > 0 {
                    tx.s.cwnd = (tx.s.cwnd - left as f64 / 2.0).max(tx.s.ssthresh);
                }
                self.fack = self.fack.max(fack);
                false
            }
            CaState::Open | CaState::Disorder => {
                fack - tx.s.snd_una > tx.cfg.dupack_threshold && tx.may_start_recovery()
            }
            CaState::Loss => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::packet::{Packet, PacketKind};
    use crate::scenario::TcpConfig;
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

    fn sender(variant: &str, window: f64) -> (TcpSender, Vec<Packet>) {
        let cfg = TcpConfig {
            initial_cwnd_pkts: window,
            initial_ssthresh_pkts: Some(window),
            ..TcpConfig::default()
        };
        let mut s = TcpSender::new(0, variant, cfg.clone().into());
        let mut out = Vec::new();
        s.start(None, 0, 0, 0, &mut out);
        out.clear();
        (s, out)
    }

    const T: SimTime = 1_000_000;

    #[test]
    fn fack_starts_recovery_when_the_receiver_holds_more_than_three_segments_past_a_hole() {
        // Segments 0 and 1 lost: the first duplicate ACK reports 2 held (fack − una = 3), the
        // second 2..=3 (fack − una = 4 > 3): recovery starts one ACK before the third.
        let (mut s, mut out) = sender("fack", 20.0);
        s.on_ack(&sack_ack(0, &[(2, 3)]), T, &mut out);
        assert_eq!(s.s.ca_state, CaState::Disorder);
        assert!(out.is_empty());
        s.on_ack(&sack_ack(0, &[(2, 4)]), T, &mut out);
        assert_eq!(s.s.ca_state, CaState::Recovery);
        assert_eq!(s.counters.fast_retransmits, 1);
        assert_eq!(s.s.cwnd, 10.0, "FACK halves at once");
        // awnd = 20 − 4 + 1 retransmission = 17 ≥ 10: only the first hole goes out for now.
        let sent: Vec<(u32, bool)> = out.iter().map(|p| (p.seq, p.retransmission)).collect();
        assert_eq!(sent, vec![(0, true)]);
    }

    #[test]
    fn fack_sends_while_awnd_is_below_cwnd_retransmitting_every_hole_below_fack_first() {
        let (mut s, mut out) = sender("fack", 20.0);
        // Holes 0, 2, 4; 1, 3, 5..=12 held: fack = 13, awnd = 20 − 13 + retransmissions.
        s.on_ack(&sack_ack(0, &[(5, 13), (3, 4), (1, 2)]), T, &mut out);
        assert_eq!(s.s.ca_state, CaState::Recovery);
        let sent = |out: &Vec<Packet>| out.iter().map(|p| (p.seq, p.retransmission)).collect::<Vec<_>>();
        assert_eq!(
            sent(&out),
            vec![(0, true), (2, true), (4, true)],
            "awnd 7 + 3 = cwnd 10"
        );
        out.clear();
        // Two more segments arrive above: two new ones go out.
        s.on_ack(&sack_ack(0, &[(5, 15), (3, 4), (1, 2)]), T, &mut out);
        assert_eq!(sent(&out), vec![(20, false), (21, false)]);
    }

    #[test]
    fn rate_halving_sends_one_segment_per_two_that_leave_the_network() {
        let (mut s, mut out) = sender("rate-halving", 20.0);
        for n in 1..=3 {
            s.on_ack(&sack_ack(0, &[(1, 1 + n)]), T, &mut out);
        }
        assert_eq!(s.s.ca_state, CaState::Recovery);
        assert_eq!(s.s.cwnd, 18.0, "four segments below fack: two fewer than 20");
        assert_eq!(out.iter().filter(|p| !p.retransmission).count(), 1, "awnd 17 < 18");
        let before = out.len();
        for n in 4..=16 {
            s.on_ack(&sack_ack(0, &[(1, 1 + n)]), T, &mut out);
        }
        // Thirteen more segments left: six new ones went out, not thirteen.
        assert_eq!(out.len() - before, 6);
        assert_eq!(s.s.cwnd, 11.5);
        // The retransmission arrives: the full ACK ends recovery at ssthresh.
        let high = s.s.high_tx;
        s.on_ack(&sack_ack(high, &[]), T, &mut out);
        assert_eq!((s.s.ca_state, s.s.cwnd), (CaState::Open, 10.0));
    }

    fn ns2_or_not(fack_recovery: crate::scenario::FackRecovery) -> (TcpSender, Vec<Packet>) {
        let cfg = TcpConfig {
            initial_cwnd_pkts: 20.0,
            initial_ssthresh_pkts: Some(20.0),
            fack_recovery,
            ..TcpConfig::default()
        };
        let mut s = TcpSender::new(0, "fack", cfg.into());
        let mut out = Vec::new();
        s.start(None, 0, 0, 0, &mut out);
        out.clear();
        (s, out)
    }

    #[test]
    fn a_timeout_during_ns2s_fack_recovery_halves_the_grown_cwnd_not_ssthresh() {
        use crate::scenario::FackRecovery::{Mathis, Ns2Fack};
        let after_timeout = |fack_recovery| {
            let (mut s, mut out) = ns2_or_not(fack_recovery);
            for n in 1..=19 {
                s.on_ack(&sack_ack(0, &[(1, 1 + n)]), T, &mut out);
            }
            s.on_timeout(2 * T, &mut out);
            s.s.ssthresh
        };
        // ns-2: cwnd 1 -> 10 by slow start on the duplicates, then past ssthresh 10.
        assert_eq!(after_timeout(Mathis), 5.0);
        assert!(after_timeout(Ns2Fack) > 5.0, "{}", after_timeout(Ns2Fack));
    }
}
