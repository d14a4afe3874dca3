//! Random streams. Every stream derives from the scenario seed and a stream id, so adding a
//! flow or a loss module never changes the draws another component sees (determinism across
//! scenario edits, and bit-identical runs for the same scenario + seed + core version).

use rand::{RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// Identifies what a stream feeds; kept stable across versions so results stay reproducible.
#[derive(Clone, Copy, Debug)]
pub enum StreamId {
    LinkLoss(u32),
    LinkQueue(u32),
    FlowLoss(u32),
    FlowApp(u32),
    Generator(u32),
    /// An 802.11 medium's backoffs and frame errors, by its first link.
    Wifi(u32),
}

impl StreamId {
    fn code(self) -> u64 {
        let (tag, index) = match self {
            StreamId::LinkLoss(i) => (1u64, i),
            StreamId::LinkQueue(i) => (2, i),
            StreamId::FlowLoss(i) => (3, i),
            StreamId::FlowApp(i) => (4, i),
            StreamId::Generator(i) => (5, i),
            StreamId::Wifi(i) => (6, i),
        };
        (tag << 32) | index as u64
    }
}

/// SplitMix64 finaliser: spreads (seed, stream) pairs over the generator's seed space (and
/// FQ-CoDel's flows over its queues).
pub(crate) fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

pub struct SimRng(Xoshiro256PlusPlus);

impl SimRng {
    pub fn new(seed: u64, stream: StreamId) -> Self {
        SimRng(Xoshiro256PlusPlus::seed_from_u64(mix(seed) ^ mix(stream.code())))
    }

    /// Uniform in [0, 1).
    pub fn uniform(&mut self) -> f64 {
        self.0.random::<f64>()
    }

    pub fn chance(&mut self, p: f64) -> bool {
        p > 0.0 && self.uniform() < p
    }

    pub fn uniform_between(&mut self, low: f64, high: f64) -> f64 {
        low + (high - low) * self.uniform()
    }

    /// Exponential with the given mean (inverse transform).
    pub fn exponential(&mut self, mean: f64) -> f64 {
        -mean * (1.0 - self.uniform()).ln()
    }

    /// Pareto with the given mean and shape (> 1): scale = mean (shape - 1) / shape.
    pub fn pareto(&mut self, mean: f64, shape: f64) -> f64 {
        let scale = mean * (shape - 1.0) / shape;
        scale / (1.0 - self.uniform()).powf(1.0 / shape)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_and_stream_give_the_same_draws() {
        let mut a = SimRng::new(7, StreamId::FlowLoss(3));
        let mut b = SimRng::new(7, StreamId::FlowLoss(3));
        for _ in 0..100 {
            assert_eq!(a.uniform().to_bits(), b.uniform().to_bits());
        }
    }

    #[test]
    fn different_streams_are_independent_sequences() {
        let mut a = SimRng::new(7, StreamId::FlowLoss(3));
        let mut b = SimRng::new(7, StreamId::FlowApp(3));
        assert_ne!(a.uniform().to_bits(), b.uniform().to_bits());
    }

    #[test]
    fn pareto_and_exponential_have_the_requested_means() {
        let mut r = SimRng::new(1, StreamId::Generator(0));
        let n = 200_000;
        let exp_mean: f64 = (0..n).map(|_| r.exponential(0.5)).sum::<f64>() / n as f64;
        assert!((exp_mean - 0.5).abs() < 0.01, "{exp_mean}");
        // Shape 2.5 has finite variance, so the sample mean converges quickly enough to test.
        let par_mean: f64 = (0..n).map(|_| r.pareto(48.0, 2.5)).sum::<f64>() / n as f64;
        assert!((par_mean - 48.0).abs() < 1.0, "{par_mean}");
    }
}
