//! A one-way link: a queue, a transmitter of fixed rate and a propagation delay.
//!
//! Under Drop-Tail and RED, departure times are computed when a packet is accepted (FIFO at a
//! fixed rate makes them known), so a packet costs one event per hop — its arrival at the far
//! node — instead of separate "transmission done" and "arrived" events. Every accepted packet
//! sits in one deque ordered by transmission start; those whose transmission has not started
//! are the queue.
//!
//! Under a scheduled discipline (CoDel, PIE, FQ-CoDel, DualPI2: `super::Scheduled`) the discipline holds
//! the waiting packets, and the deque only those in transmission or propagation: each time the
//! transmitter frees up (a `LinkTransmit` event) the discipline picks the next packet, which
//! then leaves at a known time as above.
//!
//! A trace-driven link (`TraceCursor`) has no rate: a packet starts to leave at its trace's
//! first opportunity with bytes to spare at or after the moment it reaches the head, and has
//! left with the opportunity that carries its last byte. Under Drop-Tail and RED both are
//! known at admission, as at a fixed rate; under a scheduled discipline the `LinkTransmit`
//! event fires at the next opportunity while packets wait, so the discipline picks (and
//! measures sojourn) when the packet starts to leave.
//!
//! A link whose rate follows a schedule (`ScheduledRate`) is a departure rule of the same
//! kind: a packet starts when it reaches the head (or when a blackout ends) and leaves when
//! the scheduled rate has served its bits. A delay schedule adds to the propagation delay the
//! value in force when the packet's transmission ends; a packet never arrives before the one
//! ahead of it. Both live in `Extras`, so a fixed-rate link's path pays one branch for them.

use std::collections::VecDeque;

use super::{Name, NodeId, QueueDiscipline, Queued, ScheduledRate, TraceCursor, Verdict};
use crate::histogram::DelayHistogram;
use crate::loss::LossModule;
use crate::packet::Packet;
use crate::schedule::Schedule;
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
    Accepted {
        first_arrival: Option<SimTime>,
    },
    DroppedByQueue,
    DroppedByLoss,
    /// A scheduled discipline took the packet — or dropped it, or others: the owner collects
    /// drops with `take_drops`. `started` is set when the idle transmitter took a packet.
    Held {
        started: Option<Started>,
    },
}

/// A transmission a scheduled discipline's link started: when it ends (the owner schedules the
/// link's `LinkTransmit` event then), and the first arrival to schedule if the pipe was empty.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Started {
    pub ends: SimTime,
    pub first_arrival: Option<SimTime>,
}

pub struct Link {
    pub name: Name,
    pub from: NodeId,
    pub to: NodeId,
    /// Bits per second; on a trace-driven link the trace's mean rate, on a link with a rate
    /// schedule the schedule's mean over its points (for RED's idle-time estimate; utilisation
    /// uses `mean_rate_bps`).
    pub rate_bps: u64,
    pub delay: SimTime,
    queue: QueueDiscipline,
    /// The loss module, the trace and the schedules, boxed together: most links have none, a
    /// dumbbell has four links per flow, and a second pointer would take a link past 176 bytes.
    extras: Option<Box<Extras>>,
    in_flight: VecDeque<InFlight>,
    /// Index in `in_flight` of the first packet whose transmission had not started when last
    /// looked at: time only moves forward, so the queue's front is found by stepping from it
    /// rather than by a binary search over every packet in the pipe (10⁵ of them at 10 Gb/s).
    /// u32, as `pipe_at_open`: with the histogram's pointer they fit where `id` and a usize
    /// were, so a link stays 176 bytes (issue 13's per-flow budget, `sim.rs`'s size test).
    first_waiting: u32,
    /// When the transmitter finishes the last accepted packet.
    busy_until: SimTime,
    pub counters: LinkCounters,
    /// Waits of the packets accepted in the window that waited at all; None until one did, so
    /// a link whose packets never wait allocates nothing. Never kept on a dumbbell flow's own
    /// access links: a sender's bursts make one of them wait in nearly every flow, and its
    /// histogram (~100 bytes) took 10,000 flows × 100 Mb/s from 1.97 to 2.07 KB per flow,
    /// past issue 13's budget of 2 (`bench/scaling.py`); their percentiles are null.
    waits: Option<Box<DelayHistogram>>,
    /// Packets in the pipe when the window opened: with `counters`, gives the packets accepted
    /// in the window (and so how many of them did not wait) without a counter per packet.
    pipe_at_open: u32,
}

