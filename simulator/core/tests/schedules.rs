//! Links that change over time (issue 18): rate and delay schedules on a link, loss over time.

use serde_json::{json, Value};
use tcpsim_core::metrics::LinkResult;
use tcpsim_core::{run_json, RunResult};

fn run(s: &Value) -> RunResult {
    run_json(&s.to_string()).unwrap_or_else(|e| panic!("{e}"))
}

fn bottleneck(r: &RunResult) -> &LinkResult {
    r.links.iter().find(|l| l.name == "bottleneck").unwrap()
}

/// One saturating CUBIC flow (RTT 40 ms) through a bottleneck with `schedule`, `queue`,
/// measured over [warmup_s, duration_s].
fn saturating(schedule: Value, queue: Value, (warmup_s, duration_s): (f64, f64)) -> Value {
    json!({
        "duration_s": duration_s, "warmup_s": warmup_s, "seed": 3,
        "topology": {"dumbbell": {"bottleneck": {"delay_ms": 5, "schedule": schedule, "queue": queue}}},
        "flows": [{"name": "f", "variant": "cubic", "rtt_ms": 40}],
        "outputs": {"trace_interval_s": 0.25, "trace": ["throughput", "delay"]}
    })
}

fn droptail() -> Value {
    json!({"type": "droptail", "limit_pkts": 100})
}

fn codel() -> Value {
    json!({"type": "codel", "limit_pkts": 1000})
}

/// The flow's throughput samples whose interval lies inside [from_s, to_s].
fn throughput_between(r: &RunResult, from_s: f64, to_s: f64) -> Vec<f64> {
    let t = r.traces.as_ref().unwrap();
    let rates = t.flows[0].throughput_bps.as_ref().unwrap();
    t.time_s
        .iter()
        .zip(rates)
        .filter(|(&at, _)| at - 0.25 >= from_s - 1e-9 && at <= to_s + 1e-9)
        .map(|(_, &r)| r)
        .collect()
}

#[test]
fn a_step_down_in_rate_halves_a_saturating_flows_goodput_after_it() {
    let step = json!({"rate_mbps": {"points": [[0, 20], [10, 10]]}});
    for queue in [droptail(), codel()] {
        let before = run(&saturating(step.clone(), queue.clone(), (3.0, 10.0)));
        let after = run(&saturating(step.clone(), queue.clone(), (13.0, 20.0)));
        let ratio = after.flows[0].goodput_bps / before.flows[0].goodput_bps;
        assert!((ratio - 0.5).abs() < 0.5 * 0.04, "{queue}: {ratio}");
        // Utilisation is of the rate the schedule offered in the window.
        let (b, a) = (bottleneck(&before), bottleneck(&after));
        assert_eq!((b.rate_bps, a.rate_bps), (20_000_000, 10_000_000));
        assert!(a.utilization > 0.9 && b.utilization > 0.9, "{queue}: {b:?} {a:?}");
    }
}

#[test]
fn a_blackout_delivers_nothing_while_it_lasts_and_the_flow_recovers() {
    // 10 Mb/s, nothing from 5 s to 7 s, 10 Mb/s again.
    let blackout = json!({"rate_mbps": {"points": [[0, 10], [5, 0], [7, 10]]}});
    for queue in [droptail(), codel()] {
        let r = run(&saturating(blackout.clone(), queue.clone(), (0.0, 20.0)));
        // After the last packets in propagation at 5 s have arrived (well within 0.25 s).
        let during = throughput_between(&r, 5.25, 7.0);
        assert_eq!(during.len(), 7);
        assert!(during.iter().all(|&b| b == 0.0), "{queue}: {during:?}");
        let later = throughput_between(&r, 12.0, 20.0);
        let mean = later.iter().sum::<f64>() / later.len() as f64;
        assert!(mean > 0.9 * 10e6, "{queue}: recovers to {mean}");
    }
    let refused = run_json(
        &saturating(
            json!({"rate_mbps": {"points": [[0, 10], [5, 0]]}}),
            droptail(),
            (0.0, 10.0),
        )
        .to_string(),
    )
    .unwrap_err();
    assert_eq!(
        refused.path(),
        Some("$.topology.dumbbell.bottleneck.schedule.rate_mbps.points[1][1]")
    );
}

