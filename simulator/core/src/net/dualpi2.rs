//! DualPI2, the Dual-Queue Coupled AQM of RFC 9332 (De Schepper, Briscoe & White, 2023), with
//! the PI2 base AQM and the L4S ramp of its Appendix A.1: two queues sharing one buffer and one
//! link, so that scalable (L4S) flows keep a queue of about a millisecond while classic flows
//! keep PIE's 15 ms, and both get about the same rate.
//!
//! - Classification (§2.3, A.1 `dualpi2_enqueue`): ECT(1) and CE go to the L queue, Not-ECT
//!   and ECT(0) to the C queue. One limit covers both.
//! - The base probability p' (A.1 `dualpi2_update`) is a PI controller on the sojourn time of
//!   the C queue's head, updated every `t_update`; the C queue drops (or, for ECT(0), marks)
//!   with p_C = p'^2, the L queue marks with p_CL = k·p' (§2.1: the square cancels the square
//!   root of a classic flow's response, so both kinds get about equal rates).
//! - The L queue's own AQM (A.1 `laqm`) is a ramp from `ramp_min` to `ramp_min + ramp_range`
//!   of the packet's sojourn time, suppressed while at most `ramp_min_pkts` L packets wait;
//!   p_L = max(ramp, p_CL).
//! - Marks and drops come at dequeue and are spaced by A.1's `recur` accumulator, one per
//!   queue, not drawn at random (Linux's `sch_dualpi2` draws them).
//! - Overload (§4.2.3): once p_CL ≥ 1 the L queue also drops with p_C, and the C queue drops
//!   ECT(0) packets too once p_C reaches p_Cmax = min(1/k², 1).
//! - The scheduler is Linux's classic protection: a weighted round robin in bytes that gives the
//!   C queue `classic_weight` of the link while both queues wait (RFC 9332 leaves the
//!   scheduler open, §4.1; a strict priority would starve classic traffic).
//!
//! As in `pie.rs`, the periodic update needs no timer event: the C queue's head and so its
//! sojourn time change only at an arrival or a dequeue, so each first runs the updates due
//! since the last (`catch_up`) with the values a timer would have seen.

use std::collections::VecDeque;

use super::{DropReason, Drops, Queued, Scheduler};
use crate::packet::ecn;
use crate::time::{to_secs, SimTime};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DualPi2Params {
    /// Buffer in packets, both queues together: arrivals beyond it are dropped.
    pub limit: u32,
    /// The C queue's target sojourn time (15 ms: RFC 9332 A.1).
    pub target: SimTime,
    /// How often p' is updated (A.1: min(target, RTT_max/3) = 15 ms for RTT_max 100 ms).
    pub t_update: SimTime,
    /// PI integral gain, 1/s (A.1: 0.1·Tupdate/RTT_max² = 0.15).
    pub alpha: f64,
    /// PI proportional gain, 1/s (A.1: 0.3/RTT_max = 3).
    pub beta: f64,
    /// Coupling factor k (2: §2.1, A.1).
    pub coupling: f64,
    /// Where the L queue's ramp starts (minTh, 800 µs: A.1).
    pub ramp_min: SimTime,
    /// Its width (range, 400 µs: A.1); 0 is a step at `ramp_min`.
    pub ramp_range: SimTime,
    /// No ramp marking while this many L packets or fewer wait (Th_len, 1 packet: A.1).
    pub ramp_min_pkts: u32,
    /// The C queue's share of the link while both queues wait (Linux's `classic_protection`,
    /// 10 %).
    pub classic_weight: f64,
}

impl DualPi2Params {
    /// RFC 9332 Appendix A.1's defaults over a buffer of `limit` packets.
    pub fn rfc9332(limit: u32) -> Self {
        DualPi2Params {
            limit,
            target: 15_000_000,
            t_update: 15_000_000,
            alpha: 0.15,
            beta: 3.0,
            coupling: 2.0,
            ramp_min: 800_000,
            ramp_range: 400_000,
            ramp_min_pkts: 1,
            classic_weight: 0.1,
        }
    }

    /// p_Cmax: above it a classic packet is dropped even if ECN-capable (A.1).
    fn max_classic_prob(&self) -> f64 {
        (1.0 / (self.coupling * self.coupling)).min(1.0)
    }

