//! Behaviour of the variants on scripted drops: what each should do by its RFC or paper.
//!
//! One flow sends a 300-segment file through a 10 Mb/s dumbbell with 100 ms round-trip
//! propagation and a queue too large to drop anything; a `scheduled` loss module on the
//! flow's path drops exactly the packets a test names. With ssthresh at 40 segments the
//! window is about 40 when the drops hit, so drops between packets 100 and 140 fall in one
//! window. The download time against a loss-free run shows how long recovery took.

use serde_json::{json, Value};
use tcpsim_core::metrics::FlowResult;
use tcpsim_core::RunResult;

const RTT_S: f64 = 0.1;

fn scenario(variant: &str, drops: &[u64], tcp: Value) -> Value {
    let mut tcp_cfg = json!({"initial_ssthresh_pkts": 40, "initial_cwnd_pkts": 2});
    if let (Some(base), Some(extra)) = (tcp_cfg.as_object_mut(), tcp.as_object()) {
        base.extend(extra.clone());
    }
    json!({
        "duration_s": 30, "seed": 1,
        "topology": {"dumbbell": {"bottleneck": {"rate_mbps": 10, "delay_ms": 10,
                                                 "queue": {"type": "droptail", "limit_pkts": 10000}}}},
        "flows": [{"name": "f", "variant": variant, "rtt_ms": RTT_S * 1000.0,
                   "app": {"type": "ftp", "bytes": 300_000},
                   "tcp": tcp_cfg,
                   "loss": {"type": "scheduled", "packets": drops}}],
        "outputs": {"trace_interval_s": 0.005, "trace": ["cwnd"]}
    })
}

fn run(s: &Value) -> RunResult {
    tcpsim_core::run_json(&s.to_string()).expect("scenario runs")
}

fn flow(r: &RunResult) -> &FlowResult {
    &r.flows[0]
}

fn download_time(r: &RunResult) -> f64 {
    flow(r).download_time_s.expect("the file finished downloading")
}

/// Extra time a variant needed over the same download without loss, in round trips.
fn recovery_rtts(variant: &str, drops: &[u64], tcp: Value) -> (RunResult, f64) {
    let lossless = download_time(&run(&scenario(variant, &[], tcp.clone())));
    let r = run(&scenario(variant, drops, tcp));
    let extra = (download_time(&r) - lossless) / RTT_S;
    (r, extra)
}

/// Smallest cwnd seen after the first loss (the trace starts at t = 0).
fn min_cwnd_after(r: &RunResult, after_s: f64) -> f64 {
    let t = r.traces.as_ref().unwrap();
    let cwnd = t.flows[0].cwnd.as_ref().unwrap();
    t.time_s
        .iter()
        .zip(cwnd)
        .filter(|(t, _)| **t > after_s)
        .map(|(_, c)| *c)
        .fold(f64::INFINITY, f64::min)
}

const ONE_DROP: &[u64] = &[100];
const THREE_DROPS: &[u64] = &[100, 104, 108];

#[test]
fn with_one_drop_tahoe_slow_starts_from_one_segment() {
    let r = run(&scenario("tahoe", ONE_DROP, json!({})));
    let f = flow(&r);
    assert_eq!((f.fast_retransmits, f.fast_recoveries, f.timeouts), (1, 0, 0));
    assert_eq!(min_cwnd_after(&r, 0.5), 1.0);
}

#[test]
fn with_one_drop_reno_and_both_newrenos_fast_recover_at_half_the_window() {
    for variant in ["reno", "newreno-sbs", "newreno-impatient", "sack"] {
        let (r, extra) = recovery_rtts(variant, ONE_DROP, json!({}));
        let f = flow(&r);
        assert_eq!((f.fast_recoveries, f.timeouts, f.retransmits), (1, 0, 1), "{variant}");
        let floor = min_cwnd_after(&r, 0.5);
        assert!(
            (15.0..=25.0).contains(&floor),
            "{variant}: cwnd fell to {floor}, expected about half of ~40"
        );
        let (_, tahoe_extra) = recovery_rtts("tahoe", ONE_DROP, json!({}));
        assert!(
            extra + 1.0 < tahoe_extra,
            "{variant} lost {extra:.2} RTTs, tahoe {tahoe_extra:.2}"
        );
    }
}

#[test]
fn with_three_drops_in_a_window_reno_leaves_recovery_on_the_partial_ack_and_suffers() {
    let (reno, reno_extra) = recovery_rtts("reno", THREE_DROPS, json!({}));
    let (_, newreno_extra) = recovery_rtts("newreno-sbs", THREE_DROPS, json!({}));
    let f = flow(&reno);
    // Out of recovery after the first hole, Reno needs further fast retransmits (halving
    // again) or a timeout for the other two.
    assert!(f.fast_retransmits > 1 || f.timeouts > 0, "{f:?}");
    assert!(
        reno_extra > newreno_extra + 1.0,
        "reno {reno_extra:.2} RTTs vs newreno {newreno_extra:.2}"
    );
}

/// How long the fast recovery lasted, in round trips (one recovery, ended by a full ACK).
fn recovery_length_rtts(f: &FlowResult) -> f64 {
    f.mean_recovery_s.expect("a completed recovery") / RTT_S
}

#[test]
fn with_three_drops_in_a_window_newreno_repairs_one_hole_per_rtt_without_a_timeout() {
    let r = run(&scenario("newreno-sbs", THREE_DROPS, json!({})));
    let f = flow(&r);
    assert_eq!((f.fast_recoveries, f.timeouts, f.retransmits), (1, 0, 3), "{f:?}");
    // Three holes, one round trip each (plus queueing behind the window).
    let rtts = recovery_length_rtts(f);
    assert!((2.5..3.8).contains(&rtts), "{rtts:.2} RTTs");
}

#[test]
fn with_three_drops_in_a_window_sack_repairs_them_in_about_one_rtt() {
    let r = run(&scenario("sack", THREE_DROPS, json!({})));
    let f = flow(&r);
    assert_eq!((f.fast_recoveries, f.timeouts, f.retransmits), (1, 0, 3), "{f:?}");
    let rtts = recovery_length_rtts(f);
    assert!(rtts < 1.6, "{rtts:.2} RTTs");
    let one = recovery_length_rtts(flow(&run(&scenario("sack", ONE_DROP, json!({})))));
    assert!(rtts - one < 0.3, "three holes took {rtts:.2} RTTs, one hole {one:.2}");
}

#[test]
fn with_many_drops_and_rto_between_two_and_three_rtts_impatient_times_out_and_slow_but_steady_does_not() {
    // RTO settles at its 250 ms floor: 2.5 round trips (paper 000 §II-C).
    let rto = json!({"min_rto_s": 0.25, "timer_granularity_s": 0.001});
    let drops: Vec<u64> = (100..116).step_by(2).collect(); // 8 holes in one window
    let sbs = run(&scenario("newreno-sbs", &drops, rto.clone()));
    let imp = run(&scenario("newreno-impatient", &drops, rto));
    assert_eq!(flow(&sbs).timeouts, 0, "{:?}", flow(&sbs));
    assert_eq!(flow(&sbs).retransmits, 8);
    assert!(flow(&imp).timeouts >= 1, "{:?}", flow(&imp));
    assert!(
        min_cwnd_after(&imp, 0.5) == 1.0,
        "the timeout collapses Impatient's window"
    );
}

#[test]
fn with_a_few_drops_impatient_behaves_exactly_like_slow_but_steady() {
    // Below m* (paper 000 §III-C) the timer never fires, so the two variants are one.
    let rto = json!({"min_rto_s": 0.25, "timer_granularity_s": 0.001});
    let sbs = run(&scenario("newreno-sbs", THREE_DROPS, rto.clone()));
    let imp = run(&scenario("newreno-impatient", THREE_DROPS, rto));
    assert_eq!(flow(&imp).timeouts, 0);
    assert_eq!(download_time(&sbs), download_time(&imp));
    assert_eq!(flow(&sbs).packets_sent, flow(&imp).packets_sent);
}

#[test]
fn vegas_keeps_between_alpha_and_beta_packets_queued_on_a_lossless_bottleneck() {
    let s = json!({
        "duration_s": 40, "warmup_s": 10, "seed": 1,
        "topology": {"dumbbell": {"bottleneck": {"rate_mbps": 10, "delay_ms": 10,
                                                 "queue": {"type": "droptail", "limit_pkts": 10000}}}},
        "flows": [{"name": "v", "variant": "vegas", "rtt_ms": 50,
                   "tcp": {"vegas": {"alpha": 1, "beta": 3, "gamma": 1}}}]
    });
    let r = run(&s);
    let bottleneck = &r.links[0];
    assert_eq!(bottleneck.name, "bottleneck");
    assert_eq!(bottleneck.drops, 0);
    assert!(
        (1.0..=3.0).contains(&bottleneck.mean_queue_pkts),
        "mean queue {:.2} packets, expected between alpha = 1 and beta = 3",
        bottleneck.mean_queue_pkts
    );
    assert!(
        bottleneck.utilization > 0.95,
        "Vegas still fills the link: {}",
        bottleneck.utilization
    );
}

#[test]
fn reno_fills_a_lossless_bottleneck_queue_until_it_overflows_where_vegas_does_not() {
    let s = |variant: &str| {
        json!({
            "duration_s": 30, "warmup_s": 5,
            "topology": {"dumbbell": {"bottleneck": {"rate_mbps": 10, "delay_ms": 10,
                                                     "queue": {"type": "droptail", "limit_pkts": 50}}}},
            "flows": [{"variant": variant, "rtt_ms": 50}]
        })
    };
    assert!(run(&s("reno")).links[0].drops > 0);
    assert_eq!(run(&s("vegas")).links[0].drops, 0);
}

#[test]
fn with_a_window_of_three_limited_transmit_turns_a_timeout_into_a_fast_retransmit() {
    // cwnd stays near 3: one loss leaves two duplicate ACKs, one short of the threshold.
    let tcp = |lt: bool| json!({"initial_cwnd_pkts": 3, "initial_ssthresh_pkts": 3, "limited_transmit": lt});
    let without = run(&scenario("newreno-sbs", &[4], tcp(false)));
    let with = run(&scenario("newreno-sbs", &[4], tcp(true)));
    assert_eq!(
        (flow(&without).timeouts, flow(&without).fast_retransmits),
        (1, 0),
        "{:?}",
        flow(&without)
    );
    assert_eq!(
        (flow(&with).timeouts, flow(&with).fast_retransmits),
        (0, 1),
        "{:?}",
        flow(&with)
    );
}

// ---- CUBIC (RFC 9438) --------------------------------------------------------------------

/// An endless CUBIC (or other) flow on a dumbbell with a queue too large to drop, a loss module
/// on its path, and cwnd and ssthresh traced every `trace_s`.
fn long_flow(
    variant: &str,
    rate_mbps: f64,
    rtt_ms: f64,
    duration_s: f64,
    loss: Value,
    tcp: Value,
    trace_s: f64,
) -> Value {
    json!({
        "duration_s": duration_s, "seed": 1,
        "topology": {"dumbbell": {"bottleneck": {"rate_mbps": rate_mbps, "delay_ms": rtt_ms / 10.0,
                                                 "queue": {"type": "droptail", "limit_pkts": 100000}}}},
        "flows": [{"name": "f", "variant": variant, "rtt_ms": rtt_ms, "tcp": tcp, "loss": loss}],
        "outputs": {"trace_interval_s": trace_s, "trace": ["cwnd", "ssthresh"]}
    })
}

/// The traced (time, cwnd) pairs of the first flow.
fn cwnd_trace(r: &RunResult) -> Vec<(f64, f64)> {
    let t = r.traces.as_ref().unwrap();
    t.time_s
        .iter()
        .copied()
        .zip(t.flows[0].cwnd.as_ref().unwrap().iter().copied())
        .collect()
}

/// The first reduction of the window: (its time, the largest window before it).
fn first_reduction(trace: &[(f64, f64)]) -> (f64, f64) {
    let i = trace
        .windows(2)
        .position(|w| w[1].1 < w[0].1 - 0.5)
        .expect("the window is reduced")
        + 1;
    (trace[i].0, trace[..i].iter().map(|p| p.1).fold(0.0, f64::max))
}