#[test]
fn a_route_change_shows_in_the_flows_rtt_and_one_way_delay() {
    // 10 Mb/s; from 10 s the bottleneck is 30 ms longer each way (a route change).
    let route = json!({"rate_mbps": {"points": [[0, 10]]}, "extra_delay_ms": {"points": [[0, 0], [10, 30]]}});
    let before = run(&saturating(route.clone(), codel(), (4.0, 10.0)));
    let after = run(&saturating(route.clone(), codel(), (14.0, 20.0)));
    let (rtt_before, rtt_after) = (before.flows[0].mean_rtt_s.unwrap(), after.flows[0].mean_rtt_s.unwrap());
    let grew = rtt_after - rtt_before;
    assert!((grew - 0.060).abs() < 0.010, "RTT {rtt_before} -> {rtt_after}");
    let t = after.traces.as_ref().unwrap();
    let delays = t.flows[0].delay_s.as_ref().unwrap();
    let (early, late) = (delays[20].unwrap(), delays[60].unwrap()); // at 5 s and 15 s
    assert!((late - early - 0.030).abs() < 0.010, "one-way {early} -> {late}");
}

#[test]
fn a_delay_that_drops_never_lets_a_packet_overtake_the_one_before() {
    // 200 ms of extra delay that ends at 5 s: the packets sent just after it wait behind
    // those sent just before. The flow's window (20 packets) never fills the queue, so a
    // retransmission could only come from duplicate ACKs for packets overtaken.
    let drop = json!({"rate_mbps": {"points": [[0, 10]]}, "extra_delay_ms": {"points": [[0, 200], [5, 0]]}});
    let mut s = saturating(drop, droptail(), (4.0, 6.0));
    s["flows"][0]["tcp"] = json!({"max_window_pkts": 20});
    let r = run(&s);
    let f = &r.flows[0];
    assert!(f.packets_received > 200, "{f:?}");
    assert_eq!((f.retransmits, f.drops), (0, 0), "{f:?}");
    let t = r.traces.as_ref().unwrap();
    let delay_at = |at: f64| {
        let i = t.time_s.iter().position(|&s| (s - at).abs() < 1e-9).unwrap();
        t.flows[0].delay_s.as_ref().unwrap()[i]
    };
    let (before, after) = (delay_at(4.25).unwrap(), delay_at(6.0).unwrap());
    assert!(before > 0.2 && after < 0.05, "{before} -> {after}");
}

/// A UDP flow of 1000-byte packets at 8 Mb/s (1000 packets a second) over a 100 Mb/s
/// bottleneck whose forward direction has `loss`, measured over the whole run of 10 s.
fn cbr_with_loss(loss: Value) -> Value {
    json!({
        "duration_s": 10, "warmup_s": 0, "seed": 5,
        "topology": {"dumbbell": {"bottleneck": {"rate_mbps": 100, "delay_ms": 5, "loss": loss}}},
        "flows": [{"name": "u", "type": "udp", "rtt_ms": 20,
                   "app": {"type": "cbr", "rate_mbps": 8, "packet_bytes": 1000}}]
    })
}

#[test]
fn a_loss_schedules_drops_follow_the_scheduled_probability() {
    // 0.1 from 2 s to 7 s (5000 packets: 500 expected, σ ≈ 21).
    let step = run(&cbr_with_loss(
        json!({"type": "schedule", "rate": {"points": [[0, 0], [2, 0.1], [7, 0]]}}),
    ));
    let drops = bottleneck(&step).loss_drops as f64;
    assert!((drops - 500.0).abs() < 4.0 * 21.2, "{drops}");
    // 0 rising to 0.2 over 10 s: 0.1 on average (1000 of 10,000, σ ≈ 30 or less).
    let ramp = run(&cbr_with_loss(
        json!({"type": "schedule", "rate": {"points": [[0, 0], [10, 0.2]], "shape": "linear"}}),
    ));
    let drops = bottleneck(&ramp).loss_drops as f64;
    assert!((drops - 1000.0).abs() < 4.0 * 30.0, "{drops}");
}

#[test]
fn the_outage_module_drops_exactly_what_the_same_loss_schedule_drops() {
    // The outage covers [2, 4] s, both ends included: the schedule's 0 starts 1 ns after.
    let outage = run(&cbr_with_loss(
        json!({"type": "outage", "start_s": 2, "end_s": 4, "rate": 0.3}),
    ));
    let schedule = run(&cbr_with_loss(
        json!({"type": "schedule", "rate": {"points": [[0, 0], [2, 0.3], [4.000000001, 0]]}}),
    ));
    let (a, b) = (bottleneck(&outage), bottleneck(&schedule));
    assert!(a.loss_drops > 500, "{}", a.loss_drops);
    assert_eq!((a.loss_drops, a.packets), (b.loss_drops, b.packets));
    assert_eq!(outage.flows[0].goodput_bps, schedule.flows[0].goodput_bps);
}