    /// A.1's `laqm`: the L queue's native marking probability for a packet that waited `sojourn`.
    fn ramp(&self, sojourn: SimTime) -> f64 {
        if sojourn >= self.ramp_min + self.ramp_range {
            1.0
        } else if sojourn > self.ramp_min {
            (sojourn - self.ramp_min) as f64 / self.ramp_range as f64
        } else {
            0.0
        }
    }
}

/// One of the two queues, with A.1's `recur` accumulator for its marks and drops.
#[derive(Default)]
struct Lane {
    queue: VecDeque<Queued>,
    count: f64,
}

impl Lane {
    /// True with long-run frequency `likelihood`, evenly spaced (A.1's `recur`).
    fn recur(&mut self, likelihood: f64) -> bool {
        self.count += likelihood;
        if self.count > 1.0 {
            self.count -= 1.0;
            return true;
        }
        false
    }
}

pub struct DualPi2 {
    params: DualPi2Params,
    l: Lane,
    c: Lane,
    /// p', the base probability.
    p_prime: f64,
    /// `prevq`: the C queue's sojourn time at the last update.
    prevq: SimTime,
    next_update: SimTime,
    /// Bytes-weighted credit of the scheduler: the C queue's turn while positive.
    credit: f64,
}

impl DualPi2 {
    pub fn new(params: DualPi2Params) -> Self {
        DualPi2 {
            params,
            l: Lane::default(),
            c: Lane::default(),
            p_prime: 0.0,
            prevq: 0,
            next_update: params.t_update,
            credit: 0.0,
        }
    }

    /// p', the base probability; p_C = p'², p_CL = k·p'.
    pub fn base_probability(&self) -> f64 {
        self.p_prime
    }

    /// The updates due by `now`, in order. With the C queue empty and p' and prevq at 0 an
    /// update changes nothing: the rest are skipped.
    fn catch_up(&mut self, now: SimTime) {
        while self.next_update <= now {
            let head = self.c.queue.front().map(|h| h.since);
            if head.is_none() && self.p_prime == 0.0 && self.prevq == 0 {
                let missed = (now - self.next_update) / self.params.t_update + 1;
                self.next_update += missed * self.params.t_update;
                return;
            }
            let curq = head.map_or(0, |since| self.next_update.saturating_sub(since));
            self.update(curq);
            self.next_update += self.params.t_update;
        }
    }

    /// A.1's `dualpi2_update`, with p' kept within [0, 1].
    fn update(&mut self, curq: SimTime) {
        let p = &self.params;
        let (current, previous, target) = (to_secs(curq), to_secs(self.prevq), to_secs(p.target));
        self.p_prime += p.alpha * (current - target) + p.beta * (current - previous);
        self.p_prime = self.p_prime.clamp(0.0, 1.0);
        self.prevq = curq;
    }

    /// Which queue sends next: the L queue unless the C queue waits with credit.
    fn pick_l(&self) -> Option<bool> {
        match (self.l.queue.is_empty(), self.c.queue.is_empty()) {
            (true, true) => None,
            (false, true) => Some(true),
            (true, false) => Some(false),
            (false, false) => Some(self.credit <= 0.0),
        }
    }
}

impl Scheduler for DualPi2 {
    fn enqueue(&mut self, item: Queued, drops: &mut Drops) {
        self.catch_up(item.since);
        if self.len() >= self.params.limit as usize {
            drops.push(item.packet, DropReason::Overflow);
        } else if item.packet.has(ecn::ECT1 | ecn::CE) {
            self.l.queue.push_back(item);
        } else {
            self.c.queue.push_back(item);
        }
    }

