//! The network: nodes joined by one-way links (a duplex link is two), each with its own queue
//! discipline and optional loss module, and static shortest-path routes per flow.

mod codel;
mod droptail;
mod dualpi2;
mod fq_codel;
mod link;
mod name;
mod pie;
mod red;
mod scheduled_rate;
mod topology;
mod trace;
pub mod wifi;

pub use codel::{CoDel, CoDelParams};
pub use droptail::{DropTail, MarkingDropTail};
pub use dualpi2::{DualPi2, DualPi2Params};
pub use fq_codel::{FqCoDel, FqCoDelParams};
pub use link::{Admission, Extras, Link, LinkCounters, QueueDelays, Started};
pub use name::Name;
pub use pie::{Pie, PieParams};
pub use red::Red;
pub use scheduled_rate::ScheduledRate;
pub use topology::{build, Network, Routes};
pub use trace::{Trace, TraceCursor, OPPORTUNITY_BYTES};

use crate::packet::Packet;
use crate::rng::SimRng;
use crate::scenario::QueueSpec;
use crate::time::{from_millis, transmission_time, SimTime};

pub type NodeId = u32;
pub type LinkId = u32;

/// A queue discipline, in one of two shapes.
///
/// Drop-Tail and RED only decide admission: the link owns the packets, and FIFO at a fixed
/// rate makes each one's departure known when it is accepted (one event per packet and hop,
/// the fast path). CoDel, PIE, FQ-CoDel and DualPI2 drop at dequeue, drop by a probability that moves
/// with time, or pick which flow goes next, so they hold the waiting packets themselves
/// (`Scheduled`): the link asks them for the next packet each time its transmitter frees up
/// (one more event per packet, on their links only).
pub enum QueueDiscipline {
    DropTail(DropTail),
    /// Drop-Tail marking at DCTCP's threshold K (`ecn_threshold_pkts`). Boxed: a link stays
    /// 176 bytes.
    MarkingDropTail(Box<MarkingDropTail>),
    /// Boxed: RED's state is large and most links are Drop-Tail.
    Red(Box<Red>),
    /// Boxed: a link stays 176 bytes (issue 13's per-flow budget).
    Scheduled(Box<Scheduled>),
}

impl QueueDiscipline {
    pub fn new(spec: &QueueSpec, rate_bps: u64, rng: SimRng) -> Self {
        match spec {
            QueueSpec::Droptail {
                limit_pkts,
                ecn_threshold_pkts: None,
            } => QueueDiscipline::DropTail(DropTail::new(*limit_pkts)),
            QueueSpec::Droptail {
                limit_pkts,
                ecn_threshold_pkts: Some(k),
            } => QueueDiscipline::MarkingDropTail(Box::new(MarkingDropTail::new(*limit_pkts, *k))),
            QueueSpec::Red {
                limit_pkts,
                max_p,
                weight,
                gentle,
                mean_pkt_bytes,
                ecn,
                rules,
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
                        ecn: *ecn,
                        mean_packet_time: transmission_time(*mean_pkt_bytes, rate_bps).max(1),
                        ns_rules: *rules == crate::scenario::RedRules::Ns,
                    },
                    rng,
                )))
            }
            QueueSpec::Codel {
                limit_pkts,
                target_ms,
                interval_ms,
                ecn,
            } => Self::scheduled(
                Discipline::CoDel(CoDel::new(
                    *limit_pkts,
                    CoDelParams::new(from_millis(*target_ms), from_millis(*interval_ms)).with_ecn(*ecn),
                )),
                *ecn,
            ),
            QueueSpec::Pie {
                limit_pkts,
                target_ms,
                t_update_ms,
                alpha,
                beta,
                max_burst_ms,
                derandomize,
                ecn,
            } => Self::scheduled(
                Discipline::Pie(Pie::new(
                    PieParams {
                        limit: *limit_pkts,
                        target: from_millis(*target_ms),
                        t_update: from_millis(*t_update_ms),
                        alpha: *alpha,
                        beta: *beta,
                        max_burst: from_millis(*max_burst_ms),
                        derandomize: *derandomize,
                        ecn: *ecn,
                    },
                    rng,
                )),
                *ecn,
            ),
            QueueSpec::FqCodel {
                limit_pkts,
                flows,
                quantum_bytes,
                target_ms,
                interval_ms,
                ecn,
            } => Self::scheduled(
                Discipline::FqCoDel(FqCoDel::new(
                    FqCoDelParams {
                        limit: *limit_pkts,
                        flows: *flows,
                        quantum: *quantum_bytes,
                        codel: CoDelParams::new(from_millis(*target_ms), from_millis(*interval_ms)).with_ecn(*ecn),
                    },
                    rng,
                )),
                *ecn,
            ),
            QueueSpec::Dualpi2 {
                limit_pkts,
                target_ms,
                t_update_ms,
                alpha,
                beta,
                coupling,
                ramp_min_ms,
                ramp_range_ms,
                ramp_min_pkts,
                classic_weight,
            } => Self::scheduled(
                Discipline::DualPi2(DualPi2::new(DualPi2Params {
                    limit: *limit_pkts,
                    target: from_millis(*target_ms),
                    t_update: from_millis(*t_update_ms),
                    alpha: *alpha,
                    beta: *beta,
                    coupling: *coupling,
                    ramp_min: from_millis(*ramp_min_ms),
                    ramp_range: from_millis(*ramp_range_ms),
                    ramp_min_pkts: *ramp_min_pkts,
                    classic_weight: *classic_weight,
                })),
                true,
            ),
        }
    }

    fn scheduled(discipline: Discipline, ecn: bool) -> Self {
        QueueDiscipline::Scheduled(Box::new(Scheduled {
            discipline,
            drops: Drops::default(),
            transmitting: false,
            ecn,
        }))
    }

    /// CE marks since the window opened; None unless the queue marks (`ecn`).
    pub fn ecn_marks(&self) -> Option<u64> {
        match self {
            QueueDiscipline::DropTail(_) => None,
            QueueDiscipline::MarkingDropTail(q) => Some(q.marks),
            QueueDiscipline::Red(q) => q.marks(),
            QueueDiscipline::Scheduled(s) => s.ecn.then_some(s.drops.marks),
        }
    }

    /// `waiting`: packets queued behind the one in service; `idle_since`: when the link went
    /// idle, if it is idle now; `ect`: the packet is ECN-capable (a RED with `ecn` may mark it).
    pub fn admit(&mut self, waiting: usize, idle_since: Option<SimTime>, now: SimTime, ect: bool) -> Verdict {
        match self {
            QueueDiscipline::DropTail(q) => {
                if q.admit(waiting) {
                    Verdict::Accept
                } else {
                    Verdict::Drop
                }
            }
            QueueDiscipline::MarkingDropTail(q) => q.admit(waiting, ect),
            QueueDiscipline::Red(q) => q.admit(waiting, idle_since, now, ect),
            QueueDiscipline::Scheduled(_) => unreachable!("a scheduled discipline takes packets, see `Scheduled`"),
        }
    }
}

