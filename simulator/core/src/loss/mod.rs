//! Loss modules: attached to a link direction (every packet crossing it) or to one flow's
//! path (that flow's data packets, just before its receiver). Each module owns its random
//! stream, so adding a module elsewhere never changes the drops this one makes.

mod bernoulli_events;
mod gilbert_elliott;
mod over_time;
mod scheduled;
mod uniform;

pub use bernoulli_events::BernoulliEvents;
pub use gilbert_elliott::GilbertElliott;
pub use over_time::LossOverTime;
pub use scheduled::Scheduled;
pub use uniform::Uniform;

use crate::packet::{Packet, PacketKind};
use crate::rng::SimRng;
use crate::scenario::LossSpec;
use crate::schedule::Schedule;
use crate::time::{from_secs, SimTime};

pub enum LossModule {
    Uniform(Uniform),
    BernoulliEvents(BernoulliEvents),
    Scheduled(Scheduled),
    /// The `schedule` and `outage` modules: a loss probability over time.
    OverTime(LossOverTime),
    GilbertElliott(GilbertElliott),
}

impl LossModule {
    pub fn new(spec: &LossSpec, rng: SimRng) -> Self {
        match spec {
            LossSpec::Uniform { rate } => LossModule::Uniform(Uniform::new(*rate, rng)),
            LossSpec::BernoulliEvents {
                p,
                m,
                spare_retransmissions,
                event_span_s,
                spacing,
            } => LossModule::BernoulliEvents(
                BernoulliEvents::new(*p, *m, *spare_retransmissions, event_span_s.map(from_secs), rng).spaced(*spacing),
            ),
            LossSpec::Scheduled { packets } => LossModule::Scheduled(Scheduled::new(packets)),
            LossSpec::Outage { start_s, end_s, rate } => {
                LossModule::OverTime(LossOverTime::outage(from_secs(*start_s), from_secs(*end_s), *rate, rng))
            }
            LossSpec::Schedule { rate } => LossModule::OverTime(LossOverTime::new(Schedule::new(rate, 1.0), rng)),
            LossSpec::GilbertElliott {
                p_good_to_bad,
                p_bad_to_good,
                loss_good,
                loss_bad,
            } => LossModule::GilbertElliott(GilbertElliott::new(
                *p_good_to_bad,
                *p_bad_to_good,
                *loss_good,
                *loss_bad,
                rng,
            )),
        }
    }

    /// Tells the module a flow's round-trip propagation delay: the default length of a
    /// Bernoulli loss event (one round).
    pub fn set_round_trip(&mut self, flow: u32, rtt: SimTime) {
        if let LossModule::BernoulliEvents(m) = self {
            m.set_round_trip(flow, rtt);
        }
    }

    /// Decides the fate of one packet crossing the module.
    pub fn drops(&mut self, packet: &Packet, now: SimTime) -> bool {
        let is_data = packet.kind == PacketKind::Data;
        match self {
            LossModule::Uniform(m) => m.drops(),
            // Paper 000 counts loss events over data packets; ACKs pass untouched.
            LossModule::BernoulliEvents(m) => is_data && m.drops(packet, now),
            LossModule::Scheduled(m) => is_data && m.drops(packet.flow),
            LossModule::OverTime(m) => m.drops(now),
            LossModule::GilbertElliott(m) => m.drops(),
        }
    }
}

/// Per-flow counters inside a module shared by several flows (a link's module).
fn flow_slot<T: Default + Clone>(v: &mut Vec<T>, flow: u32) -> &mut T {
    let i = flow as usize;
    if v.len() <= i {
        v.resize(i + 1, T::default());
    }
    &mut v[i]
}
