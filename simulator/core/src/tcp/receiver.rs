//! The TCP receiver: cumulative ACKs, an out-of-order buffer, optional delayed ACKs (RFC 1122
//! §4.2.3.2, RFC 5681 §4.2) and optional SACK blocks (RFC 2018).

use std::collections::VecDeque;

use crate::packet::{ecn, Packet, PacketKind, SeqRange, MAX_SACK_BLOCKS};
use crate::time::{from_secs, SimTime};

pub struct TcpReceiver {
    flow: u32,
    epoch: u32,
    /// Next segment expected in order.
    rcv_nxt: u32,
    /// Out-of-order segments held, as sorted disjoint ranges above rcv_nxt. A deque searched
    /// by bisection: at 10 Gb/s a window holds thousands of holes, and a linear scan per
    /// segment (and `Vec::remove(0)` per filled hole) took most of a run's time.
    ooo: VecDeque<SeqRange>,
    sack: bool,
    delayed_ack: bool,
    delack_timeout: SimTime,
    /// Bytes of an ACK on the wire (`header_bytes`, at most 1000: u16 keeps a flow within its
    /// memory budget, as `mss`).
    ack_bytes: u16,
    /// In-order segments received and not yet acknowledged (delayed ACK).
    unacked: u32,
    /// Timestamp to echo on the next ACK.
    echo: SimTime,
    /// When the delayed-ACK timer expires, if armed.
    pub delack_deadline: Option<SimTime>,
    /// Segments in the current transfer (known, as from a FIN), and the last one's payload.
    transfer: Option<(u32, u32)>,
    /// `mss_bytes` (at most 65,000).
    mss: u16,
    /// Payload bytes of distinct segments received, all transfers together: goodput. Counted
    /// on arrival rather than on in-order delivery, so a window that opens while a hole is
    /// being repaired does not credit it with data that crossed the network before it opened.
    pub delivered_bytes: u64,
    /// Data segments of the current epoch that arrived, duplicates included.
    pub segments_received: u64,
    /// RFC 3168 §6.1.3: a CE-marked segment arrived and no CWR since: every ACK carries ECE.
    ece: bool,
    /// CE-marked data segments of the current epoch that arrived.
    pub ce_received: u64,
    /// DCTCP's precise echo (RFC 8257 §3.2): `ece` is the CE state of the last segment, and
    /// a change of it first acknowledges the segments held for a delayed ACK with the old one.
    precise_ecn: bool,
    /// How many more of this connection's in-order segments are acknowledged at once
    /// (`tcp.quickack_pkts` at its start).
    quickacks_left: u16,
}

impl TcpReceiver {
    pub fn new(flow: u32, mss: u32, header_bytes: u32, sack: bool, delayed_ack: bool, delack_timeout_s: f64) -> Self {
        TcpReceiver {
            flow,
            epoch: 0,
            rcv_nxt: 0,
            ooo: VecDeque::new(),
            sack,
            delayed_ack,
            delack_timeout: from_secs(delack_timeout_s),
            ack_bytes: header_bytes as u16,
            unacked: 0,
            echo: 0,
            delack_deadline: None,
            transfer: None,
            mss: mss as u16,
            delivered_bytes: 0,
            segments_received: 0,
            ece: false,
            ce_received: 0,
            precise_ecn: false,
            quickacks_left: 0,
        }
    }

    /// Echoes CE as DCTCP needs (RFC 8257 §3.2) rather than until CWR (RFC 3168 §6.1.3).
    pub fn with_precise_ecn(mut self, precise: bool) -> Self {
        self.precise_ecn = precise;
        self
    }

    /// Prepares for a new transfer (a new connection) of `segments`, the last `last_payload` long,
    /// whose first `quickacks` in-order segments are acknowledged at once (Linux's quick-ACK mode).
    pub fn expect(&mut self, epoch: u32, transfer: Option<(u32, u32)>, quickacks: u16) {
        self.epoch = epoch;
        self.rcv_nxt = 0;
        self.ooo.clear();
        self.unacked = 0;
        self.delack_deadline = None;
        self.transfer = transfer;
        self.ece = false;
        self.quickacks_left = quickacks;
    }

    pub fn epoch(&self) -> u32 {
        self.epoch
    }

    /// The whole current finite transfer has arrived in order.
    pub fn complete(&self) -> bool {
        self.transfer.is_some_and(|(n, _)| self.rcv_nxt >= n)
    }

    fn payload(&self, seq: u32) -> u64 {
        match self.transfer {
            Some((n, last)) if seq + 1 == n => last as u64,
            _ => self.mss as u64,
        }
    }

