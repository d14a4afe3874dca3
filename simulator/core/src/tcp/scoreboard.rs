//! The SACK scoreboard of RFC 6675: which segments in [snd_una, high_tx) the receiver has
//! reported holding, and which we retransmitted, with IsLost, SetPipe and NextSeg.
//!
//! Every operation an ACK makes costs O(log n) in the SACKed ranges plus what the ACK newly
//! SACKs or acknowledges, never the window: at 1–10 Gb/s a window holds 10⁴–10⁶ segments and
//! an ACK that rescanned it cost more than the rest of the simulation together.
//!
//! - SACKed segments are kept twice: as disjoint, merged ranges (for the highest SACKed
//!   segment, the DupThresh-th highest, and skipping a SACKed run at once) and as a flag per
//!   segment (for point queries).
//! - IsLost (RFC 6675 §4) is a boundary, not a per-segment count: an unSACKed segment has at
//!   least DupThresh SACKed segments above it exactly when it lies below the DupThresh-th
//!   highest SACKed segment. SetPipe follows in O(1) from that boundary, the number of SACKed
//!   segments, and a running count of retransmissions not yet SACKed.
//! - NextSeg's candidates (rules 1 and 3) are the lowest segment neither SACKed nor
//!   retransmitted; every segment below a cursor is one or the other, and marks are only ever
//!   added until the retransmission marks are cleared (a timeout, or a new SACK recovery:
//!   RFC 6675's HighRxt starts again), so between clearings the cursor only moves forward —
//!   except where RACK (`tcp.rack`) finds a retransmission lost: its mark goes and the cursor
//!   steps back to it, once per lost retransmission.
//! - With RACK, IsLost is a LOST flag per segment that RACK sets by time, and SetPipe counts
//!   the flagged segments as Linux's lost_out does.

use std::collections::{BTreeMap, VecDeque};

use crate::packet::SeqRange;

const SACKED: u8 = 1;
const RETRANSMITTED: u8 = 2;
/// Marked lost by RACK (time-based loss detection, `tcp.rack`); never set otherwise.
const LOST: u8 = 4;

#[derive(Default, Debug)]
pub struct Scoreboard {
    /// Sequence number of `flags[0]`: the cumulative ACK point.
    base: u32,
    flags: VecDeque<u8>,
    /// SACKed segments as disjoint, non-adjacent ranges, start → end (exclusive).
    sacked_ranges: BTreeMap<u32, u32>,
    sacked: u32,
    /// Retransmitted segments not SACKed since (FACK's retran_data; RFC 6675's second term of
    /// SetPipe).
    retransmitted_unsacked: u32,
    /// Every segment in [base, cursor) is SACKed or retransmitted.
    cursor: u32,
    /// The ranges the last `mark_sacked` SACKed for the first time, in the order met.
    newly_sacked: Vec<SeqRange>,
    /// After a timeout: the go-back-N point (one past the last segment passed again) and how
    /// many SACKed segments lie below it — those are not in flight and take no window.
    resend: Option<Resend>,
    /// Every unSACKed segment below this was marked lost once (Linux's TCPCB_LOST): by the
    /// IsLost boundary passing it, or by a timeout. Only moves forward, so a loss is counted
    /// once however many ACKs report it.
    lost_upto: u32,
    /// RACK decides what is lost (`tcp.rack`, RFC 8985): IsLost is the LOST flag the sender
    /// sets through `mark_lost_by_time`, not the DupThresh boundary, and NextSeg has no rule (3).
    time_based: bool,
    /// Segments flagged LOST and not SACKed (Linux's lost_out), in time-based mode.
    lost_unsacked: u32,
    /// Segments `mark_lost_by_time` marked since the last `mark_lost` (BBR's `rs.losses`).
    newly_lost: u32,
}

#[derive(Clone, Copy, Debug, Default)]
struct Resend {
    next: u32,
    sacked_below: u32,
}

impl Scoreboard {
    /// A scoreboard whose losses RACK marks (`mark_lost_by_time`) instead of DupThresh.
    pub fn time_based() -> Self {
        Scoreboard {
            time_based: true,
            ..Scoreboard::default()
        }
    }

