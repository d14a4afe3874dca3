//! Whole scenarios: determinism, topologies, traffic, queues, limits, traces, and the errors
//! bad input gets.

use serde_json::{json, Value};
use tcpsim_core::{run_json, run_json_with_stop, validate_json, RunResult, SimError, StopSignal};

fn run(s: &Value) -> RunResult {
    run_json(&s.to_string()).unwrap_or_else(|e| panic!("{e}"))
}

fn without_stats(r: &RunResult) -> String {
    let mut v = serde_json::to_value(r).unwrap();
    v.as_object_mut().unwrap().remove("stats");
    v.to_string()
}

fn dumbbell(flows: Value) -> Value {
    json!({
        "duration_s": 20, "warmup_s": 5, "seed": 7,
        "topology": {"dumbbell": {"bottleneck": {"rate_mbps": 10, "delay_ms": 10,
                                                 "queue": {"type": "droptail", "limit_pkts": 50}}}},
        "flows": flows
    })
}

#[test]
fn the_same_scenario_and_seed_give_bit_identical_results_and_another_seed_does_not() {
    let s = dumbbell(json!([
        {"name": "a", "variant": "newreno-sbs", "rtt_ms": 40, "loss": {"type": "uniform", "rate": 0.001}},
        {"name": "b", "variant": "sack", "rtt_ms": {"uniform": [20, 200]}, "count": 3},
        {"name": "web", "count": 4, "rtt_ms": 60, "app": {"type": "http"}}
    ]));
    let first = without_stats(&run(&s));
    assert_eq!(first, without_stats(&run(&s)));
    let mut other = s.clone();
    other["seed"] = json!(8);
    assert_ne!(first, without_stats(&run(&other)));
}

#[test]
fn flows_sharing_a_bottleneck_fill_it_and_share_it_fairly() {
    let r = run(&dumbbell(
        json!([{"name": "f", "count": 4, "variant": "reno", "rtt_ms": 40}]),
    ));
    let bottleneck = &r.links[0];
    assert!(bottleneck.utilization > 0.97, "{}", bottleneck.utilization);
    assert!(bottleneck.queue_drops > 0);
    let jain = r.fairness.jain.unwrap();
    assert!(jain > 0.9, "equal RTTs share fairly: {jain}");
    assert_eq!(r.fairness.uf_percent, None, "UF needs two RTT classes");
    let goodput: f64 = r.flows.iter().map(|f| f.goodput_bps).sum();
    assert!(
        goodput < 10e6 * 1000.0 / 1040.0 * 1.001,
        "goodput {goodput} cannot beat the link"
    );
}

#[test]
fn a_short_rtt_flow_beats_a_long_one_and_uf_says_how_much() {
    let r = run(&dumbbell(json!([
        {"name": "short", "variant": "reno", "rtt_ms": 20},
        {"name": "long", "variant": "reno", "rtt_ms": 200}
    ])));
    assert!(r.flows[0].goodput_bps > 1.5 * r.flows[1].goodput_bps);
    assert!(r.fairness.uf_percent.unwrap() > 40.0);
}

#[test]
fn paper_002s_six_node_graph_routes_tcp_and_cbr_through_the_shared_link() {
    let s = json!({
        "duration_s": 10, "warmup_s": 2,
        "topology": {"graph": {
            "nodes": ["n0", "n1", "n2", "n3", "n4", "n5"],
            "links": [
                {"from": "n0", "to": "n2", "rate_mbps": 10, "delay_ms": 2},
                {"from": "n1", "to": "n2", "rate_mbps": 10, "delay_ms": 2},
                {"name": "core", "from": "n2", "to": "n3", "rate_mbps": 10, "delay_ms": 10,
                 "queue": {"type": "droptail", "limit_pkts": 100}},
                {"from": "n3", "to": "n4", "rate_mbps": 10, "delay_ms": 2},
                {"from": "n3", "to": "n5", "rate_mbps": 10, "delay_ms": 2}
            ]}},
        "flows": [
            {"name": "tcp", "variant": "newreno-sbs", "from": "n0", "to": "n4"},
            {"name": "cbr", "type": "udp", "from": "n1", "to": "n5", "app": {"type": "cbr", "rate_mbps": 4}}
        ]
    });
    let r = run(&s);
    let tcp = &r.flows[0];
    let cbr = &r.flows[1];
    assert_eq!(tcp.rtt_propagation_s, 0.028);
    assert!((cbr.goodput_bps - 4e6).abs() < 0.1e6 || cbr.drops > 0, "{cbr:?}");
    let core = r.links.iter().find(|l| l.name == "core").unwrap();
    assert!(
        core.utilization > 0.95,
        "TCP takes what CBR leaves: {}",
        core.utilization
    );
    assert!(tcp.goodput_bps > 4e6, "{}", tcp.goodput_bps);
    let idle = r.links.iter().find(|l| l.name == "n0-n2-rev").unwrap();
    assert!(idle.packets > 0, "ACKs come back on the reverse direction");
}

