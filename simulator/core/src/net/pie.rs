//! PIE, "Proportional Integral controller Enhanced" (Pan, Natarajan, Baker & White, RFC 8033,
//! 2017): drops arrivals at random with a probability that a PI controller moves every
//! `t_update` by how far the queueing delay is from `target` and how fast it changes.
//!
//! The queueing delay is the sojourn time of the last packet dequeued (timestamps at enqueue,
//! which RFC 8033 §4.3 allows in place of §5.2's departure-rate estimate), 0 once the queue is
//! empty — as ns-3's `PieQueueDisc` (`UseDequeueRateEstimator` false, its default) and Linux's
//! `sch_pie` (`dq_rate_estimator` off, its default). That delay changes only at a dequeue and
//! the probability matters only at an arrival, so the periodic update needs no timer event:
//! each arrival and dequeue first runs the updates due since the last (`catch_up`), with the
//! values a timer would have seen. Always active (no §5.3 activation threshold); §5.5's cap of
//! the adjustment on; §5.4's derandomization when `derandomize` is set (off by default, as in
//! ns-3 and Linux).

use std::collections::VecDeque;

use super::{DropReason, Drops, Queued, Scheduler};
use crate::rng::SimRng;
use crate::time::{to_secs, SimTime};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PieParams {
    /// Buffer in packets: arrivals beyond it are dropped (RFC 8033's TAIL_DROP).
    pub limit: u32,
    /// QDELAY_REF, ns: the queueing delay the controller aims at (15 ms: RFC 8033 §4.2).
    pub target: SimTime,
    /// T_UPDATE, ns: how often the drop probability is recalculated (15 ms: §4.2).
    pub t_update: SimTime,
    /// α, 1/s: weight of the delay's distance from target (0.125: §4.2).
    pub alpha: f64,
    /// β, 1/s: weight of the delay's change since the last update (1.25: §4.2).
    pub beta: f64,
    /// MAX_BURST, ns: how long a burst passes untouched after a calm spell (150 ms: §4.4).
    pub max_burst: SimTime,
    /// §5.4's derandomization: drops spaced by accumulating the probability.
    pub derandomize: bool,
    /// §5.1: an early drop of an ECN-capable packet becomes a CE mark while the drop
    /// probability is at most 10 % (`mark_ecnth`; Linux's `prob <= MAX_PROB / 10`).
    pub ecn: bool,
}

impl PieParams {
    /// RFC 8033's defaults over a buffer of `limit` packets.
    pub fn rfc8033(limit: u32) -> Self {
        PieParams {
            limit,
            target: 15_000_000,
            t_update: 15_000_000,
            alpha: 0.125,
            beta: 1.25,
            max_burst: 150_000_000,
            derandomize: false,
            ecn: false,
        }
    }
}

pub struct Pie {
    params: PieParams,
    rng: SimRng,
    queue: VecDeque<Queued>,
    /// `drop_prob_`: the probability of an early drop.
    drop_prob: f64,
    /// `current_qdelay`, ns: the sojourn time of the last packet dequeued, 0 once the queue is
    /// empty.
    qdelay: SimTime,
    /// `qdelay_old_`, ns: `qdelay` at the last update.
    qdelay_old: SimTime,
    /// `burst_allowance_`, ns: while positive, no early drops.
    burst_allowance: SimTime,
    /// `accu_prob_` (§5.4): the probability accumulated since the last drop.
    accu_prob: f64,
    /// When the next periodic update is due.
    next_update: SimTime,
}

impl Pie {
    pub fn new(params: PieParams, rng: SimRng) -> Self {
        Pie {
            params,
            rng,
            queue: VecDeque::new(),
            drop_prob: 0.0,
            qdelay: 0,
            qdelay_old: 0,
            burst_allowance: params.max_burst,
            accu_prob: 0.0,
            next_update: params.t_update,
        }
    }

    pub fn drop_probability(&self) -> f64 {
        self.drop_prob
    }