fn cwnd_at(trace: &[(f64, f64)], t: f64) -> f64 {
    trace.iter().find(|p| p.0 >= t - 1e-9).expect("traced that far").1
}

#[test]
fn with_one_drop_cubic_reduces_its_window_to_seven_tenths_not_half() {
    let r = run(&scenario("cubic", ONE_DROP, json!({})));
    let f = flow(&r);
    assert_eq!((f.fast_recoveries, f.timeouts, f.retransmits), (1, 0, 1), "{f:?}");
    let (at, peak) = first_reduction(&cwnd_trace(&r));
    let floor = min_cwnd_after(&r, at - 0.001);
    let ratio = floor / peak;
    assert!(
        (0.67..=0.73).contains(&ratio),
        "cwnd {peak:.1} -> {floor:.1}: {ratio:.3}, expected β_cubic = 0.7"
    );
}

#[test]
fn with_one_drop_cubic_configured_with_beta_one_half_reduces_its_window_to_half() {
    let r = run(&scenario("cubic", ONE_DROP, json!({"cubic": {"beta": 0.5}})));
    let f = flow(&r);
    assert_eq!((f.fast_recoveries, f.timeouts, f.retransmits), (1, 0, 1), "{f:?}");
    let (at, peak) = first_reduction(&cwnd_trace(&r));
    let ratio = min_cwnd_after(&r, at - 0.001) / peak;
    assert!(
        (0.47..=0.53).contains(&ratio),
        "{ratio:.3}, expected the configured β 0.5"
    );
}

#[test]
fn after_a_loss_cubic_grows_concave_up_to_the_old_window_then_convex_beyond_it() {
    // 100 Mb/s and 100 ms: the window (~200) stays far below the path's 1200 packets, so one
    // scheduled drop is the only loss, and cubic growth outpaces the Reno-friendly estimate.
    let s = long_flow(
        "cubic",
        100.0,
        100.0,
        14.0,
        json!({"type": "scheduled", "packets": [1000]}),
        json!({"initial_ssthresh_pkts": 200}),
        0.01,
    );
    let r = run(&s);
    assert_eq!((flow(&r).fast_recoveries, flow(&r).timeouts), (1, 0));
    let trace = cwnd_trace(&r);
    let (at, w_max) = first_reduction(&trace);
    let k = (w_max * (1.0 - 0.7) / 0.4).cbrt(); // RFC 9438 eq. 2 with cwnd_epoch = 0.7·W_max
    let w = |x: f64| cwnd_at(&trace, at + x * k);
    let (w0, w_half, w_k, w_3half, w_2) = (w(0.05), w(0.5), w(1.0), w(1.5), w(2.0));
    assert!(
        w_half - w0 > 2.0 * (w_k - w_half),
        "concave below W_max: {w0:.1}, {w_half:.1}, {w_k:.1}"
    );
    assert!(
        (w_k - w_max).abs() < 0.04 * w_max,
        "W_max {w_max:.1} reached about K = {k:.2} s later: {w_k:.1}"
    );
    assert!(
        w_2 - w_3half > 2.0 * (w_3half - w_k),
        "convex above W_max: {w_k:.1}, {w_3half:.1}, {w_2:.1}"
    );
}

#[test]
fn on_a_short_rtt_path_cubic_grows_in_its_reno_friendly_region() {
    // 4 ms RTT: K is seconds, hundreds of round trips, so the cubic curve barely moves in 20
    // round trips while W_est adds α_cubic = 0.53 segments per round trip (RFC 9438 §4.3).
    let rtt = 0.004;
    let s = long_flow(
        "cubic",
        100.0,
        rtt * 1000.0,
        2.0,
        json!({"type": "scheduled", "packets": [300]}),
        json!({"initial_ssthresh_pkts": 40}),
        0.001,
    );
    let r = run(&s);
    let trace = cwnd_trace(&r);
    let (at, w_max) = first_reduction(&trace);
    let start = at + 2.0 * rtt; // recovery over
    let grown = cwnd_at(&trace, start + 20.0 * rtt) - cwnd_at(&trace, start);
    let k = (w_max * 0.3 / 0.4).cbrt();
    let cubic_only = 0.4 * ((22.0 * rtt - k).powi(3) - (2.0 * rtt - k).powi(3)) + 1.0;
    assert!(
        (0.35 * 20.0..=0.75 * 20.0).contains(&grown),
        "grew {grown:.2} segments in 20 round trips"
    );
    assert!(
        grown > 3.0 * cubic_only,
        "{grown:.2} vs the cubic curve's {cubic_only:.2}"
    );
}

#[test]
fn after_a_timeout_cubic_slow_starts_to_seven_tenths_of_its_window_and_grows_on() {
    let s = long_flow(
        "cubic",
        10.0,
        100.0,
        6.0,
        json!({"type": "outage", "start_s": 1.5, "end_s": 2.0}),
        json!({"initial_ssthresh_pkts": 40}),
        0.005,
    );
    let r = run(&s);
    let f = flow(&r);
    assert!(f.timeouts >= 1 && f.fast_recoveries == 0, "{f:?}");
    let trace = cwnd_trace(&r);
    let before = cwnd_at(&trace, 1.5);
    assert_eq!(min_cwnd_after(&r, 1.5), 1.0, "RFC 5681: one segment after a timeout");
    let t = r.traces.as_ref().unwrap();
    let ssthresh = t.flows[0].ssthresh.as_ref().unwrap().last().unwrap().expect("finite");
    assert!(
        (ssthresh / before - 0.7).abs() < 0.03,
        "ssthresh {ssthresh:.1} after a window of {before:.1}"
    );
    let end = trace.last().unwrap().1;
    assert!(end > ssthresh + 2.0, "grows on past ssthresh: {end:.1}");
}

#[test]
fn with_three_drops_in_a_window_cubic_repairs_them_with_sack_in_one_reduction() {
    let r = run(&scenario("cubic", THREE_DROPS, json!({})));
    let f = flow(&r);
    assert_eq!((f.fast_recoveries, f.timeouts, f.retransmits), (1, 0, 3), "{f:?}");
    assert!(recovery_length_rtts(f) < 1.6, "{:.2} RTTs", recovery_length_rtts(f));
    let (at, peak) = first_reduction(&cwnd_trace(&r));
    let ratio = min_cwnd_after(&r, at - 0.001) / peak;
    assert!(
        (0.67..=0.73).contains(&ratio),
        "one reduction to 0.7, not one per hole: {ratio:.3}"
    );
    // With SACK off CUBIC recovers as NewReno: one hole per round trip, still one reduction.
    let r = run(&scenario("cubic", THREE_DROPS, json!({"sack": false})));
    let f = flow(&r);
    assert_eq!((f.fast_recoveries, f.timeouts, f.retransmits), (1, 0, 3), "{f:?}");
    assert!(recovery_length_rtts(f) > 2.5, "{:.2} RTTs", recovery_length_rtts(f));
}

// ---- Paper 003's recovery family: FACK, Rate-Halving, SSDR; and Pseudo-Rate ---------------

/// (time, cwnd) samples of the first flow's trace.
fn cwnd_samples(r: &RunResult) -> Vec<(f64, f64)> {
    let t = r.traces.as_ref().unwrap();
    t.time_s
        .iter()
        .copied()
        .zip(t.flows[0].cwnd.as_ref().unwrap().iter().copied())
        .collect()
}

/// When the window first fell, and the largest window before that.
fn first_fall(samples: &[(f64, f64)]) -> (f64, f64) {
    let i = samples
        .windows(2)
        .position(|w| w[1].1 < w[0].1)
        .expect("the window fell")
        + 1;
    (samples[i].0, samples[..i].iter().map(|s| s.1).fold(0.0, f64::max))
}

#[test]
fn without_loss_fack_and_rate_halving_grow_exactly_as_reno_does() {
    let reno = run(&scenario("reno", &[], json!({})));
    for variant in ["fack", "rate-halving"] {
        let r = run(&scenario(variant, &[], json!({})));
        assert_eq!(download_time(&r), download_time(&reno), "{variant}");
        assert_eq!(cwnd_samples(&r), cwnd_samples(&reno), "{variant}");
    }
}

#[test]
fn smooth_start_reaches_ssthresh_later_than_slow_start_and_sooner_than_congestion_avoidance() {
    let reached = |variant: &str, tcp: Value| {
        let mut s = scenario(variant, &[], tcp);
        s["flows"][0]["app"]["bytes"] = json!(3_000_000);
        let r = run(&s);
        cwnd_samples(&r)
            .iter()
            .find(|s| s.1 >= 40.0)
            .expect("cwnd reaches 40")
            .0
    };
    let slow = reached("reno", json!({}));
    let smooth = reached("ssdr", json!({}));
    // Congestion avoidance all the way from the quarter of ssthresh where smooth start slows.
    let avoidance = reached("reno", json!({"initial_cwnd_pkts": 10, "initial_ssthresh_pkts": 10}));
    assert!(
        smooth > slow + 5.0 * RTT_S,
        "smooth start {smooth:.2} s, slow start {slow:.2} s"
    );
    assert!(
        smooth < avoidance,
        "smooth start {smooth:.2} s, avoidance {avoidance:.2} s"
    );
}

#[test]
fn pseudo_rate_keeps_about_its_queue_length_of_packets_queued_where_reno_overflows_the_buffer() {
    let s = |variant: &str| {
        json!({
            "duration_s": 30, "warmup_s": 10,
            "topology": {"dumbbell": {"bottleneck": {"rate_mbps": 10, "delay_ms": 10,
                                                     "queue": {"type": "droptail", "limit_pkts": 50}}}},
            "flows": [{"variant": variant, "rtt_ms": 50}]
        })
    };
    assert!(run(&s("reno")).links[0].drops > 0);
    let r = run(&s("pseudo-rate"));
    let bottleneck = &r.links[0];
    assert_eq!(bottleneck.drops, 0);
    // The window bound keeps q = 2 of its segments queued.
    assert!(
        (1.0..=3.0).contains(&bottleneck.mean_queue_pkts),
        "mean queue {:.2}",
        bottleneck.mean_queue_pkts
    );
    assert!(bottleneck.utilization > 0.95, "{}", bottleneck.utilization);
}

#[test]
fn pseudo_rates_queue_length_is_the_backlog_it_keeps_at_the_bottleneck() {
    let mean_queue = |q: f64| {
        let r = run(&json!({
            "duration_s": 30, "warmup_s": 10,
            "topology": {"dumbbell": {"bottleneck": {"rate_mbps": 10, "delay_ms": 10,
                                                     "queue": {"type": "droptail", "limit_pkts": 50}}}},
            "flows": [{"variant": "pseudo-rate", "rtt_ms": 50, "tcp": {"pseudo_rate": {"queue_pkts": q}}}]
        }));
        assert_eq!(r.links[0].drops, 0, "q {q}");
        r.links[0].mean_queue_pkts
    };
    for q in [2.0, 6.0, 12.0] {
        let mean = mean_queue(q);
        assert!((q - 1.0..=q + 1.0).contains(&mean), "q {q}: mean queue {mean:.2}");
    }
}

#[test]
fn with_one_drop_fack_rate_halving_ssdr_and_pseudo_rate_fast_recover_to_half_the_window() {
    for variant in ["fack", "rate-halving", "ssdr", "pseudo-rate"] {
        let r = run(&scenario(variant, ONE_DROP, json!({})));
        let f = flow(&r);
        assert_eq!(
            (f.fast_recoveries, f.timeouts, f.retransmits),
            (1, 0, 1),
            "{variant}: {f:?}"
        );
        let (at, peak) = first_fall(&cwnd_samples(&r));
        let ratio = min_cwnd_after(&r, at - 0.001) / peak;
        assert!(
            (0.4..=0.55).contains(&ratio),
            "{variant}: fell to {ratio:.2} of {peak:.1}"
        );
    }
}

#[test]
fn with_three_drops_in_a_window_fack_and_rate_halving_repair_them_in_about_one_rtt() {
    for variant in ["fack", "rate-halving"] {
        let r = run(&scenario(variant, THREE_DROPS, json!({})));
        let f = flow(&r);
        assert_eq!(
            (f.fast_recoveries, f.timeouts, f.retransmits),
            (1, 0, 3),
            "{variant}: {f:?}"
        );
        let rtts = recovery_length_rtts(f);
        assert!(rtts < 1.6, "{variant}: {rtts:.2} RTTs");
    }
    let (_, reno_extra) = recovery_rtts("reno", THREE_DROPS, json!({}));
    let (_, fack_extra) = recovery_rtts("fack", THREE_DROPS, json!({}));
    assert!(
        fack_extra + 5.0 < reno_extra,
        "fack lost {fack_extra:.2} RTTs, reno {reno_extra:.2}"
    );
}