/// What few links have: a loss module, a trace or a rate schedule to follow instead of a
/// fixed rate (at most one of the two), a delay schedule.
#[derive(Default)]
pub struct Extras {
    pub loss: Option<LossModule>,
    pub trace: Option<TraceCursor>,
    pub rate: Option<ScheduledRate>,
    /// Nanoseconds added to the link's delay, over time.
    pub extra_delay: Option<Schedule>,
}

impl Extras {
    fn any(&self) -> bool {
        self.loss.is_some() || self.trace.is_some() || self.rate.is_some() || self.extra_delay.is_some()
    }

    /// When a packet of `bytes` reaching the head of the queue at `t` starts to leave and has
    /// left, by the trace, the rate schedule, or else the fixed rate.
    fn send(&mut self, bytes: u32, t: SimTime, rate_bps: u64) -> (SimTime, SimTime) {
        match (&mut self.trace, &self.rate) {
            (Some(trace), _) => trace.send(bytes, t),
            (None, Some(rate)) => rate.send(bytes, t),
            (None, None) => (t, t + transmission_time(bytes, rate_bps)),
        }
    }

    /// The first moment at or after `t` at which the transmitter can start a packet.
    fn start(&mut self, t: SimTime) -> SimTime {
        match (&mut self.trace, &self.rate) {
            (Some(trace), _) => trace.start(t),
            (None, Some(rate)) => rate.start(t),
            (None, None) => t,
        }
    }

    /// When a packet whose transmission ends at `left` reaches the far end: after the delay
    /// then in force, and not before `previous`, the arrival of the packet ahead of it (a link
    /// never reorders).
    fn arrival(&self, left: SimTime, delay: SimTime, previous: Option<SimTime>) -> SimTime {
        let extra = self
            .extra_delay
            .as_ref()
            .map_or(0, |d| d.value_at(left).round() as SimTime);
        // Saturating: a rate of a few bits per second may put `left` past any run's end.
        left.saturating_add(delay + extra).max(previous.unwrap_or(0))
    }
}

/// A link's queueing delays over the window: from a packet's acceptance to the start of its
/// transmission, for every packet accepted (under a scheduled discipline: every packet whose
/// transmission started, the ones it dropped not included). None without packets.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct QueueDelays {
    pub mean_s: Option<f64>,
    pub p95_s: Option<f64>,
    pub p99_s: Option<f64>,
}

impl Link {
    pub fn new(
        name: Name,
        (from, to): (NodeId, NodeId),
        rate_bps: u64,
        delay: SimTime,
        queue: QueueDiscipline,
        extras: Extras,
    ) -> Self {
        Link {
            name,
            from,
            to,
            rate_bps,
            delay,
            queue,
            extras: extras.any().then(|| Box::new(extras)),
            in_flight: VecDeque::new(),
            first_waiting: 0,
            busy_until: 0,
            counters: LinkCounters::default(),
            waits: None,
            pipe_at_open: 0,
        }
    }

    /// The measurement window opens: counters and delays start again from zero.
    pub fn open_window(&mut self) {
        self.counters = LinkCounters::default();
        match &mut self.queue {
            QueueDiscipline::Scheduled(s) => (s.drops.overflow, s.drops.aqm, s.drops.marks) = (0, 0, 0),
            QueueDiscipline::Red(q) => q.marks = 0,
            QueueDiscipline::MarkingDropTail(q) => q.marks = 0,
            QueueDiscipline::DropTail(_) => {}
        }
        self.waits = None;
        self.pipe_at_open = u32::try_from(self.in_flight.len()).expect("fewer than 2³² packets in one pipe");
    }

