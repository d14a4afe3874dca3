//! FQ-CoDel (Hoeiland-Joergensen, McKenney, Taht, Gettys & Dumazet, RFC 8290, 2018): packets
//! hashed by flow into `flows` queues, each under its own CoDel (`codel.rs`), served by deficit
//! round robin with a `quantum` of bytes per turn; flows that have just become active (the
//! "new" list) go before the backlogged ones (the "old" list), so a sparse flow's packets skip
//! a bulk flow's queue.
//!
//! As Linux's `sch_fq_codel` (and ns-3's `FqCoDelQueueDisc`), which RFC 8290 describes: CoDel's
//! one-MTU rule looks at the whole backlog, and past `limit` packets the fattest queue (in
//! bytes) loses packets from its head, up to half its bytes and at most 64 at once.

use std::collections::{HashMap, VecDeque};

use super::codel::{CoDelParams, CoDelVars};
use super::{DropReason, Drops, Queued, Scheduler};
use crate::packet::Packet;
use crate::rng::{mix, SimRng};
use crate::time::SimTime;

/// Linux's `drop_batch_size`: at most this many packets dropped per overflow.
const DROP_BATCH: usize = 64;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FqCoDelParams {
    /// Packets held in all queues together (10240: RFC 8290 §5.2.3, Linux's default).
    pub limit: u32,
    /// Flow queues, the hash's buckets (1024: RFC 8290 §5.2.5).
    pub flows: u32,
    /// Bytes a queue may send per round (1514: RFC 8290 §5.2.4, one Ethernet frame of 1500-byte MTU; our
    /// packet sizes are wire bytes with headers, as Linux's `qdisc_pkt_len`, so the value
    /// carries over).
    pub quantum: u32,
    /// Each queue's CoDel (RFC 8290 §5.2.1–5.2.2: 5 ms and 100 ms).
    pub codel: CoDelParams,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum List {
    None,
    New,
    Old,
}

/// One flow queue: its packets, DRR deficit and CoDel state.
struct FlowQueue {
    queue: VecDeque<Queued>,
    bytes: u64,
    /// Bytes it may still send this round.
    deficit: i64,
    codel: CoDelVars,
    list: List,
}

pub struct FqCoDel {
    params: FqCoDelParams,
    /// The flow queues in use, in order of first use: a queue exists once a packet hashed to
    /// it (then keeps its CoDel state, as Linux's array of `flows`), so a link that carries a
    /// few flows — a dumbbell's access link, one — holds a few, not `flows` of them.
    queues: Vec<FlowQueue>,
    /// Hash bucket → its queue in `queues`.
    index: HashMap<u32, u32>,
    /// Indices in `queues`.
    new_flows: VecDeque<u32>,
    old_flows: VecDeque<u32>,
    /// The hash's seed, drawn from the link's stream (Linux's `perturbation`).
    perturbation: u64,
    packets: usize,
    bytes: u64,
}

impl FqCoDel {
    pub fn new(params: FqCoDelParams, mut rng: SimRng) -> Self {
        FqCoDel {
            params,
            queues: Vec::new(),
            index: HashMap::new(),
            new_flows: VecDeque::new(),
            old_flows: VecDeque::new(),
            perturbation: (rng.uniform() * (1u64 << 53) as f64) as u64,
            packets: 0,
            bytes: 0,
        }
    }

    /// The packet's hash bucket: its flow and direction (a link may carry one flow's data and
    /// another's ACKs) hashed with the perturbation, modulo `flows`.
    fn bucket_of(&self, p: &Packet) -> u32 {
        let key = ((p.flow as u64) << 1 | p.forward() as u64) ^ self.perturbation;
        (mix(key) % self.params.flows as u64) as u32
    }

    /// The packet's flow queue (its index in `queues`), made on first use.
    fn queue_of(&mut self, p: &Packet) -> usize {
        let bucket = self.bucket_of(p);
        let next = self.queues.len() as u32;
        let i = *self.index.entry(bucket).or_insert(next);
        if i == next {
            self.queues.push(FlowQueue {
                queue: VecDeque::new(),
                bytes: 0,
                deficit: 0,
                codel: CoDelVars::default(),
                list: List::None,
            });
        }
        i as usize
    }

    /// Over the limit: drop from the head of the queue with the most bytes (RFC 8290 §4.1),
    /// until half its bytes or 64 packets are gone (Linux's `fq_codel_drop`).
    fn drop_from_fattest(&mut self, drops: &mut Drops) {
        let (fattest, _) = self
            .queues
            .iter()
            .enumerate()
            .rev()
            .max_by_key(|(_, q)| q.bytes)
            .expect("the arrival's queue at least");
        let q = &mut self.queues[fattest];
        let threshold = q.bytes / 2;
        let mut dropped = 0;
        for _ in 0..DROP_BATCH {
            let Some(item) = q.queue.pop_front() else { break };
            let size = item.packet.size as u64;
            q.bytes -= size;
            self.bytes -= size;
            self.packets -= 1;
            dropped += size;
            drops.push(item.packet, DropReason::Overflow);
            if dropped >= threshold {
                break;
            }
        }
    }
}

impl Scheduler for FqCoDel {
    /// RFC 8290 §4.1: to the tail of its flow's queue; a queue in neither list joins the new
    /// list with a full quantum.
    fn enqueue(&mut self, item: Queued, drops: &mut Drops) {
        let i = self.queue_of(&item.packet);
        let q = &mut self.queues[i];
        let size = item.packet.size as u64;
        q.queue.push_back(item);
        q.bytes += size;
        self.bytes += size;
        self.packets += 1;
        if q.list == List::None {
            q.list = List::New;
            q.deficit = self.params.quantum as i64;
            self.new_flows.push_back(i as u32);
        }
        if self.packets > self.params.limit as usize {
            self.drop_from_fattest(drops);
        }
    }

    /// RFC 8290 §4.2: the head of the new list, else of the old; a queue out of deficit gets
    /// another quantum at the old list's tail; a queue CoDel leaves empty moves from the new
    /// list to the old one (so it cannot come back as new at once and starve the old), or from
    /// the old list out.
    fn dequeue(&mut self, now: SimTime, drops: &mut Drops) -> Option<Queued> {
        loop {
            let (list, i) = match (self.new_flows.front(), self.old_flows.front()) {
                (Some(&i), _) => (List::New, i),
                (None, Some(&i)) => (List::Old, i),
                (None, None) => return None,
            };
            let from = if list == List::New {
                &mut self.new_flows
            } else {
                &mut self.old_flows
            };
            let q = &mut self.queues[i as usize];
            if q.deficit <= 0 {
                q.deficit += self.params.quantum as i64;
                from.pop_front();
                q.list = List::Old;
                self.old_flows.push_back(i);
                continue;
            }
            let FlowQueue {
                queue, bytes, codel, ..
            } = q;
            let (total_bytes, total_packets) = (&mut self.bytes, &mut self.packets);
            let pop = || {
                let item = queue.pop_front()?;
                let size = item.packet.size as u64;
                *bytes -= size;
                *total_bytes -= size;
                *total_packets -= 1;
                Some((item, *total_bytes))
            };
            match codel.dequeue(&self.params.codel, now, pop, drops) {
                Some(item) => {
                    q.deficit -= item.packet.size as i64;
                    return Some(item);
                }
                None => {
                    from.pop_front();
                    if list == List::New && !self.old_flows.is_empty() {
                        q.list = List::Old;
                        self.old_flows.push_back(i);
                    } else {
                        q.list = List::None;
                    }
                }
            }
        }
    }

    fn len(&self) -> usize {
        self.packets
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::codel::tests::{item, MS};
    use crate::rng::StreamId;

    fn fq(limit: u32) -> FqCoDel {
        FqCoDel::new(
            FqCoDelParams {
                limit,
                flows: 1024,
                quantum: 1514,
                codel: CoDelParams::default(),
            },
            SimRng::new(1, StreamId::LinkQueue(0)),
        )
    }

    fn numbered(flow: u32, size: u32, seq: u32, since: SimTime) -> Queued {
        let mut i = item(flow, size, since);
        i.packet.seq = seq;
        i
    }

    #[test]
    fn flows_land_in_different_queues_and_a_flows_data_and_acks_apart() {
        let mut q = fq(100);
        let data = item(1, 1000, 0).packet;
        let mut ack = data;
        ack.kind = crate::packet::PacketKind::Ack;
        assert_ne!(q.bucket_of(&data), q.bucket_of(&item(2, 1000, 0).packet));
        assert_ne!(q.bucket_of(&data), q.bucket_of(&ack));
        assert_eq!(q.bucket_of(&data), q.bucket_of(&item(1, 40, 5).packet));
        // Queues exist only for the buckets used.
        for p in [data, ack, item(1, 40, 5).packet] {
            q.queue_of(&p);
        }
        assert_eq!(q.queues.len(), 2);
    }

    #[test]
    fn a_sparse_flows_packet_goes_before_a_bulk_flows_backlog() {
        let mut q = fq(10_240);
        let mut drops = Drops::default();
        for seq in 0..100 {
            q.enqueue(numbered(1, 1000, seq, 0), &mut drops);
        }
        // The bulk flow has used up its first quantum and sits in the old list.
        for _ in 0..5 {
            assert_eq!(q.dequeue(MS, &mut drops).unwrap().packet.flow, 1);
        }
        q.enqueue(numbered(2, 100, 0, MS), &mut drops);
        assert_eq!(q.dequeue(MS, &mut drops).unwrap().packet.flow, 2);
        assert_eq!(q.len(), 95);
        assert_eq!(drops.packets().len(), 0);
    }

    #[test]
    fn two_bulk_flows_share_the_link_in_proportion_to_the_quantum_whatever_their_packet_sizes() {
        let mut q = fq(10_240);
        let mut drops = Drops::default();
        for seq in 0..2000 {
            q.enqueue(numbered(1, 1500, seq, 0), &mut drops);
            q.enqueue(numbered(2, 500, seq, 0), &mut drops);
        }
        let (mut bytes, mut packets) = ([0u64; 3], [0u64; 3]);
        for _ in 0..2000 {
            let p = q.dequeue(0, &mut drops).unwrap().packet;
            bytes[p.flow as usize] += p.size as u64;
            packets[p.flow as usize] += 1;
        }
        // A quantum each per round: equal bytes within one quantum and a packet, so three of
        // the small packets for each large one.
        assert!(bytes[1].abs_diff(bytes[2]) <= 1514 + 1500, "{bytes:?}");
        assert!(
            (packets[2] as f64 / packets[1] as f64 - 3.0).abs() < 0.05,
            "{packets:?}"
        );
    }

    #[test]
    fn past_the_limit_the_fattest_queue_loses_half_its_bytes_from_its_head() {
        let mut q = fq(10);
        let mut drops = Drops::default();
        for seq in 0..8 {
            q.enqueue(numbered(1, 1000, seq, 0), &mut drops);
        }
        for seq in 0..3 {
            q.enqueue(numbered(2, 1000, seq, 0), &mut drops);
        }
        // The 11th packet (flow 2's third) overflows: flow 1 (8000 bytes) loses 4 from its head.
        let lost: Vec<_> = drops.packets().iter().map(|p| (p.flow, p.seq)).collect();
        assert_eq!(lost, [(1, 0), (1, 1), (1, 2), (1, 3)]);
        assert_eq!((drops.overflow, q.len()), (4, 7));
    }

    #[test]
    fn codel_drops_only_the_flow_that_keeps_a_standing_queue() {
        let mut q = fq(10_240);
        let mut drops = Drops::default();
        let (mut seq, mut sent) = (0, [0u32; 3]);
        // Flow 1 keeps 40 packets queued, flow 2 sends one packet every 10 ms; the link sends a
        // 1000-byte packet per ms.
        for t in (0..3_000).map(|k| k * MS) {
            let bulk = q.queue_of(&item(1, 1000, 0).packet);
            while q.queues[bulk].queue.len() < 40 {
                q.enqueue(numbered(1, 1000, seq, t), &mut drops);
                seq += 1;
            }
            if t % (10 * MS) == 0 {
                q.enqueue(numbered(2, 1000, 0, t), &mut drops);
            }
            if let Some(p) = q.dequeue(t, &mut drops) {
                sent[p.packet.flow as usize] += 1;
            }
        }
        assert!(drops.aqm > 10, "{}", drops.aqm);
        assert!(drops.packets().iter().all(|p| p.flow == 1));
        assert_eq!(sent[2], 300);
    }
}
