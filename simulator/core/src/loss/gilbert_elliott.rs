use crate::rng::SimRng;

/// Gilbert-Elliott bursty loss: a good and a bad state with their own loss probabilities,
/// the state stepped once per packet before the packet's fate is drawn.
pub struct GilbertElliott {
    p_good_to_bad: f64,
    p_bad_to_good: f64,
    loss_good: f64,
    loss_bad: f64,
    bad: bool,
    rng: SimRng,
}

impl GilbertElliott {
    pub fn new(p_good_to_bad: f64, p_bad_to_good: f64, loss_good: f64, loss_bad: f64, rng: SimRng) -> Self {
        GilbertElliott {
            p_good_to_bad,
            p_bad_to_good,
            loss_good,
            loss_bad,
            bad: false,
            rng,
        }
    }

    pub fn drops(&mut self) -> bool {
        let flip = if self.bad {
            self.p_bad_to_good
        } else {
            self.p_good_to_bad
        };
        if self.rng.chance(flip) {
            self.bad = !self.bad;
        }
        self.rng.chance(if self.bad { self.loss_bad } else { self.loss_good })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::StreamId;

    #[test]
    fn the_loss_rate_matches_the_stationary_share_of_the_bad_state() {
        // Stationary P(bad) = 0.01 / (0.01 + 0.09) = 0.1; all bad-state packets are lost.
        let mut m = GilbertElliott::new(0.01, 0.09, 0.0, 1.0, SimRng::new(5, StreamId::LinkLoss(1)));
        let n = 400_000;
        let lost = (0..n).filter(|_| m.drops()).count() as f64 / n as f64;
        assert!((lost - 0.1).abs() < 0.01, "{lost}");
    }

    #[test]
    fn losses_come_in_bursts() {
        let mut m = GilbertElliott::new(0.01, 0.2, 0.0, 1.0, SimRng::new(5, StreamId::LinkLoss(2)));
        let seq: Vec<bool> = (0..100_000).map(|_| m.drops()).collect();
        let losses = seq.iter().filter(|&&d| d).count();
        let bursts = seq.windows(2).filter(|w| w[1] && !w[0]).count();
        assert!(
            losses as f64 / bursts as f64 > 3.0,
            "mean burst {}",
            losses as f64 / bursts as f64
        );
    }
}
