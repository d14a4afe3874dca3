//! The SACK scoreboard of RFC 6675: which segments in [snd_una, high_tx) the receiver has
//! reported holding, and which we retransmitted, with IsLost, SetPipe and NextSeg.

use std::collections::VecDeque;

use crate::packet::SeqRange;

const SACKED: u8 = 1;
const RETRANSMITTED: u8 = 2;

#[derive(Default, Debug)]
pub struct Scoreboard {
    /// Sequence number of `flags[0]`.
    base: u32,
    flags: VecDeque<u8>,
    /// Scratch: for each segment, how many SACKed segments lie above it (for IsLost).
    sacked_above: Vec<u32>,
}

impl Scoreboard {
    pub fn reset(&mut self, snd_una: u32) {
        self.base = snd_una;
        self.flags.clear();
    }

    /// Drops state below the new cumulative ACK.
    pub fn advance(&mut self, snd_una: u32) {
        while self.base < snd_una {
            if self.flags.pop_front().is_none() {
                self.base = snd_una;
                break;
            }
            self.base += 1;
        }
    }

    fn slot(&mut self, seq: u32) -> Option<&mut u8> {
        let i = seq.checked_sub(self.base)? as usize;
        if i >= self.flags.len() {
            self.flags.resize(i + 1, 0);
        }
        self.flags.get_mut(i)
    }

    /// Records SACK blocks, ignoring anything at or beyond `high_tx` (never sent).
    pub fn mark_sacked(&mut self, blocks: &[SeqRange], high_tx: u32) {
        for &(start, end) in blocks {
            for seq in start.max(self.base)..end.min(high_tx) {
                if let Some(f) = self.slot(seq) {
                    *f |= SACKED;
                }
            }
        }
    }

    pub fn mark_retransmitted(&mut self, seq: u32) {
        if let Some(f) = self.slot(seq) {
            *f |= RETRANSMITTED;
        }
    }

    pub fn is_sacked(&self, seq: u32) -> bool {
        self.flag(seq) & SACKED != 0
    }

    fn flag(&self, seq: u32) -> u8 {
        seq.checked_sub(self.base).and_then(|i| self.flags.get(i as usize)).copied().unwrap_or(0)
    }

    pub fn has_sacks(&self) -> bool {
        self.flags.iter().any(|f| f & SACKED != 0)
    }

    /// FACK's snd.fack (Mathis & Mahdavi 1996): one past the highest segment the receiver
    /// reported holding, or the cumulative ACK point when nothing above it is SACKed.
    pub fn fack(&self, snd_una: u32) -> u32 {
        let highest = self.flags.iter().rposition(|f| f & SACKED != 0);
        highest.map_or(snd_una, |i| (self.base + i as u32 + 1).max(snd_una))
    }

    /// FACK's retran_data: retransmitted segments not yet SACKed (the cumulative ACK drops
    /// acknowledged ones from the board).
    pub fn retransmitted_in_flight(&self) -> u32 {
        self.flags.iter().filter(|&&f| f & (SACKED | RETRANSMITTED) == RETRANSMITTED).count() as u32
    }

    /// FACK's next retransmission: the first segment below `fack` neither SACKed nor already
    /// retransmitted. FACK holds every such hole lost.
    pub fn next_hole_below(&self, fack: u32) -> Option<u32> {
        let n = fack.saturating_sub(self.base) as usize;
        (0..n).find(|&i| self.flags.get(i).copied().unwrap_or(0) & (SACKED | RETRANSMITTED) == 0).map(|i| self.base + i as u32)
    }

    /// Clears retransmission marks (after a timeout every hole may be sent again).
    pub fn clear_retransmitted(&mut self) {
        for f in self.flags.iter_mut() {
            *f &= !RETRANSMITTED;
        }
    }

    /// Recomputes the IsLost scratch for [base, high_tx): RFC 6675 §4, a segment is lost when
    /// at least DupThresh SACKed segments lie above it.
    fn refresh(&mut self, high_tx: u32) {
        let n = high_tx.saturating_sub(self.base) as usize;
        self.sacked_above.clear();
        self.sacked_above.resize(n, 0);
        let mut above = 0;
        for i in (0..n).rev() {
            self.sacked_above[i] = above;
            if self.flags.get(i).copied().unwrap_or(0) & SACKED != 0 {
                above += 1;
            }
        }
    }

