//! Trace-driven links (issue 18): a link whose delivery opportunities follow a Mahimahi trace.
//!
//! The shared cellular traces (GPLv3, so not in this MIT repository) are read from
//! `$TCPLAB_TRACES`, by default the `shared/traces/cellular` folder beside the repository (as
//! `tests/services/test_presets.py` finds the shared papers); their README lists the mean
//! rates checked here. Without them that test is skipped, saying so.

use std::path::PathBuf;

use serde_json::{json, Value};
use tcpsim_core::metrics::LinkResult;
use tcpsim_core::{run_json, RunResult};

fn run(s: &Value) -> RunResult {
    run_json(&s.to_string()).unwrap_or_else(|e| panic!("{e}"))
}

fn bottleneck(r: &RunResult) -> &LinkResult {
    r.links.iter().find(|l| l.name == "bottleneck").unwrap()
}

/// Writes `text` to a file of its own under the target's temporary directory.
fn trace_file(name: &str, text: &str) -> String {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("traces");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_owned()
}

/// One UDP flow of 1500-byte packets at `mbps` through a trace bottleneck with `queue`,
/// measured from 1 s to 3 s.
fn cbr_over(trace: &str, queue: Value, mbps: f64) -> Value {
    json!({
        "duration_s": 3, "warmup_s": 1, "seed": 1,
        "topology": {"dumbbell": {"bottleneck": {"trace": {"file": trace}, "delay_ms": 0.25, "queue": queue}}},
        "flows": [{"name": "u", "type": "udp", "rtt_ms": 2,
                   "app": {"type": "cbr", "rate_mbps": mbps, "packet_bytes": 1500}}],
    })
}

#[test]
fn a_saturated_trace_link_delivers_exactly_the_traces_opportunities_under_every_kind_of_queue() {
    // A 7 ms period with three opportunities at 1 ms, one at 2 and one at 7: 5 per 7 ms. The
    // 2 s window (arrivals 0.25 ms after each opportunity, never on its edges) holds 285
    // whole periods (1425) and 5 ms more, where the window's edges put 5 more.
    let text = "1\n1\n1\n2\n7\n";
    let trace = trace_file("five-in-seven.down", text);
    let expected = opportunities_in(text, 0.25, (1000.0, 3000.0));
    assert_eq!(expected, 1430);
    for queue in [
        json!({"type": "droptail", "limit_pkts": 50}),
        json!({"type": "red", "limit_pkts": 50}),
        json!({"type": "codel", "limit_pkts": 50}),
        json!({"type": "fq_codel", "limit_pkts": 50}),
    ] {
        let r = run(&cbr_over(&trace, queue.clone(), 100.0));
        let l = bottleneck(&r);
        assert_eq!(l.packets, expected, "{queue}");
        assert_eq!(l.rate_bps, 5 * 1500 * 8 * 1000 / 7, "the trace's mean rate");
        assert!((l.utilization - 1.0).abs() < 0.01, "{queue}: {}", l.utilization);
    }
}

#[test]
fn below_the_traces_rate_every_packet_goes_through_and_the_link_is_partly_used() {
    // 12 Mb/s of opportunities; 3 Mb/s offered: a quarter of them carry a packet.
    let trace = trace_file("one-per-ms.down", "1\n");
    let r = run(&cbr_over(&trace, json!({"type": "droptail", "limit_pkts": 50}), 3.0));
    let l = bottleneck(&r);
    assert_eq!((l.drops, l.rate_bps), (0, 12_000_000));
    assert!((l.utilization - 0.25).abs() < 0.01, "{}", l.utilization);
    assert!(
        l.mean_queue_delay_s.unwrap() <= 0.001,
        "a packet waits at most for the next ms"
    );
}

/// The shared traces' folder, if it is here.
fn shared_traces() -> Option<PathBuf> {
    let beside_the_repository = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/traces/cellular");
    let dir = PathBuf::from(std::env::var("TCPLAB_TRACES").unwrap_or(beside_the_repository.into()));
    if dir.join("README.md").exists() {
        return Some(dir);
    }
    eprintln!("skipped: the Mahimahi cellular traces are not in {dir:?} (set TCPLAB_TRACES to their folder)");
    None
}