/// What an admission-time discipline (Drop-Tail, RED) does with an arriving packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Accept,
    /// Accept it marked CE (RFC 3168 §5): it was ECN-capable where the queue would drop it.
    Mark,
    Drop,
}

/// A packet a discipline holds, and when it arrived there: its sojourn time starts then.
#[derive(Clone, Copy, Debug)]
pub struct Queued {
    pub packet: Packet,
    pub since: SimTime,
}

/// Why a queue dropped a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropReason {
    /// The buffer was full (the limit in packets).
    Overflow,
    /// The active queue management chose it: CoDel's dequeue drop, PIE's early drop.
    Aqm,
}

/// What a scheduled discipline dropped since the link last collected, and its drops per
/// reason since the measurement window opened.
#[derive(Debug, Default)]
pub struct Drops {
    packets: Vec<Packet>,
    pub overflow: u64,
    pub aqm: u64,
    /// Packets marked CE instead of dropped (RFC 3168 §5), since the window opened.
    pub marks: u64,
}

impl Drops {
    pub fn push(&mut self, packet: Packet, reason: DropReason) {
        self.packets.push(packet);
        match reason {
            DropReason::Overflow => self.overflow += 1,
            DropReason::Aqm => self.aqm += 1,
        }
    }

    /// Where the discipline would drop `packet` for AQM: with `ecn` and an ECN-capable
    /// packet, marks it CE and counts the mark (true: keep it); otherwise false (drop it).
    pub fn mark(&mut self, packet: &mut Packet, ecn: bool) -> bool {
        let marked = ecn && packet.mark_ce();
        self.marks += marked as u64;
        marked
    }

    /// The packets dropped since the last call, appended to `out`; how many.
    pub fn collect(&mut self, out: &mut Vec<Packet>) -> usize {
        let n = self.packets.len();
        out.append(&mut self.packets);
        n
    }

    #[cfg(test)]
    pub fn packets(&self) -> &[Packet] {
        &self.packets
    }
}

/// The two hooks of a discipline that holds its packets. Time comes in as `now`; a drop goes
/// to `drops` with its reason (the link hands the packets back to the simulation, which
/// accounts for them as any queue drop).
pub trait Scheduler {
    /// A packet arrives (`item.since` is now): keep it, or drop it or another one.
    fn enqueue(&mut self, item: Queued, drops: &mut Drops);
    /// The transmitter is free at `now`: the packet to send next, if any, after dropping any
    /// at the head that the discipline decides to drop.
    fn dequeue(&mut self, now: SimTime, drops: &mut Drops) -> Option<Queued>;
    /// Packets waiting.
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

pub enum Discipline {
    CoDel(CoDel),
    Pie(Pie),
    FqCoDel(FqCoDel),
    DualPi2(DualPi2),
}

impl Discipline {
    fn scheduler(&self) -> &dyn Scheduler {
        match self {
            Discipline::CoDel(q) => q,
            Discipline::Pie(q) => q,
            Discipline::FqCoDel(q) => q,
            Discipline::DualPi2(q) => q,
        }
    }

    fn scheduler_mut(&mut self) -> &mut dyn Scheduler {
        match self {
            Discipline::CoDel(q) => q,
            Discipline::Pie(q) => q,
            Discipline::FqCoDel(q) => q,
            Discipline::DualPi2(q) => q,
        }
    }
}

/// A scheduled discipline and what its link keeps beside it.
pub struct Scheduled {
    discipline: Discipline,
    pub drops: Drops,
    /// A packet is being transmitted (and a `LinkTransmit` event is due when it ends).
    pub transmitting: bool,
    /// The discipline marks ECN-capable packets instead of dropping them (its `ecn`).
    ecn: bool,
}

impl Scheduled {
    pub fn enqueue(&mut self, item: Queued) {
        self.discipline.scheduler_mut().enqueue(item, &mut self.drops);
    }

    pub fn dequeue(&mut self, now: SimTime) -> Option<Queued> {
        self.discipline.scheduler_mut().dequeue(now, &mut self.drops)
    }

    /// Packets waiting.
    pub fn len(&self) -> usize {
        self.discipline.scheduler().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
