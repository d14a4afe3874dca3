//! Golden snapshots: the reference dumbbell and one short, lossy scenario per variant, their
//! results and traces held bit for bit in `tests/golden/`. An optimisation keeps them, or
//! changes them on purpose — then its commit says why, and the files are written anew:
//!
//!     TCPSIM_BLESS=1 cargo test -p tcpsim-core --test golden
//!
//! Left out of a snapshot: the core's version and `stats` (wall time, and event counts an
//! optimisation may change without changing what is simulated).

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use tcpsim_core::cc::VARIANTS;
use tcpsim_core::run_json;

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

/// The result as a snapshot: pretty JSON (one number per line, so a diff points at the
/// sample), without the version and the machine-dependent stats.
fn snapshot(scenario: &Value) -> String {
    let result = run_json(&scenario.to_string()).unwrap_or_else(|e| panic!("{e}"));
    let mut v = serde_json::to_value(&result).unwrap();
    let object = v.as_object_mut().unwrap();
    object.remove("stats");
    object.remove("core_version");
    serde_json::to_string_pretty(&v).unwrap() + "\n"
}

/// Compares with (or, under TCPSIM_BLESS=1, writes) `tests/golden/<name>.json`; on a
/// difference, says where it starts.
fn compare(name: &str, scenario: &Value) -> Result<(), String> {
    let path = golden_dir().join(format!("{name}.json"));
    let now = snapshot(scenario);
    if std::env::var_os("TCPSIM_BLESS").is_some() {
        fs::create_dir_all(golden_dir()).unwrap();
        fs::write(&path, &now).unwrap();
        return Ok(());
    }
    let kept =
        fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e} (TCPSIM_BLESS=1 writes it)", path.display()));
    if kept == now {
        return Ok(());
    }
    let (line, (was, is)) = kept
        .lines()
        .zip(now.lines())
        .enumerate()
        .find(|(_, (a, b))| a != b)
        .map(|(i, pair)| (i + 1, pair))
        .unwrap_or((kept.lines().count().min(now.lines().count()) + 1, ("<end>", "<end>")));
    Err(format!(
        "{name}: no longer bit-identical to {}, first at line {line}:\n  kept: {was}\n  now:  {is}",
        path.display()
    ))
}

fn check(results: Vec<Result<(), String>>) {
    let differ: Vec<String> = results.into_iter().filter_map(Result::err).collect();
    assert!(
        differ.is_empty(),
        "{}\nIf the change is meant, say why in its commit and run TCPSIM_BLESS=1 cargo test --test golden",
        differ.join("\n")
    );
}

/// Three flows of `variant` (RTTs 20, 60 and 120 ms, one with random loss) through a
/// 10 Mb/s, 30-packet Drop-Tail bottleneck for 15 s: slow start, drops, recovery, timeouts.
fn short_lossy(variant: &str) -> Value {
    json!({
        "duration_s": 15, "warmup_s": 2, "seed": 11,
        "topology": {"dumbbell": {"bottleneck": {"rate_mbps": 10, "delay_ms": 5,
                                                 "queue": {"type": "droptail", "limit_pkts": 30}}}},
        "flows": [
            {"name": "short", "variant": variant, "rtt_ms": 20},
            {"name": "mid", "variant": variant, "rtt_ms": 60, "loss": {"type": "uniform", "rate": 0.005}},
            {"name": "long", "variant": variant, "rtt_ms": 120, "start_s": 1}
        ],
        "outputs": {"trace_interval_s": 0.1, "trace": ["cwnd", "ssthresh", "queue"]}
    })
}

#[test]
fn every_variant_gives_its_kept_result_and_traces() {
    check(
        VARIANTS
            .iter()
            .map(|(v, _)| compare(&format!("variant-{v}"), &short_lossy(v)))
            .collect(),
    );
}

#[test]
fn the_reference_dumbbell_gives_its_kept_result_and_traces() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/reference-dumbbell.json");
    let mut scenario: Value = serde_json::from_str(&fs::read_to_string(path).unwrap()).unwrap();
    scenario["outputs"] = json!({"trace_interval_s": 2.0, "trace": ["cwnd", "ssthresh", "queue"]});
    check(vec![compare("reference-dumbbell", &scenario)]);
}

#[test]
fn a_snapshot_leaves_out_only_the_version_and_the_stats() {
    let text = snapshot(&short_lossy("reno"));
    let v: Value = serde_json::from_str(&text).unwrap();
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    assert!(!keys.contains(&"stats") && !keys.contains(&"core_version"), "{keys:?}");
    for key in ["seed", "flows", "links", "fairness", "traces"] {
        assert!(keys.contains(&key), "{key} missing from {keys:?}");
    }
}
