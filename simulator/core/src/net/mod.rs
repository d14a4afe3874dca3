//! The network: nodes joined by one-way links (a duplex link is two), each with its own queue
//! discipline and optional loss module, and static shortest-path routes per flow.

mod droptail;
mod link;
mod name;
mod red;
mod topology;

pub use droptail::DropTail;
pub use link::{Admission, Link, LinkCounters, QueueDelays};
pub use name::Name;
pub use red::Red;
pub use topology::{build, Network, Routes};

use crate::rng::SimRng;
use crate::scenario::QueueSpec;
use crate::time::{transmission_time, SimTime};

pub type NodeId = u32;
pub type LinkId = u32;

/// A queue discipline decides admission; the link owns the packets and the timing.
pub enum QueueDiscipline {
    DropTail(DropTail),
    /// Boxed: RED's state is large and most links are Drop-Tail.
    Red(Box<Red>),
}

impl QueueDiscipline {
    pub fn new(spec: &QueueSpec, rate_bps: u64, rng: SimRng) -> Self {
        match spec {
            QueueSpec::Droptail { limit_pkts } => QueueDiscipline::DropTail(DropTail::new(*limit_pkts)),
            QueueSpec::Red {
                limit_pkts,
                max_p,
                weight,
                gentle,
                mean_pkt_bytes,
                ..
            } => {
                let (min_th, max_th) = spec.red_thresholds();
                QueueDiscipline::Red(Box::new(Red::new(
                    red::RedParams {
                        limit: *limit_pkts,
                        min_th,
                        max_th,
                        max_p: *max_p,
                        weight: *weight,
                        gentle: *gentle,
                        mean_packet_time: transmission_time(*mean_pkt_bytes, rate_bps).max(1),
                    },
                    rng,
                )))
            }
        }
    }

    /// `waiting`: packets queued behind the one in service; `idle_since`: when the link went
    /// idle, if it is idle now.
    pub fn admit(&mut self, waiting: usize, idle_since: Option<SimTime>, now: SimTime) -> bool {
        match self {
            QueueDiscipline::DropTail(q) => q.admit(waiting),
            QueueDiscipline::Red(q) => q.admit(waiting, idle_since, now),
        }
    }
}
