//! RACK-TLP loss detection (RFC 8985), as Linux runs it (`tcp_recovery.c`, `tcp_output.c`'s
//! loss probe), selected by `tcp.rack` for the SACK recoveries (`sack`, `prr`). RACK decides
//! *what* is lost, by time instead of by counting duplicate ACKs or SACKed segments: a segment
//! is lost once a segment sent after it has been delivered and more than RACK.rtt + reo_wnd has
//! passed since it was sent. The recovery (RFC 6675's NextSeg and pipe, PRR's cwnd) decides
//! *how much* goes out. TLP sends a probe two SRTTs after the last transmission when the tail
//! of a flight gets no ACK, so that RACK, not the retransmission timer, repairs a tail loss.
//!
//! Left out: the DSACK-driven growth of the reordering window (§6.2 step 4's reo_wnd_mult and
//! reo_wnd_persist): tcpsim's receiver sends no DSACK, so reo_wnd_mult stays 1, and the TLP
//! episode (§7.4) tells a redundant probe from a repairing one by the pure duplicate ACK the
//! probe draws when the original arrived too (Linux's `tcp_process_tlp_ack` heuristic), not
//! by DSACK. The reorder timer is armed for the oldest segment still waiting (RFC 8985 and
//! Linux arm it for the newest and mark every waiting one at once): it fires once per
//! waiting segment at most, but never later than theirs, and costs O(1) per ACK.
//!
//! Memory: 8 bytes per outstanding segment (its last transmit time, the top bit flagging a
//! retransmission) and 16 per transmission not yet acknowledged or judged, only for flows
//! that run RACK.

use std::collections::VecDeque;

use super::scoreboard::Scoreboard;
use crate::packet::SeqRange;
use crate::time::SimTime;

/// The top bit of a `sent` entry: the segment was retransmitted (RFC 8985's
/// Segment.retransmitted).
const RETRANSMITTED: u64 = 1 << 63;

/// §6.2's RACK_sent_after: (t1, seq1) was sent after (t2, seq2) — later, or at the same time
/// and higher in sequence (segments sent in one burst).
fn sent_after(t1: SimTime, seq1: u32, t2: SimTime, seq2: u32) -> bool {
    t1 > t2 || (t1 == t2 && seq1 > seq2)
}

/// A TLP episode (§7.4): the probe is out, and the ACKs that follow tell whether it repaired a loss.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TlpEpisode {
    /// TLP.end_seq: snd.nxt (high_tx) when the probe went out.
    pub end_seq: u32,
    /// TLP.is_retrans: the probe resent the last segment (no new data could go).
    pub is_retrans: bool,
}

/// What an ACK does to a TLP episode (§7.4.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TlpOutcome {
    /// The episode goes on, or there is none.
    Pending,
    /// The episode ends without a loss: the probe was new data, or it and the original both
    /// arrived (a pure duplicate ACK at TLP.end_seq).
    NoLoss,
    /// The probe repaired a loss: the ACK passes TLP.end_seq with no sign that the original
    /// arrived. The congestion control reduces the window, once for the episode.
    Repaired,
}

#[derive(Debug, Default)]
pub struct RackTlp {
    /// Sequence number of `sent[0]`: snd.una.
    base: u32,
    /// Last transmit time of every outstanding segment, ns (RETRANSMITTED in the top bit).
    sent: VecDeque<u64>,
    /// Every transmission as (time, segment) in the order sent: RFC 8985's time-ordered view
    /// of the outstanding segments (Linux's tsorted_sent_queue). Entries a later event made
    /// stale (acknowledged, SACKed, resent since, judged lost) are dropped from the front.
    order: VecDeque<(SimTime, u32)>,
    /// RACK.xmit_ts and RACK.end_seq (one past the segment): the most recently sent segment
    /// delivered so far.
    xmit_ts: SimTime,
    end_seq: u32,
    /// RACK.rtt: the RTT of that segment, ns.
    rtt: SimTime,
    /// RACK.fack: the highest end_seq delivered, for §6.2 step 3.
    fack: u32,
    /// RACK.reordering_seen.
    pub reordering_seen: bool,
    /// RACK's reorder timer (§6.3), if armed.
    pub reo_deadline: Option<SimTime>,
    /// TLP's probe timer (PTO, §7.2), if armed.
    pub probe_deadline: Option<SimTime>,
    /// The TLP episode in progress.
    pub tlp: Option<TlpEpisode>,
    /// An ACK advanced snd.una since the probe timer was last set: set it again (§7.2). Kept
    /// here, behind the sender's box, so a flow without RACK pays nothing for it.
    pub rearm: bool,
    /// Tail loss probes sent (§7.3), over every connection of the flow.
    pub probes: u64,
    /// TLP episodes that ended with the probe repairing a loss: one window reduction each (§7.4).
    pub reductions: u64,
}