    /// Queueing delays of the packets accepted since the window opened.
    pub fn queue_delays(&self) -> QueueDelays {
        let accepted = self.counters.delivered_packets + self.in_flight.len() as u64 - self.pipe_at_open as u64;
        if accepted == 0 {
            return QueueDelays::default();
        }
        let waited = self.waits.as_ref().map_or(0, |h| h.total());
        let percentile = |p| match &self.waits {
            Some(h) => h.percentile(p, accepted - waited),
            None if self.counters.wait_ns == 0 => Some(0.0),
            None => None, // a flow's own access link: its waits were not kept
        };
        QueueDelays {
            mean_s: Some(self.counters.wait_ns as f64 / accepted as f64 / 1e9),
            p95_s: percentile(95).map(|ns| ns / 1e9),
            p99_s: percentile(99).map(|ns| ns / 1e9),
        }
    }

    /// See `LossModule::set_round_trip`.
    pub fn set_round_trip(&mut self, flow: u32, rtt: SimTime) {
        if let Some(loss) = self.extras.as_mut().and_then(|x| x.loss.as_mut()) {
            loss.set_round_trip(flow, rtt);
        }
    }

    /// Packets accepted whose transmission has not started: the queue length. `now` never
    /// goes back between calls.
    pub fn waiting(&mut self, now: SimTime) -> usize {
        match &self.queue {
            QueueDiscipline::Scheduled(s) => s.len(),
            _ => self.fifo_waiting(now),
        }
    }

    /// `waiting` under Drop-Tail and RED: the packets in the deque not yet transmitting.
    fn fifo_waiting(&mut self, now: SimTime) -> usize {
        let mut i = self.first_waiting as usize;
        while self.in_flight.get(i).is_some_and(|e| e.tx_start <= now) {
            i += 1;
        }
        self.first_waiting = i as u32;
        self.in_flight.len() - i
    }

    /// Offers a packet to the link at `now`: the loss module, then the queue, decide. An
    /// accepted packet is copied into the link.
    pub fn offer(&mut self, packet: &Packet, now: SimTime) -> Admission {
        if let Some(loss) = self.extras.as_mut().and_then(|x| x.loss.as_mut()) {
            if loss.drops(packet, now) {
                self.counters.loss_drops += 1;
                return Admission::DroppedByLoss;
            }
        }
        if matches!(self.queue, QueueDiscipline::Scheduled(_)) {
            return self.enqueue_scheduled(packet, now);
        }
        let idle_since = (self.busy_until <= now).then_some(self.busy_until);
        let waiting = if idle_since.is_some() {
            0
        } else {
            self.fifo_waiting(now)
        };
        let mut packet = *packet;
        match self.queue.admit(waiting, idle_since, now, packet.ecn_capable()) {
            Verdict::Accept => {}
            Verdict::Mark => {
                packet.mark_ce();
            }
            Verdict::Drop => {
                self.counters.queue_drops += 1;
                return Admission::DroppedByQueue;
            }
        }
        let (tx_start, arrival) = if self.extras.is_none() {
            let tx_start = self.busy_until.max(now);
            self.busy_until = tx_start + transmission_time(packet.size, self.rate_bps);
            (tx_start, self.busy_until + self.delay)
        } else {
            self.depart_with_extras(packet.size, now)
        };
        self.in_flight.push_back(InFlight {
            packet,
            tx_start,
            arrival,
        });
        self.record_wait(tx_start - now);
        let first_arrival = (self.in_flight.len() == 1).then_some(arrival);
        Admission::Accepted { first_arrival }
    }

    /// `offer`'s departure on a link with extras: by its trace, its rate schedule or its fixed
    /// rate, then its delay schedule. Out of line, so the fixed-rate path stays as small as it
    /// was (inlined, it took the reference dumbbell from 940.0 to 941.7 million instructions).
    #[inline(never)]
    fn depart_with_extras(&mut self, bytes: u32, now: SimTime) -> (SimTime, SimTime) {
        let x = self.extras.as_deref_mut().expect("called for a link with extras");
        // A trace's cursor is past every byte an earlier packet took.
        let (start, left) = x.send(bytes, self.busy_until.max(now), self.rate_bps);
        self.busy_until = left;
        (
            start,
            x.arrival(left, self.delay, self.in_flight.back().map(|e| e.arrival)),
        )
    }