#[test]
fn with_three_drops_in_a_window_ssdr_repairs_one_hole_per_rtt_without_sack_or_a_timeout() {
    let r = run(&scenario("ssdr", THREE_DROPS, json!({"sack": false})));
    let f = flow(&r);
    assert_eq!((f.fast_recoveries, f.timeouts, f.retransmits), (1, 0, 3), "{f:?}");
    // A variable-length recovery: three holes, one round trip each, as NewReno.
    let rtts = recovery_length_rtts(f);
    assert!((2.5..3.8).contains(&rtts), "{rtts:.2} RTTs");
    // Reno, on the same drops, leaves recovery on the first partial ACK and times out.
    let reno = run(&scenario("reno", THREE_DROPS, json!({})));
    assert!(flow(&reno).timeouts > 0, "{:?}", flow(&reno));
}

#[test]
fn with_three_drops_in_a_window_pseudo_rate_recovers_as_reno_and_vegas_do() {
    // Pseudo-Rate changes Vegas's avoidance, not its loss recovery (Reno's, paper 003 §3.4).
    for variant in ["pseudo-rate", "vegas", "reno"] {
        let f = flow(&run(&scenario(variant, THREE_DROPS, json!({})))).clone();
        assert!(f.timeouts > 0 || f.fast_retransmits > 1, "{variant}: {f:?}");
    }
}

#[test]
fn with_eight_drops_in_a_window_and_a_tight_rto_fack_rate_halving_and_ssdr_do_not_time_out() {
    let rto = json!({"min_rto_s": 0.25, "timer_granularity_s": 0.001});
    let drops: Vec<u64> = (100..116).step_by(2).collect();
    for variant in ["fack", "rate-halving", "ssdr"] {
        let r = run(&scenario(variant, &drops, rto.clone()));
        let f = flow(&r);
        assert_eq!(
            (f.fast_recoveries, f.timeouts, f.retransmits),
            (1, 0, 8),
            "{variant}: {f:?}"
        );
    }
    let reno = run(&scenario("reno", &drops, rto));
    assert!(flow(&reno).timeouts > 0);
}

#[test]
fn after_a_timeout_each_restarts_from_one_segment_and_only_ssdr_takes_longer_than_doubling_back_to_ssthresh() {
    let outage = json!({"type": "outage", "start_s": 0.6, "end_s": 1.0});
    let s = |variant: &str| {
        let mut s = scenario(variant, &[], json!({}));
        s["flows"][0]["loss"] = outage.clone();
        s
    };
    // From the last restart at one segment to the slow-start threshold: (seconds, ssthresh).
    let back_to_ssthresh = |r: &RunResult| {
        let ssthresh = r.traces.as_ref().unwrap().flows[0].ssthresh.clone().unwrap();
        let samples = cwnd_samples(r);
        let start = samples.iter().rposition(|s| s.1 == 1.0).expect("cwnd = 1");
        let back = (start..samples.len()).find(|&i| ssthresh[i].is_some_and(|th| samples[i].1 >= th - 0.5));
        let back = back.expect("back to ssthresh");
        (samples[back].0 - samples[start].0, ssthresh[back].unwrap())
    };
    for variant in ["reno", "fack", "rate-halving", "ssdr", "pseudo-rate"] {
        let mut sc = s(variant);
        sc["outputs"]["trace"] = json!(["cwnd", "ssthresh"]);
        let r = run(&sc);
        let f = flow(&r);
        assert!(f.timeouts >= 1, "{variant}: {f:?}");
        assert_eq!(min_cwnd_after(&r, 0.6), 1.0, "{variant}");
        assert!(f.download_time_s.is_some(), "{variant} finishes");
        // Slow start doubles per round trip: log2(ssthresh) round trips and the odd one.
        let (ramp, ssthresh) = back_to_ssthresh(&r);
        let doubling = (ssthresh.log2() + 1.5) * RTT_S;
        if variant == "ssdr" {
            assert!(ramp > doubling + RTT_S, "{variant}: {ramp:.2} s back to {ssthresh:.1}");
        } else {
            assert!(ramp < doubling, "{variant}: {ramp:.2} s back to {ssthresh:.1}");
        }
    }
}

// Where paper 003 says they differ.

#[test]
fn fack_starts_recovery_when_the_receiver_holds_three_segments_past_two_holes_where_sack_times_out() {
    // A window of four: two drops leave two duplicate ACKs, one short of the threshold; FACK
    // sees snd.fack − snd.una = 4 > 3 on the second (paper 003 §3.2, "earlier fast
    // retransmission").
    let tcp = json!({"initial_cwnd_pkts": 4, "initial_ssthresh_pkts": 4});
    for variant in ["sack", "newreno-sbs"] {
        let f = flow(&run(&scenario(variant, &[5, 6], tcp.clone()))).clone();
        assert_eq!((f.timeouts, f.fast_retransmits), (1, 0), "{variant}: {f:?}");
    }
    for variant in ["fack", "rate-halving"] {
        let f = flow(&run(&scenario(variant, &[5, 6], tcp.clone()))).clone();
        assert_eq!((f.timeouts, f.fast_retransmits), (0, 1), "{variant}: {f:?}");
    }
}

#[test]
fn rate_halving_and_ssdr_bring_the_window_down_over_the_recovery_where_fack_halves_it_at_once() {
    // Samples strictly between the old window and the new one: FACK jumps; the others step
    // down half a segment per ACK (paper 003 §3.2–3.3, "smooth reduction of cwnd").
    let in_between = |variant: &str| {
        let r = run(&scenario(variant, ONE_DROP, json!({})));
        let samples = cwnd_samples(&r);
        let (at, peak) = first_fall(&samples);
        let floor = min_cwnd_after(&r, at - 0.001);
        let descent = samples
            .iter()
            .skip_while(|s| s.0 < at)
            .take_while(|s| s.1 > floor + 0.5);
        let n = descent.filter(|s| s.1 < peak - 1.0).count();
        (n, peak, floor)
    };
    let (fack, ..) = in_between("fack");
    assert_eq!(fack, 0);
    for variant in ["rate-halving", "ssdr"] {
        let (n, peak, floor) = in_between(variant);
        assert!(n >= 3, "{variant}: {n} samples between {floor:.1} and {peak:.1}");
    }
}

#[test]
fn when_a_second_connection_arrives_pseudo_rate_drops_the_old_window_at_once_and_vegas_a_segment_a_round() {
    // Paper 003 §4.3 and Table 3: Pseudo-Rate's old connection falls straight to its bound and
    // the new one does better than it; Vegas's old one comes down linearly and keeps more.
    let s = |variant: &str| {
        json!({
            "duration_s": 50, "warmup_s": 10,
            "topology": {"dumbbell": {"bottleneck": {"rate_mbps": 10, "delay_ms": 10,
                                                     "queue": {"type": "droptail", "limit_pkts": 50}}}},
            "flows": [{"name": "old", "variant": variant, "rtt_ms": 60},
                      {"name": "new", "variant": variant, "rtt_ms": 60, "start_s": 10}],
            "outputs": {"trace_interval_s": 0.1, "trace": ["cwnd"]}
        })
    };
    let old_window_kept = |r: &RunResult| {
        let samples = cwnd_samples(r);
        let at = |t: f64| samples.iter().find(|s| s.0 >= t - 1e-9).unwrap().1;
        at(10.6) / at(9.9)
    };
    let pr = run(&s("pseudo-rate"));
    let vegas = run(&s("vegas"));
    assert!(
        old_window_kept(&pr) < 0.75,
        "pseudo-rate kept {:.2}",
        old_window_kept(&pr)
    );
    assert!(
        old_window_kept(&vegas) > 0.85,
        "vegas kept {:.2}",
        old_window_kept(&vegas)
    );
    let goodput = |r: &RunResult, i: usize| r.flows[i].goodput_bps;
    assert!(
        goodput(&pr, 1) > goodput(&pr, 0),
        "pseudo-rate: the new connection does better"
    );
    assert!(
        goodput(&vegas, 1) < goodput(&vegas, 0),
        "vegas: the old connection does better"
    );
    assert_eq!((pr.links[0].drops, vegas.links[0].drops), (0, 0));
}

// ---- BBR (BBRv1: Cardwell et al. 2016; draft-cardwell-iccrg-bbr-congestion-control-00) ----

/// 10 Mb/s and 40 ms: a BDP of 48 segments of 1040 bytes on the wire.
const BBR_BDP: f64 = 10e6 * 0.040 / (8.0 * 1040.0);

fn bbr_dumbbell(flows: Value, duration_s: f64, warmup_s: f64, buffer: u32, trace_s: f64) -> Value {
    json!({
        "duration_s": duration_s, "warmup_s": warmup_s, "seed": 1,
        "topology": {"dumbbell": {"bottleneck": {"rate_mbps": 10, "delay_ms": 10,
                                                 "queue": {"type": "droptail", "limit_pkts": buffer}}}},
        "flows": flows,
        "outputs": {"trace_interval_s": trace_s, "trace": ["cwnd", "queue"]}
    })
}

fn one_bbr(loss: Value, duration_s: f64, warmup_s: f64) -> RunResult {
    let flows = json!([{"name": "f", "variant": "bbr", "rtt_ms": 40, "loss": loss}]);
    run(&bbr_dumbbell(flows, duration_s, warmup_s, 1000, 0.005))
}

/// The bottleneck queue's traced (time, packets).
fn queue_trace(r: &RunResult) -> Vec<(f64, f64)> {
    let t = r.traces.as_ref().unwrap();
    t.time_s
        .iter()
        .copied()
        .zip(t.links[0].queue.iter().map(|&q| q as f64))
        .collect()
}

fn max_between(trace: &[(f64, f64)], from: f64, to: f64) -> f64 {
    trace
        .iter()
        .filter(|p| p.0 >= from && p.0 <= to)
        .map(|p| p.1)
        .fold(f64::NEG_INFINITY, f64::max)
}

#[test]
fn bbr_startup_reaches_the_bottleneck_rate_then_drains_its_queue_and_cruises_at_two_bdp() {
    let r = one_bbr(json!({"type": "scheduled", "packets": []}), 5.0, 1.0);
    let queue = queue_trace(&r);
    let peak = max_between(&queue, 0.0, 1.0);
    assert!(
        peak > BBR_BDP / 2.0,
        "Startup's 2/ln 2 overshoots into the queue: peak {peak}"
    );
    let after = max_between(&queue, 1.0, 5.0);
    assert!(
        after < 0.25 * BBR_BDP + 8.0,
        "Drain emptied it; ProbeBW's 1.25 phase adds ~BDP/4: {after}"
    );
    assert!(r.links[0].utilization > 0.95, "{}", r.links[0].utilization);
    // ProbeBW: cwnd = 2·BtlBw·RTprop + 3 send quanta of 2 segments.
    let cwnd = cwnd_at(&cwnd_trace(&r), 4.0);
    assert!(
        (cwnd - (2.0 * BBR_BDP + 6.0)).abs() < 0.1 * BBR_BDP,
        "cwnd {cwnd:.1}, BDP {BBR_BDP:.1}"
    );
}

#[test]
fn bbr_keeps_almost_no_standing_queue_where_reno_and_cubic_fill_the_buffer() {
    let run_one = |variant: &str| {
        let flows = json!([{"name": "f", "variant": variant, "rtt_ms": 40}]);
        run(&bbr_dumbbell(flows, 35.0, 5.0, 100, 1.0)).links[0].clone()
    };
    let bbr = run_one("bbr");
    assert!(
        bbr.mean_queue_pkts < 10.0 && bbr.drops == 0,
        "bbr: {:.1} packets queued, {} drops",
        bbr.mean_queue_pkts,
        bbr.drops
    );
    assert!(bbr.utilization > 0.95, "{}", bbr.utilization);
    for variant in ["reno", "cubic"] {
        let l = run_one(variant);
        assert!(
            l.mean_queue_pkts > 50.0 && l.drops > 0,
            "{variant}: {:.1} packets queued",
            l.mean_queue_pkts
        );
    }
}