#[test]
fn http_sessions_download_pareto_files_and_think_between_them() {
    let r = run(&dumbbell(json!([
        {"name": "web", "count": 8, "rtt_ms": {"uniform": [20, 460]},
         "app": {"type": "http", "mean_file_bytes": 48000, "shape": 1.2, "mean_think_s": 0.5},
         "tcp": {"max_window_pkts": 64}}
    ])));
    let downloads: u64 = r.flows.iter().map(|f| f.downloads).sum();
    assert!(downloads > 40, "{downloads} downloads in 20 s");
    for f in &r.flows {
        if let Some(t) = f.download_time_s {
            assert!(t > f.rtt_propagation_s, "a download takes at least a round trip: {t}");
        }
    }
    let rtts: Vec<f64> = r.flows.iter().map(|f| f.rtt_propagation_s).collect();
    assert!(rtts.iter().all(|r| (0.02..=0.46).contains(r)), "{rtts:?}");
    assert!(rtts.windows(2).any(|w| w[0] != w[1]), "RTTs are drawn per flow");
}

#[test]
fn an_ftp_download_of_a_given_size_reports_its_response_time() {
    let r = run(&dumbbell(
        json!([{"variant": "reno", "rtt_ms": 40, "app": {"type": "ftp", "bytes": 1_000_000}}]),
    ));
    let t = r.flows[0].download_time_s.unwrap();
    // 1 MB at 10 Mb/s is 0.8 s; slow start and a loss or two add a few round trips.
    assert!((0.8..3.0).contains(&t), "{t}");
}

#[test]
fn red_keeps_the_average_queue_between_its_thresholds() {
    let mut s = dumbbell(json!([{"name": "f", "count": 8, "variant": "newreno-sbs", "rtt_ms": 40}]));
    s["topology"]["dumbbell"]["bottleneck"]["queue"] =
        json!({"type": "red", "limit_pkts": 150, "min_th_pkts": 20, "max_th_pkts": 60, "max_p": 0.1});
    let r = run(&s);
    let q = r.links[0].mean_queue_pkts;
    assert!((10.0..=70.0).contains(&q), "mean queue {q}");
    let mut droptail = s.clone();
    droptail["topology"]["dumbbell"]["bottleneck"]["queue"] = json!({"type": "droptail", "limit_pkts": 150});
    assert!(
        run(&droptail).links[0].mean_queue_pkts > q,
        "Drop-Tail keeps a fuller queue"
    );
}

#[test]
fn traces_sample_cwnd_and_queue_at_the_chosen_interval() {
    let mut s = dumbbell(json!([{"name": "f", "variant": "reno", "rtt_ms": 40}]));
    s["outputs"] = json!({"trace_interval_s": 0.5, "trace": ["cwnd", "queue"]});
    let r = run(&s);
    let t = r.traces.unwrap();
    assert_eq!(t.time_s.len(), 41);
    let f = &t.flows[0];
    assert_eq!(f.cwnd.as_ref().unwrap().len(), 41);
    assert!(f.ssthresh.is_none());
    assert_eq!(t.links[0].name, "bottleneck");
    assert!(t.links[0].queue.iter().any(|&q| q > 0));
}

