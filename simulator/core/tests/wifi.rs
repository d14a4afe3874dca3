//! 802.11 links (issue 18): the DCF's throughput against its analytic value, MAC retries that
//! hide a lossy channel from TCP until they run out, contention between stations, and a fade.

use serde_json::{json, Value};
use tcpsim_core::net::wifi::{LinkErrors, Phy, Standard};
use tcpsim_core::RunResult;

/// A BSS `wlan` with an AP `ap` and stations `sta0`, `sta1`, ... at the given SNRs (a number
/// or a schedule each), running `flows` for `duration_s` (measured after 2 s).
fn run(standard: &str, rate_mbps: f64, snrs: &[Value], flows: Value, duration_s: f64) -> RunResult {
    let stations: Vec<Value> = snrs
        .iter()
        .enumerate()
        .map(|(i, snr)| json!({"node": format!("sta{i}"), "snr_db": snr}))
        .collect();
    let mut nodes = vec!["ap".to_string()];
    nodes.extend((0..snrs.len()).map(|i| format!("sta{i}")));
    let scenario = json!({
        "duration_s": duration_s, "warmup_s": 2, "seed": 7,
        "topology": {"graph": {"nodes": nodes, "links": [],
            "wifi": [{"name": "wlan", "ap": "ap", "stations": stations,
                      "standard": standard, "rate_mbps": rate_mbps}]}},
        "flows": flows,
        "outputs": {"trace_interval_s": 0.5, "trace": ["throughput"]}
    });
    tcpsim_core::run_json(&scenario.to_string()).unwrap()
}

fn download(variant: &str) -> Value {
    json!([{"name": "down", "variant": variant, "from": "ap", "to": "sta0"}])
}

/// UDP at 60 Mb/s, far beyond any 802.11g rate: the sender's queue never empties.
fn saturating_udp(from: &str, to: &str) -> Value {
    json!({"name": format!("{from}-{to}"), "type": "udp", "from": from, "to": to,
           "app": {"type": "cbr", "rate_mbps": 60, "packet_bytes": 1500}})
}

fn link<'a>(r: &'a RunResult, name: &str) -> &'a tcpsim_core::metrics::LinkResult {
    r.links.iter().find(|l| l.name == name).unwrap()
}

