//! From a parsed scenario to a checked plan: every range validated, generated flows expanded
//! (their RTTs and start times drawn from the scenario seed), names resolved. `validate` is
//! exactly "can a plan be made", so validation and running can never disagree.

use std::collections::HashSet;

use crate::cc;
use crate::error::{Result, SimError};
use crate::rng::{SimRng, StreamId};
use crate::scenario::{
    check_link_rate_delay, AppSpec, Check, FlowKind, FlowSpec, LossSpec, SackRecovery, Scenario, TcpConfig, Topology,
    Value, MAX_DURATION_S, MAX_FLOWS, MAX_NODES, MAX_TRACE_POINTS,
};
use crate::time::{from_millis, from_secs, SimTime};

/// One concrete flow of the run.
#[derive(Clone, Debug)]
pub struct FlowPlan {
    pub name: String,
    /// Index into `scenario.flows`, for error paths.
    pub spec_index: usize,
    pub kind: FlowKind,
    pub variant: String,
    /// Round-trip propagation delay (dumbbell flows).
    pub rtt: Option<SimTime>,
    pub from: Option<String>,
    pub to: Option<String>,
    pub start: SimTime,
    pub stop: Option<SimTime>,
    pub app: AppSpec,
    pub tcp: TcpConfig,
    pub loss: Option<LossSpec>,
}

pub const DEFAULT_VARIANT: &str = "newreno-sbs";

pub fn plan(s: &Scenario) -> Result<Vec<FlowPlan>> {
    check_scenario(s)?;
    let mut rng = SimRng::new(s.seed, StreamId::Generator(0));
    let mut flows = Vec::new();
    let mut names = HashSet::new();
    for (i, f) in s.flows.iter().enumerate() {
        let base = f.name.clone().unwrap_or_else(|| format!("flow{i}"));
        for k in 0..f.count {
            let name = if f.count == 1 {
                base.clone()
            } else {
                format!("{base}-{k}")
            };
            if !names.insert(name.clone()) {
                return Err(SimError::invalid(
                    format!("$.flows[{i}].name"),
                    format!("flow name {name:?} is used twice"),
                ));
            }
            let draw = |v: &Value, rng: &mut SimRng| match *v {
                Value::Fixed(x) => x,
                Value::Uniform { uniform: [a, b] } => rng.uniform_between(a, b),
            };
            let rtt = f.rtt_ms.as_ref().map(|v| from_millis(draw(v, &mut rng)));
            let start = from_secs(draw(&f.start_s, &mut rng));
            flows.push(FlowPlan {
                name,
                spec_index: i,
                kind: f.kind,
                variant: f.variant.clone().unwrap_or_else(|| DEFAULT_VARIANT.to_string()),
                rtt,
                from: f.from.clone(),
                to: f.to.clone(),
                start,
                stop: f.stop_s.map(from_secs),
                app: f.app.clone(),
                tcp: f.tcp.clone(),
                loss: f.loss.clone(),
            });
        }
    }
    Ok(flows)
}

fn check_value(c: &mut Check, path: &str, v: &Value) {
    match v {
        Value::Fixed(x) => c.non_negative(path, *x),
        Value::Uniform { uniform: [a, b] } => {
            c.non_negative(&format!("{path}.uniform[0]"), *a);
            c.non_negative(&format!("{path}.uniform[1]"), *b);
            if a.is_finite() && b.is_finite() && b < a {
                c.fail(
                    format!("{path}.uniform"),
                    format!("the upper bound {b} is below the lower bound {a}"),
                );
            }
        }
    }
}

/// The flow's variant recovers with SACK (RFC 6675's scoreboard), so it can run `tcp.rack`.
pub fn recovers_with_sack(f: &FlowSpec) -> bool {
    let v = f.variant.as_deref().unwrap_or(DEFAULT_VARIANT);
    cc::build(v, &f.tcp).is_some_and(|cc| cc.recovery() == crate::tcp::Recovery::Sack)
}

/// `tcp.rack` decides losses for RFC 6675's scoreboard: only a variant that recovers with SACK,
/// through `sack_recovery` `rfc6675` or `prr`, can run it.
fn check_rack(c: &mut Check, p: &str, f: &FlowSpec) {
    let v = f.variant.as_deref().unwrap_or(DEFAULT_VARIANT);
    if !recovers_with_sack(f) {
        c.fail(
            format!("{p}.tcp.rack"),
            format!("RACK-TLP needs a variant that recovers with SACK (sack, cubic, bbr, ...), not {v}"),
        );
    } else if f.tcp.sack_recovery == SackRecovery::Ns2Sack1 {
        c.fail(
            format!("{p}.tcp.rack"),
            "RACK-TLP works with sack_recovery rfc6675 or prr, not ns2_sack1 (which keeps no scoreboard)",
        );
    }
}