    pub fn reset(&mut self, snd_una: u32) {
        self.base = snd_una;
        self.flags.clear();
        self.sacked_ranges.clear();
        self.sacked = 0;
        self.retransmitted_unsacked = 0;
        self.cursor = snd_una;
        self.newly_sacked.clear();
        self.resend = None;
        self.lost_upto = snd_una;
        self.lost_unsacked = 0;
        self.newly_lost = 0;
    }

    /// Drops state below the new cumulative ACK.
    pub fn advance(&mut self, snd_una: u32) {
        if snd_una <= self.base {
            return;
        }
        let n = ((snd_una - self.base) as usize).min(self.flags.len());
        let resent = self.resend.map_or(0, |r| r.next.saturating_sub(self.base) as usize);
        for (i, f) in self.flags.drain(..n).enumerate() {
            if f & SACKED != 0 {
                self.sacked -= 1;
                if i < resent {
                    self.resend
                        .as_mut()
                        .expect("resent > 0 only while resending")
                        .sacked_below -= 1;
                }
            } else {
                if f & RETRANSMITTED != 0 {
                    self.retransmitted_unsacked -= 1;
                }
                if f & LOST != 0 {
                    self.lost_unsacked -= 1;
                }
            }
        }
        self.base = snd_una;
        if let Some(r) = &mut self.resend {
            r.next = r.next.max(snd_una);
        }
        self.cursor = self.cursor.max(snd_una);
        if self.flags.is_empty() {
            self.sacked_ranges.clear();
            return;
        }
        while let Some((&start, &end)) = self.sacked_ranges.first_key_value() {
            if start >= snd_una {
                break;
            }
            self.sacked_ranges.pop_first();
            if end > snd_una {
                self.sacked_ranges.insert(snd_una, end);
                break;
            }
        }
    }

    fn slot(&mut self, seq: u32) -> Option<&mut u8> {
        let i = seq.checked_sub(self.base)? as usize;
        if i >= self.flags.len() {
            self.flags.resize(i + 1, 0);
        }
        self.flags.get_mut(i)
    }

    /// Records SACK blocks, ignoring anything below the cumulative ACK point or at and beyond
    /// `high_tx` (never sent). What they SACK for the first time is `newly_sacked()`.
    pub fn mark_sacked(&mut self, blocks: &[SeqRange], high_tx: u32) {
        self.newly_sacked.clear();
        for &(start, end) in blocks {
            let (start, end) = (start.max(self.base), end.min(high_tx));
            if start < end {
                self.merge(start, end);
            }
        }
    }

    /// The segments the last `mark_sacked` SACKed for the first time, block by block in the
    /// order the ACK listed them, ascending within a block.
    pub fn newly_sacked(&self) -> &[SeqRange] {
        &self.newly_sacked
    }

    /// Adds [start, end) to the SACKed ranges, flagging only the segments it newly covers.
    fn merge(&mut self, start: u32, end: u32) {
        // The common case: the block extends the range it lies in (the receiver's newest
        // block grows by one segment per ACK) and no other range begins before its end.
        if let Some((&s, e)) = self.sacked_ranges.range_mut(..=end).next_back() {
            if s <= start && *e >= start {
                let old_end = *e;
                if end > old_end {
                    *e = end;
                    self.flag_sacked(old_end, end);
                }
                return;
            }
        }
        let (mut lo, mut hi) = (start, end);
        let mut pos = start;
        // The range that begins at or before `start`, if it reaches it, and every range that
        // begins inside [start, end]: merged into one.
        let first = match self.sacked_ranges.range(..=start).next_back() {
            Some((&s, &e)) if e >= start => s,
            _ => start,
        };
        while let Some((&s, &e)) = self.sacked_ranges.range(first..=end).next() {
            self.sacked_ranges.remove(&s);
            lo = lo.min(s);
            hi = hi.max(e);
            if s > pos {
                self.flag_sacked(pos, s.min(end));
            }
            pos = pos.max(e);
        }
        if pos < end {
            self.flag_sacked(pos, end);
        }
        self.sacked_ranges.insert(lo, hi);
    }