fn error(s: &Value) -> SimError {
    validate_json(&s.to_string()).expect_err("the scenario is invalid")
}

#[test]
fn too_many_trace_points_is_refused_before_running() {
    let mut s = dumbbell(json!([{"count": 100, "rtt_ms": 40}]));
    s["outputs"] = json!({"trace_interval_s": 0.001});
    assert_eq!(error(&s).path(), Some("$.outputs.max_trace_points"));
}

#[test]
fn a_run_past_its_event_limit_stops_with_a_clear_error() {
    let mut s = dumbbell(json!([{"rtt_ms": 40}]));
    s["limits"] = json!({"max_events": 1000});
    match run_json(&s.to_string()) {
        Err(SimError::LimitExceeded { message }) => assert!(message.contains("event limit"), "{message}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn an_event_limit_equal_to_what_the_run_needs_is_not_an_error() {
    let s = dumbbell(json!([{"rtt_ms": 40}]));
    let needed = run(&s).stats.events;
    let mut limited = s.clone();
    limited["limits"] = json!({"max_events": needed});
    assert_eq!(run(&limited).stats.events, needed);
    limited["limits"] = json!({"max_events": needed - 1});
    assert!(run_json(&limited.to_string()).is_err());
}

#[test]
fn a_stop_signalled_from_another_thread_ends_a_long_run_within_moments() {
    // An hour of a 100 Mb/s dumbbell: minutes of work, unless stopped.
    let mut s = dumbbell(json!([{"rtt_ms": 40, "count": 20}]));
    s["duration_s"] = json!(3600);
    s["topology"]["dumbbell"]["bottleneck"]["rate_mbps"] = json!(100);
    let stop = StopSignal::new();
    let stopper = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(200));
            stop.stop();
            std::time::Instant::now()
        })
    };
    let outcome = run_json_with_stop(&s.to_string(), &stop);
    let ended = std::time::Instant::now();
    let signalled = stopper.join().unwrap();
    match outcome {
        Err(SimError::Stopped { message }) => assert!(message.contains("simulated time"), "{message}"),
        other => panic!("{other:?}"),
    }
    let latency = ended.saturating_duration_since(signalled);
    assert!(
        latency < std::time::Duration::from_millis(500),
        "stopped {latency:?} after the signal"
    );
}

#[test]
fn a_signal_never_raised_changes_nothing_in_the_result() {
    let s = dumbbell(json!([{"rtt_ms": 40, "count": 3}]));
    let watched = run_json_with_stop(&s.to_string(), &StopSignal::new()).unwrap();
    assert_eq!(without_stats(&watched), without_stats(&run(&s)));
    assert_eq!(watched.stats.events, run(&s).stats.events);
}

#[test]
fn a_run_whose_signal_was_raised_before_it_started_ends_at_its_first_check() {
    let s = dumbbell(json!([{"rtt_ms": 40}]));
    let stop = StopSignal::new();
    stop.stop();
    match run_json_with_stop(&s.to_string(), &stop) {
        Err(e @ SimError::Stopped { .. }) => assert_eq!((e.kind(), e.path()), ("stopped", None)),
        other => panic!("{other:?}"),
    }
}