#[test]
fn bbr_probes_rtt_about_every_ten_seconds_holding_four_segments_for_200_ms() {
    let r = one_bbr(json!({"type": "scheduled", "packets": []}), 35.0, 0.0);
    let mut episodes: Vec<(f64, f64)> = Vec::new();
    for (t, _) in cwnd_trace(&r).into_iter().filter(|p| p.0 > 1.0 && p.1 <= 4.0) {
        match episodes.last_mut() {
            Some(e) if t - e.1 < 0.05 => e.1 = t,
            _ => episodes.push((t, t)),
        }
    }
    assert_eq!(episodes.len(), 3, "{episodes:?}");
    for e in &episodes {
        let held = e.1 - e.0;
        assert!(
            (0.2..0.3).contains(&held),
            "200 ms and a round trip at 4 segments: {episodes:?}"
        );
    }
    for w in episodes.windows(2) {
        let gap = w[1].0 - w[0].0;
        assert!(
            (9.9..10.6).contains(&gap),
            "RTprop expires 10 s after it was last set: {episodes:?}"
        );
    }
}

#[test]
fn with_one_drop_bbr_keeps_its_window_and_its_rate() {
    let lossless = one_bbr(json!({"type": "scheduled", "packets": []}), 6.0, 2.0);
    let r = one_bbr(json!({"type": "scheduled", "packets": [4000]}), 6.0, 2.0);
    let f = flow(&r);
    assert_eq!((f.fast_recoveries, f.timeouts, f.retransmits), (1, 0, 1), "{f:?}");
    assert!(
        f.goodput_bps > 0.998 * flow(&lossless).goodput_bps,
        "{} vs {}",
        f.goodput_bps,
        flow(&lossless).goodput_bps
    );
    let trace = cwnd_trace(&r);
    let steady = trace.iter().position(|p| p.0 >= 2.0).unwrap();
    let (at, before) = first_reduction(&trace[steady..]);
    assert!(before > 2.0 * BBR_BDP, "ProbeBW's window before the loss: {before:.1}");
    // Packet conservation for a round trip (in flight ≈ one BDP when paced), then restored.
    assert!(min_cwnd_after(&r, at - 0.001) > 0.9 * BBR_BDP);
    assert_eq!(cwnd_at(&trace, at + 0.5), before, "the window from before recovery");
}

#[test]
fn drops_spread_over_a_window_come_off_bbrs_window_as_the_scoreboard_marks_each_lost() {
    let burst: Vec<u64> = (0..20).map(|i| 4000 + 3 * i).collect();
    let r = one_bbr(json!({"type": "scheduled", "packets": burst}), 6.0, 2.0);
    let f = flow(&r);
    assert_eq!((f.fast_recoveries, f.timeouts, f.retransmits), (1, 0, 20), "{f:?}");
    let trace = cwnd_trace(&r);
    let steady = trace.iter().position(|p| p.0 >= 2.0).unwrap();
    let (at, before) = first_reduction(&trace[steady..]);
    // Paced at BtlBw, about one BDP is in flight: packet conservation alone holds cwnd above
    // 0.9 BDP (one drop, above; 57 segments here without the deduction). The holes found lost
    // one by one as SACKs arrive come off it too.
    let low = min_cwnd_after(&r, at - 0.001);
    assert!(
        low < 0.9 * BBR_BDP,
        "lowest cwnd in recovery {low:.1}, one BDP {BBR_BDP:.1}"
    );
    assert!(low >= 4.0);
    assert_eq!(cwnd_at(&trace, at + 0.5), before, "the window from before recovery");
}

#[test]
fn with_three_drops_in_a_window_bbr_repairs_them_in_one_sack_recovery() {
    let r = run(&scenario("bbr", THREE_DROPS, json!({})));
    let f = flow(&r);
    assert_eq!((f.fast_recoveries, f.timeouts, f.retransmits), (1, 0, 3), "{f:?}");
    assert!(recovery_length_rtts(f) < 1.6, "{:.2} RTTs", recovery_length_rtts(f));
}

#[test]
fn after_a_timeout_bbr_regrows_its_window_from_one_segment_without_a_new_startup() {
    let outage = json!({"type": "outage", "start_s": 3.0, "end_s": 3.5});
    let r = one_bbr(outage.clone(), 8.0, 0.0);
    assert!(flow(&r).timeouts >= 1, "{:?}", flow(&r));
    assert_eq!(min_cwnd_after(&r, 3.0), 1.0);
    let trace = cwnd_trace(&r);
    let before = cwnd_at(&trace, 2.9);
    let back = trace
        .iter()
        .find(|p| p.0 > 3.5 && p.1 >= before)
        .expect("the window comes back")
        .0;
    // The retransmission waits for the backed-off timer; from then on the window doubles per
    // round trip up to its target, and the old window is restored when the loss is repaired.
    assert!(back < 4.2, "back to {before:.0} at {back:.2} s");
    // BtlBw survived: no Startup overshoot into the queue, the link full at once.
    let queue = queue_trace(&r);
    assert!(max_between(&queue, 3.5, 8.0) < 0.25 * BBR_BDP + 8.0);
    let after = one_bbr(outage, 8.0, 4.5);
    assert!(after.links[0].utilization > 0.97, "{}", after.links[0].utilization);
}

#[test]
fn two_bbr_flows_share_a_bottleneck_fairly() {
    let flows = json!([{"name": "a", "variant": "bbr", "rtt_ms": 40},
                       {"name": "b", "variant": "bbr", "rtt_ms": 40, "start_s": 2}]);
    let r = run(&bbr_dumbbell(flows, 60.0, 20.0, 100, 1.0));
    let jain = r.fairness.jain.expect("two flows");
    assert!(jain > 0.97, "Jain {jain}");
    assert!(r.links[0].utilization > 0.95, "{}", r.links[0].utilization);
}

/// ns-2's deterministic single loss event (../shared/peers/ns2 `compare.py det`): one flow,
/// 45 Mb/s, 70 ms, a receiver window of 30, packets 3001..3000+m dropped, 10 s.
fn single_loss_event(variant: &str, m: u64, tcp: Value) -> RunResult {
    let mut tcp_cfg = json!({"min_rto_s": 0.2, "timer_granularity_s": 0.01, "max_window_pkts": 30});
    if let (Some(base), Some(extra)) = (tcp_cfg.as_object_mut(), tcp.as_object()) {
        base.extend(extra.clone());
    }
    let drops: Vec<u64> = (3001..3001 + m).collect();
    run(&json!({
        "duration_s": 10, "seed": 1,
        "topology": {"dumbbell": {"bottleneck": {"rate_mbps": 45, "delay_ms": 5,
                                                 "queue": {"type": "droptail", "limit_pkts": 1000}},
                                  "access": {"rate_mbps": 1000, "queue": {"type": "droptail", "limit_pkts": 1000}}}},
        "flows": [{"name": "f", "variant": variant, "rtt_ms": 70, "tcp": tcp_cfg,
                   "loss": {"type": "scheduled", "packets": drops}}],
        "outputs": {"trace_interval_s": 0.01, "trace": ["cwnd", "ssthresh"]}
    }))
}

#[test]
fn after_a_timeout_duplicate_acks_of_needless_resends_start_a_recovery_only_under_the_rfc_guard() {
    // Impatient times out on ten drops; go-back-N then resends segments the receiver holds,
    // and each draws a duplicate ACK at the cumulative point, which by then equals `recover`.
    let rfc = single_loss_event("newreno-impatient", 10, json!({}));
    let ns2 = single_loss_event("newreno-impatient", 10, json!({"recover_guard": "ack_passes_recover"}));
    let (a, b) = (flow(&rfc), flow(&ns2));
    assert_eq!((a.timeouts, b.timeouts), (1, 1));
    assert_eq!(
        a.fast_retransmits, 2,
        "RFC 6582/6675: the ACK covers recover, so a second fast retransmit: {a:?}"
    );
    assert_eq!(
        b.fast_retransmits, 1,
        "ns-2's guard waits for an ACK past recover: {b:?}"
    );
    assert!(
        b.retransmits < a.retransmits && b.goodput_bps > a.goodput_bps,
        "{a:?}\n{b:?}"
    );
}

#[test]
fn integer_ssthresh_rounds_the_halved_window_down_to_whole_segments() {
    // Four drops: a fast retransmit at a window of 30 (ssthresh 15), then Impatient's timeout
    // with 15 in flight: ssthresh 7.5, or 7 in whole segments.
    let ssthresh_after_timeout = |tcp: Value| {
        let r = single_loss_event("newreno-impatient", 4, tcp);
        assert_eq!(flow(&r).timeouts, 1);
        let t = r.traces.as_ref().unwrap();
        let ss = t.flows[0].ssthresh.as_ref().unwrap();
        let cwnd = t.flows[0].cwnd.as_ref().unwrap();
        let i = cwnd
            .iter()
            .position(|&c| c == 1.0)
            .expect("the timeout's one-segment window");
        ss[i].expect("ssthresh set")
    };
    assert_eq!(ssthresh_after_timeout(json!({})), 7.5);
    assert_eq!(ssthresh_after_timeout(json!({"integer_ssthresh": true})), 7.0);
}

#[test]
fn a_second_timeout_of_the_same_data_holds_ssthresh_unless_asked_to_halve_it_again() {
    // 31 drops with a window of 30: everything in flight is lost, the first timeout's resend
    // too, so the timer fires twice for segment 3001.
    let ssthresh_at_end = |tcp: Value| {
        let r = single_loss_event("newreno-sbs", 31, tcp);
        assert_eq!(flow(&r).timeouts, 2, "{:?}", flow(&r));
        let t = r.traces.as_ref().unwrap();
        t.flows[0]
            .ssthresh
            .as_ref()
            .unwrap()
            .last()
            .copied()
            .flatten()
            .expect("ssthresh set")
    };
    assert_eq!(
        ssthresh_at_end(json!({})),
        15.0,
        "RFC 5681 §3.1: held at the first timeout's value"
    );
    assert_eq!(
        ssthresh_at_end(json!({"repeated_timeout_ssthresh": "halve"})),
        2.0,
        "ns-2.35: halved from one segment"
    );
}

#[test]
fn limited_transmit_after_a_timeout_lets_go_back_n_resend_on_the_first_two_duplicate_acks() {
    // Impatient times out on five drops; go-back-N's resends of segments the receiver holds
    // draw duplicate ACKs. With ns-2's way each of the first two lets the next resend out.
    let run_with = |after_timeout: bool| {
        let tcp = json!({"limited_transmit": true, "limited_transmit_after_timeout": after_timeout,
                         "recover_guard": "ack_passes_recover"});
        flow(&single_loss_event("newreno-impatient", 5, tcp)).clone()
    };
    let (rfc, ns2) = (run_with(false), run_with(true));
    assert_eq!((rfc.timeouts, ns2.timeouts), (1, 1));
    assert!(
        ns2.retransmits > rfc.retransmits,
        "more of go-back-N goes out early: {} vs {}",
        ns2.retransmits,
        rfc.retransmits
    );
    assert!(
        ns2.packets_sent > rfc.packets_sent,
        "{} vs {}",
        ns2.packets_sent,
        rfc.packets_sent
    );
}

#[test]
fn tahoe_resends_only_the_lost_segment_after_its_fast_retransmit_even_with_ns2_limited_transmit() {
    // Tahoe's fast retransmit is a go-back-N from one segment with three duplicates already
    // counted: ns-2's send_one() answers only duplicates 1 and 2, so nothing rides along.
    let tcp = json!({"limited_transmit": true, "limited_transmit_after_timeout": true});
    let one_drop = flow(&single_loss_event("tahoe", 1, tcp)).clone();
    assert_eq!((one_drop.fast_retransmits, one_drop.timeouts), (1, 0), "{one_drop:?}");
    assert_eq!(
        one_drop.retransmits, 1,
        "the receiver holds everything after the hole: {one_drop:?}"
    );
}