    fn flag_sacked(&mut self, start: u32, end: u32) {
        if start >= end {
            return;
        }
        let (from, to) = ((start - self.base) as usize, (end - self.base) as usize);
        if self.flags.len() < to {
            self.flags.resize(to, 0);
        }
        for f in self.flags.range_mut(from..to) {
            if *f & RETRANSMITTED != 0 {
                self.retransmitted_unsacked -= 1;
            }
            if *f & LOST != 0 {
                self.lost_unsacked -= 1;
            }
            *f |= SACKED;
        }
        self.sacked += end - start;
        if let Some(r) = &mut self.resend {
            r.sacked_below += r.next.min(end).saturating_sub(start);
        }
        match self.newly_sacked.last_mut() {
            Some(last) if last.1 == start => last.1 = end,
            _ => self.newly_sacked.push((start, end)),
        }
    }

    pub fn mark_retransmitted(&mut self, seq: u32) {
        let Some(f) = self.slot(seq) else { return };
        let first_time = *f & (SACKED | RETRANSMITTED) == 0;
        *f |= RETRANSMITTED;
        if first_time {
            self.retransmitted_unsacked += 1;
        }
    }

    pub fn is_sacked(&self, seq: u32) -> bool {
        self.flag(seq) & SACKED != 0
    }

    fn flag(&self, seq: u32) -> u8 {
        seq.checked_sub(self.base)
            .and_then(|i| self.flags.get(i as usize))
            .copied()
            .unwrap_or(0)
    }

    pub fn has_sacks(&self) -> bool {
        self.sacked > 0
    }

    /// Segments SACKed above the cumulative ACK point.
    pub fn sacked(&self) -> u32 {
        self.sacked
    }

    /// One past the highest SACKed segment.
    fn sacked_end(&self) -> Option<u32> {
        self.sacked_ranges.last_key_value().map(|(_, &end)| end)
    }

    /// FACK's snd.fack (Mathis & Mahdavi 1996): one past the highest segment the receiver
    /// reported holding, or the cumulative ACK point when nothing above it is SACKed.
    pub fn fack(&self, snd_una: u32) -> u32 {
        self.sacked_end().map_or(snd_una, |end| end.max(snd_una))
    }

    /// FACK's retran_data: retransmitted segments not yet SACKed (the cumulative ACK drops
    /// acknowledged ones from the board).
    pub fn retransmitted_in_flight(&self) -> u32 {
        self.retransmitted_unsacked
    }

    /// The lowest segment neither SACKed nor retransmitted (possibly not sent yet).
    fn first_unmarked(&mut self) -> u32 {
        let mut seq = self.cursor.max(self.base);
        loop {
            let f = self.flag(seq);
            if f & SACKED != 0 {
                // Skip the whole SACKed run.
                seq = self
                    .sacked_ranges
                    .range(..=seq)
                    .next_back()
                    .map_or(seq + 1, |(_, &end)| end);
            } else if f & RETRANSMITTED != 0 {
                seq += 1;
            } else {
                break;
            }
        }
        self.cursor = seq;
        seq
    }

    /// FACK's next retransmission: the first segment below `fack` neither SACKed nor already
    /// retransmitted. FACK holds every such hole lost.
    pub fn next_hole_below(&mut self, fack: u32) -> Option<u32> {
        let seq = self.first_unmarked();
        (seq < fack).then_some(seq)
    }

    /// Clears retransmission marks: after a timeout, or when a new SACK recovery begins, every
    /// hole may be sent again. O(window), once per loss episode.
    pub fn clear_retransmitted(&mut self) {
        for f in self.flags.iter_mut() {
            *f &= !RETRANSMITTED;
        }
        self.retransmitted_unsacked = 0;
        self.cursor = self.base;
    }

    /// A timeout: go-back-N starts again from the cumulative ACK point.
    pub fn begin_resend(&mut self) {
        self.resend = Some(Resend {
            next: self.base,
            sacked_below: 0,
        });
    }

