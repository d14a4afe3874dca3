use super::flow_slot;
use crate::packet::Packet;
use crate::rng::SimRng;
use crate::scenario::EventSpacing;
use crate::time::SimTime;

/// Paper 000 §IV-B's two-parameter loss model: each data packet of a flow starts a loss
/// event with probability `p` (Bernoulli loss events), and an event drops that packet and
/// the next `m - 1` data packets of the same flow. No new event starts while one is dropping.
/// With `spare_retransmissions`, retransmitted segments neither start an event nor count
/// towards one: §III-A assumes retransmissions within a recovery are never lost. An event ends
/// after m drops or one round (`span`, else the flow's round trip), whichever comes first:
/// §III-A's event is the losses of one round.
pub struct BernoulliEvents {
    p: f64,
    m: u32,
    spare_retransmissions: bool,
    span: Option<SimTime>,
    spacing: EventSpacing,
    rng: SimRng,
    flows: Vec<FlowEvent>,
}

#[derive(Clone, Default)]
struct FlowEvent {
    /// Packets still to drop in the flow's current event.
    remaining: u32,
    started: SimTime,
    round_trip: Option<SimTime>,
    /// Periodic spacing: counted packets until the next event starts (0: not placed yet).
    until_event: u64,
}

impl BernoulliEvents {
    pub fn new(p: f64, m: u32, spare_retransmissions: bool, span: Option<SimTime>, rng: SimRng) -> Self {
        BernoulliEvents {
            p,
            m,
            spare_retransmissions,
            span,
            spacing: EventSpacing::Random,
            rng,
            flows: Vec::new(),
        }
    }

    pub fn spaced(self, spacing: EventSpacing) -> Self {
        BernoulliEvents { spacing, ..self }
    }

    /// Packets between the starts of two periodic events.
    fn period(&self) -> u64 {
        (1.0 / self.p).round().max(1.0) as u64
    }

    pub fn set_round_trip(&mut self, flow: u32, rtt: SimTime) {
        flow_slot(&mut self.flows, flow).round_trip = Some(rtt);
    }

    pub fn drops(&mut self, packet: &Packet, now: SimTime) -> bool {
        if self.spare_retransmissions && packet.retransmission {
            return false;
        }
        let period = self.period();
        let f = flow_slot(&mut self.flows, packet.flow);
        let starts = match self.spacing {
            EventSpacing::Random => None,
            EventSpacing::Periodic => {
                if f.until_event == 0 {
                    // The first event at a random place in the first period (seeds differ).
                    f.until_event = 1 + (self.rng.uniform() * period as f64) as u64 % period;
                }
                f.until_event -= 1;
                let starts = f.until_event == 0;
                if starts {
                    f.until_event = period;
                }
                Some(starts)
            }
        };
        let span = self.span.or(f.round_trip).unwrap_or(SimTime::MAX);
        if f.remaining > 0 && now.saturating_sub(f.started) <= span && starts != Some(true) {
            f.remaining -= 1;
            return true;
        }
        f.remaining = 0;
        if starts.unwrap_or_else(|| self.rng.chance(self.p)) {
            f.remaining = self.m - 1;
            f.started = now;
            return true;
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::PacketKind;
    use crate::rng::StreamId;

    fn module(p: f64, m: u32, spare: bool) -> BernoulliEvents {
        BernoulliEvents::new(p, m, spare, None, SimRng::new(9, StreamId::FlowLoss(0)))
    }

    fn data(flow: u32, retransmission: bool) -> Packet {
        Packet {
            retransmission,
            ..Packet::new(flow, PacketKind::Data, 0, 0, 1040, 0)
        }
    }

    #[test]
    fn each_event_drops_exactly_m_consecutive_packets() {
        let mut module = module(0.01, 5, true);
        let pattern: Vec<bool> = (0..200_000).map(|_| module.drops(&data(0, false), 0)).collect();
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
        let mut module = module(1.0, 3, true);
        assert!(module.drops(&data(0, false), 0));
        // Flow 1's first packet starts its own event; flow 0 still has 2 to drop.
        assert!(module.drops(&data(1, false), 0));
        let remaining: Vec<u32> = module.flows.iter().map(|f| f.remaining).collect();
        assert_eq!(remaining, vec![2, 2]);
    }

    #[test]
    fn an_event_ends_after_one_round_even_with_drops_left() {
        let mut m = module(0.0, 10, true);
        m.set_round_trip(0, 100);
        m.flows[0].remaining = 9; // an event began at t = 0
        assert!(m.drops(&data(0, false), 100));
        assert!(!m.drops(&data(0, false), 101), "past one round trip the event is over");
        assert_eq!(m.flows[0].remaining, 0);
    }

    #[test]
    fn retransmissions_pass_an_ongoing_event_unless_told_otherwise() {
        let mut spared = module(1.0, 3, true);
        assert!(spared.drops(&data(0, false), 0));
        assert!(!spared.drops(&data(0, true), 0));
        assert_eq!(spared.flows[0].remaining, 2, "the retransmission did not count");
        let mut strict = module(1.0, 3, false);
        assert!(strict.drops(&data(0, false), 0));
        assert!(strict.drops(&data(0, true), 0));
    }

    #[test]
    fn periodic_events_drop_m_packets_every_round_one_over_p_from_a_seeded_start() {
        let starts = |seed: u64| {
            let rng = SimRng::new(seed, StreamId::FlowLoss(0));
            let mut module = BernoulliEvents::new(0.001, 3, true, None, rng).spaced(EventSpacing::Periodic);
            let drops: Vec<usize> = (0..10_000).filter(|_| module.drops(&data(0, false), 0)).collect();
            assert_eq!(drops.len() % 3, 0);
            drops
                .chunks(3)
                .map(|c| {
                    assert_eq!((c[1] - c[0], c[2] - c[1]), (1, 1), "m consecutive packets");
                    c[0]
                })
                .collect::<Vec<_>>()
        };
        let a = starts(1);
        assert!(a[0] < 1000, "the first event within the first period: {a:?}");
        assert!(a.windows(2).all(|w| w[1] - w[0] == 1000), "{a:?}");
        assert_ne!(a[0], starts(2)[0], "another seed, another phase");
    }

    #[test]
    fn periodic_spacing_spares_retransmissions_and_does_not_count_them() {
        let rng = SimRng::new(1, StreamId::FlowLoss(0));
        let mut module = BernoulliEvents::new(0.01, 1, true, None, rng).spaced(EventSpacing::Periodic);
        let mut first = (0..100).filter(|_| module.drops(&data(0, false), 0));
        let start = first.next().expect("one event in the first period");
        for _ in 0..50 {
            assert!(!module.drops(&data(0, true), 0));
        }
        let next = (start + 1..start + 101).find(|_| module.drops(&data(0, false), 0));
        assert_eq!(
            next,
            Some(start + 100),
            "retransmissions between them took no place in the period"
        );
    }
}