#[test]
fn bad_values_are_refused_with_the_path_of_the_field() {
    let cases: Vec<(Value, &str)> = vec![
        (json!({"duration_s": -1}), "$.duration_s"),
        (json!({"warmup_s": 30}), "$.warmup_s"),
        (json!({"flows": []}), "$.flows"),
        (
            json!({"flows": [{"rtt_ms": 40, "variant": "cubicle"}]}),
            "$.flows[0].variant",
        ),
        (json!({"flows": [{"rtt_ms": 10}]}), "$.flows[0].rtt_ms"),
        (json!({"flows": [{}]}), "$.flows[0].rtt_ms"),
        (
            json!({"flows": [{"rtt_ms": 40, "tcp": {"min_rto_s": 2, "max_rto_s": 1}}]}),
            "$.flows[0].tcp.max_rto_s",
        ),
        (
            json!({"flows": [{"rtt_ms": 40, "loss": {"type": "bernoulli_events", "p": 1.5, "m": 3}}]}),
            "$.flows[0].loss.p",
        ),
        (
            json!({"flows": [{"rtt_ms": 40, "loss": {"type": "bernoulli_events", "p": 0.1, "m": 0}}]}),
            "$.flows[0].loss.m",
        ),
        (
            json!({"flows": [{"rtt_ms": 40, "app": {"type": "http", "shape": 0.9}}]}),
            "$.flows[0].app.shape",
        ),
        (
            json!({"flows": [{"rtt_ms": 40, "app": {"type": "cbr", "rate_mbps": 1}}]}),
            "$.flows[0].app",
        ),
        (
            json!({"flows": [{"rtt_ms": 40, "name": "x"}, {"rtt_ms": 40, "name": "x"}]}),
            "$.flows[1].name",
        ),
        (
            json!({"flows": [{"rtt_ms": {"uniform": [300, 100]}}]}),
            "$.flows[0].rtt_ms.uniform",
        ),
        (
            json!({"flows": [{"rtt_ms": 40, "start_s": {"uniform": [0, 1], "sead": 3}}]}),
            "$.flows[0].start_s",
        ),
        (
            json!({"flows": [{"rtt_ms": 40, "variant": "sack", "tcp": {"sack": false}}]}),
            "$.flows[0].tcp.sack",
        ),
        (
            json!({"flows": [{"rtt_ms": 40, "variant": "rate-halving", "tcp": {"sack": false}}]}),
            "$.flows[0].tcp.sack",
        ),
        (
            json!({"flows": [{"rtt_ms": 40, "tcp": {"initial_rto_s": 1e-10, "min_rto_s": 1e-10}}]}),
            "$.flows[0].tcp.initial_rto_s",
        ),
        (
            json!({"outputs": {"trace_interval_s": 4e-10}}),
            "$.outputs.trace_interval_s",
        ),
    ];
    for (patch, path) in cases {
        let mut s = dumbbell(json!([{"rtt_ms": 40}]));
        for (k, v) in patch.as_object().unwrap() {
            s[k] = v.clone();
        }
        let e = error(&s);
        assert_eq!(e.path(), Some(path), "{patch}: {e}");
        assert!(e.to_string().len() > path.len() + 20, "the message says why: {e}");
    }
}

#[test]
fn a_variant_parameter_out_of_range_is_refused_with_its_path() {
    let cases: Vec<(&str, Value, &str)> = vec![
        ("cubic", json!({"cubic": {"beta": 1.0}}), "$.flows[0].tcp.cubic.beta"),
        ("cubic", json!({"cubic": {"beta": 0}}), "$.flows[0].tcp.cubic.beta"),
        ("cubic", json!({"cubic": {"c": 0}}), "$.flows[0].tcp.cubic.c"),
        ("cubic", json!({"cubic": {"c": -0.4}}), "$.flows[0].tcp.cubic.c"),
        ("ssdr", json!({"ssdr": {"grain": 0}}), "$.flows[0].tcp.ssdr.grain"),
        ("ssdr", json!({"ssdr": {"depth": 31}}), "$.flows[0].tcp.ssdr.depth"),
        ("ssdr", json!({"ssdr": {"depth": -1}}), "$.flows[0].tcp.ssdr.depth"),
        (
            "pseudo-rate",
            json!({"pseudo_rate": {"queue_pkts": 0}}),
            "$.flows[0].tcp.pseudo_rate.queue_pkts",
        ),
        // Checked whichever variant the flow runs: a sweep over variants fails up front.
        ("reno", json!({"cubic": {"beta": 1.5}}), "$.flows[0].tcp.cubic.beta"),
        ("vegas", json!({"vegas": {"alpha": 4}}), "$.flows[0].tcp.vegas.beta"),
    ];
    for (variant, tcp, path) in cases {
        let s = dumbbell(json!([{"rtt_ms": 40, "variant": variant, "tcp": tcp}]));
        let e = error(&s);
        assert_eq!(e.path(), Some(path), "{tcp}: {e}");
        assert!(e.to_string().len() > path.len() + 15, "the message says why: {e}");
    }
    let typo = dumbbell(json!([{"rtt_ms": 40, "variant": "cubic", "tcp": {"cubic": {"C": 0.4}}}]));
    let e = error(&typo);
    assert!(
        e.path().is_some_and(|p| p.starts_with("$.flows[0].tcp.cubic")) && e.to_string().contains("`C`"),
        "an unknown knob is refused, not ignored: {e}"
    );
}