    /// Everything outstanding at the timeout is acknowledged: go-back-N is over.
    pub fn end_resend(&mut self) {
        self.resend = None;
    }

    /// Go-back-N passed `seq` (resent it, or skipped it as SACKed); it passes them in order.
    pub fn resend_passed(&mut self, seq: u32) {
        let sacked = self.is_sacked(seq);
        if let Some(r) = &mut self.resend {
            debug_assert!(seq <= r.next, "go-back-N passes segments one by one");
            if seq == r.next {
                r.next = seq + 1;
                r.sacked_below += sacked as u32;
            }
        }
    }

    /// SACKed segments below the go-back-N point since the last timeout: delivered, so not
    /// in flight (Linux's and ns-3's accounting after a timeout; RFC 6675 §5.1 leaves it open).
    pub fn sacked_resent_over(&self) -> u32 {
        self.resend.map_or(0, |r| r.sacked_below)
    }

    /// Marks lost every unSACKed segment the IsLost boundary has passed since the last call
    /// and returns how many: the newly lost segments of this ACK, Linux's `rs->losses`, which
    /// BBR deducts from cwnd. Amortised O(log n): the mark only moves forward, over whole
    /// SACKed runs at a time.
    pub fn mark_lost(&mut self, high_tx: u32, dupthresh: u32) -> u32 {
        if self.time_based {
            return std::mem::take(&mut self.newly_lost);
        }
        let start = self.lost_upto.max(self.base);
        let boundary = if dupthresh == 0 {
            Some(high_tx)
        } else {
            self.lost_below(dupthresh)
        };
        let Some(boundary) = boundary.filter(|&b| b > start) else {
            return 0;
        };
        let first = self
            .sacked_ranges
            .range(..=start)
            .next_back()
            .map_or(start, |(&s, _)| s);
        let sacked_between: u32 = self
            .sacked_ranges
            .range(first..boundary)
            .map(|(&s, &e)| e.min(boundary).saturating_sub(s.max(start)))
            .sum();
        self.lost_upto = boundary;
        boundary - start - sacked_between
    }

    /// A timeout takes everything sent so far as lost (Linux's tcp_enter_loss), outside any
    /// ACK's count.
    pub fn mark_all_lost(&mut self, high_tx: u32) {
        self.lost_upto = self.lost_upto.max(high_tx);
    }

    /// RFC 6675 §4 IsLost as a boundary: every unSACKed segment below it has at least
    /// `dupthresh` SACKed segments above it, and none at or above it does. It is the
    /// `dupthresh`-th highest SACKed segment; with fewer SACKed, nothing is lost (None).
    fn lost_below(&self, dupthresh: u32) -> Option<u32> {
        if dupthresh == 0 {
            return self.sacked_end();
        }
        let mut above = 0;
        for (&start, &end) in self.sacked_ranges.iter().rev() {
            let len = end - start;
            if above + len >= dupthresh {
                return Some(end - (dupthresh - above));
            }
            above += len;
        }
        None
    }

    /// RACK (RFC 8985 §6.2 step 5) judged `seq` lost: it leaves the pipe and NextSeg resends
    /// it. A retransmission judged lost loses its mark, so the segment is resent once more (a
    /// lost retransmission, which RFC 6675 leaves to the timer). False when `seq` is SACKed,
    /// or already lost and not resent since.
    pub fn mark_lost_by_time(&mut self, seq: u32) -> bool {
        let Some(f) = self.slot(seq) else { return false };
        let flags = *f;
        if flags & SACKED != 0 || (flags & LOST != 0 && flags & RETRANSMITTED == 0) {
            return false;
        }
        *f = (flags | LOST) & !RETRANSMITTED;
        if flags & RETRANSMITTED != 0 {
            self.retransmitted_unsacked -= 1;
            self.cursor = self.cursor.min(seq);
        }
        if flags & LOST == 0 {
            self.lost_unsacked += 1;
        }
        self.newly_lost += 1;
        true
    }

    /// Some segment is marked lost by RACK and not resent yet (Linux's lost_out > 0 outside
    /// recovery starts one).
    pub fn has_unrepaired_loss(&mut self) -> bool {
        self.time_based && self.lost_unsacked > 0 && {
            let seq = self.first_unmarked();
            self.flag(seq) & LOST != 0
        }
    }

