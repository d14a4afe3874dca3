//! Builders that turn a scenario's topology into one graph of nodes and one-way links, and
//! the routes each flow takes through it. A dumbbell and an explicit graph are two ways to
//! describe the same thing; the simulator never knows which one it was given.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::sync::Arc;

use super::wifi::{Mac, Medium, Phy, Snr, Standard};
use super::{DropTail, Extras, Link, LinkId, Name, NodeId, QueueDiscipline, ScheduledRate, Trace, TraceCursor};
use crate::error::{Result, SimError};
use crate::loss::LossModule;
use crate::plan::FlowPlan;
use crate::rng::{SimRng, StreamId};
use crate::scenario::{
    CwAfterDrop, LinkSchedule, LossSpec, QueueSpec, SnrSpec, Topology, TraceSpec, WifiSpec, WifiStandard,
};
use crate::schedule::Schedule;
use crate::time::{from_millis, SimTime};

pub struct Network {
    pub nodes: Vec<Name>,
    pub links: Vec<Link>,
    /// Links whose queue the traces follow by default.
    pub default_traced_links: Vec<LinkId>,
    /// The 802.11 media; their links follow every wired link in `links`.
    pub wifi: Vec<Medium>,
}

/// The links each flow's packets cross, in order: data forward, ACKs (and requests) reverse.
/// Every flow's forward and reverse paths in one flat table. A packet's next link is looked
/// up at every hop: from here it is a few bytes of a table that stays in cache (10,000
/// dumbbell flows: 320 KB) instead of a read of the flow's state and of a separate allocation
/// per path, which at 10,000 paced flows were a third of the core's time in cache misses.
#[derive(Debug, Default)]
pub struct Routes {
    links: Vec<LinkId>,
    spans: Vec<Span>,
}

/// Where a flow's forward path starts in `Routes::links`; its reverse path follows it.
#[derive(Clone, Copy, Debug)]
struct Span {
    start: u32,
    forward: u16,
    reverse: u16,
}

impl Routes {
    fn with_capacity(flows: usize, links_per_flow: usize) -> Self {
        Routes {
            links: Vec::with_capacity(flows * links_per_flow),
            spans: Vec::with_capacity(flows),
        }
    }

    /// Appends the next flow's paths; each crosses at most 65,535 links (a packet's hop
    /// count is a u16).
    fn push(&mut self, forward: &[LinkId], reverse: &[LinkId]) -> std::result::Result<(), &'static str> {
        let (Ok(f), Ok(r)) = (u16::try_from(forward.len()), u16::try_from(reverse.len())) else {
            return Err("a route may cross at most 65535 links");
        };
        let start = u32::try_from(self.links.len()).map_err(|_| "the routes together may cross at most 2^32 links")?;
        self.links.extend_from_slice(forward);
        self.links.extend_from_slice(reverse);
        self.spans.push(Span {
            start,
            forward: f,
            reverse: r,
        });
        Ok(())
    }

    /// Where `flow`'s forward or reverse path starts in `links`, and its length.
    fn span(&self, flow: u32, forward: bool) -> (usize, u16) {
        let sp = self.spans[flow as usize];
        if forward {
            (sp.start as usize, sp.forward)
        } else {
            (sp.start as usize + sp.forward as usize, sp.reverse)
        }
    }

    /// The links of `flow`'s forward or reverse path, in order.
    pub fn path(&self, flow: u32, forward: bool) -> &[LinkId] {
        let (start, len) = self.span(flow, forward);
        &self.links[start..start + len as usize]
    }

    /// The `hop`-th link of a path, None past its end.
    pub fn hop(&self, flow: u32, forward: bool, hop: u16) -> Option<LinkId> {
        let (start, len) = self.span(flow, forward);
        (hop < len).then(|| self.links[start + hop as usize])
    }
}

struct Builder {
    seed: u64,
    nodes: Vec<Name>,
    links: Vec<Link>,
    /// Trace files read so far, by path: each is read once and shared by its links.
    traces: HashMap<String, Arc<Trace>>,
}

