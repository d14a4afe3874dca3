//! RACK-TLP (RFC 8985, `tcp.rack`) against RFC 6675's DupThresh loss detection on the same
//! losses and the same reordering.
//!
//! The tail-loss test runs whole scenarios (the simulator's timers included). tcpsim's links
//! deliver in order, so the reordering and lost-retransmission tests drive a sender and a
//! receiver through a small path of their own: a 1 ms-per-segment bottleneck, 50 ms each way,
//! and a per-transmission fate — delivered, delivered late by some milliseconds (reordered),
//! or dropped.

use std::collections::{BTreeMap, HashMap};

use serde_json::{json, Value};
use tcpsim_core::packet::{Packet, PacketKind};
use tcpsim_core::scenario::{SackRecovery, TcpConfig};
use tcpsim_core::tcp::{SenderCounters, TcpReceiver, TcpSender};
use tcpsim_core::time::SimTime;
use tcpsim_core::RunResult;

const MS: SimTime = 1_000_000;

/// A 300-segment download through a 10 Mb/s dumbbell, 100 ms round trip, no queue drops;
/// `drops` names the lost packets (as tests/behaviour.rs does).
fn download(variant: &str, tcp: Value, drops: &[u64]) -> RunResult {
    let mut cfg = json!({"initial_ssthresh_pkts": 40, "initial_cwnd_pkts": 2});
    if let (Some(base), Some(extra)) = (cfg.as_object_mut(), tcp.as_object()) {
        base.extend(extra.clone());
    }
    let s = json!({
        "duration_s": 30, "seed": 1,
        "topology": {"dumbbell": {"bottleneck": {"rate_mbps": 10, "delay_ms": 10,
                                                 "queue": {"type": "droptail", "limit_pkts": 10000}}}},
        "flows": [{"name": "f", "variant": variant, "rtt_ms": 100,
                   "app": {"type": "ftp", "bytes": 300_000},
                   "tcp": cfg,
                   "loss": {"type": "scheduled", "packets": drops}}],
    });
    tcpsim_core::run_json(&s.to_string()).expect("scenario runs")
}

#[test]
fn a_lost_last_segment_is_repaired_by_a_tail_loss_probe_without_a_timeout_and_the_download_ends_sooner() {
    // Packet 300 is the first transmission of segment 299, the last of the file: no segment
    // follows it, so no duplicate ACK or SACK can reveal its loss. With RFC 6298's 1 s minimum
    // RTO the probe (2·SRTT, about 0.2 s) comes well before the timer; with tcpsim's default
    // 0.2 s both fire together (the PTO is never later than the RTO), and the probe only saves
    // the timeout's collapse of the window.
    for sack_recovery in ["rfc6675", "prr"] {
        let tcp = json!({"sack_recovery": sack_recovery, "min_rto_s": 1.0});
        let plain = download("sack", tcp.clone(), &[300]);
        let mut with_rack = tcp.clone();
        with_rack["rack"] = json!(true);
        let rack = download("sack", with_rack, &[300]);
        let (p, r) = (&plain.flows[0], &rack.flows[0]);
        assert_eq!((p.timeouts, p.retransmits), (1, 1), "{sack_recovery}: {p:?}");
        assert_eq!((r.timeouts, r.retransmits), (0, 1), "{sack_recovery}: {r:?}");
        let (tp, tr) = (p.download_time_s.unwrap(), r.download_time_s.unwrap());
        assert!(tr < tp - 0.5, "{sack_recovery}: RACK-TLP {tr} s, RFC 6675 {tp} s");
    }
    // Without a loss RACK-TLP changes nothing: no probe goes out while ACKs keep coming.
    let plain = download("sack", json!({}), &[]);
    let rack = download("sack", json!({"rack": true}), &[]);
    assert_eq!(rack.flows[0].packets_sent, plain.flows[0].packets_sent);
    assert_eq!(rack.flows[0].download_time_s, plain.flows[0].download_time_s);
}

#[test]
fn rack_is_refused_where_no_sack_scoreboard_decides_losses() {
    for (variant, tcp) in [
        ("newreno-sbs", json!({"rack": true})),
        ("sack", json!({"rack": true, "sack_recovery": "ns2_sack1"})),
    ] {
        let s = json!({
            "duration_s": 1,
            "topology": {"dumbbell": {"bottleneck": {"rate_mbps": 10, "delay_ms": 10}}},
            "flows": [{"name": "f", "variant": variant, "rtt_ms": 100, "tcp": tcp}],
        });
        let err = tcpsim_core::validate_json(&s.to_string()).unwrap_err().to_string();
        assert!(err.contains("$.flows[0].tcp.rack"), "{variant}: {err}");
    }
}

/// What the path does to one transmission: delivered `late` ns after its time, or dropped.
#[derive(Clone, Copy, PartialEq)]
enum Fate {
    Late(SimTime),
    Dropped,
}

struct Transfer {
    counters: SenderCounters,
    /// Retransmissions per segment.
    resent: HashMap<u32, u32>,
    finished_at: Option<SimTime>,
}