#[test]
fn ns2s_fack_restarts_from_one_segment_and_leaves_recovery_above_ssthresh() {
    // One drop in a window of 30: ns-2's Agent/TCP/Fack drops cwnd to 1, slow-starts on the
    // 26 duplicate ACKs still to come and keeps growing on the full ACK; the 1996 paper's FACK
    // sets cwnd to ssthresh and holds it through recovery.
    let paper = single_loss_event("fack", 1, json!({}));
    let ns2 = single_loss_event("fack", 1, json!({"fack_recovery": "ns2_fack"}));
    let lowest = |r: &RunResult| {
        let t = r.traces.as_ref().expect("traces");
        let c = t.flows[0].cwnd.as_ref().expect("cwnd trace");
        // After slow start (the drop is at about 7.3 s).
        t.time_s
            .iter()
            .zip(c)
            .filter(|(s, _)| **s > 5.0)
            .map(|(_, w)| *w)
            .fold(f64::INFINITY, f64::min)
    };
    assert_eq!(lowest(&paper), 15.0, "halved at once, never below ssthresh");
    assert_eq!(flow(&paper).fast_retransmits, 1);
    assert_eq!(flow(&ns2).fast_retransmits, 1);
    assert!(
        flow(&ns2).packets_sent > flow(&paper).packets_sent,
        "ns-2's window leaves recovery above ssthresh: {} vs {}",
        flow(&ns2).packets_sent,
        flow(&paper).packets_sent
    );
}

#[test]
fn ns2s_sack1_stalls_into_a_timeout_on_twenty_holes_where_rfc_6675_repairs_them_all() {
    // Twenty drops in a window of 30: SetPipe counts the ten SACKed segments as gone and
    // every hole goes out once; Sack1's counter (30 − 3 at entry, one off per ACK) lets too
    // little out, and the retransmit timer fires.
    let rfc = flow(&single_loss_event("sack", 20, json!({}))).clone();
    let ns2 = flow(&single_loss_event("sack", 20, json!({"sack_recovery": "ns2_sack1"}))).clone();
    assert_eq!((rfc.timeouts, rfc.retransmits), (0, 20), "{rfc:?}");
    assert_eq!(ns2.timeouts, 1, "{ns2:?}");
    assert!(
        ns2.retransmits > 20,
        "go-back-N after the timeout resends SACKed segments too: {ns2:?}"
    );
}

#[test]
fn with_an_odd_window_ns2_leaves_recovery_with_the_halved_window_not_its_whole_part() {
    // W 29: ssthresh is 14 in whole segments either way; ns-2's cwnd_ keeps the 14.5.
    let exit_cwnd = |keep: bool| {
        let tcp = json!({"max_window_pkts": 29, "integer_ssthresh": true, "recovery_keeps_half_window": keep});
        let r = single_loss_event("newreno-sbs", 1, tcp);
        let t = r.traces.as_ref().expect("traces");
        let c = t.flows[0].cwnd.as_ref().expect("cwnd trace");
        t.time_s
            .iter()
            .zip(c)
            .filter(|(s, _)| **s > 5.0)
            .map(|(_, w)| *w)
            .fold(f64::INFINITY, f64::min)
    };
    assert_eq!(exit_cwnd(false), 14.0);
    assert_eq!(exit_cwnd(true), 14.5);
}

// ---- PRR (RFC 6937) ---------------------------------------------------------------------------

/// The traced cwnd during the flow's first recovery: (time, cwnd) from the first reduction on,
/// for one round trip.
fn first_recovery_round(r: &RunResult) -> Vec<(f64, f64)> {
    let trace = cwnd_trace(r);
    let (at, _) = first_reduction(&trace);
    trace.into_iter().filter(|p| p.0 >= at && p.0 < at + RTT_S).collect()
}

#[test]
fn with_one_drop_prr_brings_cwnd_down_to_ssthresh_over_a_round_trip_where_rfc6675_drops_it_at_once() {
    let prr = json!({"sack_recovery": "prr"});
    let r = run(&scenario("sack", ONE_DROP, prr.clone()));
    let f = flow(&r);
    assert_eq!((f.fast_recoveries, f.timeouts, f.retransmits), (1, 0, 1), "{f:?}");
    let (_, peak) = first_reduction(&cwnd_trace(&r));
    let round = first_recovery_round(&r);
    // RFC 6937 §3: cwnd = pipe + sndcnt, pipe shrinking by one per two ACKs, from about the
    // old flight to ssthresh (half of it).
    assert!(
        round[0].1 > 0.75 * peak,
        "PRR starts near the old window: {round:?}, peak {peak}"
    );
    assert!(
        round.windows(2).all(|w| w[1].1 <= w[0].1 + 1.0),
        "and comes down: {round:?}"
    );
    let after = min_cwnd_after(&r, round[0].0);
    assert!(
        (after - peak / 2.0).abs() <= 1.0,
        "to ssthresh, half the window: {after} vs {peak}"
    );

    let classic = run(&scenario("sack", ONE_DROP, json!({})));
    let classic_round = first_recovery_round(&classic);
    assert!(
        (classic_round[0].1 - peak / 2.0).abs() <= 1.0,
        "RFC 6675 sets ssthresh at once: {classic_round:?}"
    );
    // Sending through the recovery, PRR is never slower to finish the download.
    assert!(download_time(&r) <= download_time(&classic) + 1e-9);
}

#[test]
fn with_three_drops_in_a_window_prr_repairs_them_in_about_one_rtt() {
    let r = run(&scenario("sack", THREE_DROPS, json!({"sack_recovery": "prr"})));
    let f = flow(&r);
    assert_eq!((f.fast_recoveries, f.timeouts, f.retransmits), (1, 0, 3), "{f:?}");
    let rtts = recovery_length_rtts(f);
    assert!(rtts < 1.6, "{rtts:.2} RTTs");
}

#[test]
fn when_losses_leave_pipe_below_ssthresh_prr_repairs_every_hole_in_one_recovery_without_a_timeout() {
    // Twelve of the window's ~40 segments lost: pipe falls below ssthresh (about 20), where
    // PRR-SSRB sends up to ssthresh − pipe, at most one segment more than each ACK delivers.
    let drops: Vec<u64> = (100..124).step_by(2).collect();
    let r = run(&scenario("sack", &drops, json!({"sack_recovery": "prr"})));
    let f = flow(&r);
    assert_eq!((f.fast_recoveries, f.timeouts, f.retransmits), (1, 0, 12), "{f:?}");
    let rtts = recovery_length_rtts(f);
    assert!(rtts < 2.0, "{rtts:.2} RTTs");
    let (_, peak) = first_reduction(&cwnd_trace(&r));
    let low = min_cwnd_after(&r, 0.5);
    assert!(
        low >= peak / 2.0 - 1.0,
        "never below ssthresh's neighbourhood: {low} vs {peak}"
    );
    let classic = run(&scenario("sack", &drops, json!({})));
    let (ours, theirs) = (download_time(&r), download_time(&classic));
    assert!(ours <= theirs + RTT_S, "PRR {ours} s vs RFC 6675 {theirs} s");
}

// ---- pacing for window-based variants ---------------------------------------------------------

/// 20 Mb/s, 100 ms (a 250-packet window fills the path), fed at 1 Gb/s.
fn paced_start(variant: &str, tcp: Value, buffer_pkts: u32) -> RunResult {
    run(&json!({
        "duration_s": 3, "seed": 1,
        "topology": {"dumbbell": {"bottleneck": {"rate_mbps": 20, "delay_ms": 10,
                                                 "queue": {"type": "droptail", "limit_pkts": buffer_pkts}}}},
        "flows": [{"name": "f", "variant": variant, "rtt_ms": 100, "tcp": tcp}],
        "outputs": {"trace_interval_s": 0.01, "trace": ["cwnd"]}
    }))
}

#[test]
fn paced_slow_start_reaches_a_larger_window_before_its_first_loss_at_a_small_buffer() {
    // A 30-packet buffer: slow start's line-rate bursts overflow it long before the window
    // covers the path's 250 packets; spread at twice cwnd/SRTT, the segments queue little and
    // slow start ends near the path's window instead.
    for variant in ["newreno-sbs", "cubic"] {
        let unpaced = paced_start(variant, json!({"initial_cwnd_pkts": 10}), 30);
        let paced = paced_start(variant, json!({"initial_cwnd_pkts": 10, "pacing": {}}), 30);
        let (_, unpaced_peak) = first_reduction(&cwnd_trace(&unpaced));
        let (_, paced_peak) = first_reduction(&cwnd_trace(&paced));
        assert!(
            unpaced_peak < 150.0,
            "{variant}: unpaced slow start is cut short at {unpaced_peak}"
        );
        assert!(
            paced_peak > 2.0 * unpaced_peak,
            "{variant}: paced {paced_peak} vs unpaced {unpaced_peak}"
        );
    }
}

#[test]
fn pacing_at_a_ratio_below_one_caps_the_rate_below_what_the_window_allows() {
    // Paced at half of cwnd/SRTT in both phases, a flow cannot fill the path its window covers.
    let slow = json!({"initial_cwnd_pkts": 10, "max_window_pkts": 100, "pacing": {"ss_ratio": 0.5, "ca_ratio": 0.5}});
    let full = json!({"initial_cwnd_pkts": 10, "max_window_pkts": 100});
    let (a, b) = (
        paced_start("newreno-sbs", slow, 1000),
        paced_start("newreno-sbs", full, 1000),
    );
    let (ga, gb) = (a.flows[0].goodput_bps, b.flows[0].goodput_bps);
    assert!(ga < 0.8 * gb, "{ga} vs {gb}");
}

// ---- HyStart++ (RFC 9406) --------------------------------------------------------------------

/// 20 Mb/s, 100 ms (250 packets in flight fill the path) before a large buffer: plain slow
/// start doubles until the buffer overflows.
fn bloated_start(variant: &str, tcp: Value, buffer_pkts: u32) -> RunResult {
    run(&json!({
        "duration_s": 6, "seed": 1,
        "topology": {"dumbbell": {"bottleneck": {"rate_mbps": 20, "delay_ms": 10,
                                                 "queue": {"type": "droptail", "limit_pkts": buffer_pkts}}}},
        "flows": [{"name": "f", "variant": variant, "rtt_ms": 100, "tcp": tcp}]
    }))
}

#[test]
fn hystart_leaves_the_first_slow_start_as_the_rtt_rises_before_the_buffer_overflows() {
    // The rise shows one round after the window passes the path's 250 packets (about 550);
    // RFC 9406's five rounds of CSS then grow it 1.25-fold each, to about 1700, within a
    // 2500-packet buffer; Linux's way (no CSS, not below 16) stops at the rise, within 1000.
    let rfc = json!({"initial_cwnd_pkts": 10, "hystart": {}});
    let linux = json!({"initial_cwnd_pkts": 10, "hystart": {"css_rounds": 0, "min_window_pkts": 16}});
    for variant in ["newreno-sbs", "cubic"] {
        for (tcp, buffer) in [(&rfc, 2500), (&linux, 1000)] {
            let plain = bloated_start(variant, json!({"initial_cwnd_pkts": 10}), buffer);
            let hystart = bloated_start(variant, tcp.clone(), buffer);
            let (p, h) = (&plain.flows[0], &hystart.flows[0]);
            assert!(
                p.fast_retransmits + p.timeouts > 0,
                "{variant}: slow start overflows {buffer} packets"
            );
            assert_eq!(
                (h.fast_retransmits, h.timeouts, h.drops),
                (0, 0, 0),
                "{variant} {tcp}: {h:?}"
            );
            assert!(
                h.goodput_bps > 0.9 * p.goodput_bps,
                "{variant} {tcp}: and fills the path as well: {} vs {}",
                h.goodput_bps,
                p.goodput_bps
            );
        }
    }
}

#[test]
fn hystart_leaves_vegas_and_bbr_to_their_own_start() {
    for variant in ["vegas", "bbr"] {
        let plain = bloated_start(variant, json!({"initial_cwnd_pkts": 10}), 1000);
        let hystart = bloated_start(variant, json!({"initial_cwnd_pkts": 10, "hystart": {}}), 1000);
        assert_eq!(plain.flows[0].goodput_bps, hystart.flows[0].goodput_bps, "{variant}");
    }
}

// ---- ns-3.44's other variants (issue 17) ---------------------------------------------------

/// The variants of issue 17, as scenarios name them.
const NS3_VARIANTS: &[&str] = &[
    "highspeed",
    "scalable",
    "bic",
    "htcp",
    "hybla",
    "westwood-plus",
    "veno",
    "illinois",
    "lp",
    "yeah",
];