    /// A data segment arrived; any ACK it causes goes to `out`.
    pub fn on_data(&mut self, p: &Packet, now: SimTime, out: &mut Vec<Packet>) {
        if p.epoch != self.epoch {
            return;
        }
        let seq = p.seq;
        self.segments_received += 1;
        let ce = p.has(ecn::CE);
        self.ce_received += ce as u64;
        if self.precise_ecn {
            // RFC 8257 §3.2: ECE mirrors the CE state of the data; when it changes, the segments
            // a delayed ACK holds are acknowledged at once with the state they arrived in.
            if ce != self.ece {
                if self.unacked > 0 {
                    self.send_ack(u32::MAX, now, out);
                }
                self.ece = ce;
            }
        } else {
            // RFC 3168 §6.1.3: CWR ends the echo, a CE mark (on the same segment too) starts it.
            if p.has(ecn::CWR) {
                self.ece = false;
            }
            self.ece |= ce;
        }
        // RFC 7323 §4.3: echo the earliest segment of a delayed-ACK group, or a segment that
        // fills a hole; out-of-order and duplicate arrivals leave the echo alone.
        let fills_hole = seq == self.rcv_nxt && !self.ooo.is_empty();
        if seq == self.rcv_nxt && (self.unacked == 0 || fills_hole) {
            self.echo = p.timestamp;
        }
        if seq < self.rcv_nxt || self.held_range(seq).is_some() {
            // A duplicate: acknowledge at once so the sender learns where we are.
            self.send_ack(seq, now, out);
        } else if seq == self.rcv_nxt {
            let mut next = seq + 1;
            let filled_hole = self.ooo.front().is_some_and(|r| r.0 == next);
            if filled_hole {
                next = self.ooo.pop_front().map_or(next, |r| r.1);
            }
            self.delivered_bytes += self.payload(seq);
            self.rcv_nxt = next;
            let had_gap = filled_hole || !self.ooo.is_empty();
            self.unacked += 1;
            // RFC 5681 §4.2: ACK at once when a gap is filled; otherwise every second segment
            // (after the quick ACKs of a connection's start).
            let quick = self.quickacks_left > 0;
            self.quickacks_left -= quick as u16;
            if !self.delayed_ack || quick || had_gap || self.unacked >= 2 || self.complete() {
                self.send_ack(seq, now, out);
            } else if self.delack_deadline.is_none() {
                self.delack_deadline = Some(now.saturating_add(self.delack_timeout));
            }
        } else {
            self.delivered_bytes += self.payload(seq);
            self.insert_out_of_order(seq);
            self.send_ack(seq, now, out);
        }
    }

    pub fn on_delack_timeout(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        if self.delack_deadline.take().is_some() && self.unacked > 0 {
            self.send_ack(u32::MAX, now, out);
        }
    }

    /// The index of the held range that contains `seq`, if any.
    fn held_range(&self, seq: u32) -> Option<usize> {
        let i = self.ooo.partition_point(|&(_, end)| end <= seq);
        self.ooo.get(i).is_some_and(|&(start, _)| start <= seq).then_some(i)
    }

    fn insert_out_of_order(&mut self, seq: u32) {
        let i = self.ooo.partition_point(|&(_, end)| end < seq);
        match self.ooo.get_mut(i) {
            Some(r) if r.0 == seq + 1 => r.0 = seq,
            Some(r) if r.1 == seq => {
                r.1 = seq + 1;
                if let Some(&(next_start, next_end)) = self.ooo.get(i + 1) {
                    if next_start == seq + 1 {
                        self.ooo[i].1 = next_end;
                        self.ooo.remove(i + 1);
                    }
                }
            }
            _ => self.ooo.insert(i, (seq, seq + 1)),
        }
    }

    /// Builds the ACK; SACK blocks list the range holding `trigger` first (RFC 2018 §4), then
    /// the highest others.
    fn send_ack(&mut self, trigger: u32, now: SimTime, out: &mut Vec<Packet>) {
        let mut a = Packet::new(
            self.flow,
            PacketKind::Ack,
            self.epoch,
            self.rcv_nxt,
            self.ack_bytes as u32,
            now,
        );
        a.timestamp = self.echo;
        if self.ece {
            a.ecn = ecn::ECE;
        }
        if self.sack && !self.ooo.is_empty() {
            let first = self.held_range(trigger);
            let mut n = 0;
            if let Some(i) = first {
                a.sack[0] = self.ooo[i];
                n = 1;
            }
            for (i, &r) in self.ooo.iter().enumerate().rev() {
                if n == MAX_SACK_BLOCKS {
                    break;
                }
                if Some(i) != first {
                    a.sack[n] = r;
                    n += 1;
                }
            }
            a.sack_len = n as u8;
        }
        self.unacked = 0;
        self.delack_deadline = None;
        out.push(a);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(seq: u32) -> Packet {
        Packet::new(0, PacketKind::Data, 0, seq, 1040, 0)
    }

    fn receive(r: &mut TcpReceiver, seqs: &[u32]) -> Vec<Packet> {
        let mut out = Vec::new();
        for &s in seqs {
            r.on_data(&data(s), 0, &mut out);
        }
        out
    }

    #[test]
    fn a_gap_produces_duplicate_acks_with_sack_blocks() {
        let mut r = TcpReceiver::new(0, 1000, 40, true, false, 0.1);
        let acks = receive(&mut r, &[0, 1, 3, 4, 6]);
        let cums: Vec<u32> = acks.iter().map(|a| a.seq).collect();
        assert_eq!(cums, vec![1, 2, 2, 2, 2]);
        let last = acks.last().unwrap();
        assert_eq!(last.sack_blocks(), &[(6, 7), (3, 5)]);
    }

    #[test]
    fn filling_the_hole_acknowledges_everything_buffered() {
        let mut r = TcpReceiver::new(0, 1000, 40, false, false, 0.1);
        let acks = receive(&mut r, &[0, 2, 3, 1]);
        assert_eq!(acks.last().unwrap().seq, 4);
        assert_eq!(r.delivered_bytes, 4000);
    }

    #[test]
    fn delayed_acks_acknowledge_every_second_segment_or_on_the_timer() {
        let mut r = TcpReceiver::new(0, 1000, 40, false, true, 0.1);
        assert_eq!(receive(&mut r, &[0]).len(), 0);
        assert_eq!(r.delack_deadline, Some(100_000_000));
        assert_eq!(receive(&mut r, &[1]).len(), 1);
        assert_eq!(receive(&mut r, &[2]).len(), 0);
        let mut out = Vec::new();
        r.on_delack_timeout(100_000_000, &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].seq, 3);
    }