    /// RFC 6675 SetPipe: segments believed to be in the network. An unSACKed segment counts
    /// once unless IsLost, and once more if it was retransmitted.
    pub fn pipe(&self, high_tx: u32, dupthresh: u32) -> u32 {
        let outstanding = high_tx.saturating_sub(self.base);
        if self.time_based {
            // Linux's packets_in_flight: packets_out − (sacked_out + lost_out) + retrans_out.
            return outstanding - self.sacked - self.lost_unsacked + self.retransmitted_unsacked;
        }
        let not_lost = match self.lost_below(dupthresh) {
            _ if dupthresh == 0 => 0, // every unSACKed segment is lost
            // Above the boundary: the segments up to high_tx less the SACKed ones there
            // (exactly `dupthresh` of them, the boundary included).
            Some(boundary) => high_tx - boundary - dupthresh,
            None => outstanding - self.sacked,
        };
        not_lost + self.retransmitted_unsacked
    }

    /// RFC 6675 NextSeg rules (1) and (3): the first lost hole not yet retransmitted, else
    /// the first unSACKed, unretransmitted segment below the highest SACKed one. Rule (2), new
    /// data, is the caller's, between the two.
    pub fn next_hole(&mut self, lost_only: bool, dupthresh: u32) -> Option<u32> {
        if self.time_based {
            // Only what RACK marked lost is resent, lowest first (Linux's
            // tcp_xmit_retransmit_queue); a hole RACK has not judged waits for it, not rule (3).
            let seq = self.first_unmarked();
            return (lost_only && self.flag(seq) & LOST != 0).then_some(seq);
        }
        let highest = self.sacked_end()? - 1;
        let bound = if lost_only {
            self.lost_below(dupthresh)?.min(highest)
        } else {
            highest
        };
        let seq = self.first_unmarked();
        (seq < bound).then_some(seq)
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
        assert_eq!(
            sb.retransmitted_in_flight(),
            2,
            "a SACKed retransmission has left the network"
        );
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

    /// The scoreboard as RFC 6675 words it, segment by segment: the oracle.
    #[derive(Default)]
    struct Naive {
        base: u32,
        sacked: std::collections::BTreeSet<u32>,
        retransmitted: std::collections::BTreeSet<u32>,
        marked_lost: std::collections::BTreeSet<u32>,
    }

    impl Naive {
        fn sacked_above(&self, seq: u32) -> u32 {
            self.sacked.range(seq + 1..).count() as u32
        }
        fn pipe(&self, high_tx: u32, dupthresh: u32) -> u32 {
            (self.base..high_tx)
                .filter(|s| !self.sacked.contains(s))
                .map(|s| (self.sacked_above(s) < dupthresh) as u32 + self.retransmitted.contains(&s) as u32)
                .sum()
        }
        /// Marks every unSACKed segment IsLost holds and no earlier mark took; how many.
        fn mark_lost(&mut self, high_tx: u32, dupthresh: u32) -> u32 {
            let newly: Vec<u32> = (self.base..high_tx)
                .filter(|&s| {
                    !self.sacked.contains(&s) && self.sacked_above(s) >= dupthresh && !self.marked_lost.contains(&s)
                })
                .collect();
            self.marked_lost.extend(&newly);
            newly.len() as u32
        }
        fn next_hole(&self, lost_only: bool, dupthresh: u32, high_tx: u32) -> Option<u32> {
            (self.base..high_tx).find(|&s| {
                let above = self.sacked_above(s);
                !self.sacked.contains(&s)
                    && !self.retransmitted.contains(&s)
                    && above > 0
                    && (!lost_only || above >= dupthresh)
            })
        }
    }

    #[derive(Clone, Debug)]
    enum Op {
        Send(u32),
        Sack(Vec<(u32, u32)>),
        Retransmit(u32),
        Advance(u32),
        Timeout,
        /// Go-back-N passes this many segments.
        Resend(u32),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (1u32..40).prop_map(Op::Send),
            prop::collection::vec((0u32..120, 1u32..30), 1..4)
                .prop_map(|b| Op::Sack(b.into_iter().map(|(s, l)| (s, s + l)).collect())),
            (0u32..120).prop_map(Op::Retransmit),
            (0u32..20).prop_map(Op::Advance),
            Just(Op::Timeout),
            (1u32..20).prop_map(Op::Resend),
        ]
    }

