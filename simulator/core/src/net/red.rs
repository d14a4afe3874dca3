//! Random Early Detection (Floyd & Jacobson, "Random Early Detection Gateways for Congestion
//! Avoidance", IEEE/ACM ToN 1993), with the "gentle" extension (Floyd 2000) as ns-2 has it.

use super::Verdict;
use crate::rng::SimRng;
use crate::time::SimTime;

pub struct RedParams {
    pub limit: u32,
    pub min_th: f64,
    pub max_th: f64,
    pub max_p: f64,
    /// w_q, the EWMA weight of the average queue.
    pub weight: f64,
    /// Between max_th and 2·max_th the drop probability rises linearly from max_p to 1.
    pub gentle: bool,
    /// RFC 3168 §5: an early drop of an ECN-capable packet becomes a CE mark (ns-2's `setbit`,
    /// red.cc `drop_early`); forced drops (a full buffer, an average past max_th, or 2·max_th
    /// when gentle) stay drops, as in ns-2.
    pub ecn: bool,
    /// Transmission time of a typical packet: how many packets the idle link could have sent.
    pub mean_packet_time: SimTime,
    /// ns-2's and ns-3's two rules beside Floyd & Jacobson's (`rules: "ns"`): no early drop,
    /// mark or forced drop by the average while at most one packet waits, and the first arrival
    /// with the average above min_th only starts the count (`edv_.old` in ns-2's red.cc,
    /// `m_old` in ns-3's red-queue-disc.cc).
    pub ns_rules: bool,
}

pub struct Red {
    params: RedParams,
    /// Average queue length in packets.
    avg: f64,
    /// Packets since the last drop while avg is above min_th (-1: below min_th).
    count: i64,
    /// With `ns_rules`: whether the previous arrival was already in the early-drop region.
    old: bool,
    rng: SimRng,
    /// CE marks since the window opened (with `ecn`).
    pub marks: u64,
}

impl Red {
    pub fn new(params: RedParams, rng: SimRng) -> Self {
        Red {
            params,
            avg: 0.0,
            count: -1,
            old: false,
            rng,
            marks: 0,
        }
    }

    /// CE marks since the window opened; None unless the queue marks (`ecn`).
    pub fn marks(&self) -> Option<u64> {
        self.params.ecn.then_some(self.marks)
    }

    pub fn average(&self) -> f64 {
        self.avg
    }

