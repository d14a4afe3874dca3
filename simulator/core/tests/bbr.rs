//! BBRv1's switches beyond the draft (`tcp.bbr`, cc/bbr.rs) in whole runs: the ACK-aggregation
//! allowance under ACK compression, long-term bandwidth sampling under a policing loss
//! pattern, and why an HTTP flow never restarts from idle. Each compares the same
//! scenario with the switch on and off; the defaults (off) are what the golden snapshots hold.

use serde_json::{json, Value};
use tcpsim_core::RunResult;

fn run(s: &Value) -> RunResult {
    tcpsim_core::run_json(&s.to_string()).expect("scenario runs")
}

/// One `bbr` flow, 40 ms RTT, through a 10 Mb/s bottleneck with `buffer` packets of Drop-Tail,
/// ACK loss `ack_loss` on the way back, with `tcp` for the flow's TCP settings.
fn one_flow(tcp: Value, app: Value, buffer: u32, ack_loss: f64, duration_s: f64) -> Value {
    json!({
        "duration_s": duration_s, "warmup_s": 2, "seed": 3,
        "topology": {"dumbbell": {"bottleneck": {"rate_mbps": 10, "delay_ms": 10,
                                                 "queue": {"type": "droptail", "limit_pkts": buffer},
                                                 "reverse_loss": {"type": "uniform", "rate": ack_loss}}}},
        "flows": [{"name": "f", "variant": "bbr", "rtt_ms": 40, "app": app, "tcp": tcp}],
        "outputs": {"trace_interval_s": 0.005, "trace": ["cwnd", "queue"]}
    })
}

/// The flow's traced cwnd, (time, segments).
fn cwnd_trace(r: &RunResult) -> Vec<(f64, f64)> {
    let t = r.traces.as_ref().expect("traces");
    t.time_s
        .iter()
        .copied()
        .zip(t.flows[0].cwnd.as_ref().expect("cwnd traced").iter().copied())
        .collect()
}

fn mean_between(trace: &[(f64, f64)], from: f64, to: f64) -> f64 {
    let inside: Vec<f64> = trace.iter().filter(|p| p.0 >= from && p.0 < to).map(|p| p.1).collect();
    inside.iter().sum::<f64>() / inside.len() as f64
}

#[test]
fn under_ack_compression_the_aggregation_allowance_raises_bbrs_window_and_keeps_the_link_busy() {
    // Delayed ACKs and half of them lost on the way back: every surviving ACK is a stretch
    // ACK for about four segments, arriving in irregular bursts.
    let scenario = |bbr: Value| {
        one_flow(
            json!({"delayed_ack": true, "bbr": bbr}),
            json!({"type": "ftp"}),
            1000,
            0.5,
            20.0,
        )
    };
    let plain = run(&scenario(json!({})));
    let agg = run(&scenario(json!({"ack_aggregation": {}})));
    let (w_plain, w_agg) = (
        mean_between(&cwnd_trace(&plain), 3.0, 20.0),
        mean_between(&cwnd_trace(&agg), 3.0, 20.0),
    );
    eprintln!(
        "cwnd {w_plain:.1} -> {w_agg:.1}, util {:.3} -> {:.3}",
        plain.links[0].utilization, agg.links[0].utilization
    );
    // BDP: 10 Mb/s x 40 ms of 1040-byte packets = 48 segments; ProbeBW's target is 2 BDP + 6.
    assert!(w_plain < 2.0 * 48.0 + 10.0, "without the allowance: {w_plain:.1}");
    assert!(
        w_agg > w_plain + 4.0,
        "the excess the stretch ACKs delivered is added to the target: {w_plain:.1} -> {w_agg:.1}"
    );
    assert!(
        w_agg < w_plain + 48.0 * 0.1 / 0.04 + 1.0,
        "at most 100 ms of BtlBw more: {w_agg:.1}"
    );
    assert!(agg.links[0].utilization >= plain.links[0].utilization - 0.005);
}

#[test]
fn under_a_steady_fifth_of_segments_lost_long_term_sampling_paces_at_the_delivered_rate() {
    // tcpsim has no token-bucket policer; what Linux's detector looks for stands in: lossy
    // intervals (lost/delivered >= 50/256) at a consistent delivery rate. A fifth of the flow's
    // segments lost at random (retransmissions spared, so no timeouts) gives both; the detector
    // engages, as Linux's does on such a path, and paces at the delivered rate with gain 1:
    // fewer segments sent and dropped, and less goodput than BBR without it, which keeps
    // pacing at the bottleneck's rate.
    let scenario = |bbr: Value| {
        let tcp = json!({"bbr": bbr, "initial_cwnd_pkts": 10, "rtt_sampling": "timestamps"});
        let mut s = one_flow(tcp, json!({"type": "ftp"}), 1000, 0.0, 30.0);
        s["flows"][0]["loss"] = json!({"type": "bernoulli_events", "p": 0.2, "m": 1});
        s
    };
    let plain = run(&scenario(json!({})));
    let lt = run(&scenario(json!({"long_term_bw": {}})));
    let (f0, f1) = (&plain.flows[0], &lt.flows[0]);
    eprintln!(
        "drops {} -> {}, goodput {:.3} -> {:.3} Mb/s, timeouts {} {} fr {} {}",
        f0.drops,
        f1.drops,
        f0.goodput_bps / 1e6,
        f1.goodput_bps / 1e6,
        f0.timeouts,
        f1.timeouts,
        f0.fast_recoveries,
        f1.fast_recoveries
    );
    assert!(
        f1.goodput_bps < 0.9 * f0.goodput_bps,
        "{} vs {}",
        f1.goodput_bps,
        f0.goodput_bps
    );
    assert!(f1.drops < f0.drops, "{} vs {}", f1.drops, f0.drops);
}

#[test]
fn an_http_flow_never_restarts_from_idle_because_each_response_opens_a_fresh_connection() {
    // Linux's restart from idle needs a connection that goes quiet and sends again. tcpsim's
    // HTTP model opens a fresh connection (new window, new BBR) for every response, so the
    // switch changes nothing there; cc/bbr.rs's unit tests drive the restart directly.
    let scenario = |bbr: Value| {
        one_flow(
            json!({"bbr": bbr}),
            json!({"type": "http", "mean_file_bytes": 200_000, "shape": 2.0, "mean_think_s": 15.0}),
            1000,
            0.0,
            200.0,
        )
    };
    let plain = run(&scenario(json!({})));
    let restart = run(&scenario(json!({"idle_restart": true})));
    assert!(plain.flows[0].downloads >= 5, "{}", plain.flows[0].downloads);
    assert_eq!(
        serde_json::to_value(&plain.flows).unwrap(),
        serde_json::to_value(&restart.flows).unwrap()
    );
}