/// How a one-way link sends: at a fixed rate, at a trace's opportunities, or at a rate that
/// follows a schedule (b/s).
#[derive(Clone)]
enum Sends {
    Rate { mbps: f64 },
    Trace(Arc<Trace>),
    Schedule(Schedule),
}

struct OneWay<'a> {
    name: Name,
    ends: (NodeId, NodeId),
    sends: Sends,
    delay: SimTime,
    /// Added to `delay` over time (ns).
    extra_delay: Option<Schedule>,
    queue: &'a QueueSpec,
    loss: Option<&'a LossSpec>,
}

impl Builder {
    fn node(&mut self, name: Name) -> NodeId {
        self.nodes.push(name);
        (self.nodes.len() - 1) as NodeId
    }

    fn link(&mut self, l: OneWay) -> LinkId {
        let id = self.links.len() as LinkId;
        let (rate_bps, trace, rate) = match l.sends {
            Sends::Rate { mbps } => ((mbps * 1e6).round().max(1.0) as u64, None, None),
            Sends::Trace(t) => (t.mean_bps().max(1), Some(TraceCursor::new(t)), None),
            Sends::Schedule(s) => {
                let last = s.last_point();
                let rate = ScheduledRate::new(s);
                // The mean over the schedule's points: one figure for RED's idle estimate.
                ((rate.mean_bps(0, last).round() as u64).max(1), None, Some(rate))
            }
        };
        let queue = QueueDiscipline::new(l.queue, rate_bps, SimRng::new(self.seed, StreamId::LinkQueue(id)));
        let loss = l
            .loss
            .map(|s| LossModule::new(s, SimRng::new(self.seed, StreamId::LinkLoss(id))));
        self.links.push(Link::new(
            l.name,
            l.ends,
            rate_bps,
            l.delay,
            queue,
            Extras {
                loss,
                trace,
                rate,
                extra_delay: l.extra_delay,
            },
        ));
        id
    }

    /// How a duplex link sends each way: its rate, its trace files (read once per path;
    /// an error names `path`'s `trace.file` or `trace.reverse_file`), or its rate schedule
    /// (both ways). `plan` checked that exactly one of the three is given.
    fn sends(
        &mut self,
        rate_mbps: Option<f64>,
        trace: Option<&TraceSpec>,
        schedule: Option<&LinkSchedule>,
        path: &str,
    ) -> Result<(Sends, Sends)> {
        if let Some(rate) = schedule.and_then(|s| s.rate_mbps.as_ref()) {
            let rate = Schedule::new(rate, 1e6);
            return Ok((Sends::Schedule(rate.clone()), Sends::Schedule(rate)));
        }
        let Some(t) = trace else {
            let mbps = rate_mbps.expect("plan() checked that a link without a trace has a rate");
            return Ok((Sends::Rate { mbps }, Sends::Rate { mbps }));
        };
        let forward = self.read_trace(&t.file, format!("{path}.trace.file"))?;
        let reverse = match &t.reverse_file {
            Some(f) => self.read_trace(f, format!("{path}.trace.reverse_file"))?,
            None => forward.clone(),
        };
        Ok((Sends::Trace(forward), Sends::Trace(reverse)))
    }