    /// `offer` under a scheduled discipline: the packet goes to the discipline, and the idle
    /// transmitter takes the next one. Out of line, so Drop-Tail's and RED's path stays small:
    /// inlined, it took the reference dumbbell from 723 to 735 million instructions, out of
    /// line to 728 (callgrind).
    #[inline(never)]
    fn enqueue_scheduled(&mut self, packet: &Packet, now: SimTime) -> Admission {
        let QueueDiscipline::Scheduled(s) = &mut self.queue else {
            unreachable!("called for a scheduled discipline")
        };
        s.enqueue(Queued {
            packet: *packet,
            since: now,
        });
        let started = if s.transmitting { None } else { self.transmit_next(now) };
        Admission::Held { started }
    }

    /// A scheduled discipline's transmitter is free at `now` (it was idle, or its `LinkTransmit`
    /// event fired): the discipline's next packet starts, if it has one.
    pub fn transmit_next(&mut self, now: SimTime) -> Option<Started> {
        if self.extras.is_some() {
            return self.transmit_next_with_extras(now);
        }
        let QueueDiscipline::Scheduled(s) = &mut self.queue else {
            unreachable!("only a scheduled discipline's link transmits on its own events")
        };
        let next = s.dequeue(now);
        s.transmitting = next.is_some();
        let Queued { packet, since } = next?;
        self.busy_until = now + transmission_time(packet.size, self.rate_bps);
        let arrival = self.busy_until + self.delay;
        self.in_flight.push_back(InFlight {
            packet,
            tx_start: now,
            arrival,
        });
        self.record_wait(now - since);
        Some(Started {
            ends: self.busy_until,
            first_arrival: (self.in_flight.len() == 1).then_some(arrival),
        })
    }

    /// `transmit_next` on a link with extras: on a trace the discipline's next packet starts to
    /// leave only at an opportunity, under a rate schedule only once a blackout has ended;
    /// until then the transmitter waits (`ends` is that moment, with nothing sent).
    #[inline(never)]
    fn transmit_next_with_extras(&mut self, now: SimTime) -> Option<Started> {
        let (Some(x), QueueDiscipline::Scheduled(s)) = (self.extras.as_deref_mut(), &mut self.queue) else {
            unreachable!("called for a scheduled discipline with extras")
        };
        let at = x.start(now);
        if at > now {
            s.transmitting = !s.is_empty();
            return s.transmitting.then_some(Started {
                ends: at,
                first_arrival: None,
            });
        }
        let next = s.dequeue(now);
        s.transmitting = next.is_some();
        let Queued { packet, since } = next?;
        let (_, ends) = x.send(packet.size, now, self.rate_bps);
        self.busy_until = ends;
        let arrival = x.arrival(ends, self.delay, self.in_flight.back().map(|e| e.arrival));
        self.in_flight.push_back(InFlight {
            packet,
            tx_start: now,
            arrival,
        });
        self.record_wait(now - since);
        Some(Started {
            ends,
            first_arrival: (self.in_flight.len() == 1).then_some(arrival),
        })
    }

    /// The mean rate the link offered over [from, to], b/s: `rate_bps` but under a rate
    /// schedule, whose integral over the window it is (so utilisation is of what the link
    /// could carry then).
    pub fn mean_rate_bps(&self, from: SimTime, to: SimTime) -> u64 {
        match self.extras.as_ref().and_then(|x| x.rate.as_ref()) {
            Some(rate) => (rate.mean_bps(from, to).round() as u64).max(1),
            None => self.rate_bps,
        }
    }

    /// Hands over (appends to `out`) the packets a scheduled discipline dropped since the last
    /// call, counting them as queue drops.
    pub fn take_drops(&mut self, out: &mut Vec<Packet>) {
        if let QueueDiscipline::Scheduled(s) = &mut self.queue {
            self.counters.queue_drops += s.drops.collect(out) as u64;
        }
    }

    /// A scheduled discipline's drops since the window opened, (overflow, AQM); None for
    /// Drop-Tail and RED.
    pub fn drops_by_reason(&self) -> Option<(u64, u64)> {
        match &self.queue {
            QueueDiscipline::Scheduled(s) => Some((s.drops.overflow, s.drops.aqm)),
            _ => None,
        }
    }