    #[test]
    fn quick_acks_answer_a_connections_first_segments_at_once_then_delayed_acks_take_over() {
        let mut r = TcpReceiver::new(0, 1000, 40, false, true, 0.1);
        r.expect(0, None, 3);
        for seq in 0..3 {
            assert_eq!(receive(&mut r, &[seq]).len(), 1, "segment {seq}: a quick ACK");
        }
        assert_eq!(
            receive(&mut r, &[3]).len(),
            0,
            "the fourth waits for a second or the timer"
        );
        assert_eq!(receive(&mut r, &[4]).len(), 1);
        r.expect(1, None, 3);
        let mut out = Vec::new();
        r.on_data(&Packet { epoch: 1, ..data(0) }, 0, &mut out);
        assert_eq!(out.len(), 1, "a new connection starts with quick ACKs again");
    }

    #[test]
    fn a_finite_transfer_completes_with_its_exact_byte_count() {
        let mut r = TcpReceiver::new(0, 1000, 40, false, false, 0.1);
        r.expect(0, Some((3, 500)), 0);
        receive(&mut r, &[0, 1]);
        assert!(!r.complete());
        receive(&mut r, &[2]);
        assert!(r.complete());
        assert_eq!(r.delivered_bytes, 2500);
    }

    #[test]
    fn the_receiver_echoes_ece_on_every_ack_from_a_ce_arrival_until_it_receives_cwr() {
        let mut r = TcpReceiver::new(0, 1000, 40, false, false, 0.1);
        let with = |seq, bits| Packet { ecn: bits, ..data(seq) };
        let mut out = Vec::new();
        for p in [
            with(0, ecn::ECT0),
            with(1, ecn::ECT0 | ecn::CE),
            with(2, ecn::ECT0),
            with(3, ecn::ECT0),
            with(4, ecn::ECT0 | ecn::CWR),
            with(5, ecn::ECT0),
        ] {
            r.on_data(&p, 0, &mut out);
        }
        let echoed: Vec<bool> = out.iter().map(|a| a.has(ecn::ECE)).collect();
        assert_eq!(echoed, [false, true, true, true, false, false]);
        assert_eq!(r.ce_received, 1);
    }

    #[test]
    fn a_dctcp_receiver_echoes_the_ce_state_of_each_segment_and_acks_at_once_when_it_changes() {
        let mut r = TcpReceiver::new(0, 1000, 40, false, true, 0.1).with_precise_ecn(true);
        let with = |seq, bits| Packet { ecn: bits, ..data(seq) };
        let (plain, marked) = (ecn::ECT0, ecn::ECT0 | ecn::CE);
        let mut out = Vec::new();
        // Delayed ACKs (every second segment): 0 is held; CE on 1 first acknowledges 0 without
        // ECE, then 1, 2 go together with ECE; 3 is held; 4 unmarked acknowledges 3 with ECE,
        // then holds 4 until 5 arrives, and 4, 5 go without ECE. CWR plays no part.
        for p in [
            with(0, plain),
            with(1, marked),
            with(2, marked | ecn::CWR),
            with(3, marked),
            with(4, plain),
            with(5, plain),
        ] {
            r.on_data(&p, 0, &mut out);
        }
        let acks: Vec<(u32, bool)> = out.iter().map(|a| (a.seq, a.has(ecn::ECE))).collect();
        assert_eq!(acks, [(1, false), (3, true), (4, true), (6, false)]);
        assert_eq!(r.ce_received, 3);
    }

    #[test]
    fn adjacent_out_of_order_ranges_merge() {
        let mut r = TcpReceiver::new(0, 1000, 40, true, false, 0.1);
        receive(&mut r, &[5, 7, 6, 3]);
        assert_eq!(r.ooo, [(3, 4), (5, 8)]);
    }
}
