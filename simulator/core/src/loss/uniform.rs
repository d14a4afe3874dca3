use crate::rng::SimRng;

/// Independent per-packet loss with a fixed rate (ns-2 ErrorModel with unit packet).
pub struct Uniform {
    rate: f64,
    rng: SimRng,
}

impl Uniform {
    pub fn new(rate: f64, rng: SimRng) -> Self {
        Uniform { rate, rng }
    }

    pub fn drops(&mut self) -> bool {
        self.rng.chance(self.rate)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::StreamId;

    #[test]
    fn the_long_run_loss_fraction_matches_the_rate() {
        let mut m = Uniform::new(0.02, SimRng::new(3, StreamId::LinkLoss(0)));
        let n = 100_000;
        let lost = (0..n).filter(|_| m.drops()).count() as f64 / n as f64;
        assert!((lost - 0.02).abs() < 0.002, "{lost}");
    }
}