/// One drop at a window of about 300 segments (100 Mb/s and 100 ms: a path of 1,200 packets and
/// a queue that never drops): the run, and the window after the reduction over the one before.
fn one_drop_at_a_large_window(variant: &str) -> (RunResult, f64) {
    let s = long_flow(
        variant,
        100.0,
        100.0,
        6.0,
        json!({"type": "scheduled", "packets": [2000]}),
        json!({"initial_ssthresh_pkts": 300}),
        0.005,
    );
    let r = run(&s);
    let (at, peak) = first_reduction(&cwnd_trace(&r));
    let ratio = min_cwnd_after(&r, at - 0.001) / peak;
    (r, ratio)
}

/// Segments the window grew in the `rtts` round trips from `from_s` on.
fn growth(r: &RunResult, from_s: f64, rtts: f64, rtt_s: f64) -> f64 {
    let trace = cwnd_trace(r);
    cwnd_at(&trace, from_s + rtts * rtt_s) - cwnd_at(&trace, from_s)
}

#[test]
fn with_one_drop_at_a_large_window_highspeed_keeps_one_minus_b_of_w_and_regrows_by_a_of_w_per_round_trip() {
    let (r, ratio) = one_drop_at_a_large_window("highspeed");
    let f = flow(&r);
    assert_eq!((f.fast_recoveries, f.timeouts, f.retransmits), (1, 0, 1), "{f:?}");
    let (at, peak) = first_reduction(&cwnd_trace(&r));
    // RFC 3649 §5: b(300) = 0.39, so 0.61 of the window stays, where Reno keeps half.
    let b = 0.5 - 0.4 * (peak / 38.0).ln() / (83_000.0f64 / 38.0).ln();
    assert!(
        (ratio - (1.0 - b)).abs() < 0.03,
        "{peak:.1}: kept {ratio:.3}, 1 − b(w) = {:.3}",
        1.0 - b
    );
    // a(~190) ≈ 2.6 segments per round trip against Reno's one.
    let grown = growth(&r, at + 0.5, 10.0, 0.1);
    assert!((20.0..35.0).contains(&grown), "grew {grown:.1} in 10 round trips");
    let (_, reno) = one_drop_at_a_large_window("reno");
    assert!((reno - 0.5).abs() < 0.03, "{reno}");
}

#[test]
fn with_one_drop_at_a_large_window_scalable_keeps_seven_eighths_and_regrows_one_percent_per_round_trip() {
    let (r, ratio) = one_drop_at_a_large_window("scalable");
    let f = flow(&r);
    assert_eq!((f.fast_recoveries, f.timeouts, f.retransmits), (1, 0, 1), "{f:?}");
    assert!((ratio - 0.875).abs() < 0.02, "kept {ratio:.3}, Kelly's 1 − 1/8");
    let (at, _) = first_reduction(&cwnd_trace(&r));
    let from = cwnd_at(&cwnd_trace(&r), at + 0.5);
    // Kelly §2: 0.01 per ACK is 1 % of the window per round trip.
    let expected = from * (1.01f64.powi(10) - 1.0);
    let grown = growth(&r, at + 0.5, 10.0, 0.1);
    assert!(
        (grown - expected).abs() < 0.25 * expected,
        "grew {grown:.1} from {from:.1}, expected {expected:.1}"
    );
}

#[test]
fn with_one_drop_at_a_large_window_bic_keeps_eight_tenths_and_searches_back_to_the_old_window_then_slows() {
    let (r, ratio) = one_drop_at_a_large_window("bic");
    let f = flow(&r);
    assert_eq!((f.fast_recoveries, f.timeouts, f.retransmits), (1, 0, 1), "{f:?}");
    assert!((ratio - 0.8).abs() < 0.02, "kept {ratio:.3}, ns-3's β = 0.8");
    let trace = cwnd_trace(&r);
    let (at, peak) = first_reduction(&trace);
    // A quarter of the distance to W_max a round trip: within 2 % of it 15 round trips after
    // recovery (Reno would have regained 15 of the 60 segments), and no faster past it.
    let back = cwnd_at(&trace, at + 0.2 + 1.5);
    assert!((back - peak).abs() < 0.02 * peak, "{back:.1} against W_max {peak:.1}");
    let probe = cwnd_at(&trace, at + 0.2 + 2.0) - back;
    assert!(probe < 10.0, "max probing starts slowly: {probe:.1} in 5 round trips");
}

#[test]
fn with_one_drop_at_a_large_window_htcp_halves_then_grows_as_reno_for_a_second_and_much_faster_after() {
    let (r, ratio) = one_drop_at_a_large_window("htcp");
    let f = flow(&r);
    assert_eq!((f.fast_recoveries, f.timeouts, f.retransmits), (1, 0, 1), "{f:?}");
    assert!((ratio - 0.5).abs() < 0.02, "the first loss: β = 0.5, kept {ratio:.3}");
    let (at, _) = first_reduction(&cwnd_trace(&r));
    // Δ ≤ Δ_L = 1 s: α = 1, one segment a round trip.
    let early = growth(&r, at + 0.2, 7.0, 0.1);
    assert!((5.0..9.0).contains(&early), "grew {early:.1} in 7 round trips");
    // Δ from 2 to 2.5 s: α(Δ) = 1 + 10(Δ − 1) + ((Δ − 1)/2)², 11 to 17 segments a round trip.
    let late = growth(&r, at + 2.0, 5.0, 0.1);
    assert!((50.0..85.0).contains(&late), "grew {late:.1} in 5 round trips");
}

#[test]
fn at_four_times_the_reference_rtt_hybla_slow_starts_in_two_round_trips_and_regrows_sixteen_segments_a_round_trip() {
    let (r, ratio) = one_drop_at_a_large_window("hybla");
    let f = flow(&r);
    assert_eq!((f.fast_recoveries, f.timeouts, f.retransmits), (1, 0, 1), "{f:?}");
    assert!((ratio - 0.5).abs() < 0.03, "a loss halves: kept {ratio:.3}");
    let trace = cwnd_trace(&r);
    // ρ = 100 ms / 25 ms = 4: 15 segments per ACK in slow start (2 → 300 in about two round
    // trips where Reno needs seven), ρ² = 16 per round trip in avoidance.
    let reached = trace.iter().find(|p| p.1 >= 299.0).expect("reaches ssthresh").0;
    assert!(reached < 0.1 * 3.5, "ssthresh 300 reached at {reached:.2} s");
    let (at, _) = first_reduction(&trace);
    let grown = growth(&r, at + 0.3, 5.0, 0.1);
    assert!((65.0..95.0).contains(&grown), "grew {grown:.1} in 5 round trips");
}

/// One flow through a 10 Mb/s, 100 ms path (a bandwidth-delay product of 120 packets) with a
/// 60-packet Drop-Tail buffer, for 30 s: the buffer overflows every cycle.
fn overflowing(variant: &str) -> RunResult {
    run(&json!({
        "duration_s": 30, "seed": 1,
        "topology": {"dumbbell": {"bottleneck": {"rate_mbps": 10, "delay_ms": 10,
                                                 "queue": {"type": "droptail", "limit_pkts": 60}}}},
        "flows": [{"name": "f", "variant": variant, "rtt_ms": 100}],
        "outputs": {"trace_interval_s": 0.01, "trace": ["cwnd", "ssthresh"]}
    }))
}

/// The traced ssthresh values after `from_s`, each once.
fn ssthresholds_after(r: &RunResult, from_s: f64) -> Vec<f64> {
    let t = r.traces.as_ref().unwrap();
    let mut out: Vec<f64> = Vec::new();
    for (time, th) in t.time_s.iter().zip(t.flows[0].ssthresh.as_ref().unwrap()) {
        if let Some(th) = th.filter(|_| *time > from_s) {
            if out.last() != Some(&th) {
                out.push(th);
            }
        }
    }
    out
}

#[test]
fn when_the_buffer_overflows_westwood_plus_sets_ssthresh_to_the_bandwidth_delay_product_where_sack_halves() {
    // Mascolo et al. 2001 §2: ssthresh = BWE · RTT_min; at the bottleneck's rate that is the
    // path's 120 packets, where (SACK) Reno's half of 180 (path and buffer) is 90.
    // The first overflow ends slow start, whose rising rate the filter (a memory of about ten
    // round trips) has not caught up with: that ssthresh is far lower, and the window climbs
    // from it for about 20 s. Every later one is the path's.
    let westwood = ssthresholds_after(&overflowing("westwood-plus"), 0.0);
    assert!(westwood.len() >= 3, "{westwood:?}");
    for th in &westwood[1..] {
        assert!((105.0..=130.0).contains(th), "{westwood:?}");
    }
    let sack = ssthresholds_after(&overflowing("sack"), 0.0);
    assert!(sack[1..].iter().all(|th| (80.0..=95.0).contains(th)), "{sack:?}");
}

#[test]
fn with_one_drop_and_no_queue_westwood_plus_keeps_most_of_its_window_where_reno_halves() {
    // 300 segments on a path of 1,200 (100 Mb/s, 100 ms), the drop 3 s into congestion
    // avoidance, once the estimate has settled: BWE · RTT_min is about the window itself.
    let s = long_flow(
        "westwood-plus",
        100.0,
        100.0,
        8.0,
        json!({"type": "scheduled", "packets": [10000]}),
        json!({"initial_ssthresh_pkts": 300}),
        0.005,
    );
    let r = run(&s);
    let f = flow(&r);
    assert_eq!((f.fast_recoveries, f.timeouts, f.retransmits), (1, 0, 1), "{f:?}");
    let (at, peak) = first_reduction(&cwnd_trace(&r));
    let ratio = min_cwnd_after(&r, at - 0.001) / peak;
    assert!(
        ratio > 0.85,
        "kept {ratio:.3} of {peak:.1}: the loss was not the path's capacity"
    );
}

#[test]
fn veno_keeps_four_fifths_after_a_loss_with_no_queue_and_halves_when_its_packets_fill_the_buffer() {
    // 300 segments on a path of 1,200: nothing queued, N ≈ 0 < β, a random loss.
    let (r, ratio) = one_drop_at_a_large_window("veno");
    assert_eq!(flow(&r).fast_recoveries, 1);
    assert!((ratio - 0.8).abs() < 0.02, "kept {ratio:.3}");
    // A 60-packet buffer overflowing: N ≈ 60 ≥ β, congestion.
    let r = overflowing("veno");
    let trace = cwnd_trace(&r);
    let (at, peak) = first_reduction(&trace[(10.0 / 0.01) as usize..]);
    let ratio = min_cwnd_after(&r, at - 0.001) / peak;
    assert!((ratio - 0.5).abs() < 0.05, "kept {ratio:.3} of {peak:.1}");
}

#[test]
fn illinois_keeps_seven_eighths_and_regrows_up_to_ten_segments_a_round_trip_with_no_queue_and_halves_when_the_buffer_overflows(
) {
    // No queueing delay: α = α_max = 10, β = β_min = 1/8 (Liu, Başar & Srikant §3).
    let (r, ratio) = one_drop_at_a_large_window("illinois");
    assert_eq!((flow(&r).fast_recoveries, flow(&r).timeouts), (1, 0));
    assert!((ratio - 0.875).abs() < 0.02, "kept {ratio:.3}");
    let (at, _) = first_reduction(&cwnd_trace(&r));
    // Up to 10 segments a round trip (ACK bursts queue a few packets at the bottleneck, d_a
    // then passes d_m/100 and α falls some): far above Reno's one.
    let grown = growth(&r, at + 0.3, 5.0, 0.1);
    assert!((30.0..52.0).contains(&grown), "grew {grown:.1} in 5 round trips");
    // A full 60-packet buffer at the loss: d_a near d_m, β = β_max = 1/2.
    let r = overflowing("illinois");
    let trace = cwnd_trace(&r);
    let (at, peak) = first_reduction(&trace[(10.0 / 0.01) as usize..]);
    let ratio = min_cwnd_after(&r, at - 0.001) / peak;
    assert!((ratio - 0.5).abs() < 0.05, "kept {ratio:.3} of {peak:.1}");
}