/// Opportunities of a trace file whose arrivals (`offset_ms` after them) fall in the window
/// [from_ms, to_ms), counting its loops.
fn opportunities_in(text: &str, offset_ms: f64, (from_ms, to_ms): (f64, f64)) -> u64 {
    let ms: Vec<f64> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.trim().parse().unwrap())
        .collect();
    let period = *ms.last().unwrap();
    (0..)
        .map(|pass| pass as f64 * period)
        .take_while(|start| start + offset_ms < to_ms)
        .map(|start| {
            ms.iter()
                .filter(|&&t| (from_ms..to_ms).contains(&(start + t + offset_ms)))
                .count() as u64
        })
        .sum()
}

#[test]
fn a_saturating_flow_gets_the_capacity_of_each_shared_cellular_trace() {
    let Some(dir) = shared_traces() else { return };
    // (trace, its README mean rate in Mb/s): the downlink carries the data and the uplink of
    // the same recording the ACKs, as mm-link is used.
    let traces = [
        ("TMobile-LTE-short.down", "TMobile-LTE-short.up", 16.70),
        ("TMobile-LTE-short.up", "TMobile-LTE-short.down", 13.32),
        ("Verizon-LTE-short.down", "Verizon-LTE-short.up", 5.03),
        ("Verizon-LTE-short.up", "Verizon-LTE-short.down", 5.95),
        ("ATT-LTE-driving.down", "ATT-LTE-driving.up", 5.17),
        ("ATT-LTE-driving.up", "ATT-LTE-driving.down", 0.83),
        ("TMobile-UMTS-driving.down", "TMobile-UMTS-driving.up", 2.02),
        ("TMobile-UMTS-driving.up", "TMobile-UMTS-driving.down", 0.94),
    ];
    let (warmup_s, duration_s, delay_ms) = (5.0, 25.0, 10.5);
    for (data, acks, readme_mbps) in traces {
        let (file, reverse) = (dir.join(data), dir.join(acks));
        let text = std::fs::read_to_string(&file).unwrap();
        let s = json!({
            "duration_s": duration_s, "warmup_s": warmup_s, "seed": 1,
            "topology": {"dumbbell": {"bottleneck": {
                "trace": {"file": file, "reverse_file": reverse}, "delay_ms": delay_ms,
                "queue": {"type": "droptail", "limit_pkts": 5000}}}},
            "flows": [{"name": "f", "variant": "cubic", "rtt_ms": 2.0 * delay_ms + 20.0,
                       "tcp": {"profile": "linux"}}],
        });
        let r = run(&s);
        let l = bottleneck(&r);
        // The trace's own mean rate, as its README gives it.
        assert!(
            (l.rate_bps as f64 / 1e6 - readme_mbps).abs() < 0.01,
            "{data}: {} b/s",
            l.rate_bps
        );
        // The capacity of the measured window: its opportunities, one full packet each (1448
        // bytes of payload in 1500). 5000 packets of buffer (mm-link's is unlimited) ride out
        // the traces' gaps without drops.
        let window = (warmup_s * 1e3, duration_s * 1e3);
        let capacity = opportunities_in(&text, delay_ms, window);
        let carried = l.packets as f64 / capacity as f64;
        // At least 97 %: TMobile-LTE-short.down's 2.4 % short is its uplink's 724 ms without
        // an opportunity at 22.7 s, which holds the ACKs while the queue drains.
        assert!(
            carried > 0.97 && carried <= 1.0,
            "{data}: {carried} of its opportunities"
        );
        let f = &r.flows[0];
        let payload_bps = capacity as f64 * 1448.0 * 8.0 / (duration_s - warmup_s);
        let share = f.goodput_bps / payload_bps;
        assert!(
            share > 0.97 && share < 1.01,
            "{data}: goodput {share} of the payload capacity"
        );
    }
}