    fn dequeue(&mut self, now: SimTime, drops: &mut Drops) -> Option<Queued> {
        self.catch_up(now);
        let p = self.params;
        let (p_cl, p_c) = (p.coupling * self.p_prime, self.p_prime * self.p_prime);
        loop {
            let from_l = self.pick_l()?;
            let other_waits = !(if from_l { &self.c } else { &self.l }).queue.is_empty();
            let waiting = self.l.queue.len();
            let lane = if from_l { &mut self.l } else { &mut self.c };
            let mut item = lane.queue.pop_front().expect("picked a queue that has packets");
            if other_waits {
                let size = item.packet.size as f64;
                self.credit += if from_l {
                    p.classic_weight * size
                } else {
                    -(1.0 - p.classic_weight) * size
                };
            }
            if from_l {
                if p_cl >= 1.0 {
                    // §4.2.3: saturated, the L queue reverts to classic drops; the rest marked.
                    if self.l.recur(p_c) {
                        drops.push(item.packet, DropReason::Aqm);
                        continue;
                    }
                    drops.mark(&mut item.packet, true);
                } else {
                    let native = if waiting > p.ramp_min_pkts as usize {
                        p.ramp(now - item.since)
                    } else {
                        0.0
                    };
                    if self.l.recur(native.max(p_cl)) {
                        drops.mark(&mut item.packet, true);
                    }
                }
            } else if self.c.recur(p_c) && !drops.mark(&mut item.packet, p_c < p.max_classic_prob()) {
                drops.push(item.packet, DropReason::Aqm);
                continue;
            }
            return Some(item);
        }
    }