    /// An 802.11 BSS: two one-way links per station (AP to station, then back), placeholders
    /// that carry the routes, names and counters, and the medium that carries the frames.
    fn wifi(&mut self, w: &WifiSpec, path: &str, lookup: &dyn Fn(&str, String) -> Result<NodeId>) -> Result<Medium> {
        let kbps = w.rate_kbps().expect("plan() checked the rate");
        let standard = match w.standard {
            WifiStandard::B => Standard::B,
            WifiStandard::G => Standard::G,
        };
        let phy = Phy::new(standard, kbps, w.short_slot).expect("a rate of the standard");
        let QueueSpec::Droptail { limit_pkts, .. } = w.queue else {
            unreachable!("plan() refused other queues")
        };
        let ap = lookup(&w.ap, format!("{path}.ap"))?;
        let first_link = self.links.len() as LinkId;
        let mut snr = Vec::with_capacity(w.stations.len());
        for (i, s) in w.stations.iter().enumerate() {
            let station = lookup(&s.node, format!("{path}.stations[{i}].node"))?;
            if station == ap {
                return Err(SimError::invalid(
                    format!("{path}.stations[{i}].node"),
                    "a station cannot be its own access point",
                ));
            }
            let name = format!("{}-{}", w.name, s.node);
            for (name, ends) in [(name.clone(), (ap, station)), (format!("{name}-rev"), (station, ap))] {
                self.links.push(Link::new(
                    name.as_str().into(),
                    ends,
                    kbps as u64 * 1000,
                    0,
                    QueueDiscipline::DropTail(DropTail::new(limit_pkts)),
                    Extras::default(),
                ));
            }
            snr.push(match &s.snr_db {
                SnrSpec::Fixed(db) => Snr::Fixed(*db),
                SnrSpec::Schedule(spec) => Snr::Scheduled(Schedule::new(spec, 1.0)),
            });
        }
        let rng = SimRng::new(self.seed, StreamId::Wifi(first_link));
        let mac = Mac {
            retry_limit: w.retry_limit,
            queue_limit: limit_pkts,
            reset_cw_on_drop: w.cw_after_drop == CwAfterDrop::Reset,
        };
        Ok(Medium::new(phy, mac, first_link, snr, rng))
    }

    fn read_trace(&mut self, file: &str, path: String) -> Result<Arc<Trace>> {
        if let Some(t) = self.traces.get(file) {
            return Ok(t.clone());
        }
        let t = Arc::new(Trace::read(file).map_err(|message| SimError::invalid(path, message))?);
        self.traces.insert(file.to_owned(), t.clone());
        Ok(t)
    }
}

/// A link's delay schedule in nanoseconds, for each direction.
fn extra_delay(schedule: Option<&LinkSchedule>) -> Option<Schedule> {
    schedule
        .and_then(|s| s.extra_delay_ms.as_ref())
        .map(|d| Schedule::new(d, 1e6))
}

