use super::flow_slot;
use crate::rng::SimRng;

/// Paper 000 §IV-B's two-parameter loss model: each data packet of a flow starts a loss
/// event with probability `p` (Bernoulli loss events), and an event drops that packet and
/// the next `m - 1` data packets of the same flow. No new event starts while one is dropping.
pub struct BernoulliEvents {
    p: f64,
    m: u32,
    rng: SimRng,
    /// Packets still to drop in the flow's current event.
    remaining: Vec<u32>,
}

impl BernoulliEvents {
    pub fn new(p: f64, m: u32, rng: SimRng) -> Self {
        BernoulliEvents { p, m, rng, remaining: Vec::new() }
    }

    pub fn drops(&mut self, flow: u32) -> bool {
        let remaining = flow_slot(&mut self.remaining, flow);
        if *remaining > 0 {
            *remaining -= 1;
            return true;
        }
        if self.rng.chance(self.p) {
            *remaining = self.m - 1;
            return true;
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::StreamId;

    #[test]
    fn each_event_drops_exactly_m_consecutive_packets() {
        let mut module = BernoulliEvents::new(0.01, 5, SimRng::new(9, StreamId::FlowLoss(0)));
        let pattern: Vec<bool> = (0..200_000).map(|_| module.drops(0)).collect();
        let mut runs = Vec::new();
        let mut run = 0;
        for &d in &pattern {
            if d {
                run += 1;
            } else if run > 0 {
                runs.push(run);
                run = 0;
            }
        }
        // Back-to-back events merge into runs that are multiples of m.
        assert!(runs.iter().all(|r| r % 5 == 0), "{runs:?}");
        let events = pattern.iter().filter(|&&d| d).count() / 5;
        let started_per_packet = events as f64 / (pattern.len() - 4 * events) as f64;
        assert!((started_per_packet - 0.01).abs() < 0.001, "{started_per_packet}");
    }

    #[test]
    fn flows_have_separate_events() {
        let mut module = BernoulliEvents::new(1.0, 3, SimRng::new(1, StreamId::LinkLoss(0)));
        assert!(module.drops(0));
        // Flow 1's first packet starts its own event; flow 0 still has 2 to drop.
        assert!(module.drops(1));
        assert_eq!(module.remaining, vec![2, 2]);
    }
}