impl RackTlp {
    /// A fresh connection from segment 0.
    pub fn reset(&mut self) {
        *self = RackTlp {
            probes: self.probes,
            reductions: self.reductions,
            ..RackTlp::default()
        };
    }

    /// The last transmit time of `seq`, and whether that was a retransmission.
    fn sent_at(&self, seq: u32) -> Option<(SimTime, bool)> {
        let i = seq.checked_sub(self.base)? as usize;
        self.sent.get(i).map(|&v| (v & !RETRANSMITTED, v & RETRANSMITTED != 0))
    }

    /// `seq` went out at `now` (Segment.xmit_ts, §6.1).
    pub fn on_send(&mut self, seq: u32, now: SimTime, retransmission: bool) {
        let Some(i) = seq.checked_sub(self.base) else { return };
        let i = i as usize;
        if self.sent.len() <= i {
            self.sent.resize(i + 1, 0);
        }
        self.sent[i] = now | if retransmission { RETRANSMITTED } else { 0 };
        self.order.push_back((now, seq));
    }

    /// §6.2 steps 1–3 for one ACK: RACK.xmit_ts, end_seq, rtt and fack from the segments it
    /// newly delivers — cumulatively, [una, cum) less what was SACKed before or by this ACK, and
    /// selectively, `newly_sacked` — then the acknowledged segments are forgotten.
    pub fn on_ack(
        &mut self,
        cum: u32,
        newly_sacked: &[SeqRange],
        board: &Scoreboard,
        now: SimTime,
        min_rtt: Option<SimTime>,
    ) {
        let delivered = |rack: &mut Self, seq: u32| {
            let Some((xmit_ts, retransmitted)) = rack.sent_at(seq) else {
                return;
            };
            let end_seq = seq + 1;
            // Step 3: a segment delivered below the highest delivered one, never resent, was
            // reordered.
            if end_seq > rack.fack {
                rack.fack = end_seq;
            } else if end_seq < rack.fack && !retransmitted {
                rack.reordering_seen = true;
            }
            // Step 2: the ACK of a retransmission may be the original's; one faster than the
            // path's minimum RTT is (RFC 8985 also allows a timestamp check).
            let rtt = now.saturating_sub(xmit_ts);
            if retransmitted && min_rtt.is_some_and(|m| rtt < m) {
                return;
            }
            // Step 1, as Linux's tcp_rack_advance: the most recently sent delivered segment.
            if sent_after(xmit_ts, end_seq, rack.xmit_ts, rack.end_seq) {
                (rack.xmit_ts, rack.end_seq, rack.rtt) = (xmit_ts, end_seq, rtt);
            }
        };
        for seq in self.base..cum.max(self.base) {
            if !board.is_sacked(seq) {
                delivered(self, seq);
            }
        }
        for &(start, end) in newly_sacked {
            for seq in start.max(cum)..end {
                delivered(self, seq);
            }
        }
        if cum > self.base {
            let n = ((cum - self.base) as usize).min(self.sent.len());
            self.sent.drain(..n);
            self.base = cum;
        }
    }

    /// §6.2 step 4, RACK.reo_wnd, without DSACK adaptation (reo_wnd_mult = 1): none before
    /// reordering is seen when the connection is recovering or DupThresh segments are SACKed
    /// (so RACK starts a recovery as promptly as three duplicate ACKs would), else
    /// min(min_RTT / 4, SRTT).
    pub fn reo_wnd(
        &self,
        recovering: bool,
        sacked: u32,
        dupthresh: u32,
        min_rtt: Option<SimTime>,
        srtt: Option<SimTime>,
    ) -> SimTime {
        if !self.reordering_seen && (recovering || sacked >= dupthresh) {
            return 0;
        }
        let quarter = min_rtt.unwrap_or(0) / 4;
        srtt.map_or(quarter, |s| quarter.min(s))
    }