/// Flows through a 10 Mb/s bottleneck (100 ms RTT: 120 packets in flight) with a Drop-Tail
/// buffer of `buffer` packets, for `duration_s`, measured from `warmup_s`, the queue traced
/// every 0.1 s.
fn deep_buffer(flows: Value, buffer: u32, duration_s: f64, warmup_s: f64) -> RunResult {
    run(&json!({
        "duration_s": duration_s, "warmup_s": warmup_s, "seed": 1,
        "topology": {"dumbbell": {"bottleneck": {"rate_mbps": 10, "delay_ms": 10,
                                                 "queue": {"type": "droptail", "limit_pkts": buffer}}}},
        "flows": flows,
        "outputs": {"trace_interval_s": 0.1, "trace": ["cwnd", "queue"]}
    }))
}

#[test]
fn ledbat_holds_about_its_100_ms_target_of_queueing_delay_where_renos_queue_keeps_growing() {
    // 100 ms at 10 Mb/s is 120 packets of 1,040 bytes; the buffer holds 1,000. Slow start
    // ends at 120 segments: from a buffer it had filled, LEDBAT would take GAIN · off_target
    // = 7 segments a round trip of 0.9 s to drain it, over a minute and a half.
    let flows = |v: &str| json!([{"name": "f", "variant": v, "rtt_ms": 100, "tcp": {"initial_ssthresh_pkts": 120}}]);
    let r = deep_buffer(flows("ledbat"), 1000, 60.0, 30.0);
    let late: Vec<f64> = queue_trace(&r).iter().filter(|p| p.0 > 30.0).map(|p| p.1).collect();
    let mean = late.iter().sum::<f64>() / late.len() as f64;
    assert!((105.0..=130.0).contains(&mean), "mean queue {mean:.1} packets");
    let link = &r.links[0];
    assert!(link.utilization > 0.99, "{}", link.utilization);
    assert!(link.p99_queue_delay_s.unwrap() < 0.12, "{:?}", link.p99_queue_delay_s);
    // Reno's queue only grows, a segment a round trip, until the buffer overflows.
    let reno = queue_trace(&deep_buffer(flows("reno"), 1000, 60.0, 30.0));
    let (at_30, at_60) = (max_between(&reno, 29.0, 30.0), max_between(&reno, 59.0, 60.0));
    assert!(
        at_60 > 200.0 && at_60 > at_30 + 50.0,
        "Reno's queue {at_30} then {at_60}"
    );
}

/// A Reno flow and one of `variant` (from an ssthresh of 60) through `deep_buffer`'s path and a
/// 400-packet buffer for 120 s, measured over the last 60: a scavenger should yield.
fn beside_reno(variant: &str) -> RunResult {
    deep_buffer(
        json!([{"name": "reno", "variant": "reno", "rtt_ms": 100},
               {"name": variant, "variant": variant, "rtt_ms": 100, "tcp": {"initial_ssthresh_pkts": 60}}]),
        400,
        120.0,
        60.0,
    )
}

#[test]
fn ledbat_yields_the_bottleneck_to_a_reno_flow_that_keeps_the_queue_above_its_target() {
    // A 400-packet buffer: Reno's saw-tooth keeps 80 to 400 packets queued, mostly above
    // LEDBAT's 120 (100 ms).
    let r = beside_reno("ledbat");
    let (reno, ledbat) = (r.flows[0].throughput_bps, r.flows[1].throughput_bps);
    assert!(ledbat < 0.15 * reno, "LEDBAT {ledbat:.0} b/s beside Reno's {reno:.0}");
}

#[test]
fn with_three_drops_in_a_window_each_ns3_variant_repairs_them_with_sack_in_one_recovery() {
    // About a round trip, and a little more for those that keep more of the window (BIC's
    // 0.8: pipe must fall below it before the later holes go out); NewReno would take three.
    for variant in NS3_VARIANTS {
        let r = run(&scenario(variant, THREE_DROPS, json!({})));
        let f = flow(&r);
        assert_eq!(
            (f.fast_recoveries, f.timeouts, f.retransmits),
            (1, 0, 3),
            "{variant}: {f:?}"
        );
        assert!(
            recovery_length_rtts(f) < 2.0,
            "{variant}: {:.2} RTTs",
            recovery_length_rtts(f)
        );
    }
}

#[test]
fn after_a_timeout_each_ns3_variant_restarts_from_one_segment_and_finishes() {
    for variant in NS3_VARIANTS {
        let mut s = scenario(variant, &[], json!({}));
        s["flows"][0]["loss"] = json!({"type": "outage", "start_s": 0.6, "end_s": 1.0});
        let r = run(&s);
        let f = flow(&r);
        assert!(f.timeouts >= 1, "{variant}: {f:?}");
        assert_eq!(min_cwnd_after(&r, 0.6), 1.0, "{variant}");
        assert!(f.download_time_s.is_some(), "{variant} finishes");
    }
}

/// Two flows of `variant` with the same 40 ms RTT through a 10 Mb/s bottleneck with a one-BDP
/// Drop-Tail buffer, the second starting 2 s later: (Jain's index, utilisation) over 20–60 s.
fn two_flows(variant: &str) -> (f64, f64) {
    let flows = json!([{"name": "a", "variant": variant, "rtt_ms": 40},
                       {"name": "b", "variant": variant, "rtt_ms": 40, "start_s": 2}]);
    let r = run(&bbr_dumbbell(flows, 60.0, 20.0, 48, 1.0));
    (r.fairness.jain.expect("two flows"), r.links[0].utilization)
}

#[test]
fn two_flows_of_each_ns3_variant_fill_a_bottleneck_and_all_but_scalable_share_it_fairly() {
    for variant in NS3_VARIANTS {
        if *variant == "lp" {
            // LP halves at each early indication, below ssthresh, and slow-starts back into
            // the next (`lp_alone_keeps_its_queue_short_where_reno_fills_the_buffer`): two LP
            // flows leave the link half idle and share it unevenly (Jain 0.57).
            continue;
        }
        let (jain, utilization) = two_flows(variant);
        assert!(utilization > 0.9, "{variant}: {utilization}");
        // Scalable's increase and decrease are both multiplicative above its legacy window
        // (MIMD, which Chiu & Jain 1989 show does not converge to fairness), and across it
        // the smaller flow halves where the larger loses an eighth: the two keep unequal
        // shares, so only a lower bound that both get a real share.
        let least = if *variant == "scalable" { 0.6 } else { 0.9 };
        assert!(jain > least, "{variant}: Jain {jain}");
    }
}

/// Four Scalable flows with `tcp`, 40 ms RTT, through a 10 Mb/s bottleneck with a one-BDP
/// Drop-Tail buffer (about 95 packets in all, so a fair share of 24, below the legacy window of
/// 50), starting 0.5 s apart: Jain's index over 20–80 s.
fn four_scalable_flows(tcp: Value) -> f64 {
    let flows: Vec<Value> = (0..4)
        .map(|i| {
            json!({"name": format!("s{i}"), "variant": "scalable", "rtt_ms": 40,
                        "start_s": 0.5 * i as f64, "tcp": tcp})
        })
        .collect();
    let r = run(&bbr_dumbbell(json!(flows), 80.0, 20.0, 48, 1.0));
    r.fairness.jain.expect("four flows")
}

#[test]
fn scalable_flows_below_the_legacy_window_share_fairly_with_ns3s_rule_and_not_with_the_papers() {
    // The paper's legacy mode halves at or below 50 segments and takes 1/8 above: one flow
    // that gets above 50 loses an eighth where the others lose half, and keeps its lead.
    // ns-3's TcpScalable and Linux's tcp_scalable.c take 1/8 at every window (the ns3 and
    // linux profiles): AIMD with one decrease factor below 50, which converges.
    let papers = four_scalable_flows(json!({}));
    let ns3 = four_scalable_flows(json!({"scalable": {"a": 0.02, "b": 0.125, "legacy_b": 0.125}}));
    assert!(ns3 > 0.95, "ns-3's rule: Jain {ns3}");
    assert!(papers < 0.85, "the paper's rule: Jain {papers}");
}

// ---- TCP-LP, YeAH-TCP and the knobs of issue 17's variants ----------------------------------

/// The bottleneck's queue, in packets, averaged over the trace after `from_s`.
fn mean_queue_after(r: &RunResult, from_s: f64) -> f64 {
    let late: Vec<f64> = queue_trace(r).iter().filter(|p| p.0 > from_s).map(|p| p.1).collect();
    late.iter().sum::<f64>() / late.len() as f64
}

#[test]
fn lp_yields_the_bottleneck_to_a_reno_flow_sharing_it() {
    // Reno's queue grows a segment a round trip; LP backs off as soon as its smoothed delay
    // passes 15 % of the range it has seen (Kuzmanovic & Knightly §III-B), long before Reno
    // loses anything, and the link stays busy.
    let r = beside_reno("lp");
    let (reno, lp) = (r.flows[0].throughput_bps, r.flows[1].throughput_bps);
    assert!(lp < 0.15 * reno, "LP {lp:.0} b/s beside Reno's {reno:.0}");
    assert!(r.links[0].utilization > 0.95, "{}", r.links[0].utilization);
}

/// One flow of `variant` alone through `deep_buffer`'s path and a 1,000-packet buffer, from an
/// ssthresh of `ssthresh` segments, with `tcp` added to its TCP settings.
fn alone_in_a_deep_buffer(variant: &str, ssthresh: f64, tcp: Value, duration_s: f64) -> RunResult {
    let mut cfg = json!({"initial_ssthresh_pkts": ssthresh});
    cfg.as_object_mut().unwrap().extend(tcp.as_object().unwrap().clone());
    deep_buffer(
        json!([{"name": "f", "variant": variant, "rtt_ms": 100, "tcp": cfg}]),
        1000,
        duration_s,
        duration_s / 2.0,
    )
}

#[test]
fn lp_alone_keeps_its_queue_short_where_reno_fills_the_buffer() {
    // Each indication halves the window below ssthresh (ns-3 leaves ssthresh alone), so LP
    // slow-starts back, and its bursts raise the delay again: the queue stays a few packets
    // deep, and the link is not always busy (about 55 % here).
    let r = alone_in_a_deep_buffer("lp", 100.0, json!({}), 60.0);
    let queue = mean_queue_after(&r, 30.0);
    assert!(queue < 20.0, "mean queue {queue:.1} packets");
    assert_eq!(r.flows[0].drops, 0);
    let reno = alone_in_a_deep_buffer("reno", 100.0, json!({}), 60.0);
    assert!(mean_queue_after(&reno, 30.0) > 100.0);
}

#[test]
fn a_higher_lp_threshold_lets_lp_queue_more_before_it_yields() {
    let queue = |threshold: f64| {
        let r = alone_in_a_deep_buffer("lp", 100.0, json!({"lp": {"threshold": threshold}}), 60.0);
        mean_queue_after(&r, 30.0)
    };
    let (low, high) = (queue(0.15), queue(0.6));
    assert!(high > low + 5.0, "mean queue {low:.1} at 0.15, {high:.1} at 0.6");
}

/// One flow of `variant` through a 100 Mb/s, 100 ms path (1,200 packets) and a 5,000-packet
/// buffer for 30 s, from an ssthresh of 1,000 segments, with `tcp` added to its TCP settings.
fn fast_path(variant: &str, tcp: Value) -> RunResult {
    let mut cfg = json!({"initial_ssthresh_pkts": 1000});
    cfg.as_object_mut().unwrap().extend(tcp.as_object().unwrap().clone());
    run(&json!({
        "duration_s": 30, "warmup_s": 10, "seed": 1,
        "topology": {"dumbbell": {"bottleneck": {"rate_mbps": 100, "delay_ms": 10,
                                                 "queue": {"type": "droptail", "limit_pkts": 5000}}}},
        "flows": [{"name": "f", "variant": variant, "rtt_ms": 100, "tcp": cfg}],
        "outputs": {"trace_interval_s": 0.1, "trace": ["cwnd", "queue"]}
    }))
}

