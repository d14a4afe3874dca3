//! The event queue: a heap keyed by (time, sequence number), so events at the same instant
//! run in the order they were scheduled and every run is deterministic. Events are
//! small `Copy` values (indices, never pointers), and the heap's storage is reused, so the
//! steady state allocates nothing per event.

use crate::time::SimTime;

/// What happens at an instant. Stale timer events are filtered by their owners (lazy
/// cancellation), which is cheaper than removing entries from the heap.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// The packet at the head of a link's propagation pipe reaches the far node.
    LinkArrival { link: u32 },
    /// A scheduled discipline's link (CoDel, PIE, FQ-CoDel) finished a transmission: its
    /// discipline picks the next packet.
    LinkTransmit { link: u32 },
    /// An 802.11 medium's next transmission starts, or the frames on its air end.
    Wifi { medium: u32 },
    /// A per-flow timer fired.
    Timer { flow: u32, timer: TimerKind },
    /// Take one sample of every traced series.
    TraceSample,
    /// The measurement window opens: the counters start again from zero.
    WarmupEnd,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimerKind {
    /// Sender retransmission timeout.
    Retransmit,
    /// Receiver delayed-ACK timeout.
    DelayedAck,
    /// The application's next action: start, stop, next request, next CBR packet.
    App,
    /// Sender pacing: the next segment pacing held back may leave.
    Pace,
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    time: SimTime,
    seq: u64,
    event: Event,
}

impl Entry {
    fn before(&self, other: &Entry) -> bool {
        (self.time, self.seq) < (other.time, other.seq)
    }
}

/// Children per node of the heap: four halve its depth against a binary heap and keep a
/// node's children in one or two cache lines, which matters once thousands of links and
/// timers are pending.
const ARITY: usize = 4;

/// A min-heap of events by (time, seq). After a pop the root's slot is left empty until the
/// next operation: handling a link arrival usually schedules that link's next arrival, and
/// the new event then takes the root's place with one sift instead of two.
#[derive(Default)]
pub struct EventQueue {
    heap: Vec<Entry>,
    /// `heap[0]` was popped and is to be replaced.
    root_taken: bool,
    next_seq: u64,
    now: SimTime,
    executed: u64,
}

impl EventQueue {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn now(&self) -> SimTime {
        self.now
    }

    /// Events popped so far (the "events" figure of the run's stats).
    pub fn executed(&self) -> u64 {
        self.executed
    }

    pub fn len(&self) -> usize {
        self.heap.len() - self.root_taken as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Schedules `event` at `time`; a time in the past is clamped to now (never travel back).
    pub fn schedule(&mut self, time: SimTime, event: Event) {
        let entry = Entry {
            time: time.max(self.now),
            seq: self.next_seq,
            event,
        };
        self.next_seq += 1;
        if self.root_taken {
            self.root_taken = false;
            self.sift_down(0, entry);
        } else {
            self.heap.push(entry);
            self.sift_up(self.heap.len() - 1, entry);
        }
    }

    /// Removes the taken root for good: the last entry fills its place.
    fn settle(&mut self) {
        if self.root_taken {
            self.root_taken = false;
            let last = self.heap.pop().expect("a taken root is in the heap");
            if !self.heap.is_empty() {
                self.sift_down(0, last);
            }
        }
    }

    /// When the next event is due, if any.
    pub fn next_time(&mut self) -> Option<SimTime> {
        self.settle();
        self.heap.first().map(|e| e.time)
    }

    /// Pops the next event at or before `until`, advancing the clock to it.
    pub fn pop_until(&mut self, until: SimTime) -> Option<(SimTime, Event)> {
        self.settle();
        let e = *self.heap.first()?;
        if e.time > until {
            return None;
        }
        self.root_taken = true;
        self.now = e.time;
        self.executed += 1;
        Some((e.time, e.event))
    }

    fn sift_up(&mut self, mut i: usize, entry: Entry) {
        while i > 0 {
            let parent = (i - 1) / ARITY;
            if !entry.before(&self.heap[parent]) {
                break;
            }
            self.heap[i] = self.heap[parent];
            i = parent;
        }
        self.heap[i] = entry;
    }

    fn sift_down(&mut self, mut i: usize, entry: Entry) {
        let n = self.heap.len();
        loop {
            let first = i * ARITY + 1;
            if first >= n {
                break;
            }
            let mut best = first;
            for c in first + 1..(first + ARITY).min(n) {
                if self.heap[c].before(&self.heap[best]) {
                    best = c;
                }
            }
            if !self.heap[best].before(&entry) {
                break;
            }
            self.heap[i] = self.heap[best];
            i = best;
        }
        self.heap[i] = entry;
    }
}

/// Lazy cancellation for one per-flow timer. The owner keeps its deadline (or None); the slot
/// remembers the one event in the queue for it, if any. Moving a deadline later costs nothing
/// (the event, when it fires, re-arms itself at the new deadline); moving it earlier schedules
/// one more event and the old one is recognised as stale. So a retransmit timer restarted on
/// every ACK costs about one queue operation per RTO, not one per ACK.
#[derive(Clone, Copy, Debug, Default)]
pub struct TimerSlot {
    event_at: Option<SimTime>,
}

#[derive(Debug, PartialEq, Eq)]
pub enum TimerFire {
    /// Not this slot's current event; ignore it.
    Stale,
    /// The deadline moved later: an event was re-armed for it.
    Rearmed,
    /// The deadline has passed: run the timer's action.
    Expired,
}

impl TimerSlot {
    /// After the owner may have changed its deadline: schedule an event if none covers it.
    pub fn sync(&mut self, deadline: Option<SimTime>, q: &mut EventQueue, event: Event) {
        if let Some(d) = deadline {
            if self.event_at.is_none_or(|t| t > d) {
                q.schedule(d, event);
                self.event_at = Some(d.max(q.now()));
            }
        }
    }