fn error_of(s: &Value) -> (String, String) {
    let e = run_json(&s.to_string()).unwrap_err();
    (e.path().unwrap().to_owned(), e.to_string())
}

fn with_bottleneck(bottleneck: Value) -> Value {
    json!({"duration_s": 1, "topology": {"dumbbell": {"bottleneck": bottleneck}},
           "flows": [{"name": "f", "rtt_ms": 40}]})
}

#[test]
fn a_missing_empty_or_malformed_trace_is_refused_at_its_json_path() {
    let p = "$.topology.dumbbell.bottleneck.trace";
    let cases = [
        ("/nonexistent/dir/x.down".to_owned(), "cannot read trace file"),
        (trace_file("empty.down", ""), "no delivery opportunities"),
        (trace_file("blank.down", "\n \n"), "no delivery opportunities"),
        (
            trace_file("words.down", "1\n2\nthree\n"),
            "line 3: expected a whole number",
        ),
        (trace_file("backwards.down", "1\n5\n4\n"), "line 3: 4 ms is before"),
        (trace_file("instant.down", "0\n0\n"), "lasts 0 ms"),
    ];
    for (file, words) in cases {
        let (path, message) = error_of(&with_bottleneck(json!({"trace": {"file": file}, "delay_ms": 5})));
        assert_eq!(path, format!("{p}.file"), "{message}");
        assert!(message.contains(words), "{message}");
    }
    let good = trace_file("good.down", "1\n");
    let (path, message) = error_of(&with_bottleneck(
        json!({"trace": {"file": good, "reverse_file": "/nonexistent/y.up"}, "delay_ms": 5}),
    ));
    assert_eq!(path, format!("{p}.reverse_file"), "{message}");
    let (path, _) = error_of(&with_bottleneck(json!({"trace": {"file": ""}, "delay_ms": 5})));
    assert_eq!(path, format!("{p}.file"));
}

#[test]
fn a_link_takes_a_rate_or_a_trace_but_not_both_nor_neither() {
    let good = trace_file("good.down", "1\n");
    let (path, message) = error_of(&with_bottleneck(
        json!({"rate_mbps": 10, "trace": {"file": good}, "delay_ms": 5}),
    ));
    assert_eq!(path, "$.topology.dumbbell.bottleneck.trace");
    assert!(message.contains("not both"), "{message}");
    let (path, message) = error_of(&with_bottleneck(json!({"delay_ms": 5})));
    assert_eq!(path, "$.topology.dumbbell.bottleneck.rate_mbps");
    assert!(message.contains("required"), "{message}");
    let graph = json!({"duration_s": 1,
        "topology": {"graph": {"nodes": ["a", "b"], "links": [
            {"from": "a", "to": "b", "rate_mbps": 10, "delay_ms": 1},
            {"from": "b", "to": "a", "trace": {"file": "/nonexistent/z"}, "delay_ms": 1}]}},
        "flows": [{"name": "f", "from": "a", "to": "b"}]});
    assert_eq!(error_of(&graph).0, "$.topology.graph.links[1].trace.file");
}

#[test]
fn a_graph_link_can_follow_a_trace_each_way() {
    let down = trace_file("graph.down", "1\n1\n2\n");
    let graph = json!({"duration_s": 3, "warmup_s": 1,
        "topology": {"graph": {"nodes": ["a", "b"], "links": [
            {"name": "cell", "from": "a", "to": "b", "trace": {"file": down}, "delay_ms": 10,
             "queue": {"type": "pie"}}]}},
        "flows": [{"name": "f", "from": "a", "to": "b", "variant": "cubic",
                   "tcp": {"profile": "linux"}}]});
    let r = run(&graph);
    let cell = r.links.iter().find(|l| l.name == "cell").unwrap();
    assert_eq!(cell.rate_bps, 18_000_000);
    assert!(cell.utilization > 0.9, "{}", cell.utilization);
}