    /// CE marks since the window opened; None unless the queue marks (its `ecn`).
    pub fn ecn_marks(&self) -> Option<u64> {
        self.queue.ecn_marks()
    }

    /// A packet's queueing delay: into the mean and (but on a flow's own access links) the
    /// percentiles.
    #[inline]
    fn record_wait(&mut self, wait: SimTime) {
        self.counters.wait_ns += wait as u128;
        if wait > 0 && !matches!(self.name, Name::OfFlow { .. }) {
            self.waits.get_or_insert_default().record(wait);
        }
    }

    /// Takes the packet whose arrival is due; returns it and the next arrival to schedule.
    pub fn take_arrival(&mut self) -> (Packet, Option<SimTime>) {
        let head = self
            .in_flight
            .pop_front()
            .expect("an arrival event always has a packet in the pipe");
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
        Link::new(
            "l".into(),
            (0, 1),
            8_000_000,
            10_000_000,
            QueueDiscipline::DropTail(DropTail::new(limit)),
            Extras::default(),
        )
    }

    fn packet(seq: u32) -> Packet {
        Packet::new(0, PacketKind::Data, 0, seq, 1000, 0)
    }

    fn codel_link(limit: u32) -> Link {
        let spec = crate::scenario::QueueSpec::Codel {
            limit_pkts: limit,
            target_ms: 5.0,
            interval_ms: 100.0,
            ecn: false,
        };
        let rng = crate::rng::SimRng::new(1, crate::rng::StreamId::LinkQueue(0));
        Link::new(
            "l".into(),
            (0, 1),
            8_000_000,
            10_000_000,
            QueueDiscipline::new(&spec, 8_000_000, rng),
            Extras::default(),
        )
    }

    fn on_trace(mut l: Link, trace: &str) -> Link {
        let trace = std::sync::Arc::new(crate::net::Trace::parse(trace).unwrap());
        l.extras = Some(Box::new(Extras {
            trace: Some(TraceCursor::new(trace)),
            ..Extras::default()
        }));
        l
    }

    /// Arrival times (ms, less the 10 ms of propagation) of every packet in the pipe, the
    /// first one's being `first`.
    fn departures_ms(l: &mut Link, first: Option<SimTime>) -> Vec<f64> {
        let mut out = Vec::new();
        let mut next = first;
        while let Some(t) = next {
            out.push((t - 10_000_000) as f64 / 1e6);
            next = l.take_arrival().1;
        }
        out
    }

    /// Two passes of a 4 ms trace: two opportunities at 1 ms, one at 3 and one at 4.
    const TRACE: &str = "1\n1\n3\n4\n";
    const TWO_PASSES: [f64; 8] = [1.0, 1.0, 3.0, 4.0, 5.0, 5.0, 7.0, 8.0];

    fn full(seq: u32) -> Packet {
        Packet::new(0, PacketKind::Data, 0, seq, 1500, 0)
    }

    #[test]
    fn a_drop_tail_trace_link_sends_full_packets_exactly_at_the_traces_opportunities_looping() {
        let mut l = on_trace(link(100), TRACE);
        let Admission::Accepted { first_arrival } = l.offer(&full(0), 0) else {
            panic!("accepted")
        };
        for seq in 1..8 {
            assert_eq!(l.offer(&full(seq), 0), Admission::Accepted { first_arrival: None });
        }
        assert_eq!(l.waiting(1_000_000), 6, "the two at 1 ms have left");
        assert_eq!(departures_ms(&mut l, first_arrival), TWO_PASSES);
        // The eight waited 1, 1, 3, 4, 5, 5, 7 and 8 ms for their opportunities.
        assert_eq!(l.counters.wait_ns, 34_000_000);
    }

    #[test]
    fn a_scheduled_trace_link_picks_each_packet_at_an_opportunity_and_waits_between_them() {
        let mut l = on_trace(codel_link(100), TRACE);
        let Admission::Held { started: Some(first) } = l.offer(&full(0), 0) else {
            panic!("the idle transmitter waits for the first opportunity")
        };
        assert_eq!(
            first,
            Started {
                ends: 1_000_000,
                first_arrival: None
            }
        );
        for seq in 1..8 {
            assert_eq!(l.offer(&full(seq), 0), Admission::Held { started: None });
        }
        // The `LinkTransmit` events: each one at an opportunity sends one packet.
        let (mut at, mut first_arrival) = (first.ends, None);
        while let Some(s) = l.transmit_next(at) {
            first_arrival = first_arrival.or(s.first_arrival);
            at = s.ends;
        }
        assert_eq!(l.waiting(at), 0);
        assert_eq!(departures_ms(&mut l, first_arrival), TWO_PASSES);
    }

