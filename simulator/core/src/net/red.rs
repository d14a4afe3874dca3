//! Random Early Detection (Floyd & Jacobson, "Random Early Detection Gateways for Congestion
//! Avoidance", IEEE/ACM ToN 1993), with the "gentle" extension (Floyd 2000) as ns-2 has it.

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
    /// Transmission time of a typical packet: how many packets the idle link could have sent.
    pub mean_packet_time: SimTime,
}

pub struct Red {
    params: RedParams,
    /// Average queue length in packets.
    avg: f64,
    /// Packets since the last drop while avg is above min_th (-1: below min_th).
    count: i64,
    rng: SimRng,
}

impl Red {
    pub fn new(params: RedParams, rng: SimRng) -> Self {
        Red {
            params,
            avg: 0.0,
            count: -1,
            rng,
        }
    }

    pub fn average(&self) -> f64 {
        self.avg
    }

    pub fn admit(&mut self, waiting: usize, idle_since: Option<SimTime>, now: SimTime) -> bool {
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
            return false;
        }
        let pb = if self.avg < p.min_th {
            self.count = -1;
            return true;
        } else if self.avg < p.max_th {
            p.max_p * (self.avg - p.min_th) / (p.max_th - p.min_th)
        } else if p.gentle && self.avg < 2.0 * p.max_th {
            p.max_p + (1.0 - p.max_p) * (self.avg - p.max_th) / p.max_th
        } else {
            self.count = 0;
            return false;
        };
        self.count += 1;
        // F&J §4: spread drops evenly: pa = pb / (1 - count·pb).
        let denom = 1.0 - self.count as f64 * pb;
        let pa = if denom <= 0.0 { 1.0 } else { (pb / denom).min(1.0) };
        if self.rng.chance(pa) {
            self.count = 0;
            false
        } else {
            true
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::StreamId;

    fn red(gentle: bool) -> Red {
        Red::new(
            RedParams {
                limit: 150,
                min_th: 50.0,
                max_th: 100.0,
                max_p: 0.1,
                weight: 0.002,
                gentle,
                mean_packet_time: 1000,
            },
            SimRng::new(1, StreamId::LinkQueue(0)),
        )
    }

    #[test]
    fn below_min_threshold_nothing_is_dropped() {
        let mut q = red(true);
        assert!((0..10_000).all(|_| q.admit(40, None, 0)));
        assert!(q.average() < 50.0);
    }

    #[test]
    fn between_thresholds_the_drop_rate_tracks_the_linear_profile() {
        let mut q = red(true);
        // Hold the instantaneous queue at 75: avg converges to 75, pb = 0.05, and the count
        // rule makes inter-drop gaps uniform on [1, 1/pb], so about 2 pb of arrivals drop.
        for _ in 0..20_000 {
            q.admit(75, None, 0);
        }
        let n = 100_000;
        let dropped = (0..n).filter(|_| !q.admit(75, None, 0)).count() as f64 / n as f64;
        assert!((dropped - 2.0 * 0.05 / (1.0 + 0.05)).abs() < 0.01, "{dropped}");
    }

    #[test]
    fn gentle_red_drops_some_but_not_all_just_above_max_threshold() {
        let mut gentle = red(true);
        let mut harsh = red(false);
        for _ in 0..20_000 {
            gentle.admit(120, None, 0);
            harsh.admit(120, None, 0);
        }
        let g = (0..1000).filter(|_| !gentle.admit(120, None, 0)).count();
        let h = (0..1000).filter(|_| !harsh.admit(120, None, 0)).count();
        assert_eq!(h, 1000);
        assert!(g > 100 && g < 1000, "{g}");
    }

    #[test]
    fn the_average_decays_over_an_idle_period() {
        let mut q = red(true);
        for _ in 0..20_000 {
            q.admit(75, None, 0);
        }
        let before = q.average();
        q.admit(0, Some(0), 1_000_000); // idle for 1000 packet times
        assert!(q.average() < before * 0.2, "{} -> {}", before, q.average());
    }

    #[test]
    fn a_full_queue_drops_regardless_of_the_average() {
        let mut q = red(true);
        assert!(!q.admit(150, None, 0));
    }
}