    /// An event for this slot fired at `now`; `deadline` is the owner's current deadline.
    pub fn fire(&mut self, now: SimTime, deadline: Option<SimTime>, q: &mut EventQueue, event: Event) -> TimerFire {
        if self.event_at != Some(now) {
            return TimerFire::Stale;
        }
        self.event_at = None;
        match deadline {
            None => TimerFire::Stale,
            Some(d) if d > now => {
                q.schedule(d, event);
                self.event_at = Some(d);
                TimerFire::Rearmed
            }
            Some(_) => TimerFire::Expired,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arrival(link: u32) -> Event {
        Event::LinkArrival { link }
    }

    #[test]
    fn events_come_out_in_time_order() {
        let mut q = EventQueue::new();
        q.schedule(30, arrival(3));
        q.schedule(10, arrival(1));
        q.schedule(20, arrival(2));
        let order: Vec<_> = std::iter::from_fn(|| q.pop_until(u64::MAX)).map(|(t, _)| t).collect();
        assert_eq!(order, vec![10, 20, 30]);
    }

    #[test]
    fn ties_break_in_scheduling_order() {
        let mut q = EventQueue::new();
        for link in 0..5 {
            q.schedule(7, arrival(link));
        }
        let links: Vec<_> = std::iter::from_fn(|| q.pop_until(u64::MAX))
            .map(|(_, e)| match e {
                Event::LinkArrival { link } => link,
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(links, vec![0, 1, 2, 3, 4]);
    }

    #[test]
    fn pop_until_stops_at_the_horizon_and_keeps_later_events() {
        let mut q = EventQueue::new();
        q.schedule(5, arrival(0));
        q.schedule(50, arrival(1));
        assert!(q.pop_until(10).is_some());
        assert!(q.pop_until(10).is_none());
        assert_eq!(q.len(), 1);
        assert_eq!(q.now(), 5);
    }

    #[test]
    fn a_timer_pushed_later_rearms_once_and_expires_at_its_final_deadline() {
        let mut q = EventQueue::new();
        let ev = Event::Timer {
            flow: 0,
            timer: TimerKind::Retransmit,
        };
        let mut slot = TimerSlot::default();
        slot.sync(Some(100), &mut q, ev);
        slot.sync(Some(150), &mut q, ev); // later: no new event
        assert_eq!(q.len(), 1);
        let (t, _) = q.pop_until(u64::MAX).unwrap();
        assert_eq!(slot.fire(t, Some(150), &mut q, ev), TimerFire::Rearmed);
        let (t, _) = q.pop_until(u64::MAX).unwrap();
        assert_eq!(t, 150);
        assert_eq!(slot.fire(t, Some(150), &mut q, ev), TimerFire::Expired);
    }

    #[test]
    fn a_timer_pulled_earlier_fires_early_and_the_old_event_is_stale() {
        let mut q = EventQueue::new();
        let ev = Event::Timer {
            flow: 0,
            timer: TimerKind::Retransmit,
        };
        let mut slot = TimerSlot::default();
        slot.sync(Some(100), &mut q, ev);
        slot.sync(Some(40), &mut q, ev);
        let (t, _) = q.pop_until(u64::MAX).unwrap();
        assert_eq!((t, slot.fire(t, Some(40), &mut q, ev)), (40, TimerFire::Expired));
        let (t, _) = q.pop_until(u64::MAX).unwrap();
        assert_eq!((t, slot.fire(t, None, &mut q, ev)), (100, TimerFire::Stale));
    }

    #[test]
    fn scheduling_in_the_past_is_clamped_to_now() {
        let mut q = EventQueue::new();
        q.schedule(100, arrival(0));
        q.pop_until(u64::MAX);
        q.schedule(40, arrival(1));
        assert_eq!(q.pop_until(u64::MAX).unwrap().0, 100);
    }

    proptest::proptest! {
        #[test]
        fn any_mix_of_schedules_and_pops_comes_out_in_time_then_scheduling_order(
            ops in proptest::collection::vec(proptest::option::of(0u64..50), 1..300)
        ) {
            // Some(t): schedule at now + t; None: pop. The reference is a sorted set.
            let (mut q, mut reference, mut seq) = (EventQueue::new(), std::collections::BTreeSet::new(), 0u32);
            for op in ops {
                match op {
                    Some(dt) => {
                        let t = q.now() + dt;
                        q.schedule(t, arrival(seq));
                        reference.insert((t, seq));
                        seq += 1;
                    }
                    None => {
                        let expected = reference.pop_first();
                        let got = q.pop_until(u64::MAX).map(|(t, e)| match e {
                            Event::LinkArrival { link } => (t, link),
                            _ => unreachable!(),
                        });
                        proptest::prop_assert_eq!(got, expected);
                    }
                }
                proptest::prop_assert_eq!(q.len(), reference.len());
                proptest::prop_assert_eq!(q.next_time(), reference.first().map(|&(t, _)| t));
            }
        }
    }
}