    /// Whether the packet (`ect`: ECN-capable) is accepted, marked, or dropped.
    pub fn admit(&mut self, waiting: usize, idle_since: Option<SimTime>, now: SimTime, ect: bool) -> Verdict {
        let p = &self.params;
        // F&J §4: after an idle period, age the average as if m small packets had passed.
        match idle_since {
            Some(since) if waiting == 0 => {
                let m = (now.saturating_sub(since)) as f64 / p.mean_packet_time as f64;
                self.avg *= (1.0 - p.weight).powf(m);
            }
            _ => self.avg = (1.0 - p.weight) * self.avg + p.weight * waiting as f64,
        }
        if waiting >= p.limit as usize {
            self.count = 0;
            return Verdict::Drop;
        }
        if p.ns_rules {
            if self.avg < p.min_th || waiting <= 1 {
                self.old = false;
                self.count = -1;
                return Verdict::Accept;
            }
            if !self.old && (self.avg < p.max_th || p.gentle && self.avg < 2.0 * p.max_th) {
                self.old = true;
                self.count = 1; // ns-2's `edv_.count = 1`: the next arrival decides with count 2
                return Verdict::Accept;
            }
        }
        let pb = if self.avg < p.min_th {
            self.count = -1;
            return Verdict::Accept;
        } else if self.avg < p.max_th {
            p.max_p * (self.avg - p.min_th) / (p.max_th - p.min_th)
        } else if p.gentle && self.avg < 2.0 * p.max_th {
            p.max_p + (1.0 - p.max_p) * (self.avg - p.max_th) / p.max_th
        } else {
            self.count = 0;
            return Verdict::Drop;
        };
        self.count += 1;
        // F&J §4: spread drops evenly: pa = pb / (1 - count·pb).
        let denom = 1.0 - self.count as f64 * pb;
        let pa = if denom <= 0.0 { 1.0 } else { (pb / denom).min(1.0) };
        if !self.rng.chance(pa) {
            Verdict::Accept
        } else {
            // A mark resets the count as a drop does (ns-2's drop_early).
            self.count = 0;
            if p.ecn && ect {
                self.marks += 1;
                Verdict::Mark
            } else {
                Verdict::Drop
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::StreamId;

    fn admit(q: &mut Red, waiting: usize, idle_since: Option<SimTime>, now: SimTime) -> bool {
        q.admit(waiting, idle_since, now, false) == Verdict::Accept
    }

    fn red(gentle: bool) -> Red {
        red_with(gentle, false)
    }

    fn red_with(gentle: bool, ecn: bool) -> Red {
        red_ruled(gentle, ecn, false)
    }

    fn red_ruled(gentle: bool, ecn: bool, ns_rules: bool) -> Red {
        Red::new(
            RedParams {
                limit: 150,
                min_th: 50.0,
                max_th: 100.0,
                max_p: 0.1,
                weight: 0.002,
                gentle,
                ecn,
                mean_packet_time: 1000,
                ns_rules,
            },
            SimRng::new(1, StreamId::LinkQueue(0)),
        )
    }

    #[test]
    fn below_min_threshold_nothing_is_dropped() {
        let mut q = red(true);
        assert!((0..10_000).all(|_| admit(&mut q, 40, None, 0)));
        assert!(q.average() < 50.0);
    }

    #[test]
    fn between_thresholds_the_drop_rate_tracks_the_linear_profile() {
        let mut q = red(true);
        // Hold the instantaneous queue at 75: avg converges to 75, pb = 0.05, and the count
        // rule makes inter-drop gaps uniform on [1, 1/pb], so about 2 pb of arrivals drop.
        for _ in 0..20_000 {
            admit(&mut q, 75, None, 0);
        }
        let n = 100_000;
        let dropped = (0..n).filter(|_| !admit(&mut q, 75, None, 0)).count() as f64 / n as f64;
        assert!((dropped - 2.0 * 0.05 / (1.0 + 0.05)).abs() < 0.01, "{dropped}");
    }

    #[test]
    fn gentle_red_drops_some_but_not_all_just_above_max_threshold() {
        let mut gentle = red(true);
        let mut harsh = red(false);
        for _ in 0..20_000 {
            admit(&mut gentle, 120, None, 0);
            admit(&mut harsh, 120, None, 0);
        }
        let g = (0..1000).filter(|_| !admit(&mut gentle, 120, None, 0)).count();
        let h = (0..1000).filter(|_| !admit(&mut harsh, 120, None, 0)).count();
        assert_eq!(h, 1000);
        assert!(g > 100 && g < 1000, "{g}");
    }

    #[test]
    fn the_average_decays_over_an_idle_period() {
        let mut q = red(true);
        for _ in 0..20_000 {
            admit(&mut q, 75, None, 0);
        }
        let before = q.average();
        admit(&mut q, 0, Some(0), 1_000_000); // idle for 1000 packet times
        assert!(q.average() < before * 0.2, "{} -> {}", before, q.average());
    }

    #[test]
    fn a_full_queue_drops_regardless_of_the_average() {
        let mut q = red(true);
        assert!(!admit(&mut q, 150, None, 0));
    }

    #[test]
    fn with_ecn_red_marks_ect_packets_where_it_would_drop_early_and_still_drops_the_others() {
        let (mut marking, mut dropping) = (red_with(true, true), red_with(true, true));
        for _ in 0..20_000 {
            marking.admit(75, None, 0, true);
            dropping.admit(75, None, 0, false);
        }
        let (n, before) = (10_000, marking.marks);
        let verdicts = |q: &mut Red, ect| (0..n).map(|_| q.admit(75, None, 0, ect)).collect::<Vec<_>>();
        let (ect, not_ect) = (verdicts(&mut marking, true), verdicts(&mut dropping, false));
        let count = |v: &[Verdict], x| v.iter().filter(|&&y| y == x).count();
        // Same seed, same average: the same arrivals are chosen, marked in one queue, dropped in the other.
        assert_eq!(count(&ect, Verdict::Drop), 0);
        assert_eq!(count(&not_ect, Verdict::Mark), 0);
        assert_eq!(count(&ect, Verdict::Mark), count(&not_ect, Verdict::Drop));
        assert!(count(&ect, Verdict::Mark) > 500, "{}", count(&ect, Verdict::Mark));
        assert_eq!(marking.marks - before, count(&ect, Verdict::Mark) as u64);
    }

    #[test]
    fn with_ecn_a_full_queue_or_an_average_past_the_gentle_region_still_drops_ect_packets() {
        let mut q = red_with(true, true);
        assert_eq!(q.admit(150, None, 0, true), Verdict::Drop);
        let mut past = red_with(false, true);
        for _ in 0..20_000 {
            past.admit(120, None, 0, true);
        }
        assert_eq!(past.admit(120, None, 0, true), Verdict::Drop, "a forced drop");
    }

    /// Raises the average to about `level` with the queue held there (no drop can happen below
    /// min_th, so the same arrivals on both queues).
    fn warm(q: &mut Red, level: usize) {
        for _ in 0..20_000 {
            q.admit(level, None, 0, false);
        }
    }

    #[test]
    fn under_ns_rules_a_high_average_never_drops_while_at_most_one_packet_waits() {
        let (mut ns, mut fj) = (red_ruled(true, false, true), red_ruled(true, false, false));
        for q in [&mut ns, &mut fj] {
            warm(q, 75);
            q.params.max_p = 0.5;
        }
        // The average stays above min_th for the next hundred arrivals at a queue of 0 or 1.
        let ns_drops = (0..100).filter(|i| !admit(&mut ns, i % 2, None, 0)).count();
        let fj_drops = (0..100).filter(|i| !admit(&mut fj, i % 2, None, 0)).count();
        assert!(ns.average() > 50.0, "still above min_th: {}", ns.average());
        assert_eq!(ns_drops, 0);
        assert!(
            fj_drops > 5,
            "Floyd & Jacobson's RED drops on the average alone: {fj_drops}"
        );
    }

    #[test]
    fn under_ns_rules_the_first_arrival_above_min_th_only_starts_the_count() {
        let mut q = red_ruled(true, false, true);
        for _ in 0..20_000 {
            q.admit(45, None, 0, false);
        }
        q.params.max_p = 1.0; // pb near 1 at the threshold's far end: any decision would drop
        q.avg = 99.0;
        assert!(admit(&mut q, 99, None, 0), "the crossing arrival is accepted");
        assert!(!admit(&mut q, 99, None, 0), "the next one decides, and drops");
    }

    #[test]
    fn under_ns_rules_a_full_queue_still_drops() {
        let mut q = red_ruled(true, false, true);
        assert!(!admit(&mut q, 150, None, 0));
    }
}