    #[test]
    fn under_a_scheduled_discipline_the_idle_transmitter_starts_at_once_and_the_next_packet_when_it_frees() {
        let mut l = codel_link(10);
        let first = Started {
            ends: 1_000_000,
            first_arrival: Some(11_000_000),
        };
        assert_eq!(l.offer(&packet(0), 0), Admission::Held { started: Some(first) });
        assert_eq!(l.offer(&packet(1), 0), Admission::Held { started: None });
        assert_eq!(l.waiting(0), 1);
        // The transmit event at 1 ms: the second leaves 1 ms after the first.
        let second = l.transmit_next(1_000_000).unwrap();
        assert_eq!((second.ends, second.first_arrival), (2_000_000, None));
        assert_eq!(l.waiting(1_000_000), 0);
        let (arrived, next) = l.take_arrival();
        assert_eq!((arrived.seq, next), (0, Some(12_000_000)));
        // Nothing left at 2 ms: the transmitter idles, and a packet at 5 ms starts at once.
        assert_eq!(l.transmit_next(2_000_000), None);
        let Admission::Held { started: Some(third) } = l.offer(&packet(2), 5_000_000) else {
            panic!("the idle transmitter takes it at once")
        };
        assert_eq!(third.ends, 6_000_000);
        // The first two waited 0 and 1 ms, the third 0 (counted when their transmission started).
        assert_eq!(l.counters.wait_ns, 1_000_000);
    }

    #[test]
    fn a_scheduled_disciplines_drops_are_handed_back_and_counted_by_reason_in_the_window() {
        let mut l = codel_link(1);
        l.offer(&packet(0), 0); // in transmission
        l.offer(&packet(1), 0); // waiting
        assert_eq!(l.offer(&packet(2), 0), Admission::Held { started: None });
        let mut dropped = Vec::new();
        l.take_drops(&mut dropped);
        assert_eq!(dropped.iter().map(|p| p.seq).collect::<Vec<_>>(), [2]);
        assert_eq!((l.counters.queue_drops, l.drops_by_reason()), (1, Some((1, 0))));
        l.take_drops(&mut dropped);
        assert_eq!(dropped.len(), 1, "handed back once");
        l.open_window();
        assert_eq!(l.drops_by_reason(), Some((0, 0)));
        assert_eq!(link(10).drops_by_reason(), None);
    }

    fn with_extras(mut l: Link, extras: Extras) -> Link {
        l.extras = Some(Box::new(extras));
        l
    }

    fn schedule(points: &[[f64; 2]], scale: f64) -> crate::schedule::Schedule {
        let spec = crate::scenario::ScheduleSpec {
            points: points.to_vec(),
            shape: crate::scenario::ScheduleShape::Step,
        };
        crate::schedule::Schedule::new(&spec, scale)
    }

    #[test]
    fn a_shorter_delay_never_lets_a_packet_overtake_the_one_before() {
        // 10 ms of extra delay until 2.5 ms: the packets that have left by 1 and 2 ms arrive at
        // 21 and 22 ms; those that leave at 3, 4, … ms would arrive at 13, 14, … ms, so they
        // arrive with the second until their own time passes it.
        let mut l = with_extras(
            link(100),
            Extras {
                extra_delay: Some(schedule(&[[0.0, 10.0], [0.0025, 0.0]], 1e6)),
                ..Extras::default()
            },
        );
        let Admission::Accepted { first_arrival } = l.offer(&packet(0), 0) else {
            panic!("accepted")
        };
        for seq in 1..14 {
            l.offer(&packet(seq), 0);
        }
        let mut expected = vec![11.0];
        expected.extend([12.0; 11]);
        expected.extend([13.0, 14.0]);
        assert_eq!(departures_ms(&mut l, first_arrival), expected);
    }