    use proptest::prelude::*;

    proptest! {
        #[test]
        fn every_answer_matches_rfc_6675_computed_segment_by_segment(ops in prop::collection::vec(op(), 1..60), dupthresh in 0u32..5) {
            let (mut sb, mut naive, mut high_tx) = (Scoreboard::default(), Naive::default(), 0u32);
            let mut resend_next: Option<u32> = None;
            sb.reset(0);
            for op in ops {
                match op {
                    Op::Send(n) => high_tx += n,
                    Op::Sack(blocks) => {
                        sb.mark_sacked(&blocks, high_tx);
                        let mut newly = Vec::new();
                        for &(s, e) in &blocks {
                            for seq in s.max(naive.base)..e.min(high_tx) {
                                if naive.sacked.insert(seq) {
                                    newly.push(seq);
                                }
                            }
                        }
                        let reported: Vec<u32> = sb.newly_sacked().iter().flat_map(|&(s, e)| s..e).collect();
                        prop_assert_eq!(reported, newly);
                    }
                    Op::Retransmit(seq) => {
                        let seq = naive.base + seq;
                        if seq < high_tx {
                            sb.mark_retransmitted(seq);
                            naive.retransmitted.insert(seq);
                        }
                    }
                    Op::Advance(n) => {
                        let una = (naive.base + n).min(high_tx);
                        sb.advance(una);
                        naive.base = una;
                        naive.sacked.retain(|&s| s >= una);
                        naive.retransmitted.retain(|&s| s >= una);
                        naive.marked_lost.retain(|&s| s >= una);
                        resend_next = resend_next.map(|n| n.max(una));
                    }
                    Op::Timeout => {
                        sb.clear_retransmitted();
                        sb.begin_resend();
                        sb.mark_all_lost(high_tx);
                        naive.retransmitted.clear();
                        naive.marked_lost.extend((naive.base..high_tx).filter(|s| !naive.sacked.contains(s)));
                        resend_next = Some(naive.base);
                    }
                    Op::Resend(n) => {
                        if let Some(next) = resend_next {
                            for seq in next..(next + n).min(high_tx) {
                                sb.resend_passed(seq);
                            }
                            resend_next = Some(next.max((next + n).min(high_tx)));
                        }
                    }
                }
                prop_assert_eq!(sb.pipe(high_tx, dupthresh), naive.pipe(high_tx, dupthresh));
                prop_assert_eq!(sb.mark_lost(high_tx, dupthresh), naive.mark_lost(high_tx, dupthresh));
                for lost_only in [true, false] {
                    prop_assert_eq!(sb.next_hole(lost_only, dupthresh), naive.next_hole(lost_only, dupthresh, high_tx));
                }
                let fack = naive.sacked.last().map_or(naive.base, |&s| s + 1);
                prop_assert_eq!(sb.fack(naive.base), fack);
                let below_fack = (naive.base..fack).find(|s| !naive.sacked.contains(s) && !naive.retransmitted.contains(s));
                prop_assert_eq!(sb.next_hole_below(fack), below_fack);
                let in_flight = naive.retransmitted.iter().filter(|s| !naive.sacked.contains(s)).count() as u32;
                prop_assert_eq!(sb.retransmitted_in_flight(), in_flight);
                prop_assert_eq!(sb.has_sacks(), !naive.sacked.is_empty());
                let below = resend_next.map_or(0, |n| naive.sacked.range(..n).count() as u32);
                prop_assert_eq!(sb.sacked_resent_over(), below);
                for seq in naive.base..high_tx + 2 {
                    prop_assert_eq!(sb.is_sacked(seq), naive.sacked.contains(&seq));
                }
            }
        }
    }
}