    fn len(&self) -> usize {
        self.l.queue.len() + self.c.queue.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::codel::tests::{item, MS};

    const US: SimTime = 1_000;

    fn with(bits: u8, since: SimTime) -> Queued {
        let mut q = item(0, 1000, since);
        q.packet.ecn = bits;
        q
    }

    /// A DualPI2 whose p' stays at `p_prime` (no update falls due).
    fn pinned(p_prime: f64) -> DualPi2 {
        let mut q = DualPi2::new(DualPi2Params::rfc9332(100_000));
        q.p_prime = p_prime;
        q.next_update = SimTime::MAX;
        q
    }

    /// `n` dequeues of packets with ECN bits `bits` through `q`, each head having waited
    /// `sojourn` with `behind` more of its kind queued behind it; of the packets the dequeues
    /// examined (the ones they dropped included), the fractions (marked, dropped).
    fn through(q: &mut DualPi2, bits: u8, n: usize, sojourn: SimTime, behind: usize) -> (f64, f64) {
        let mut drops = Drops::default();
        let t = 10 * MS;
        for _ in 0..n {
            q.l.queue.clear();
            q.c.queue.clear();
            for _ in 0..=behind {
                q.enqueue(with(bits, t - sojourn), &mut drops);
            }
            assert!(q.dequeue(t, &mut drops).is_some());
        }
        let examined = (n as u64 + drops.aqm) as f64;
        (drops.marks as f64 / examined, drops.aqm as f64 / examined)
    }

    fn near(x: f64, expected: f64) -> bool {
        (x - expected).abs() < 0.002
    }

    #[test]
    fn ect1_and_ce_go_to_the_l_queue_and_not_ect_and_ect0_to_the_c_queue() {
        let mut q = pinned(0.0);
        let mut drops = Drops::default();
        for bits in [ecn::ECT1, ecn::CE, ecn::ECT0 | ecn::CE, 0, ecn::ECT0] {
            q.enqueue(with(bits, 0), &mut drops);
        }
        assert_eq!((q.l.queue.len(), q.c.queue.len()), (3, 2));
    }

    #[test]
    fn classic_packets_are_dropped_with_the_square_of_p_prime_and_l4s_packets_marked_with_k_times_it() {
        // p' = 0.1: p_C = 0.01, p_CL = 0.2 (RFC 9332 §2.1's coupling with k = 2), spaced evenly
        // by `recur`.
        let (marked, dropped) = through(&mut pinned(0.1), 0, 10_000, 5 * MS, 3);
        assert!(marked == 0.0 && near(dropped, 0.01), "Not-ECT: {marked} {dropped}");
        let (marked, dropped) = through(&mut pinned(0.1), ecn::ECT0, 10_000, 5 * MS, 3);
        assert!(
            near(marked, 0.01) && dropped == 0.0,
            "ECT(0) is marked: {marked} {dropped}"
        );
        // 100 µs of sojourn: below the ramp, so p_L is p_CL alone.
        let (marked, dropped) = through(&mut pinned(0.1), ecn::ECT1, 10_000, 100 * US, 3);
        assert!(near(marked, 0.2) && dropped == 0.0, "ECT(1): {marked} {dropped}");
    }

    #[test]
    fn the_l_queue_marks_on_its_own_ramp_of_sojourn_time_unless_only_one_packet_waits() {
        let marked = |sojourn, behind| through(&mut pinned(0.0), ecn::ECT1, 1_000, sojourn, behind).0;
        assert_eq!(marked(700 * US, 3), 0.0, "below minTh");
        assert!(near(marked(1_000 * US, 3), 0.5), "half-way up the ramp");
        assert!(near(marked(2 * MS, 3), 1.0), "past minTh + range");
        assert_eq!(marked(2 * MS, 0), 0.0, "a lone packet is never marked by the ramp");
    }

    #[test]
    fn past_p_cmax_ect0_classic_packets_are_dropped_and_past_p_cl_of_one_l4s_packets_are_too() {
        // p' = 0.6: p_C = 0.36 ≥ p_Cmax = 0.25, p_CL = 1.2 ≥ 1.
        let (marked, dropped) = through(&mut pinned(0.6), ecn::ECT0, 1_000, 5 * MS, 3);
        assert!(marked == 0.0 && near(dropped, 0.36), "{marked} {dropped}");
        let (marked, dropped) = through(&mut pinned(0.6), ecn::ECT1, 1_000, 100 * US, 3);
        assert!(near(dropped, 0.36), "{dropped}");
        assert!(
            near(marked + dropped, 1.0),
            "the L4S packets not dropped are all marked"
        );
    }

    #[test]
    fn p_prime_rises_while_the_classic_queue_waits_above_target_and_decays_to_zero_after() {
        let mut q = DualPi2::new(DualPi2Params::rfc9332(100_000));
        let mut drops = Drops::default();
        // A classic head that has waited 30 ms at every update for 2 s.
        let mut last = 0.0;
        for t in (100..=2_100).map(|k| k * MS) {
            q.c.queue.clear();
            q.enqueue(item(0, 1000, t - 30 * MS), &mut drops);
            q.catch_up(t);
            assert!(q.base_probability() >= last, "fell at {t}");
            last = q.base_probability();
        }
        // 134 updates: the first ones add β times the rise to 30 ms (0.09) and α·15 ms each,
        // each other α·15 ms = 0.00225: about 0.39.
        assert!((last - 0.39).abs() < 0.01, "{last}");
        q.c.queue.clear();
        q.catch_up(6_000 * MS);
        assert_eq!(q.base_probability(), 0.0, "an empty queue pulls p' back to 0");
    }

    #[test]
    fn updates_missed_between_events_are_caught_up_as_a_timer_would_have_run_them() {
        let (mut lazy, mut ticked) = (
            DualPi2::new(DualPi2Params::rfc9332(1000)),
            DualPi2::new(DualPi2Params::rfc9332(1000)),
        );
        let mut drops = Drops::default();
        for q in [&mut lazy, &mut ticked] {
            q.enqueue(item(0, 1000, 3 * MS), &mut drops);
        }
        for t in (4..=900).map(|k| k * MS) {
            ticked.catch_up(t);
        }
        lazy.catch_up(900 * MS);
        assert_eq!(lazy.p_prime.to_bits(), ticked.p_prime.to_bits());
        assert!(lazy.p_prime > 0.0);
        assert_eq!((lazy.prevq, lazy.next_update), (ticked.prevq, ticked.next_update));
    }

    #[test]
    fn while_both_queues_wait_the_classic_queue_gets_its_weight_of_the_link() {
        let mut q = pinned(0.0);
        let mut drops = Drops::default();
        for _ in 0..2_000 {
            q.enqueue(with(ecn::ECT1, 0), &mut drops);
            q.enqueue(with(0, 0), &mut drops);
        }
        let classic = (0..1_000)
            .filter(|_| !q.dequeue(MS, &mut drops).unwrap().packet.has(ecn::ECT1))
            .count();
        assert!((99..=101).contains(&classic), "{classic} of 1000");
    }

    #[test]
    fn arrivals_beyond_the_shared_limit_are_dropped_as_overflow() {
        let mut q = DualPi2::new(DualPi2Params::rfc9332(3));
        let mut drops = Drops::default();
        for bits in [ecn::ECT1, 0, ecn::ECT1, 0, ecn::ECT0] {
            q.enqueue(with(bits, 0), &mut drops);
        }
        assert_eq!((q.len(), drops.overflow, drops.aqm), (3, 2, 0));
    }
}
