//! ECN end to end (RFC 3168, issue 17): through a queue that marks instead of dropping, an
//! ECN flow keeps its window in check without losing packets; the same flow without ECN loses
//! them to the same queue.

use serde_json::{json, Value};
use tcpsim_core::metrics::{FlowResult, LinkResult};
use tcpsim_core::{run_json, RunResult};

fn run(s: &Value) -> RunResult {
    run_json(&s.to_string()).unwrap_or_else(|e| panic!("{e}"))
}

/// One `variant` flow over 10 Mb/s, 20 ms one way (a BDP of 48 packets), through `queue` on
/// the bottleneck, 40 s measured after 20 (the first slow start overflows the buffer and is repaired by then).
fn dumbbell(queue: Value, variant: &str, ecn: bool) -> Value {
    json!({
        "duration_s": 60, "warmup_s": 20, "seed": 5,
        "topology": {"dumbbell": {"bottleneck": {"rate_mbps": 10, "delay_ms": 20, "queue": queue}}},
        "flows": [{"name": "f", "variant": variant, "rtt_ms": 40, "tcp": {"ecn": ecn}}],
    })
}

fn parts(r: &RunResult) -> (&FlowResult, &LinkResult) {
    (&r.flows[0], r.links.iter().find(|l| l.name == "bottleneck").unwrap())
}

#[test]
fn an_ecn_flow_through_a_marking_red_or_codel_queue_loses_nothing_and_keeps_the_link_busy_where_a_plain_flow_loses_packets(
) {
    let queues = [
        json!({"type": "red", "limit_pkts": 150, "ecn": true}),
        json!({"type": "codel", "limit_pkts": 1000, "ecn": true}),
    ];
    for queue in queues {
        for variant in ["newreno-sbs", "cubic"] {
            let what = format!("{variant} through {}", queue["type"]);
            let marked = run(&dumbbell(queue.clone(), variant, true));
            let (f, l) = parts(&marked);
            // The queue marks where it would drop: no packet is lost, none resent.
            assert_eq!((f.drops, f.retransmits, l.queue_drops), (0, 0, 0), "{what}");
            let marks = l.ecn_marks.unwrap();
            assert!(marks > 10, "{what}: {marks} marks");
            assert_eq!(
                f.ecn_marks_received,
                Some(marks),
                "{what}: every mark reaches the receiver"
            );
            // The marks took the window down, at most once per window of data: a reduction
            // per marked window, never more than the marks.
            let reductions = f.cwnd_reductions_ecn.unwrap();
            assert!(
                reductions > 10 && reductions <= marks,
                "{what}: {reductions} reductions, {marks} marks"
            );
            // As with drops (tests/aqm.rs): NewReno's halving under CoDel's 5 ms queue idles
            // the link for part of each sawtooth (0.87 here); RED's longer queue does not.
            assert!(l.utilization > 0.85, "{what}: utilization {}", l.utilization);

            let plain = run(&dumbbell(queue.clone(), variant, false));
            let (f, l) = parts(&plain);
            assert!(
                f.drops > 10 && f.retransmits > 10,
                "{what} without ECN: {} drops",
                f.drops
            );
            assert_eq!(l.ecn_marks, Some(0), "{what}: nothing ECN-capable to mark");
            assert_eq!((f.ecn_marks_received, f.cwnd_reductions_ecn), (None, None));
        }
    }
}