/// The SNR (dB) at which a frame carrying `ip_bytes` fails with probability `fer`.
fn snr_for_fer(phy: &Phy, ip_bytes: u32, fer: f64) -> f64 {
    let (mut lo, mut hi) = (4.0, 40.0);
    for _ in 0..60 {
        let mid = (lo + hi) / 2.0;
        if 1.0 - LinkErrors::new(phy, mid).data_success(phy, ip_bytes) > fer {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    hi
}

#[test]
fn one_saturated_sender_gets_the_analytic_dcf_throughput() {
    // Bianchi's single-station limit: one frame per DIFS + CWmin/2 slots + DATA + SIFS + ACK.
    for (standard, rate, std, kbps) in [
        ("802.11g", 54.0, Standard::G, 54_000),
        ("802.11b", 11.0, Standard::B, 11_000),
    ] {
        let r = run(
            standard,
            rate,
            &[json!(40)],
            json!([saturating_udp("ap", "sta0")]),
            12.0,
        );
        let phy = Phy::new(std, kbps, true).unwrap();
        let cycle = phy.difs() as f64
            + phy.cw_min as f64 / 2.0 * phy.slot as f64
            + phy.data_duration(1500) as f64
            + (phy.sifs + phy.ack_duration()) as f64;
        let want = 1500.0 * 8.0 / (cycle / 1e9);
        let got = r.flows[0].goodput_bps;
        assert!(
            (got / want - 1.0).abs() < 0.015,
            "{standard}: {got} b/s, analytic {want}"
        );
        let w = link(&r, "wlan-sta0").wifi.unwrap();
        assert_eq!((w.mac_retries, w.retry_drops, w.collisions), (0, 0, 0));
        // The AP's queue (500 packets) stays full: by Little's law about 499 wait.
        let waiting = link(&r, "wlan-sta0").mean_queue_pkts;
        assert!((495.0..500.0).contains(&waiting), "{waiting}");
    }
}

#[test]
fn mac_retries_hide_a_lossy_channel_from_tcp() {
    let phy = Phy::new(Standard::G, 54_000, true).unwrap();
    // Data frames of 1000-byte segments (1040 bytes of IP) fail 3 times in 10.
    let snr = snr_for_fer(&phy, 1040, 0.3);
    let clean = run("802.11g", 54.0, &[json!(40)], download("newreno-sbs"), 22.0);
    let lossy = run("802.11g", 54.0, &[json!(snr)], download("newreno-sbs"), 22.0);
    let (f, w) = (&lossy.flows[0], link(&lossy, "wlan-sta0").wifi.unwrap());
    // About 0.3 of the data frames were retransmissions (collisions with the station's ACKs
    // add a few); frames lost for good need 7 failures in a row, 0.3^7 = 2e-4.
    let retry_share = w.mac_retries as f64 / w.frames_sent as f64;
    assert!((0.28..0.36).contains(&retry_share), "{retry_share}");
    assert!(
        f.drops as f64 <= 1e-3 * f.packets_sent as f64,
        "{} of {}",
        f.drops,
        f.packets_sent
    );
    // Those few drops cost at most one timeout in 20 s (one that NewReno cannot repair).
    assert!(f.timeouts <= 1, "{} timeouts", f.timeouts);
    // TCP's goodput follows the MAC's efficiency: each segment takes 1/(1 - 0.3) attempts.
    let ratio = f.goodput_bps / clean.flows[0].goodput_bps;
    assert!((0.55..0.8).contains(&ratio), "{ratio}");
}

#[test]
fn past_the_retry_limit_every_frame_is_dropped_after_its_last_attempt() {
    // At 10 dB no 54 Mb/s frame survives: each gets its 7 attempts and is dropped.
    let r = run(
        "802.11g",
        54.0,
        &[json!(10)],
        json!([saturating_udp("ap", "sta0")]),
        6.0,
    );
    let w = link(&r, "wlan-sta0").wifi.unwrap();
    assert_eq!(r.flows[0].packets_received, 0);
    assert!(w.retry_drops > 100, "{w:?}");
    let per_drop = w.frames_sent as f64 / w.retry_drops as f64;
    assert!((per_drop - 7.0).abs() < 0.02, "{per_drop} attempts per dropped frame");
    let first_attempts = w.frames_sent - w.mac_retries;
    assert!(first_attempts.abs_diff(w.retry_drops) <= 1, "{w:?}");
    assert_eq!(link(&r, "wlan-sta0").loss_drops, w.retry_drops);
}

#[test]
fn a_deep_fade_runs_the_retries_out_tcp_times_out_and_recovers_after() {
    // 30 dB, 2 s at 8 dB from t = 6 s, 30 dB again: the fade's frames all fail.
    let fade = json!({"points": [[0, 30], [6, 8], [8, 30]], "shape": "step"});
    let r = run("802.11g", 54.0, &[fade], download("newreno-sbs"), 16.0);
    let (f, w) = (&r.flows[0], link(&r, "wlan-sta0").wifi.unwrap());
    assert!(w.retry_drops > 0 && f.drops > 0, "{w:?}");
    assert!(f.timeouts >= 1, "TCP sees the fade as timeouts");
    let t = r.traces.as_ref().unwrap();
    let rate = t.flows[0].throughput_bps.as_ref().unwrap();
    let mean = |from: f64, to: f64| {
        let v: Vec<f64> = t
            .time_s
            .iter()
            .zip(rate)
            .filter(|(s, _)| **s > from && **s <= to)
            .map(|(_, r)| *r)
            .collect();
        v.iter().sum::<f64>() / v.len() as f64
    };
    let (before, during, after) = (mean(3.0, 6.0), mean(6.5, 8.0), mean(11.0, 16.0));
    assert!(during < 0.01 * before, "{during} during the fade, {before} before");
    assert!((after / before - 1.0).abs() < 0.1, "{after} after, {before} before");
}

#[test]
fn contending_stations_share_the_air_fairly_and_collide_more_as_they_grow() {
    let mut collision_share = Vec::new();
    for n in [2usize, 4] {
        let flows: Vec<Value> = (0..n).map(|i| saturating_udp(&format!("sta{i}"), "ap")).collect();
        let r = run("802.11g", 54.0, &vec![json!(40); n], Value::Array(flows), 12.0);
        let jain = r.fairness.jain.unwrap();
        assert!(jain > 0.98, "{n} stations: Jain {jain}");
        let (mut sent, mut collided) = (0, 0);
        for i in 0..n {
            let w = link(&r, &format!("wlan-sta{i}-rev")).wifi.unwrap();
            // At 40 dB every retransmission follows a collision (give or take the window's edges).
            assert!(w.collisions > 0 && w.mac_retries.abs_diff(w.collisions) <= 2, "{w:?}");
            sent += w.frames_sent;
            collided += w.collisions;
        }
        collision_share.push(collided as f64 / sent as f64);
        // Contention costs air time: the total stays below one station's saturation rate.
        let total: f64 = r.flows.iter().map(|f| f.goodput_bps).sum();
        assert!(total < 31.0e6 && total > 20.0e6, "{n} stations: {total}");
    }
    assert!(collision_share[1] > collision_share[0] * 1.3, "{collision_share:?}");
}

#[test]
fn a_wrong_wifi_field_is_named_by_its_json_path() {
    let error = |wifi: Value| {
        let scenario = json!({"duration_s": 1, "topology": {"graph": {"nodes": ["ap", "sta"], "links": [],
            "wifi": [wifi]}}, "flows": [{"from": "ap", "to": "sta"}]});
        tcpsim_core::run_json(&scenario.to_string()).unwrap_err().to_string()
    };
    let base = json!({"name": "w", "ap": "ap", "stations": [{"node": "sta", "snr_db": 20}],
                      "standard": "802.11b", "rate_mbps": 11});
    let with = |key: &str, value: Value| {
        let mut w = base.clone();
        w[key] = value;
        w
    };
    let cases = [
        (with("rate_mbps", json!(54)), "$.topology.graph.wifi[0].rate_mbps"),
        (with("ap", json!("nowhere")), "$.topology.graph.wifi[0].ap"),
        (
            with("stations", json!([{"node": "ap", "snr_db": 20}])),
            "$.topology.graph.wifi[0].stations[0].node",
        ),
        (
            with(
                "stations",
                json!([{"node": "sta", "snr_db": {"points": [[0, 20], [1, 200]]}}]),
            ),
            "$.topology.graph.wifi[0].stations[0].snr_db.points[1][1]",
        ),
        (
            with("queue", json!({"type": "codel", "limit_pkts": 10})),
            "$.topology.graph.wifi[0].queue",
        ),
        (with("retry_limit", json!(0)), "$.topology.graph.wifi[0].retry_limit"),
    ];
    for (wifi, path) in cases {
        let e = error(wifi);
        assert!(e.contains(path), "{e}");
    }
}

#[test]
fn a_data_frames_error_rate_is_ns3s_own_at_every_snr_of_its_table() {
    // ns-3.44's NIST and DSSS models evaluated by ns3_wifi_reference.py --model-fer: the
    // 1536-byte data frame (a 1500-byte packet) over -2 to 30 dB.
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../validation/results/ns3-wifi-reference.json"
    );
    let reference: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let table = &reference["model_fer"];
    let snrs: Vec<f64> = serde_json::from_value(table["snr_db"].clone()).unwrap();
    for (rate, standard, kbps) in [
        ("DsssRate11Mbps", Standard::B, 11_000),
        ("ErpOfdmRate54Mbps", Standard::G, 54_000),
        ("ErpOfdmRate24Mbps", Standard::G, 24_000),
        ("ErpOfdmRate6Mbps", Standard::G, 6000),
    ] {
        let phy = Phy::new(standard, kbps, true).unwrap();
        let theirs: Vec<f64> =
            serde_json::from_value(table["rates"][rate]["ns3::NistErrorRateModel"]["data_fer"].clone()).unwrap();
        for (&snr, fer) in snrs.iter().zip(theirs) {
            let ours = 1.0 - LinkErrors::new(&phy, snr).data_success(&phy, 1500);
            assert!((ours - fer).abs() < 1e-4, "{rate} at {snr} dB: {ours}, ns-3 {fer}");
        }
    }
}