    #[test]
    fn a_drop_tail_link_under_a_rate_schedule_holds_its_packets_through_a_blackout() {
        // 8 Mb/s, nothing from 2 ms to 5 ms.
        let rate = schedule(&[[0.0, 8.0], [0.002, 0.0], [0.005, 8.0]], 1e6);
        let mut l = with_extras(
            link(100),
            Extras {
                rate: Some(ScheduledRate::new(rate.clone())),
                ..Extras::default()
            },
        );
        let Admission::Accepted { first_arrival } = l.offer(&packet(0), 0) else {
            panic!("accepted")
        };
        for seq in 1..4 {
            l.offer(&packet(seq), 0);
        }
        assert_eq!(l.waiting(3_000_000), 2, "two left before the blackout, none in it");
        assert_eq!(departures_ms(&mut l, first_arrival), [1.0, 2.0, 6.0, 7.0]);
        // Under a scheduled discipline the transmitter waits for the blackout's end.
        let mut c = with_extras(
            codel_link(100),
            Extras {
                rate: Some(ScheduledRate::new(rate)),
                ..Extras::default()
            },
        );
        c.offer(&packet(0), 0);
        c.offer(&packet(1), 0);
        c.offer(&packet(2), 0);
        let second = c.transmit_next(1_000_000).unwrap();
        assert_eq!(second.ends, 2_000_000);
        let wait = c.transmit_next(2_000_000).unwrap();
        assert_eq!((wait.ends, wait.first_arrival), (5_000_000, None), "nothing sent");
        assert_eq!(c.waiting(2_000_000), 1);
        assert_eq!(c.transmit_next(5_000_000).unwrap().ends, 6_000_000);
    }

    #[test]
    fn back_to_back_packets_leave_one_transmission_time_apart() {
        let mut l = link(10);
        assert_eq!(
            l.offer(&packet(0), 0),
            Admission::Accepted {
                first_arrival: Some(11_000_000)
            }
        );
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

    #[test]
    fn queue_delays_count_every_packet_accepted_in_the_window_once() {
        let mut l = link(100);
        // Before the window: two packets, still in the pipe when it opens, are not counted.
        l.offer(&packet(0), 0);
        l.offer(&packet(1), 0);
        l.open_window();
        assert_eq!(l.queue_delays(), QueueDelays::default());
        // At 2 ms the link is idle again: a burst of 20 waits 0, 1, ..., 19 ms.
        for id in 0..20 {
            l.offer(&packet(id), 2_000_000);
        }
        let arrivals_due = 2 + 5;
        for _ in 0..arrivals_due {
            l.take_arrival();
        }
        let d = l.queue_delays();
        assert_eq!(d.mean_s, Some(0.0095));
        // Nearest rank: p95 is the 19th of 20 (18 ms), p99 the 20th (19 ms), each within 1/128.
        let (p95, p99) = (d.p95_s.unwrap(), d.p99_s.unwrap());
        assert!((p95 - 0.018).abs() <= 0.018 / 128.0, "{p95}");
        assert!((p99 - 0.019).abs() <= 0.019 / 128.0, "{p99}");
    }

    #[test]
    fn a_flows_own_access_link_reports_its_mean_wait_but_keeps_no_percentiles() {
        let mut l = link(10);
        l.name = Name::OfFlow {
            flow: 0,
            part: "src-access",
        };
        l.open_window();
        for id in 0..3 {
            l.offer(&packet(id), 0);
        }
        assert!(l.waits.is_none());
        let d = l.queue_delays();
        assert_eq!((d.mean_s, d.p95_s, d.p99_s), (Some(0.001), None, None));
    }

    #[test]
    fn a_link_whose_packets_never_wait_reports_zero_delays_without_a_histogram() {
        let mut l = link(10);
        l.open_window();
        for id in 0..3 {
            l.offer(&packet(id), id as u64 * 2_000_000);
        }
        assert!(l.waits.is_none());
        let d = l.queue_delays();
        assert_eq!((d.mean_s, d.p95_s, d.p99_s), (Some(0.0), Some(0.0), Some(0.0)));
    }
}