fn check_scenario(s: &Scenario) -> Result<()> {
    let mut c = Check::new();
    c.positive("$.duration_s", s.duration_s);
    c.at_most("$.duration_s", s.duration_s, MAX_DURATION_S);
    c.non_negative("$.warmup_s", s.warmup_s);
    if s.warmup_s.is_finite() && s.duration_s.is_finite() && s.warmup_s >= s.duration_s {
        c.fail(
            "$.warmup_s",
            format!(
                "must be below duration_s ({}): metrics cover [warmup_s, duration_s]",
                s.duration_s
            ),
        );
    }
    let (is_dumbbell, bottleneck_delay) = match &s.topology {
        Topology::Dumbbell(d) => {
            let p = "$.topology.dumbbell";
            check_link_rate_delay(
                &mut c,
                &format!("{p}.bottleneck"),
                d.bottleneck.rate_mbps,
                d.bottleneck.trace.as_ref(),
                d.bottleneck.delay_ms,
                d.bottleneck.schedule.as_ref(),
            );
            d.bottleneck.queue.check(&mut c, &format!("{p}.bottleneck.queue"));
            if let Some(l) = &d.bottleneck.loss {
                l.check(&mut c, &format!("{p}.bottleneck.loss"));
            }
            if let Some(l) = &d.bottleneck.reverse_loss {
                l.check(&mut c, &format!("{p}.bottleneck.reverse_loss"));
            }
            c.positive(&format!("{p}.access.rate_mbps"), d.access.rate_mbps);
            d.access.queue.check(&mut c, &format!("{p}.access.queue"));
            (true, d.bottleneck.delay_ms)
        }
        Topology::Graph(g) => {
            if g.nodes.len() > MAX_NODES {
                c.fail("$.topology.graph.nodes", format!("at most {MAX_NODES} nodes"));
            }
            for (i, l) in g.links.iter().enumerate() {
                let p = format!("$.topology.graph.links[{i}]");
                check_link_rate_delay(
                    &mut c,
                    &p,
                    l.rate_mbps,
                    l.trace.as_ref(),
                    l.delay_ms,
                    l.schedule.as_ref(),
                );
                l.queue.check(&mut c, &format!("{p}.queue"));
                if let Some(loss) = &l.loss {
                    loss.check(&mut c, &format!("{p}.loss"));
                }
                if let Some(loss) = &l.reverse_loss {
                    loss.check(&mut c, &format!("{p}.reverse_loss"));
                }
            }
            for (i, w) in g.wifi.iter().enumerate() {
                w.check(&mut c, &format!("$.topology.graph.wifi[{i}]"));
            }
            (false, 0.0)
        }
    };
    if s.flows.is_empty() {
        c.fail("$.flows", "a scenario needs at least one flow");
    }
    let total: u64 = s.flows.iter().map(|f| f.count as u64).sum();
    if total > MAX_FLOWS {
        c.fail("$.flows", format!("at most {MAX_FLOWS} flows in all, got {total}"));
    }
    for (i, f) in s.flows.iter().enumerate() {
        let p = format!("$.flows[{i}]");
        if f.count == 0 {
            c.fail(format!("{p}.count"), "must be at least 1");
        }
        check_value(&mut c, &format!("{p}.start_s"), &f.start_s);
        c.at_most(&format!("{p}.start_s"), f.start_s.bounds().1, MAX_DURATION_S);
        if let Some(stop) = f.stop_s {
            c.non_negative(&format!("{p}.stop_s"), stop);
            c.at_most(&format!("{p}.stop_s"), stop, MAX_DURATION_S);
            if stop.is_finite() && stop < f.start_s.bounds().1 {
                c.fail(format!("{p}.stop_s"), "must not be before start_s");
            }
        }
        if is_dumbbell {
            match &f.rtt_ms {
                None => c.fail(
                    format!("{p}.rtt_ms"),
                    "dumbbell flows need rtt_ms (round-trip propagation delay)",
                ),
                Some(v) => {
                    check_value(&mut c, &format!("{p}.rtt_ms"), v);
                    let (low, high) = v.bounds();
                    if low.is_finite() && low < 2.0 * bottleneck_delay {
                        c.fail(
                            format!("{p}.rtt_ms"),
                            format!(
                                "must be at least twice the bottleneck delay ({} ms), got {low}",
                                2.0 * bottleneck_delay
                            ),
                        );
                    }
                    c.at_most(&format!("{p}.rtt_ms"), high, 1.0e6);
                }
            }
            if f.from.is_some() || f.to.is_some() {
                c.fail(
                    format!("{p}.from"),
                    "from/to name graph nodes; dumbbell flows get their own end hosts",
                );
            }
        } else if f.rtt_ms.is_some() {
            c.fail(
                format!("{p}.rtt_ms"),
                "a graph flow's RTT follows from its route's link delays",
            );
        }
        match (&f.kind, &f.app) {
            (FlowKind::Udp, AppSpec::Cbr { .. }) => {
                if f.variant.is_some() {
                    c.fail(format!("{p}.variant"), "UDP flows have no congestion control");
                }
            }
            (FlowKind::Udp, _) => c.fail(format!("{p}.app"), "UDP flows carry a cbr app"),
            (FlowKind::Tcp, AppSpec::Cbr { .. }) => {
                c.fail(format!("{p}.app"), "cbr runs over UDP: set \"type\": \"udp\"")
            }
            (FlowKind::Tcp, _) => {}
        }
        match &f.app {
            AppSpec::Ftp { bytes: Some(0) } => c.fail(format!("{p}.app.bytes"), "must be at least 1 byte"),
            AppSpec::Ftp { bytes: Some(b) } if *b > u32::MAX as u64 * 1000 => {
                c.fail(format!("{p}.app.bytes"), "too large for 32-bit segment numbers")
            }
            AppSpec::Cbr {
                rate_mbps,
                packet_bytes,
            } => {
                c.positive(&format!("{p}.app.rate_mbps"), *rate_mbps);
                c.at_most(&format!("{p}.app.rate_mbps"), *rate_mbps, 1.0e6);
                if !(1..=65_535).contains(packet_bytes) {
                    c.fail(format!("{p}.app.packet_bytes"), "must be between 1 and 65535 bytes");
                }
            }
            AppSpec::Http {
                mean_file_bytes,
                shape,
                mean_think_s,
                request_bytes,
                request_timeout_s,
            } => {
                c.positive(&format!("{p}.app.mean_file_bytes"), *mean_file_bytes);
                c.at_most(&format!("{p}.app.mean_file_bytes"), *mean_file_bytes, 1.0e10);
                if shape.is_finite() && *shape <= 1.0 {
                    c.fail(
                        format!("{p}.app.shape"),
                        format!("a Pareto shape must be > 1 for a finite mean, got {shape}"),
                    );
                }
                c.finite(&format!("{p}.app.shape"), *shape);
                c.non_negative(&format!("{p}.app.mean_think_s"), *mean_think_s);
                c.at_most(&format!("{p}.app.mean_think_s"), *mean_think_s, MAX_DURATION_S);
                c.positive(&format!("{p}.app.request_timeout_s"), *request_timeout_s);
                c.at_most(
                    &format!("{p}.app.request_timeout_s"),
                    *request_timeout_s,
                    MAX_DURATION_S,
                );
                if *request_bytes > 65_535 {
                    c.fail(format!("{p}.app.request_bytes"), "must be at most 65535 bytes");
                }
            }
            AppSpec::Ftp { .. } => {}
        }
        if let Some(v) = &f.variant {
            if !cc::is_known(v) {
                let known: Vec<&str> = cc::VARIANTS.iter().map(|(n, _)| *n).collect();
                c.fail(
                    format!("{p}.variant"),
                    format!("unknown variant {v:?}; known: {}", known.join(", ")),
                );
            }
        }
        f.tcp.check(&mut c, &format!("{p}.tcp"));
        let needs_sack = f
            .variant
            .as_deref()
            .and_then(|v| cc::build(v, &f.tcp))
            .is_some_and(|cc| cc.recovery().needs_sack());
        if needs_sack && f.tcp.sack == Some(false) {
            let v = f.variant.as_deref().unwrap_or_default();
            c.fail(
                format!("{p}.tcp.sack"),
                format!("the {v} variant recovers from SACK blocks: it cannot run with sack off"),
            );
        }
        if f.tcp.rack {
            check_rack(&mut c, &p, f);
        }
        if let Some(l) = &f.loss {
            l.check(&mut c, &format!("{p}.loss"));
        }
    }
    let o = &s.outputs;
    if let Some(dt) = o.trace_interval_s {
        c.positive("$.outputs.trace_interval_s", dt);
        if dt.is_finite() && dt > 0.0 && dt < 1e-6 {
            c.fail("$.outputs.trace_interval_s", "must be at least 1e-6 s (1 µs)");
        }
        if dt.is_finite() && dt > 0.0 && s.duration_s.is_finite() {
            let samples = (s.duration_s / dt).ceil();
            if samples > MAX_TRACE_POINTS as f64 {
                c.fail(
                    "$.outputs.trace_interval_s",
                    format!("gives {samples} samples per series; at most {MAX_TRACE_POINTS}"),
                );
            }
        }
    }
    if o.max_trace_points > MAX_TRACE_POINTS * 10 {
        c.fail(
            "$.outputs.max_trace_points",
            format!("at most {}", MAX_TRACE_POINTS * 10),
        );
    }
    if let Some(w) = s.limits.max_wall_s {
        c.positive("$.limits.max_wall_s", w);
    }
    c.finish()
}