/// Sends `segments` with `variant` (cwnd 10 at first) through the small path; `fate(seq, n)`
/// decides the n-th transmission (0: the first) of segment `seq`.
fn transfer(rack: bool, segments: u32, fate: impl Fn(u32, u32) -> Fate) -> Transfer {
    const ONE_WAY: SimTime = 50 * MS;
    const PER_SEGMENT: SimTime = MS;
    let cfg = TcpConfig {
        initial_cwnd_pkts: 10.0,
        rack,
        sack_recovery: SackRecovery::Prr,
        ..TcpConfig::default()
    };
    let mss = cfg.mss_bytes;
    let mut tx = TcpSender::new(0, "sack", cfg.into());
    let mut rx = TcpReceiver::new(0, mss, 40, true, false, 0.1);
    rx.expect(1, Some((segments, mss)), 0);
    // Arrivals by (time, order): true for the receiver.
    let mut arrivals: BTreeMap<(SimTime, u64), (bool, Packet)> = BTreeMap::new();
    let (mut order, mut link_free) = (0u64, 0);
    let mut sent: HashMap<u32, u32> = HashMap::new();
    let mut resent: HashMap<u32, u32> = HashMap::new();
    let mut out = Vec::new();
    let mut now = 0;
    tx.start(Some(segments as u64 * mss as u64), 1, now, 0, &mut out);
    let mut finished_at = None;
    while now < 60_000 * MS {
        for p in out.drain(..) {
            order += 1;
            if p.kind == PacketKind::Ack {
                arrivals.insert((now + ONE_WAY, order), (false, p));
                continue;
            }
            let n = sent.entry(p.seq).or_default();
            if p.retransmission {
                *resent.entry(p.seq).or_default() += 1;
            }
            link_free = link_free.max(now) + PER_SEGMENT;
            if let Fate::Late(late) = fate(p.seq, *n) {
                arrivals.insert((link_free + ONE_WAY + late, order), (true, p));
            }
            *n += 1;
        }
        if tx.finished() {
            finished_at = Some(now);
            break;
        }
        let next_arrival = arrivals.keys().next().map(|k| k.0);
        let timer = tx.timer_deadline();
        if let Some(at) = next_arrival.filter(|&a| timer.is_none_or(|t| a <= t)) {
            let (_, (to_receiver, p)) = arrivals.pop_first().expect("an arrival is due");
            now = at;
            if to_receiver {
                rx.on_data(&p, now, &mut out);
            } else {
                tx.on_ack(&p, now, &mut out);
            }
        } else if let Some(t) = timer {
            now = t;
            tx.on_timeout(now, &mut out);
        } else {
            break;
        }
    }
    Transfer {
        counters: tx.counters,
        resent,
        finished_at,
    }
}

#[test]
fn reordering_within_the_reordering_window_causes_no_retransmission_where_three_duplicate_acks_cause_one() {
    // Nothing is lost. Segment 1 arrives 1.5 ms late, behind segment 2 only: RACK sees
    // reordering (§6.2 step 3) and widens its window to min_RTT / 4, about 25 ms. Segment 30
    // arrives 10 ms late, behind about ten segments: three duplicate ACKs, but within RACK's
    // window.
    let fate = |seq, _| match seq {
        1 => Fate::Late(3 * MS / 2),
        30 => Fate::Late(10 * MS),
        _ => Fate::Late(0),
    };
    let plain = transfer(false, 100, fate);
    let rack = transfer(true, 100, fate);
    let (p, r) = (&plain.counters, &rack.counters);
    assert!(
        p.retransmits >= 1 && p.fast_recoveries >= 1,
        "RFC 6675 takes the late segment 30 for lost: {p:?}"
    );
    assert_eq!(
        (r.retransmits, r.fast_recoveries, r.timeouts),
        (0, 0, 0),
        "RACK waits: {r:?}"
    );
    assert!(rack.finished_at.unwrap() <= plain.finished_at.unwrap());
}

#[test]
fn a_lost_retransmission_is_found_by_rack_and_resent_without_a_timeout_where_rfc6675_waits_for_the_timer() {
    // Segment 20 and then its fast retransmission are lost. RACK judges the retransmission by
    // its own send time: lost once segments sent after it are SACKed and a round trip passed.
    let fate = |seq, n| match (seq, n) {
        (20, 0 | 1) => Fate::Dropped,
        _ => Fate::Late(0),
    };
    let plain = transfer(false, 100, fate);
    let rack = transfer(true, 100, fate);
    assert_eq!(rack.resent[&20], 2, "resent twice");
    assert_eq!(rack.counters.timeouts, 0, "no timeout: {:?}", rack.counters);
    assert_eq!(rack.counters.fast_recoveries, 1, "one recovery repairs both losses");
    assert!(
        plain.counters.timeouts >= 1,
        "RFC 6675 counts the lost retransmission in flight until the timer: {:?}",
        plain.counters
    );
    assert!(rack.finished_at.unwrap() < plain.finished_at.unwrap());
}
