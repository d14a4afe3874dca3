//! The retransmission timer's value, RFC 6298, with configurable gains, clock granularity,
//! bounds and exponential backoff.

use crate::scenario::TcpConfig;
use crate::time::{from_secs, SimTime};

#[derive(Clone, Debug)]
pub struct RtoEstimator {
    srtt: Option<f64>,
    rttvar: f64,
    /// RTO before backoff, ns.
    base: SimTime,
    backoff: u32,
    alpha: f64,
    beta: f64,
    k: f64,
    granularity: SimTime,
    min: SimTime,
    max: SimTime,
}

impl RtoEstimator {
    pub fn new(cfg: &TcpConfig) -> Self {
        RtoEstimator {
            srtt: None,
            rttvar: 0.0,
            base: from_secs(cfg.initial_rto_s),
            backoff: 0,
            alpha: cfg.rtt_gain,
            beta: cfg.rttvar_gain,
            k: cfg.rttvar_k,
            granularity: from_secs(cfg.timer_granularity_s),
            min: from_secs(cfg.min_rto_s),
            max: from_secs(cfg.max_rto_s),
        }
    }

    /// RFC 6298 §2.2–2.3 for one measurement; a valid sample also ends backoff (Karn, §5.7).
    pub fn sample(&mut self, rtt: SimTime) {
        let r = rtt as f64;
        match self.srtt {
            None => {
                self.srtt = Some(r);
                self.rttvar = r / 2.0;
            }
            Some(srtt) => {
                self.rttvar = (1.0 - self.beta) * self.rttvar + self.beta * (srtt - r).abs();
                self.srtt = Some((1.0 - self.alpha) * srtt + self.alpha * r);
            }
        }
        let srtt = self.srtt.unwrap_or(r);
        let g = self.granularity as f64;
        let mut rto = srtt + (self.k * self.rttvar).max(g);
        if self.granularity > 0 {
            rto = (rto / g).ceil() * g;
        }
        self.base = (rto as SimTime).clamp(self.min, self.max);
        self.backoff = 0;
    }

    /// The timer value to arm now: the base doubled once per unanswered timeout (§5.5).
    pub fn current(&self) -> SimTime {
        self.base.saturating_mul(1u64 << self.backoff.min(40)).min(self.max)
    }

    pub fn back_off(&mut self) {
        if self.current() < self.max {
            self.backoff += 1;
        }
    }

    pub fn srtt(&self) -> Option<SimTime> {
        self.srtt.map(|s| s as SimTime)
    }

    pub fn backed_off(&self) -> bool {
        self.backoff > 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> TcpConfig {
        TcpConfig {
            min_rto_s: 0.2,
            timer_granularity_s: 0.01,
            initial_rto_s: 3.0,
            max_rto_s: 60.0,
            ..TcpConfig::default()
        }
    }

    #[test]
    fn before_any_sample_the_initial_rto_applies() {
        assert_eq!(RtoEstimator::new(&cfg()).current(), 3_000_000_000);
    }

    #[test]
    fn a_steady_70ms_path_converges_to_the_minimum_rto() {
        let mut e = RtoEstimator::new(&cfg());
        for _ in 0..100 {
            e.sample(70_000_000);
        }
        // srtt 70 ms + max(G, 4·rttvar→0) = 80 ms, below the 200 ms floor.
        assert_eq!(e.current(), 200_000_000);
    }

    #[test]
    fn the_first_sample_sets_rto_to_three_rtts_rounded_to_the_tick() {
        let mut e = RtoEstimator::new(&TcpConfig {
            min_rto_s: 0.001,
            ..cfg()
        });
        e.sample(100_000_000);
        // srtt = 100 ms, rttvar = 50 ms: 100 + 4·50 = 300 ms.
        assert_eq!(e.current(), 300_000_000);
    }

    #[test]
    fn backoff_doubles_up_to_the_maximum_and_a_sample_clears_it() {
        let mut e = RtoEstimator::new(&cfg());
        e.sample(70_000_000);
        let base = e.current();
        e.back_off();
        e.back_off();
        assert_eq!(e.current(), 4 * base);
        for _ in 0..20 {
            e.back_off();
        }
        assert_eq!(e.current(), 60_000_000_000);
        e.sample(70_000_000);
        assert!(!e.backed_off());
    }
}