/// Builds the network and one route per flow (same order as `flows`).
pub fn build(topology: &Topology, flows: &[FlowPlan], seed: u64) -> Result<(Network, Routes)> {
    let mut b = Builder {
        seed,
        nodes: Vec::new(),
        links: Vec::new(),
        traces: HashMap::new(),
    };
    match topology {
        Topology::Dumbbell(d) => {
            // Exact sizes: at 10,000 flows a doubling Vec of links would hold a third more.
            b.nodes.reserve_exact(2 + 2 * flows.len());
            b.links.reserve_exact(2 + 4 * flows.len());
            let left = b.node("left".into());
            let right = b.node("right".into());
            let bn = &d.bottleneck;
            let bn_delay = from_millis(bn.delay_ms);
            let (forward, reverse) = b.sends(
                bn.rate_mbps,
                bn.trace.as_ref(),
                bn.schedule.as_ref(),
                "$.topology.dumbbell.bottleneck",
            )?;
            let fwd = b.link(OneWay {
                name: "bottleneck".into(),
                ends: (left, right),
                sends: forward,
                delay: bn_delay,
                extra_delay: extra_delay(bn.schedule.as_ref()),
                queue: &bn.queue,
                loss: bn.loss.as_ref(),
            });
            let rev = b.link(OneWay {
                name: "bottleneck-rev".into(),
                ends: (right, left),
                sends: reverse,
                delay: bn_delay,
                extra_delay: extra_delay(bn.schedule.as_ref()),
                queue: &bn.queue,
                loss: bn.reverse_loss.as_ref(),
            });
            let mut routes = Routes::with_capacity(flows.len(), 6);
            for (i, f) in flows.iter().enumerate() {
                let flow = i as u32;
                let rtt = f.rtt.expect("plan() gives every dumbbell flow an RTT");
                // Round-trip propagation = 2 (access + bottleneck + access); split evenly.
                let access = (rtt / 2).saturating_sub(bn_delay) / 2;
                let src = b.node(Name::OfFlow { flow, part: "src" });
                let dst = b.node(Name::OfFlow { flow, part: "dst" });
                let access_link = |b: &mut Builder, part: &'static str, ends| {
                    b.link(OneWay {
                        name: Name::OfFlow { flow, part },
                        ends,
                        sends: Sends::Rate {
                            mbps: d.access.rate_mbps,
                        },
                        delay: access,
                        extra_delay: None,
                        queue: &d.access.queue,
                        loss: None,
                    })
                };
                let s_up = access_link(&mut b, "src-access", (src, left));
                let s_down = access_link(&mut b, "src-access-rev", (left, src));
                let d_down = access_link(&mut b, "dst-access", (right, dst));
                let d_up = access_link(&mut b, "dst-access-rev", (dst, right));
                routes
                    .push(&[s_up, fwd, d_down], &[d_up, rev, s_down])
                    .expect("three links each way");
            }
            Ok((
                Network {
                    nodes: b.nodes,
                    links: b.links,
                    default_traced_links: vec![fwd],
                    wifi: Vec::new(),
                },
                routes,
            ))
        }
        Topology::Graph(g) => {
            let mut index = HashMap::new();
            for (i, n) in g.nodes.iter().enumerate() {
                if index.insert(n.as_str(), b.node(n.as_str().into())).is_some() {
                    return Err(SimError::invalid(
                        format!("$.topology.graph.nodes[{i}]"),
                        format!("duplicate node name {n:?}"),
                    ));
                }
            }
            let lookup = |name: &str, path: String| {
                index
                    .get(name)
                    .copied()
                    .ok_or_else(|| SimError::invalid(path, format!("no node named {name:?} in topology.graph.nodes")))
            };
            for (i, l) in g.links.iter().enumerate() {
                let path = format!("$.topology.graph.links[{i}]");
                let a = lookup(&l.from, format!("{path}.from"))?;
                let z = lookup(&l.to, format!("{path}.to"))?;
                if a == z {
                    return Err(SimError::invalid(
                        format!("{path}.to"),
                        "a link must join two different nodes",
                    ));
                }
                let name = l.name.clone().unwrap_or_else(|| format!("{}-{}", l.from, l.to));
                let delay = from_millis(l.delay_ms);
                let (forward, reverse) = b.sends(l.rate_mbps, l.trace.as_ref(), l.schedule.as_ref(), &path)?;
                b.link(OneWay {
                    name: name.as_str().into(),
                    ends: (a, z),
                    sends: forward,
                    delay,
                    extra_delay: extra_delay(l.schedule.as_ref()),
                    queue: &l.queue,
                    loss: l.loss.as_ref(),
                });
                b.link(OneWay {
                    name: format!("{name}-rev").into(),
                    ends: (z, a),
                    sends: reverse,
                    delay,
                    extra_delay: extra_delay(l.schedule.as_ref()),
                    queue: &l.queue,
                    loss: l.reverse_loss.as_ref(),
                });
            }
            let wired = b.links.len();
            let wifi = g
                .wifi
                .iter()
                .enumerate()
                .map(|(i, w)| b.wifi(w, &format!("$.topology.graph.wifi[{i}]"), &lookup))
                .collect::<Result<Vec<_>>>()?;
            // Where a link's name comes from in the scenario, to name a clash.
            let origin = |i: usize| {
                if i < wired {
                    return format!("$.topology.graph.links[{}].name", i / 2);
                }
                let mut first = wired;
                for (w, spec) in g.wifi.iter().enumerate() {
                    let next = first + 2 * spec.stations.len();
                    if i < next {
                        return format!("$.topology.graph.wifi[{w}].stations[{}].node", (i - first) / 2);
                    }
                    first = next;
                }
                unreachable!("every link comes from the scenario")
            };
            let mut seen = HashMap::new();
            for (i, l) in b.links.iter().enumerate() {
                let name = l
                    .name
                    .spell(|_| unreachable!("a graph's links are named by the scenario"));
                if let Some(j) = seen.insert(name.clone(), i) {
                    return Err(SimError::invalid(
                        origin(i),
                        format!("link name {name:?} is used twice (also at {})", origin(j)),
                    ));
                }
            }
            let mut trees: HashMap<NodeId, Vec<Option<LinkId>>> = HashMap::new();
            let mut routes = Routes::default();
            for f in flows {
                let path = format!("$.flows[{}]", f.spec_index);
                let from = f.from.as_deref().ok_or_else(|| {
                    SimError::invalid(format!("{path}.from"), "graph flows need `from` and `to` node names")
                })?;
                let to = f.to.as_deref().ok_or_else(|| {
                    SimError::invalid(format!("{path}.to"), "graph flows need `from` and `to` node names")
                })?;
                let src = lookup(from, format!("{path}.from"))?;
                let dst = lookup(to, format!("{path}.to"))?;
                if src == dst {
                    return Err(SimError::invalid(
                        format!("{path}.to"),
                        "a flow needs two different end nodes",
                    ));
                }
                let mut route = |a: NodeId, z: NodeId| {
                    let tree = trees
                        .entry(a)
                        .or_insert_with(|| shortest_path_tree(&b.nodes, &b.links, a));
                    path_to(tree, &b.links, z)
                };
                let forward = route(src, dst);
                let reverse = route(dst, src);
                match (forward, reverse) {
                    (Some(forward), Some(reverse)) => routes
                        .push(&forward, &reverse)
                        .map_err(|why| SimError::invalid("$.topology.graph", why))?,
                    _ => {
                        return Err(SimError::invalid(
                            format!("{path}.to"),
                            format!("no path between {from:?} and {to:?}"),
                        ))
                    }
                }
            }
            let traced = (0..b.links.len() as LinkId).step_by(2).collect();
            Ok((
                Network {
                    nodes: b.nodes,
                    links: b.links,
                    default_traced_links: traced,
                    wifi,
                },
                routes,
            ))
        }
    }
}

