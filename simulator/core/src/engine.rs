//! The event queue: a binary heap keyed by (time, sequence number), so events at the same
//! instant run in the order they were scheduled and every run is deterministic. Events are
//! small `Copy` values (indices, never pointers), and the heap's storage is reused, so the
//! steady state allocates nothing per event.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use crate::time::SimTime;

/// What happens at an instant. Stale timer events are filtered by their owners (lazy
/// cancellation), which is cheaper than removing entries from the heap.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// The packet at the head of a link's propagation pipe reaches the far node.
    LinkArrival { link: u32 },
    /// A per-flow timer fired.
    Timer { flow: u32, timer: TimerKind },
    /// Take one sample of every traced series.
    TraceSample,
    /// The measurement window opens: snapshot the counters.
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

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.time == other.time && self.seq == other.seq
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    /// Reversed, so the std max-heap pops the earliest (time, seq) first.
    fn cmp(&self, other: &Self) -> Ordering {
        other.time.cmp(&self.time).then_with(|| other.seq.cmp(&self.seq))
    }
}

#[derive(Default)]
pub struct EventQueue {
    heap: BinaryHeap<Entry>,
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
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// Schedules `event` at `time`; a time in the past is clamped to now (never travel back).
    pub fn schedule(&mut self, time: SimTime, event: Event) {
        let time = time.max(self.now);
        self.heap.push(Entry { time, seq: self.next_seq, event });
        self.next_seq += 1;
    }

    /// When the next event is due, if any.
    pub fn next_time(&self) -> Option<SimTime> {
        self.heap.peek().map(|e| e.time)
    }

    /// Pops the next event at or before `until`, advancing the clock to it.
    pub fn pop_until(&mut self, until: SimTime) -> Option<(SimTime, Event)> {
        if self.heap.peek()?.time > until {
            return None;
        }
        let e = self.heap.pop()?;
        self.now = e.time;
        self.executed += 1;
        Some((e.time, e.event))
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
        let ev = Event::Timer { flow: 0, timer: TimerKind::Retransmit };
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
        let ev = Event::Timer { flow: 0, timer: TimerKind::Retransmit };
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
}