    /// §6.2 step 5 and §6.3: marks lost on `board` every segment sent before RACK.xmit_ts
    /// whose RACK.rtt + reo_wnd has passed, and arms the reorder timer for the oldest one whose
    /// has not. Returns how many it marked.
    pub fn detect_loss(&mut self, now: SimTime, reo_wnd: SimTime, board: &mut Scoreboard) -> u32 {
        self.reo_deadline = None;
        let mut marked = 0;
        while let Some(&(ts, seq)) = self.order.front() {
            let live = self.sent_at(seq).is_some_and(|(t, _)| t == ts) && !board.is_sacked(seq);
            if !live {
                self.order.pop_front();
                continue;
            }
            if !sent_after(self.xmit_ts, self.end_seq, ts, seq + 1) {
                break;
            }
            // Step 5: remaining = Segment.xmit_ts + RACK.rtt + RACK.reo_wnd − Now().
            let deadline = ts.saturating_add(self.rtt).saturating_add(reo_wnd);
            if deadline > now {
                self.reo_deadline = Some(deadline);
                break;
            }
            // Lost: out of the time-ordered view until it is resent (Segment.xmit_ts = ∞).
            self.order.pop_front();
            if board.mark_lost_by_time(seq) {
                marked += 1;
            }
        }
        marked
    }

    /// §7.2's PTO: 2·SRTT, plus the worst-case delayed-ACK time when one segment is in flight
    /// (its ACK may be delayed), 1 s before any RTT sample; never past the retransmit timer.
    pub fn probe_timeout(
        srtt: Option<SimTime>,
        flight: u32,
        delayed_ack: SimTime,
        now: SimTime,
        rto_deadline: Option<SimTime>,
    ) -> SimTime {
        let pto = match srtt {
            Some(srtt) if flight == 1 => 2 * srtt + delayed_ack,
            Some(srtt) => 2 * srtt,
            None => 1_000_000_000,
        };
        let at = now.saturating_add(pto);
        rto_deadline.map_or(at, |rto| at.min(rto))
    }