    /// The updates due by `now`, in order. Once the queue has been empty for two updates with
    /// nothing left to decay, an update changes nothing: the rest are skipped.
    fn catch_up(&mut self, now: SimTime) {
        while self.next_update <= now {
            let at_rest = self.qdelay == 0
                && self.qdelay_old == 0
                && self.drop_prob == 0.0
                && self.burst_allowance == self.params.max_burst;
            if at_rest {
                let missed = (now - self.next_update) / self.params.t_update + 1;
                self.next_update += missed * self.params.t_update;
                return;
            }
            self.update();
            self.next_update += self.params.t_update;
        }
    }

    /// RFC 8033 §4.2's `calculate_drop_prob`, with §4.4's burst allowance.
    fn update(&mut self) {
        let p = &self.params;
        let (current, old, target) = (to_secs(self.qdelay), to_secs(self.qdelay_old), to_secs(p.target));
        // §4.2: p = α (current_qdelay − QDELAY_REF) + β (current_qdelay − qdelay_old).
        let mut delta = p.alpha * (current - target) + p.beta * (current - old);
        // §4.2's auto-tuning: the smaller the probability, the smaller the step, so a light
        // load is controlled as gently as a heavy one.
        delta /= match self.drop_prob {
            x if x < 0.000_001 => 2048.0,
            x if x < 0.000_01 => 512.0,
            x if x < 0.000_1 => 128.0,
            x if x < 0.001 => 32.0,
            x if x < 0.01 => 8.0,
            x if x < 0.1 => 2.0,
            _ => 1.0,
        };
        // §5.5: above 10 %, no step up of more than 2 % at once.
        if self.drop_prob >= 0.1 && delta > 0.02 {
            delta = 0.02;
        }
        self.drop_prob += delta;
        // §4.2: decay exponentially once the queue has been empty for two updates.
        if self.qdelay == 0 && self.qdelay_old == 0 {
            self.drop_prob *= 0.98;
        }
        self.drop_prob = self.drop_prob.clamp(0.0, 1.0);
        // §4.4: the allowance runs down by T_UPDATE, and is restored after two calm updates.
        self.burst_allowance = self.burst_allowance.saturating_sub(p.t_update);
        if self.drop_prob == 0.0 && current < target / 2.0 && old < target / 2.0 {
            self.burst_allowance = p.max_burst;
        }
        self.qdelay_old = self.qdelay;
    }

    /// §4.1's `drop_early` (with §4.4's burst allowance and §5.4's derandomization).
    fn drop_early(&mut self) -> bool {
        if self.burst_allowance > 0 {
            return false;
        }
        // §4.1: stay work-conserving: no drop while the delay is low and the probability
        // moderate, or with at most two packets queued (RFC: 2 × MEAN_PKTSIZE bytes; in
        // packets as ns-3's packet mode).
        if (to_secs(self.qdelay_old) < to_secs(self.params.target) / 2.0 && self.drop_prob < 0.2)
            || self.queue.len() <= 2
        {
            return false;
        }
        if self.params.derandomize {
            // §5.4: no drop until the probabilities since the last add up to 0.85, a sure one
            // once they reach 8.5.
            if self.drop_prob == 0.0 {
                self.accu_prob = 0.0;
            }
            self.accu_prob += self.drop_prob;
            if self.accu_prob < 0.85 {
                return false;
            }
            if self.accu_prob >= 8.5 {
                return true;
            }
        }
        self.rng.chance(self.drop_prob)
    }
}

impl Scheduler for Pie {
    fn enqueue(&mut self, mut item: Queued, drops: &mut Drops) {
        self.catch_up(item.since);
        if self.queue.len() >= self.params.limit as usize {
            self.accu_prob = 0.0;
            drops.push(item.packet, DropReason::Overflow);
        } else if self.drop_early() {
            self.accu_prob = 0.0;
            let ecn = self.params.ecn && self.drop_prob <= 0.1;
            if drops.mark(&mut item.packet, ecn) {
                self.queue.push_back(item);
            } else {
                drops.push(item.packet, DropReason::Aqm);
            }
        } else {
            self.queue.push_back(item);
        }
    }