/// Dijkstra from `src` by propagation delay, ties broken by hop count then link order, so
/// routes are deterministic. Returns, per node, the link used to reach it.
fn shortest_path_tree(nodes: &[Name], links: &[Link], src: NodeId) -> Vec<Option<LinkId>> {
    let mut out: Vec<Vec<LinkId>> = vec![Vec::new(); nodes.len()];
    for (id, l) in links.iter().enumerate() {
        out[l.from as usize].push(id as LinkId);
    }
    let mut best: Vec<Option<(SimTime, u32)>> = vec![None; nodes.len()];
    let mut via = vec![None; nodes.len()];
    let mut heap = BinaryHeap::new();
    best[src as usize] = Some((0, 0));
    heap.push(Reverse((0u64, 0u32, src)));
    while let Some(Reverse((d, hops, n))) = heap.pop() {
        if best[n as usize] != Some((d, hops)) {
            continue;
        }
        for &l in &out[n as usize] {
            let link = &links[l as usize];
            let cand = (d + link.delay, hops + 1);
            let to = link.to as usize;
            if best[to].is_none_or(|b| cand < b) {
                best[to] = Some(cand);
                via[to] = Some(l);
                heap.push(Reverse((cand.0, cand.1, link.to)));
            }
        }
    }
    via
}

fn path_to(via: &[Option<LinkId>], links: &[Link], dst: NodeId) -> Option<Vec<LinkId>> {
    let mut path = Vec::new();
    let mut n = dst;
    while let Some(l) = via[n as usize] {
        path.push(l);
        n = links[l as usize].from;
    }
    if path.is_empty() {
        return None;
    }
    path.reverse();
    Some(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_flows_paths_come_back_from_the_flat_table_as_they_went_in() {
        let mut r = Routes::default();
        r.push(&[0, 2, 4], &[5, 3, 1]).unwrap();
        r.push(&[7], &[8, 9]).unwrap();
        assert_eq!(r.path(0, true), &[0, 2, 4]);
        assert_eq!(r.path(0, false), &[5, 3, 1]);
        assert_eq!(r.path(1, true), &[7]);
        assert_eq!(r.path(1, false), &[8, 9]);
        assert_eq!(r.hop(1, false, 1), Some(9));
        assert_eq!(r.hop(1, false, 2), None, "past the end: the packet has arrived");
        let long = vec![0; u16::MAX as usize + 1];
        assert!(r.push(&long, &[1]).is_err());
    }
}