#[test]
fn variant_parameters_spelled_out_at_their_defaults_change_nothing_and_other_values_do() {
    let cases = [
        (
            "cubic",
            json!({"cubic": {"c": 0.4, "beta": 0.7}}),
            json!({"cubic": {"beta": 0.5}}),
        ),
        ("cubic", json!({"cubic": {}}), json!({"cubic": {"c": 4.0}})),
        (
            "ssdr",
            json!({"ssdr": {"grain": 2, "depth": 2}}),
            json!({"ssdr": {"depth": 4}}),
        ),
        ("ssdr", json!({"ssdr": {}}), json!({"ssdr": {"grain": 6}})),
        (
            "pseudo-rate",
            json!({"pseudo_rate": {"queue_pkts": 2.0}}),
            json!({"pseudo_rate": {"queue_pkts": 6.0}}),
        ),
        (
            "vegas",
            json!({"vegas": {"alpha": 1, "beta": 3, "gamma": 1}}),
            json!({"vegas": {"alpha": 2, "beta": 4}}),
        ),
    ];
    for (variant, same, other) in cases {
        // Two flows on a shallow buffer, so windows meet losses and queues; SSDR's smooth
        // start needs an ssthresh to approach.
        let s = |tcp: &Value| {
            let mut tcp = tcp.clone();
            if variant == "ssdr" {
                tcp["initial_ssthresh_pkts"] = json!(64);
            }
            let mut s = dumbbell(json!([
                {"name": "a", "variant": variant, "rtt_ms": 40, "tcp": tcp},
                {"name": "b", "variant": variant, "rtt_ms": 60, "tcp": tcp}
            ]));
            s["topology"]["dumbbell"]["bottleneck"]["queue"]["limit_pkts"] = json!(20);
            s
        };
        let default = without_stats(&run(&s(&json!({}))));
        assert_eq!(without_stats(&run(&s(&same))), default, "{variant}: {same}");
        assert_ne!(without_stats(&run(&s(&other))), default, "{variant}: {other}");
    }
}

#[test]
fn every_variant_parameter_at_an_extreme_runs_or_is_refused_but_never_panics() {
    let knobs = [
        ("cubic", "cubic", "c"),
        ("cubic", "cubic", "beta"),
        ("ssdr", "ssdr", "grain"),
        ("ssdr", "ssdr", "depth"),
        ("pseudo-rate", "pseudo_rate", "queue_pkts"),
        ("vegas", "vegas", "alpha"),
        ("vegas", "vegas", "beta"),
        ("vegas", "vegas", "gamma"),
    ];
    for (variant, field, knob) in knobs {
        for extreme in [
            json!(0),
            json!(-1),
            json!(1e300),
            json!(1e-300),
            json!(4294967296u64),
            json!(0.999_999),
        ] {
            let mut s = dumbbell(json!([{"rtt_ms": 40, "variant": variant, "tcp": {field: {knob: extreme}}}]));
            s["duration_s"] = json!(5);
            s["warmup_s"] = json!(0);
            s["flows"][0]["loss"] = json!({"type": "uniform", "rate": 0.01});
            if let Err(e) = run_json(&s.to_string()) {
                assert!(e.path().is_some(), "{variant} {knob} = {extreme}: {e}");
            }
        }
    }
}

#[test]
fn a_graph_flow_between_unconnected_nodes_is_refused() {
    let s = json!({
        "duration_s": 1,
        "topology": {"graph": {"nodes": ["a", "b", "c"], "links": [{"from": "a", "to": "b", "rate_mbps": 1, "delay_ms": 1}]}},
        "flows": [{"from": "a", "to": "c"}]
    });
    let e = error(&s);
    assert_eq!(e.path(), Some("$.flows[0].to"));
    assert!(e.to_string().contains("no path"), "{e}");
}