#[test]
fn a_graph_links_schedule_is_followed_both_ways() {
    // Two nodes, a 20 → 5 Mb/s step at 5 s on the only link; a flow each way.
    let s = json!({
        "duration_s": 15, "warmup_s": 8, "seed": 2,
        "topology": {"graph": {"nodes": ["a", "b"], "links": [
            {"from": "a", "to": "b", "delay_ms": 10, "schedule": {"rate_mbps": {"points": [[0, 20], [5, 5]]}}}
        ]}},
        "flows": [{"name": "ab", "variant": "cubic", "from": "a", "to": "b"},
                  {"name": "ba", "variant": "cubic", "from": "b", "to": "a"}]
    });
    let r = run(&s);
    for (f, l) in r.flows.iter().zip(&r.links) {
        assert_eq!(l.rate_bps, 5_000_000, "{}", l.name);
        assert!(
            f.goodput_bps > 0.85 * 5e6 && f.goodput_bps < 5e6,
            "{}: {}",
            f.name,
            f.goodput_bps
        );
    }
}

#[test]
fn bad_schedules_are_refused_with_the_path_of_the_point() {
    let graph = |schedule: Value, rate: Option<f64>| {
        let mut link = json!({"from": "a", "to": "b", "delay_ms": 10, "schedule": schedule});
        if let Some(r) = rate {
            link["rate_mbps"] = json!(r);
        }
        json!({
            "duration_s": 5, "seed": 1,
            "topology": {"graph": {"nodes": ["a", "b"], "links": [{"from": "a", "to": "b", "rate_mbps": 10, "delay_ms": 1}, link]}},
            "flows": [{"from": "a", "to": "b"}]
        })
    };
    let path = |s: Value| run_json(&s.to_string()).unwrap_err().path().map(str::to_owned);
    let p = "$.topology.graph.links[1].schedule";
    let rate = |points: Value| graph(json!({"rate_mbps": {"points": points}}), None);
    assert_eq!(
        path(rate(json!([[0, 1], [2, 3], [1, 4]]))),
        Some(format!("{p}.rate_mbps.points[2][0]"))
    );
    assert_eq!(
        path(rate(json!([[0, 1], [1, -3]]))),
        Some(format!("{p}.rate_mbps.points[1][1]"))
    );
    assert_eq!(path(rate(json!([]))), Some(format!("{p}.rate_mbps.points")));
    assert_eq!(
        path(graph(json!({"rate_mbps": {"points": [[0, 1]]}}), Some(10.0))),
        Some(format!("{p}.rate_mbps"))
    );
    let mut with_trace = graph(json!({"rate_mbps": {"points": [[0, 1]]}}), None);
    with_trace["topology"]["graph"]["links"][1]["trace"] = json!({"file": "never-read.down"});
    assert_eq!(
        path(with_trace),
        Some(format!("{p}.rate_mbps")),
        "a trace sets the rate too"
    );
    assert_eq!(
        path(graph(
            json!({"extra_delay_ms": {"points": [[0, 1], [1, -1]]}}),
            Some(10.0)
        )),
        Some(format!("{p}.extra_delay_ms.points[1][1]"))
    );
    assert_eq!(
        path(graph(json!({"extra_delay_ms": {"points": [[0, 1]]}}), None)),
        Some("$.topology.graph.links[1].rate_mbps".to_owned()),
        "a delay schedule alone leaves the rate to give"
    );
    let loss = cbr_with_loss(json!({"type": "schedule", "rate": {"points": [[0, 0], [1, 1.5]]}}));
    assert_eq!(
        path(loss),
        Some("$.topology.dumbbell.bottleneck.loss.rate.points[1][1]".to_owned())
    );
}

#[test]
fn extreme_schedule_values_run_or_are_refused_but_never_panic() {
    for value in [0.0, 1e-300, 1e-9, 1e7, 1e300, -1.0] {
        for at in [0.0, 1e-300, 1.0, 1e300] {
            let schedule = json!({"rate_mbps": {"points": [[0, 10], [at, value]], "shape": "linear"},
                                  "extra_delay_ms": {"points": [[0, 0], [at, value]]}});
            let s = saturating(schedule, codel(), (0.0, 2.0));
            if let Err(e) = run_json(&s.to_string()) {
                assert!(e.path().is_some(), "{value} at {at}: {e}");
            }
        }
    }
}