    fn dequeue(&mut self, now: SimTime, _drops: &mut Drops) -> Option<Queued> {
        self.catch_up(now);
        let item = self.queue.pop_front()?;
        self.qdelay = if self.queue.is_empty() { 0 } else { now - item.since };
        Some(item)
    }

    fn len(&self) -> usize {
        self.queue.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::codel::tests::{item, MS};
    use crate::rng::StreamId;

    fn pie() -> Pie {
        Pie::new(PieParams::rfc8033(1000), SimRng::new(1, StreamId::LinkQueue(0)))
    }

    /// One dequeue at `t` whose packet waited `delay`, with one more behind it; `None`: the
    /// dequeue of the last packet, which leaves the queue empty (a delay of 0).
    fn dequeue_after(q: &mut Pie, t: SimTime, delay: Option<SimTime>) {
        let mut drops = Drops::default();
        q.queue.clear();
        match delay {
            Some(d) => q.queue.extend([item(0, 1000, t - d), item(0, 1000, t)]),
            None => q.queue.push_back(item(0, 1000, t)),
        }
        q.dequeue(t, &mut drops);
    }

    #[test]
    fn with_ecn_pie_marks_ect_packets_while_the_drop_probability_is_at_most_ten_percent() {
        // The burst allowance spent, a long queue and 30 ms of delay: early drops are due.
        let arrivals = |drop_prob: f64, bits: u8| {
            let mut q = Pie::new(
                PieParams {
                    ecn: true,
                    ..PieParams::rfc8033(100_000)
                },
                SimRng::new(1, StreamId::LinkQueue(0)),
            );
            (q.burst_allowance, q.qdelay_old, q.next_update) = (0, 30 * MS, SimTime::MAX);
            q.queue.extend((0..10).map(|_| item(0, 1000, 0)));
            q.drop_prob = drop_prob;
            let mut drops = Drops::default();
            for _ in 0..10_000 {
                let mut arrival = item(0, 1000, 0);
                arrival.packet.ecn = bits;
                q.enqueue(arrival, &mut drops);
            }
            (drops.aqm, drops.marks)
        };
        let ect = crate::packet::ecn::ECT0;
        let (aqm, marks) = arrivals(0.05, ect);
        assert!(aqm == 0 && marks > 300, "{aqm} drops, {marks} marks");
        let (aqm, marks) = arrivals(0.05, 0);
        assert!(aqm > 300 && marks == 0, "not ECN-capable: {aqm} drops, {marks} marks");
        let (aqm, marks) = arrivals(0.3, ect);
        assert!(aqm > 2_000 && marks == 0, "above 10 %: {aqm} drops, {marks} marks");
    }

    #[test]
    fn the_drop_probability_rises_while_the_delay_is_above_target_and_falls_back_to_zero_after() {
        let mut q = pie();
        let mut last = 0.0;
        for t in (100..=2_100).map(|k| k * MS) {
            dequeue_after(&mut q, t, Some(30 * MS));
            assert!(q.drop_probability() >= last, "fell at {t} ns while the delay was 30 ms");
            last = q.drop_probability();
        }
        // 133 updates from 0, the step scaled up as the probability passes each decade.
        assert!(last > 0.01 && last < 0.2, "{last}");
        let mut zero_at = None;
        for t in (2_101..=6_100).map(|k| k * MS) {
            dequeue_after(&mut q, t, None);
            assert!(
                q.drop_probability() <= last,
                "rose at {t} ns with an empty queue: {last} -> {}",
                q.drop_probability()
            );
            last = q.drop_probability();
            if last == 0.0 && zero_at.is_none() {
                zero_at = Some(t);
            }
        }
        assert!(zero_at.is_some_and(|t| t < 4_100 * MS), "{zero_at:?}");
    }

    #[test]
    fn a_delay_steady_at_target_holds_the_probability_where_it_is() {
        let mut q = pie();
        for t in (100..=1_100).map(|k| k * MS) {
            dequeue_after(&mut q, t, Some(30 * MS));
        }
        // The update after the fall to 15 ms takes β·15 ms off; from then on both terms are 0.
        for t in (1_101..=1_140).map(|k| k * MS) {
            dequeue_after(&mut q, t, Some(15 * MS));
        }
        let held = q.drop_probability();
        for t in (1_141..=3_000).map(|k| k * MS) {
            dequeue_after(&mut q, t, Some(15 * MS));
        }
        assert!(held > 0.0, "{held}");
        assert_eq!(q.drop_probability(), held);
    }

    #[test]
    fn no_early_drop_while_the_burst_allowance_lasts() {
        let mut q = Pie::new(
            PieParams {
                alpha: 100.0,
                beta: 100.0,
                ..PieParams::rfc8033(1000)
            },
            SimRng::new(1, StreamId::LinkQueue(0)),
        );
        let mut drops = Drops::default();
        // From 41 ms a standing queue of 40 ms: the probability jumps at the next update (45 ms),
        // but nothing is dropped until the allowance, last restored by the calm update at 30 ms,
        // has run down 150 ms later; plenty after.
        let mut dropped_at = Vec::new();
        for t in (0..600).map(|k| k * MS) {
            let before = drops.aqm;
            q.enqueue(item(0, 1000, t), &mut drops);
            if drops.aqm > before {
                dropped_at.push(t);
            }
            if q.len() > 40 {
                q.dequeue(t, &mut drops);
            }
        }
        assert!(dropped_at.first().is_some_and(|&t| t >= 180 * MS), "{dropped_at:?}");
        assert!(dropped_at.len() > 20, "{dropped_at:?}");
    }

    #[test]
    fn updates_missed_while_idle_are_caught_up_as_a_timer_would_have_run_them() {
        let (mut lazy, mut ticked) = (pie(), pie());
        for t in (100..=1_100).map(|k| k * MS) {
            dequeue_after(&mut lazy, t, Some(40 * MS));
            dequeue_after(&mut ticked, t, Some(40 * MS));
        }
        dequeue_after(&mut lazy, 1_101 * MS, None);
        dequeue_after(&mut ticked, 1_101 * MS, None);
        for t in (1_102..=20_000).map(|k| k * MS) {
            ticked.catch_up(t);
        }
        lazy.catch_up(20_000 * MS);
        assert_eq!(lazy.drop_prob.to_bits(), ticked.drop_prob.to_bits());
        assert_eq!(
            (lazy.burst_allowance, lazy.qdelay_old, lazy.next_update),
            (ticked.burst_allowance, ticked.qdelay_old, ticked.next_update)
        );
    }

    #[test]
    fn derandomized_drops_come_no_closer_than_the_accumulated_probability_allows() {
        let mut q = Pie::new(
            PieParams {
                derandomize: true,
                ..PieParams::rfc8033(1000)
            },
            SimRng::new(1, StreamId::LinkQueue(0)),
        );
        q.burst_allowance = 0;
        q.drop_prob = 0.1;
        q.qdelay_old = 20 * MS;
        q.next_update = SimTime::MAX;
        q.queue.extend((0..10).map(|_| item(0, 1000, 0)));
        let mut drops = Drops::default();
        let mut last_drop = None;
        for k in 0..10_000u32 {
            let before = drops.aqm;
            q.enqueue(item(0, 1000, 0), &mut drops);
            if drops.aqm == before {
                q.queue.pop_back();
            } else {
                // 0.85 / 0.1: at least 9 arrivals apart (the 9th reaches 0.9).
                if let Some(l) = last_drop {
                    assert!(k - l >= 9, "{l} then {k}");
                }
                last_drop = Some(k);
            }
        }
        // Random at 0.1 from the 9th arrival after a drop on: about one in 19.
        assert!(drops.aqm > 300, "{}", drops.aqm);
    }

    #[test]
    fn arrivals_beyond_the_limit_are_dropped_as_overflow() {
        let mut q = Pie::new(PieParams::rfc8033(3), SimRng::new(1, StreamId::LinkQueue(0)));
        let mut drops = Drops::default();
        for _ in 0..5 {
            q.enqueue(item(0, 1000, 0), &mut drops);
        }
        assert_eq!((q.len(), drops.overflow, drops.aqm), (3, 2, 0));
    }
}