mod never_panics {
    use super::*;
    use proptest::prelude::*;

    /// Replaces the value at a random place in the scenario tree with an arbitrary one.
    fn mutate(v: &mut Value, path: &[usize], replacement: Value) {
        let Some((&first, rest)) = path.split_first() else {
            *v = replacement;
            return;
        };
        match v {
            Value::Object(map) if !map.is_empty() => {
                let key = map.keys().nth(first % map.len()).unwrap().clone();
                mutate(map.get_mut(&key).unwrap(), rest, replacement);
            }
            Value::Array(items) if !items.is_empty() => {
                let n = items.len();
                mutate(&mut items[first % n], rest, replacement);
            }
            _ => *v = replacement,
        }
    }

    fn any_json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(|n| json!(n)),
            any::<f64>()
                .prop_filter("JSON numbers are finite", |x| x.is_finite())
                .prop_map(|x| json!(x)),
            prop_oneof![Just(0.0), Just(-1.0), Just(1e300), Just(1e-300), Just(4294967296.0)].prop_map(|x| json!(x)),
            "[a-z_]{0,12}".prop_map(Value::String),
        ];
        leaf.prop_recursive(3, 16, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::btree_map("[a-z_]{1,10}", inner, 0..4)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    fn base() -> Value {
        json!({
            "duration_s": 2, "warmup_s": 0.5, "seed": 1,
            "topology": {"dumbbell": {"bottleneck": {"rate_mbps": 10, "delay_ms": 5,
                "queue": {"type": "red", "limit_pkts": 30}, "loss": {"type": "gilbert_elliott", "p_good_to_bad": 0.01, "p_bad_to_good": 0.3}}}},
            "flows": [
                {"name": "a", "variant": "vegas", "rtt_ms": 40, "app": {"type": "ftp", "bytes": 50000},
                 "loss": {"type": "bernoulli_events", "p": 0.01, "m": 3}, "tcp": {"delayed_ack": true}},
                {"name": "b", "count": 2, "variant": "sack", "rtt_ms": {"uniform": [20, 100]}, "app": {"type": "http"}},
                {"name": "c", "type": "udp", "rtt_ms": 30, "app": {"type": "cbr", "rate_mbps": 1}, "stop_s": 1,
                 "loss": {"type": "outage", "start_s": 0.5, "end_s": 0.7}}
            ],
            "outputs": {"trace_interval_s": 0.1},
            "limits": {"max_events": 200000}
        })
    }

    /// Every numeric field of the base scenario, each set to each extreme: runs or is refused.
    #[test]
    fn every_numeric_field_survives_extreme_values() {
        fn numeric_paths(v: &Value, path: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
            match v {
                Value::Number(_) => out.push(path.clone()),
                Value::Object(m) => m.iter().for_each(|(k, v)| {
                    path.push(k.clone());
                    numeric_paths(v, path, out);
                    path.pop();
                }),
                Value::Array(items) => items.iter().enumerate().for_each(|(i, v)| {
                    path.push(i.to_string());
                    numeric_paths(v, path, out);
                    path.pop();
                }),
                _ => {}
            }
        }
        let mut paths = Vec::new();
        numeric_paths(&base(), &mut Vec::new(), &mut paths);
        // Fields the base leaves at their defaults, reached through the same mechanism.
        for extra in ["mean_think_s", "request_timeout_s", "mean_file_bytes", "shape"] {
            paths.push(vec!["flows".into(), "1".into(), "app".into(), extra.into()]);
        }
        for extra in [
            "delack_timeout_s",
            "initial_rto_s",
            "max_rto_s",
            "min_rto_s",
            "max_window_pkts",
            "mss_bytes",
        ] {
            paths.push(vec!["flows".into(), "0".into(), "tcp".into(), extra.into()]);
        }
        assert!(paths.len() > 30, "{}", paths.len());
        for path in &paths {
            for extreme in [
                json!(0),
                json!(-1),
                json!(1e300),
                json!(1e-300),
                json!(4294967296u64),
                json!(1.5),
            ] {
                let mut s = base();
                let mut slot = &mut s;
                for key in path {
                    slot = match slot {
                        Value::Array(items) => &mut items[key.parse::<usize>().unwrap()],
                        other => other.as_object_mut().unwrap().entry(key.clone()).or_insert(Value::Null),
                    };
                }
                *slot = extreme.clone();
                if let Err(e) = run_json(&s.to_string()) {
                    assert!(!e.to_string().is_empty(), "{path:?} = {extreme}");
                }
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        #[test]
        fn a_mutated_scenario_runs_or_is_refused_but_never_panics(
            path in prop::collection::vec(0usize..8, 0..5),
            replacement in any_json(),
        ) {
            let mut s = base();
            mutate(&mut s, &path, replacement);
            match run_json(&s.to_string()) {
                Ok(r) => prop_assert!(r.stats.events > 0),
                Err(e) => prop_assert!(!e.to_string().is_empty()),
            }
        }

        #[test]
        fn arbitrary_text_is_refused_but_never_panics(text in ".{0,200}") {
            let looks_like_an_object = text.trim_start().starts_with('{');
            prop_assert!(run_json(&text).is_err() || looks_like_an_object, "accepted {:?}", text);
        }
    }
}

#[test]
fn with_no_warmup_every_packet_of_the_run_is_counted() {
    let mut s = dumbbell(
        json!([{"variant": "reno", "rtt_ms": 40, "app": {"type": "ftp", "bytes": 100_000},
                                 "tcp": {"initial_cwnd_pkts": 10}}]),
    );
    s["warmup_s"] = json!(0);
    s["topology"]["dumbbell"]["bottleneck"]["queue"] = json!({"type": "droptail", "limit_pkts": 1000});
    let f = &run(&s).flows[0];
    assert_eq!((f.packets_sent, f.retransmits, f.drops), (100, 0, 0));
    assert_eq!(f.goodput_bps * 20.0 / 8.0, 100_000.0);
}

#[test]
fn a_knob_of_issue_17s_variants_out_of_range_is_refused_with_its_path() {
    let cases: Vec<(&str, Value, &str)> = vec![
        ("scalable", json!({"scalable": {"a": 0}}), "$.flows[0].tcp.scalable.a"),
        ("scalable", json!({"scalable": {"b": 1.0}}), "$.flows[0].tcp.scalable.b"),
        (
            "scalable",
            json!({"scalable": {"legacy_b": 0}}),
            "$.flows[0].tcp.scalable.legacy_b",
        ),
        (
            "hybla",
            json!({"hybla": {"rtt0_ms": 0}}),
            "$.flows[0].tcp.hybla.rtt0_ms",
        ),
        (
            "ledbat",
            json!({"ledbat": {"target_ms": -5}}),
            "$.flows[0].tcp.ledbat.target_ms",
        ),
        ("ledbat", json!({"ledbat": {"gain": 0}}), "$.flows[0].tcp.ledbat.gain"),
        ("lp", json!({"lp": {"threshold": 1.0}}), "$.flows[0].tcp.lp.threshold"),
        (
            "lp",
            json!({"lp": {"inference_rtts": 0}}),
            "$.flows[0].tcp.lp.inference_rtts",
        ),
        ("yeah", json!({"yeah": {"gamma": 0}}), "$.flows[0].tcp.yeah.gamma"),
        ("yeah", json!({"yeah": {"phy": 0}}), "$.flows[0].tcp.yeah.phy"),
        ("yeah", json!({"yeah": {"epsilon": 17}}), "$.flows[0].tcp.yeah.epsilon"),
        (
            "reno",
            json!({"yeah": {"stcp_ai_factor": 0}}),
            "$.flows[0].tcp.yeah.stcp_ai_factor",
        ),
    ];
    for (variant, tcp, path) in cases {
        let s = dumbbell(json!([{"rtt_ms": 40, "variant": variant, "tcp": tcp}]));
        let e = error(&s);
        assert_eq!(e.path(), Some(path), "{tcp}: {e}");
        assert!(e.to_string().len() > path.len() + 15, "the message says why: {e}");
    }
}