    /// §7.4: an ACK (cumulative point `cum`, snd.una before it `una`) during a TLP episode.
    /// `pure_duplicate`: it acknowledges and SACKs nothing new.
    pub fn on_ack_in_episode(&mut self, cum: u32, pure_duplicate: bool) -> TlpOutcome {
        let Some(episode) = self.tlp else {
            return TlpOutcome::Pending;
        };
        if cum < episode.end_seq {
            return TlpOutcome::Pending;
        }
        let outcome = if !episode.is_retrans || pure_duplicate {
            // New data as the probe: any loss is RACK's to find. Or the probe drew a
            // duplicate ACK: original and probe both arrived (DSACK would say so).
            TlpOutcome::NoLoss
        } else if cum > episode.end_seq {
            // The ACK passes the probe with no sign the original arrived: the probe repaired
            // the tail (Linux: tcp_process_tlp_ack's after(ack, tlp_high_seq)).
            TlpOutcome::Repaired
        } else {
            return TlpOutcome::Pending;
        };
        self.tlp = None;
        outcome
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: SimTime = 1_000_000;

    /// Segments 0..n sent 1 ms apart from t = 0.
    fn flight(n: u32) -> (RackTlp, Scoreboard) {
        let mut rack = RackTlp::default();
        let mut board = Scoreboard::time_based();
        board.reset(0);
        for seq in 0..n {
            rack.on_send(seq, seq as SimTime * MS, false);
        }
        (rack, board)
    }

    #[test]
    fn a_segment_sent_before_a_delivered_one_is_lost_only_after_rtt_plus_the_reordering_window() {
        let (mut rack, mut board) = flight(4);
        // Segment 2 (sent at 2 ms) is SACKed at 102 ms: RACK.rtt = 100 ms.
        board.mark_sacked(&[(2, 3)], 4);
        rack.on_ack(0, board.newly_sacked(), &board, 102 * MS, Some(100 * MS));
        let reo = rack.reo_wnd(false, 1, 3, Some(100 * MS), Some(100 * MS));
        assert_eq!(reo, 25 * MS, "min_RTT / 4");
        assert_eq!(rack.detect_loss(102 * MS, reo, &mut board), 0);
        // Segment 0 waits until 0 + 100 + 25 ms; the timer is armed for it.
        assert_eq!(rack.reo_deadline, Some(125 * MS));
        assert_eq!(rack.detect_loss(125 * MS, reo, &mut board), 1, "segment 0");
        // Segment 1 left 1 ms later: its deadline, 126 ms, is the timer's next.
        assert_eq!(rack.reo_deadline, Some(126 * MS));
        assert_eq!(rack.detect_loss(126 * MS, reo, &mut board), 1, "segment 1");
        assert_eq!(board.pipe(4, 3), 1, "only segment 3 is in flight");
        assert_eq!(board.next_hole(true, 3), Some(0));
        assert_eq!(rack.reo_deadline, None, "segment 3 was sent after the delivered one");
    }

    #[test]
    fn a_hole_delivered_late_but_never_resent_shows_reordering() {
        let (mut rack, board) = flight(3);
        let mut board = board;
        board.mark_sacked(&[(1, 2)], 3);
        rack.on_ack(0, board.newly_sacked(), &board, 101 * MS, None);
        assert!(!rack.reordering_seen);
        rack.on_ack(2, &[], &board, 102 * MS, None);
        assert!(rack.reordering_seen);
        let (quarter, zero) = (
            rack.reo_wnd(true, 5, 3, Some(100 * MS), None),
            RackTlp::default().reo_wnd(true, 0, 3, Some(100 * MS), None),
        );
        assert_eq!((quarter, zero), (25 * MS, 0), "in recovery: 0 until reordering is seen");
    }

    #[test]
    fn a_lost_retransmission_is_marked_lost_again_and_resent() {
        let (mut rack, mut board) = flight(5);
        board.mark_sacked(&[(1, 4)], 5);
        rack.on_ack(0, board.newly_sacked(), &board, 103 * MS, Some(100 * MS));
        assert_eq!(rack.detect_loss(103 * MS, 0, &mut board), 1);
        // Segment 0 is resent at 103 ms and lost again; new segment 5 goes out at 104 ms and
        // is SACKed at 204 ms, a round trip after it.
        board.mark_retransmitted(0);
        rack.on_send(0, 103 * MS, true);
        rack.on_send(5, 104 * MS, false);
        assert_eq!(board.next_hole(true, 3), None);
        board.mark_sacked(&[(1, 4), (5, 6)], 6);
        rack.on_ack(0, board.newly_sacked(), &board, 204 * MS, Some(100 * MS));
        assert_eq!(rack.detect_loss(204 * MS, 0, &mut board), 2, "the retransmission and 4");
        assert_eq!(board.next_hole(true, 3), Some(0), "resent once more");
    }

    #[test]
    fn a_tlp_episode_ends_without_a_loss_on_a_duplicate_and_with_one_when_the_ack_passes_the_probe() {
        let mut rack = RackTlp {
            tlp: Some(TlpEpisode {
                end_seq: 10,
                is_retrans: true,
            }),
            ..RackTlp::default()
        };
        assert_eq!(rack.on_ack_in_episode(9, false), TlpOutcome::Pending);
        assert_eq!(rack.on_ack_in_episode(10, false), TlpOutcome::Pending, "ambiguous");
        assert_eq!(rack.on_ack_in_episode(12, false), TlpOutcome::Repaired);
        assert_eq!(rack.on_ack_in_episode(13, false), TlpOutcome::Pending, "once");
        rack.tlp = Some(TlpEpisode {
            end_seq: 10,
            is_retrans: true,
        });
        assert_eq!(rack.on_ack_in_episode(10, true), TlpOutcome::NoLoss);
    }

    #[test]
    fn the_probe_timeout_is_two_srtts_plus_the_delayed_ack_time_for_a_single_segment() {
        let srtt = Some(100 * MS);
        assert_eq!(RackTlp::probe_timeout(srtt, 5, 40 * MS, 0, None), 200 * MS);
        assert_eq!(RackTlp::probe_timeout(srtt, 1, 40 * MS, 0, None), 240 * MS);
        assert_eq!(
            RackTlp::probe_timeout(srtt, 5, 40 * MS, 0, Some(150 * MS)),
            150 * MS,
            "never past the RTO"
        );
    }
}
