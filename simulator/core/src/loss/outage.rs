use crate::rng::SimRng;
use crate::time::SimTime;

/// Loss with probability `rate` inside [start, end]: a wireless attenuation period (paper 004).
pub struct Outage {
    start: SimTime,
    end: SimTime,
    rate: f64,
    rng: SimRng,
}

impl Outage {
    pub fn new(start: SimTime, end: SimTime, rate: f64, rng: SimRng) -> Self {
        Outage { start, end, rate, rng }
    }

    pub fn drops(&mut self, now: SimTime) -> bool {
        (self.start..=self.end).contains(&now) && (self.rate >= 1.0 || self.rng.chance(self.rate))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::StreamId;

    #[test]
    fn only_packets_inside_the_window_are_lost() {
        let mut m = Outage::new(10, 20, 1.0, SimRng::new(1, StreamId::LinkLoss(0)));
        assert!(!m.drops(9));
        assert!(m.drops(10));
        assert!(m.drops(20));
        assert!(!m.drops(21));
    }
}