#[test]
fn yeah_gives_back_its_queue_once_its_estimate_passes_alpha_where_scalable_keeps_filling_the_buffer() {
    // At 100 Mb/s the queueing delay stays under an eighth of the base RTT (150 packets) while
    // Q < α = 80: fast mode grows 1 % a round trip until Q passes α, and precautionary
    // decongestion gives the queue back, without a loss and with the link busy. Scalable TCP,
    // the same growth without the estimate, fills the buffer.
    let r = fast_path("yeah", json!({}));
    let most = max_between(&queue_trace(&r), 10.0, 30.0);
    assert!((80.0..130.0).contains(&most), "largest queue {most:.0} packets");
    assert_eq!(r.flows[0].drops, 0);
    assert!(r.links[0].utilization > 0.95, "{}", r.links[0].utilization);
    let scalable = max_between(&queue_trace(&fast_path("scalable", json!({}))), 10.0, 30.0);
    assert!(scalable > 300.0, "Scalable's queue {scalable:.0}");
}

#[test]
fn a_lower_yeah_alpha_keeps_a_shorter_queue() {
    let largest = |alpha: u32| {
        max_between(
            &queue_trace(&fast_path("yeah", json!({"yeah": {"alpha": alpha}}))),
            10.0,
            30.0,
        )
    };
    let (low, default) = (largest(30), largest(80));
    assert!(
        low < 70.0 && default > low + 30.0,
        "largest queue {low:.0} at α 30, {default:.0} at 80"
    );
}

#[test]
fn with_no_queue_yeah_grows_as_scalable_where_reno_adds_a_segment_a_round_trip() {
    // After one drop at about 300 segments and a path of 1,200 packets, no queue builds: fast
    // mode, one segment per 100 ACKs, 1 % of the window a round trip.
    let (r, ratio) = one_drop_at_a_large_window("yeah");
    let f = flow(&r);
    assert_eq!((f.fast_recoveries, f.timeouts, f.retransmits), (1, 0, 1), "{f:?}");
    let (at, _) = first_reduction(&cwnd_trace(&r));
    let from = cwnd_at(&cwnd_trace(&r), at + 0.5);
    let grown = growth(&r, at + 0.5, 10.0, 0.1);
    // No queue measured: a loss takes an eighth (δ = 3).
    assert!((ratio - 0.875).abs() < 0.03, "kept {ratio:.3}");
    let expected = from * (1.01f64.powi(10) - 1.0);
    assert!(
        (grown - expected).abs() < 0.25 * expected,
        "grew {grown:.1} from {from:.1}"
    );
}

#[test]
fn a_lower_ledbat_target_keeps_a_shorter_queue() {
    // 25 ms at 10 Mb/s is 30 packets, the default 100 ms 120.
    let r = alone_in_a_deep_buffer("ledbat", 120.0, json!({"ledbat": {"target_ms": 25}}), 60.0);
    let queue = mean_queue_after(&r, 30.0);
    assert!((20.0..=40.0).contains(&queue), "mean queue {queue:.1} packets");
    assert!(r.links[0].utilization > 0.99, "{}", r.links[0].utilization);
}

#[test]
fn a_higher_ledbat_gain_reaches_the_target_sooner() {
    // From 20 segments, a sixth of the path: off_target is 1 with no queue, so the window grows
    // GAIN segments a round trip.
    let queue_at_10s = |gain: f64| {
        let r = alone_in_a_deep_buffer("ledbat", 20.0, json!({"ledbat": {"gain": gain}}), 12.0);
        let q = queue_trace(&r);
        max_between(&q, 9.0, 10.0)
    };
    let (slow, fast) = (queue_at_10s(1.0), queue_at_10s(4.0));
    assert!(
        slow < 10.0 && fast > 60.0,
        "queue at 10 s: {slow:.0} at gain 1, {fast:.0} at 4"
    );
}

#[test]
fn with_rtt0_at_50_ms_hybla_regrows_a_quarter_as_fast_as_at_25() {
    // ρ = 100/50 = 2: ρ² = 4 segments a round trip in avoidance, where RTT0 25 ms gives 16.
    let s = long_flow(
        "hybla",
        100.0,
        100.0,
        6.0,
        json!({"type": "scheduled", "packets": [2000]}),
        json!({"initial_ssthresh_pkts": 300, "hybla": {"rtt0_ms": 50}}),
        0.005,
    );
    let r = run(&s);
    let (at, _) = first_reduction(&cwnd_trace(&r));
    let grown = growth(&r, at + 0.3, 5.0, 0.1);
    assert!((15.0..25.0).contains(&grown), "grew {grown:.1} in 5 round trips");
}

#[test]
fn scalables_b_sets_the_share_a_loss_takes_and_a_its_growth() {
    let s = long_flow(
        "scalable",
        100.0,
        100.0,
        6.0,
        json!({"type": "scheduled", "packets": [2000]}),
        json!({"initial_ssthresh_pkts": 300, "scalable": {"a": 0.02, "b": 0.3}}),
        0.005,
    );
    let r = run(&s);
    let trace = cwnd_trace(&r);
    let (at, peak) = first_reduction(&trace);
    let ratio = min_cwnd_after(&r, at - 0.001) / peak;
    assert!((ratio - 0.7).abs() < 0.02, "kept {ratio:.3}, 1 − 0.3");
    let from = cwnd_at(&trace, at + 0.5);
    let expected = from * (1.02f64.powi(10) - 1.0);
    let grown = growth(&r, at + 0.5, 10.0, 0.1);
    assert!(
        (grown - expected).abs() < 0.25 * expected,
        "grew {grown:.1} from {from:.1}, expected {expected:.1}"
    );
}

// ---- DCTCP (RFC 8257, issue 17) ----

/// A datacenter-like dumbbell: hosts on 10 Gb/s links into a 1 Gb/s bottleneck with 50 µs one
/// way, flows of 200 µs round-trip propagation (a BDP of about 25 packets of 1 kB), and a
/// bottleneck buffer of `limit` packets that marks ECN-capable arrivals at `k` packets or more
/// (DCTCP's switch, RFC 8257 §3.1).
fn datacenter_net(limit: u32, k: Option<u32>) -> Value {
    let mut queue = json!({"type": "droptail", "limit_pkts": limit});
    if let Some(k) = k {
        queue["ecn_threshold_pkts"] = json!(k);
    }
    json!({"dumbbell": {"access": {"rate_mbps": 10_000},
                        "bottleneck": {"rate_mbps": 1000, "delay_ms": 0.05, "queue": queue}}})
}

fn datacenter(flows: Value, k: u32, duration_s: f64) -> Value {
    json!({
        "duration_s": duration_s, "warmup_s": duration_s / 4.0, "seed": 3,
        "topology": datacenter_net(300, Some(k)),
        "flows": flows,
    })
}

fn dctcp_flows(n: usize) -> Value {
    (0..n)
        .map(|i| json!({"name": format!("d{i}"), "variant": "dctcp", "rtt_ms": 0.2, "start_s": i as f64 * 0.01}))
        .collect()
}

/// Seconds to send one 1040-byte packet at 1 Gb/s.
const DC_PACKET_S: f64 = 1040.0 * 8.0 / 1e9;

#[test]
fn dctcp_keeps_the_queue_near_the_marking_threshold_with_the_link_full_and_nothing_lost() {
    for k in [20, 60] {
        let r = run(&datacenter(dctcp_flows(2), k, 2.0));
        let l = &r.links[0];
        assert!(l.utilization > 0.98, "K {k}: utilization {}", l.utilization);
        assert_eq!(l.drops, 0, "K {k}");
        assert!(l.ecn_marks.unwrap() > 100, "K {k}: {:?} marks", l.ecn_marks);
        // The sawtooth oscillates just around K (the marks stop the flows within a round
        // trip of crossing it): the mean within K/2..3K/2, the p99 far below the buffer.
        let mean = l.mean_queue_pkts;
        assert!(
            mean > 0.5 * k as f64 && mean < 1.5 * k as f64,
            "K {k}: mean queue {mean}"
        );
        let p99 = l.p99_queue_delay_s.unwrap() / DC_PACKET_S;
        assert!(p99 < 2.0 * k as f64 + 10.0, "K {k}: p99 {p99} packets");
        assert!(r.flows.iter().all(|f| f.timeouts == 0 && f.retransmits == 0));
    }
}

#[test]
fn dctcp_alpha_tracks_the_fraction_of_its_segments_marked_and_rises_as_k_falls() {
    let alpha_and_fraction = |k| {
        let r = run(&datacenter(dctcp_flows(1), k, 2.0));
        let f = &r.flows[0];
        let fraction = f.ecn_marks_received.unwrap() as f64 / f.packets_sent as f64;
        (f.dctcp_alpha.unwrap(), fraction)
    };
    let (low_k, high_k) = (alpha_and_fraction(8), alpha_and_fraction(40));
    for (alpha, fraction) in [low_k, high_k] {
        // One flow, ACKs per segment: α within 10 % of the marked fraction (0.19–0.25 here).
        assert!(
            fraction > 0.05 && (alpha - fraction).abs() < 0.1 * fraction,
            "α {alpha} against {fraction} of segments marked"
        );
    }
    assert!(low_k.0 > high_k.0, "α at K 8 {low_k:?}, at K 40 {high_k:?}");
}

#[test]
fn dctcp_beside_cubic_with_ecn_under_the_same_threshold_takes_the_larger_share_without_losses() {
    let flows = json!([
        {"name": "dctcp", "variant": "dctcp", "rtt_ms": 0.2},
        {"name": "cubic", "variant": "cubic", "rtt_ms": 0.2, "tcp": {"ecn": true}},
    ]);
    let r = run(&datacenter(flows, 20, 2.0));
    let (d, c) = (&r.flows[0], &r.flows[1]);
    // CUBIC answers each marked window with RFC 3168's 30 % cut, DCTCP with α/2 of a few
    // per cent: on one step threshold DCTCP gets most of the link, CUBIC still a share.
    assert!(r.links[0].utilization > 0.98);
    assert_eq!(r.links[0].drops, 0);
    assert!(
        d.goodput_bps > 1.5 * c.goodput_bps,
        "DCTCP {} CUBIC {}",
        d.goodput_bps,
        c.goodput_bps
    );
    assert!(c.goodput_bps > 0.02e9, "CUBIC {}", c.goodput_bps);
    assert!(d.dctcp_alpha.unwrap() < 0.5 && c.dctcp_alpha.is_none());
}

#[test]
fn an_incast_of_sixteen_dctcp_senders_into_one_port_finishes_without_a_timeout() {
    // Sixteen senders answer one request at once with 64 kB each (a partition/aggregate
    // query); a 100-packet buffer that marks at 20. Plain NewReno through the same buffer
    // without marking fills it in the first round trips and loses packets.
    let incast = |variant: &str, k: Option<u32>, tcp: Value| {
        let flows: Vec<Value> = (0..16)
            .map(|i| {
                json!({"name": format!("s{i}"), "variant": variant, "rtt_ms": 0.2,
                            "app": {"type": "ftp", "bytes": 64_000}, "tcp": tcp})
            })
            .collect();
        run(&json!({"duration_s": 1.0, "seed": 4, "topology": datacenter_net(100, k), "flows": flows}))
    };
    let r = incast("dctcp", Some(20), json!({}));
    assert!(
        r.flows.iter().all(|f| f.timeouts == 0 && f.download_time_s.is_some()),
        "{:?}",
        r.flows
    );
    assert_eq!(r.links[0].drops, 0);
    let plain = incast("newreno-sbs", None, json!({}));
    assert!(plain.links[0].drops > 0, "NewReno without marking overflows the buffer");
    // The linux profile's ten-segment initial windows overflow the port in the first round trip.
    // DCTCP's first cut (α = 1) then leaves too few segments in flight for three duplicate
    // ACKs: without RACK-TLP most flows time out (11 of 16); with it (the profile's) each loss
    // is repaired by fast retransmit.
    let timeouts = |tcp: Value| {
        let r = incast("dctcp", Some(20), tcp);
        assert!(r.links[0].drops > 0);
        r.flows.iter().map(|f| f.timeouts).sum::<u64>()
    };
    assert_eq!(timeouts(json!({"profile": "linux"})), 0);
    assert!(timeouts(json!({"profile": "linux", "rack": false})) > 8);
}

#[test]
fn a_marking_threshold_of_zero_or_past_the_buffer_is_refused_at_its_path() {
    for k in [0, 301] {
        let s = datacenter(dctcp_flows(1), k, 1.0);
        let err = tcpsim_core::validate_json(&s.to_string()).expect_err("K outside 1..=limit");
        assert_eq!(
            err.path(),
            Some("$.topology.dumbbell.bottleneck.queue.ecn_threshold_pkts"),
            "K {k}: {err}"
        );
    }
}
