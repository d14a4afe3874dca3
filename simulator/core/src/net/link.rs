//! A one-way link: a queue, a transmitter of fixed rate and a propagation delay.
//!
//! Departure times are computed when a packet is accepted (FIFO at a fixed rate makes them
//! known), so a packet costs one event per hop — its arrival at the far node — instead of
//! separate "transmission done" and "arrived" events. Every accepted packet sits in one deque
//! ordered by transmission start; those whose transmission has not started are the queue.

use std::collections::VecDeque;

use super::{LinkId, Name, NodeId, QueueDiscipline};
use crate::loss::LossModule;
use crate::packet::Packet;
use crate::time::{transmission_time, SimTime};

/// Cumulative counters; the metrics window is the difference of two snapshots.
#[derive(Clone, Copy, Debug, Default)]
pub struct LinkCounters {
    /// Bytes and packets that reached the far end.
    pub delivered_bytes: u64,
    pub delivered_packets: u64,
    pub queue_drops: u64,
    pub loss_drops: u64,
    /// Sum over accepted packets (counted when accepted) of the time each waits for the
    /// transmitter (ns). By Little's law, the mean number waiting is this divided by the
    /// window length.
    pub wait_ns: u128,
}

/// A packet the link accepted, stored by value: the link that carries a packet holds it, so
/// an arrival reads the front of one deque instead of a slot somewhere in a shared pool.
#[derive(Clone, Copy, Debug)]
struct InFlight {
    packet: Packet,
    tx_start: SimTime,
    arrival: SimTime,
}

#[derive(Debug, PartialEq, Eq)]
pub enum Admission {
    /// Accepted; `first_arrival` is set when the pipe was empty and the owner must schedule
    /// the link's arrival event.
    Accepted { first_arrival: Option<SimTime> },
    DroppedByQueue,
    DroppedByLoss,
}

pub struct Link {
    pub id: LinkId,
    pub name: Name,
    pub from: NodeId,
    pub to: NodeId,
    pub rate_bps: u64,
    pub delay: SimTime,
    queue: QueueDiscipline,
    /// Boxed: most links have none, and a dumbbell has four links per flow.
    loss: Option<Box<LossModule>>,
    in_flight: VecDeque<InFlight>,
    /// Index in `in_flight` of the first packet whose transmission had not started when last
    /// looked at: time only moves forward, so the queue's front is found by stepping from it
    /// rather than by a binary search over every packet in the pipe (10⁵ of them at 10 Gb/s).
    first_waiting: usize,
    /// When the transmitter finishes the last accepted packet.
    busy_until: SimTime,
    pub counters: LinkCounters,
}

impl Link {
    pub fn new(
        id: LinkId,
        name: Name,
        (from, to): (NodeId, NodeId),
        rate_bps: u64,
        delay: SimTime,
        queue: QueueDiscipline,
        loss: Option<LossModule>,
    ) -> Self {
        Link { id, name, from, to, rate_bps, delay, queue, loss: loss.map(Box::new), in_flight: VecDeque::new(), first_waiting: 0, busy_until: 0, counters: LinkCounters::default() }
    }

    /// See `LossModule::set_round_trip`.
    pub fn set_round_trip(&mut self, flow: u32, rtt: SimTime) {
        if let Some(loss) = &mut self.loss {
            loss.set_round_trip(flow, rtt);
        }
    }

    /// Packets accepted whose transmission has not started: the queue length. `now` never
    /// goes back between calls.
    pub fn waiting(&mut self, now: SimTime) -> usize {
        let mut i = self.first_waiting;
        while self.in_flight.get(i).is_some_and(|e| e.tx_start <= now) {
            i += 1;
        }
        self.first_waiting = i;
        self.in_flight.len() - i
    }

    /// Offers a packet to the link at `now`: the loss module, then the queue, decide. An
    /// accepted packet is copied into the link.
    pub fn offer(&mut self, packet: &Packet, now: SimTime) -> Admission {
        if let Some(loss) = &mut self.loss {
            if loss.drops(packet, now) {
                self.counters.loss_drops += 1;
                return Admission::DroppedByLoss;
            }
        }
        let idle_since = (self.busy_until <= now).then_some(self.busy_until);
        let waiting = if idle_since.is_some() { 0 } else { self.waiting(now) };
        if !self.queue.admit(waiting, idle_since, now) {
            self.counters.queue_drops += 1;
            return Admission::DroppedByQueue;
        }
        let tx_start = self.busy_until.max(now);
        self.busy_until = tx_start + transmission_time(packet.size, self.rate_bps);
        let arrival = self.busy_until + self.delay;
        self.in_flight.push_back(InFlight { packet: *packet, tx_start, arrival });
        self.counters.wait_ns += (tx_start - now) as u128;
        let first_arrival = (self.in_flight.len() == 1).then_some(arrival);
        Admission::Accepted { first_arrival }
    }

    /// Takes the packet whose arrival is due; returns it and the next arrival to schedule.
    pub fn take_arrival(&mut self) -> (Packet, Option<SimTime>) {
        let head = self.in_flight.pop_front().expect("an arrival event always has a packet in the pipe");
        self.first_waiting = self.first_waiting.saturating_sub(1);
        self.counters.delivered_bytes += head.packet.size as u64;
        self.counters.delivered_packets += 1;
        (head.packet, self.in_flight.front().map(|e| e.arrival))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::DropTail;
    use crate::packet::PacketKind;

    fn link(limit: u32) -> Link {
        // 8 Mb/s: a 1000-byte packet takes 1 ms; 10 ms propagation.
        Link::new(0, "l".into(), (0, 1), 8_000_000, 10_000_000, QueueDiscipline::DropTail(DropTail::new(limit)), None)
    }

    fn packet(seq: u32) -> Packet {
        Packet::new(0, PacketKind::Data, 0, seq, 1000, 0)
    }

    #[test]
    fn back_to_back_packets_leave_one_transmission_time_apart() {
        let mut l = link(10);
        assert_eq!(l.offer(&packet(0), 0), Admission::Accepted { first_arrival: Some(11_000_000) });
        assert_eq!(l.offer(&packet(1), 0), Admission::Accepted { first_arrival: None });
        assert_eq!(l.take_arrival().1, Some(12_000_000));
        let (last, next) = l.take_arrival();
        assert_eq!((last.seq, next), (1, None));
    }

    #[test]
    fn the_packet_in_service_does_not_count_against_the_limit() {
        let mut l = link(2);
        for id in 0..3 {
            assert!(matches!(l.offer(&packet(id), 0), Admission::Accepted { .. }));
        }
        assert_eq!(l.waiting(0), 2);
        assert_eq!(l.offer(&packet(3), 0), Admission::DroppedByQueue);
        // After one transmission time the first has left the queue.
        assert_eq!(l.waiting(1_000_000), 1);
        assert_eq!(l.counters.queue_drops, 1);
    }

    #[test]
    fn waiting_time_adds_up_for_littles_law() {
        let mut l = link(10);
        for id in 0..3 {
            l.offer(&packet(id), 0);
        }
        // Waits of 0, 1 and 2 ms.
        assert_eq!(l.counters.wait_ns, 3_000_000);
    }
}