    /// RFC 6675 SetPipe: segments believed to be in the network.
    pub fn pipe(&mut self, high_tx: u32, dupthresh: u32) -> u32 {
        self.refresh(high_tx);
        let mut pipe = 0;
        for i in 0..self.sacked_above.len() {
            let f = self.flags.get(i).copied().unwrap_or(0);
            if f & SACKED != 0 {
                continue;
            }
            if self.sacked_above[i] < dupthresh {
                pipe += 1;
            }
            if f & RETRANSMITTED != 0 {
                pipe += 1;
            }
        }
        pipe
    }

    /// RFC 6675 NextSeg rules (1) and (3) over the scratch from the last `pipe` call: the
    /// first lost hole not yet retransmitted, else the first unSACKed, unretransmitted segment
    /// below the highest SACKed one. Rule (2), new data, is the caller's, between the two.
    pub fn next_hole(&self, lost_only: bool, dupthresh: u32) -> Option<u32> {
        (0..self.sacked_above.len())
            .find(|&i| {
                let f = self.flags.get(i).copied().unwrap_or(0);
                f & (SACKED | RETRANSMITTED) == 0
                    && self.sacked_above[i] > 0
                    && (!lost_only || self.sacked_above[i] >= dupthresh)
            })
            .map(|i| self.base + i as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hole_with_three_sacked_segments_above_is_lost_and_out_of_the_pipe() {
        let mut sb = Scoreboard::default();
        sb.reset(10);
        sb.mark_sacked(&[(11, 14)], 14);
        // Segments 10..14 outstanding; 11–13 SACKed; 10 lost.
        assert_eq!(sb.pipe(14, 3), 0);
        assert_eq!(sb.next_hole(true, 3), Some(10));
        sb.mark_retransmitted(10);
        assert_eq!(sb.pipe(14, 3), 1, "the retransmission is in the pipe");
        assert_eq!(sb.next_hole(true, 3), None);
    }

    #[test]
    fn a_hole_with_fewer_sacks_above_is_not_yet_lost_but_is_a_rule_3_candidate() {
        let mut sb = Scoreboard::default();
        sb.reset(0);
        sb.mark_sacked(&[(1, 2)], 5);
        assert_eq!(sb.pipe(5, 3), 4);
        assert_eq!(sb.next_hole(true, 3), None);
        assert_eq!(sb.next_hole(false, 3), Some(0));
    }

    #[test]
    fn advancing_the_cumulative_ack_forgets_older_state() {
        let mut sb = Scoreboard::default();
        sb.reset(0);
        sb.mark_sacked(&[(2, 4)], 10);
        sb.advance(3);
        assert!(!sb.is_sacked(2));
        assert!(sb.is_sacked(3));
        sb.advance(20);
        assert!(!sb.has_sacks());
    }

    #[test]
    fn fack_is_one_past_the_highest_sacked_segment_and_every_hole_below_it_is_a_candidate() {
        let mut sb = Scoreboard::default();
        sb.reset(10);
        assert_eq!(sb.fack(10), 10);
        sb.mark_sacked(&[(11, 12), (14, 15)], 20);
        assert_eq!(sb.fack(10), 15);
        assert_eq!(sb.next_hole_below(15), Some(10));
        sb.mark_retransmitted(10);
        assert_eq!(sb.next_hole_below(15), Some(12));
        assert_eq!(sb.retransmitted_in_flight(), 1);
        sb.mark_retransmitted(12);
        sb.mark_retransmitted(13);
        assert_eq!(sb.next_hole_below(15), None, "nothing at or above fack is a hole");
        sb.mark_sacked(&[(12, 13)], 20);
        assert_eq!(sb.retransmitted_in_flight(), 2, "a SACKed retransmission has left the network");
        sb.advance(16);
        assert_eq!((sb.fack(16), sb.retransmitted_in_flight()), (16, 0));
    }

    #[test]
    fn blocks_beyond_what_was_sent_are_ignored() {
        let mut sb = Scoreboard::default();
        sb.reset(0);
        sb.mark_sacked(&[(5, 1_000_000)], 8);
        assert!(sb.is_sacked(7));
        assert!(!sb.is_sacked(8));
    }
}
