#!/usr/bin/env python3
"""Cross-check of tcpsim's AQM queues (CoDel, FQ-CoDel, PIE, RED, RED with ECN) against ns-3.44.

    python simulator/validation/ns3_aqm_crosscheck.py --dry-run             # the matrix and its ns-3 commands
    python simulator/validation/ns3_aqm_crosscheck.py --ns3-only            # ns-3's side: 48 runs, ~30-40 min
    python simulator/validation/ns3_aqm_crosscheck.py --markdown            # tcpsim against the committed ns-3 results

The matrix (MATRIX): our `sack` and `cubic` pairings of ns3_crosscheck.py (TcpNewReno or TcpCubic
with HyStart off, TcpClassicRecovery, SACK on; ns-3's SACK-off path retransmits data that arrived,
docs/validation/ns3-crosscheck.md §1), 1 and 4 flows, a 20 Mb/s bottleneck, 50 ms RTT, a buffer of
1000 packets (the AQM decides, not the buffer) or 100; queues droptail (ns-3: pfifo), codel,
fq_codel, pie, red and red-ecn, each with the same parameters on both sides (QUEUES). 40 s from
the start, measured over [10, 40] s, seed 1.

ns-3 runs one process at a time through ns3_aqm_probe.py (the peer's dumbbell.py with the queue
disc swapped in, ECN, and the queue's metrics). Its results are kept in
simulator/validation/results/ns3-aqm-reference.json and reused: a run already there is not run
again unless --rerun-ns3 (ns-3 is deterministic for a seed). tcpsim runs in-process (the `tcpsim`
package of the Python running this script); a queue or field that tcpsim does not have yet is
reported as "tcpsim lacks …" (the scenario is checked with tcpsim.normalize first).

Per pair: goodput (aggregate, per flow), Jain's index, the time-averaged queue, queueing delay
(mean, p95, p99: acceptance to start of transmission), drops (all; and split into a full buffer
and the AQM's choice where tcpsim reports the split), ECN marks and timeouts, as tcpsim / ns-3
(difference), flagged beyond 10 % (Jain: 0.1 absolute). docs/validation/ns3-aqm-crosscheck.md
has the table and the reasons.
"""

from __future__ import annotations

import argparse
import copy
import datetime as dt
import json
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import ns3_crosscheck as xc  # noqa: E402  (its pairings, scenario and comparison helpers)

bench = xc.bench
PROBE = HERE / "ns3_aqm_probe.py"
REFERENCE = HERE / "results" / "ns3-aqm-reference.json"
TOLERANCE_PCT = xc.TOLERANCE_PCT

RATE_MBPS = 20
DURATION_S = 40
WARMUP_S = 10
VARIANTS = ["sack", "cubic"]  # keys of ns3_crosscheck.VARIANTS
FLOWS = [1, 4]
BUFFERS = [1000, 100]

# DCTCP's marking threshold K in packets: above the BDP/7 that RFC 8257 §4.1 (after Alizadeh et al.)
# asks for full utilisation (119/7 = 17 here).
DCTCP_K = 20

# RED's thresholds are set, not derived from the buffer, so both buffers run the same RED:
# 20 and 60 packets (the BDP is 119 packets of 1054 B), max_p 0.1, w_q 0.002, gentle.
RED = {"min_th_pkts": 20, "max_th_pkts": 60, "max_p": 0.1, "weight": 0.002, "gentle": True, "mean_pkt_bytes": 1000}

# ns-3's TcpSocketBase (as Linux) grows no window in its CWR state, the round after a reduction
# for ECE; tcpsim's default keeps growing it (docs/validation/ns3-aqm-crosscheck.md, DCTCP).
ECN_AS_NS3 = {"ecn_reduction_holds_window": True}
# ns-3's TcpCubic (as Linux) grows its Reno-friendly estimate by alpha_cubic throughout; tcpsim's
# default (RFC 9438 §4.3) by 1 once past the last congestion window (the doc's CoDel section).
CUBIC_AS_NS3 = {"reno_friendly": "linux"}

# Each queue: our queue spec (limit_pkts added per buffer), our TCP additions, and ns-3's queue disc
# with the attributes that make it the same (the rest at ns-3's defaults, listed in the doc).
QUEUES: dict[str, dict] = {
    "droptail": {
        "ours": {"type": "droptail"},
        "ns3": {"queue": "pfifo", "attrs": {}},
        "about": "Drop-Tail; ns-3 FifoQueueDisc (+ 1 packet in the device queue)",
    },
    "codel": {
        "ours": {"type": "codel", "target_ms": 5, "interval_ms": 100},
        "ns3": {"queue": "codel", "attrs": {"Target": "5ms", "Interval": "100ms", "MinBytes": "1500"}},
        "about": "CoDel (RFC 8289): target 5 ms, interval 100 ms",
    },
    "fq_codel": {
        "ours": {"type": "fq_codel", "flows": 1024, "quantum_bytes": 1514, "target_ms": 5, "interval_ms": 100},
        "ns3": {"queue": "fq_codel", "attrs": {"Target": "5ms", "Interval": "100ms", "Flows": "1024"}, "quantum": 1514},
        "about": "FQ-CoDel (RFC 8290): 1024 queues, quantum 1514 B, target 5 ms, interval 100 ms",
    },
    "pie": {
        "ours": {"type": "pie", "target_ms": 15, "t_update_ms": 15, "alpha": 0.125, "beta": 1.25,
                 "max_burst_ms": 150, "derandomize": False},
        "ns3": {"queue": "pie", "attrs": {"QueueDelayReference": "15ms", "Tupdate": "15ms", "A": "0.125", "B": "1.25",
                                          "MaxBurstAllowance": "150ms", "UseDerandomization": "false",
                                          "UseDequeueRateEstimator": "false", "UseCapDropAdjustment": "true"}},
        "about": "PIE (RFC 8033): target 15 ms, T_UPDATE 15 ms, alpha 0.125, beta 1.25, max burst 150 ms",
    },
    # ns-3's RedQueueDisc has ns-2's two extra rules (no early drop with at most one packet
    # queued; the first arrival above min_th only starts the count): tcpsim's `rules: "ns"`.
    "red": {
        "ours": {"type": "red", **RED, "rules": "ns"},
        "ns3": {"queue": "red", "attrs": {"MinTh": "20", "MaxTh": "60", "LInterm": "10", "QW": "0.002", "Gentle": "true",
                                          "MeanPktSize": "1000", "Wait": "false"}},
        "about": "RED: min_th 20, max_th 60, max_p 0.1, w_q 0.002, gentle; drops spread by pb/(1 - count pb) (ns-3 Wait=false)",
    },
    "red-ecn": {
        "ours": {"type": "red", **RED, "ecn": True, "rules": "ns"},
        "tcp": {"ecn": True, **ECN_AS_NS3},
        "ns3": {"queue": "red", "attrs": {"MinTh": "20", "MaxTh": "60", "LInterm": "10", "QW": "0.002", "Gentle": "true",
                                          "MeanPktSize": "1000", "Wait": "false", "UseHardDrop": "true"}, "ecn": True},
        "about": "the same RED marking CE instead of an early drop, ECN on every flow (ns-3 UseHardDrop: drops past 2 max_th)",
    },
    # DCTCP (RFC 8257) on a step-marking switch, set up as ns-3's examples/tcp/dctcp-example.cc:
    # RED with MinTh = MaxTh = K, QW 1 (the instantaneous queue), UseEcn, UseHardDrop false and
    # not gentle marks every ECN-capable arrival that finds K or more queued, which is tcpsim's
    # droptail with ecn_threshold_pkts K. The flows run dctcp / TcpDctcp whatever the pairing
    # says (only the `sack` pairing runs it: SACK on, TcpClassicRecovery).
    "dctcp": {
        "ours": {"type": "droptail", "ecn_threshold_pkts": DCTCP_K},
        "tcp": dict(ECN_AS_NS3),
        "variant": "dctcp",
        "ns3": {"queue": "red", "attrs": {"MinTh": str(DCTCP_K), "MaxTh": str(DCTCP_K), "QW": "1", "LInterm": "1",
                                          "Gentle": "false", "MeanPktSize": "1000", "Wait": "false",
                                          "UseHardDrop": "false"}, "ecn": True, "variant": "TcpDctcp"},
        "about": f"DCTCP (RFC 8257, g 1/16, alpha on init 1) marking at K = {DCTCP_K} on the instantaneous queue "
                 "(ns-3: RED MinTh = MaxTh = K, QW 1, UseHardDrop false)",
    },
}  # fmt: skip

# ns-3's drop reasons that mean "the buffer was full", per queue disc; the rest are the AQM's
# choice. "Forced drop" is PIE's full queue but RED's average past max_th (RED's full buffer is
# its internal queue's drop). FQ-CoDel's per-flow CoDel reasons come prefixed by CHILD_PREFIX.
OVERFLOW_REASONS = {
    "ns3::FifoQueueDisc": {"Queue disc limit exceeded"},
    "ns3::CoDelQueueDisc": {"Overlimit drop"},
    "ns3::FqCoDelQueueDisc": {"Overlimit drop"},
    "ns3::PieQueueDisc": {"Forced drop"},
    "ns3::RedQueueDisc": set(),
}
INTERNAL_QUEUE_DROP = "Dropped by internal queue"  # any queue disc's full internal queue
CHILD_PREFIX = "(Dropped by child queue disc) "


def log(*a: object) -> None:
    print(*a, file=sys.stderr, flush=True)


def key_of(variant: str, flows: int, buffer: int, queue: str, seed: int = 1) -> str:
    return f"{variant}-{flows}f-{buffer}p-{queue}" + (f"-s{seed}" if seed != 1 else "")


def matrix(
    variants: list[str], flows: list[int], buffers: list[int], queues: list[str], seeds: tuple[int, ...] = (1,)
) -> list[dict]:
    """Buffer first (1000, the AQM's case, before 100), then variant, flows, queue, seed. A queue
    that sets its own variant (dctcp) runs once, with the `sack` pairing."""
    return [
        {"key": key_of(v, n, b, q, sd), "variant": v, "flows": n, "buffer": b, "queue": q, "seed": sd}
        for b in buffers
        for v in variants
        for n in flows
        for q in queues
        for sd in seeds
        if "variant" not in QUEUES[q] or v == "sack"
    ]


def build_scenario(case: dict) -> dict:
    """Our scenario: ns3_crosscheck's dumbbell for the variant (its TCP settings, 24 ms
    bottleneck between 0.5 ms access links), at 20 Mb/s with the case's flows and queue."""
    seed = case.get("seed", 1)
    s = xc.build_scenario(case["variant"], next(iter(xc.SHAPES)), seed)
    q = QUEUES[case["queue"]]
    s["name"] = f"ns3-aqm-{key_of(case['variant'], case['flows'], case['buffer'], case['queue'])}-s{seed}"
    s["description"] = (
        f"{case['flows']} x {xc.VARIANTS[case['variant']]['ours']}, {RATE_MBPS} Mb/s, {xc.RTT_MS} ms RTT, "
        f"{q['about']}, buffer {case['buffer']} p; compared with ns-3.44"
    )
    s["duration_s"], s["warmup_s"] = DURATION_S, WARMUP_S
    bn = s["topology"]["dumbbell"]["bottleneck"]
    bn["rate_mbps"] = RATE_MBPS
    bn["queue"] = {**copy.deepcopy(q["ours"]), "limit_pkts": case["buffer"]}
    f = s["flows"][0]
    f["count"] = case["flows"]
    f["tcp"].update(copy.deepcopy(q.get("tcp", {})))
    if "variant" in q:
        f["variant"] = q["variant"]
    if f["variant"] == "cubic":
        f["tcp"]["cubic"] = {**f["tcp"].get("cubic", {}), **CUBIC_AS_NS3}
    return s


def ns3_command(case: dict, scenario: dict) -> tuple[list[str], list[str]]:
    """ns3_aqm_probe.py's arguments (before --peer-script's value is known) and mapping notes."""
    cmd, notes = xc.ns3_command(scenario, case["variant"])
    notes = [n for n in notes if not n.startswith("bottleneck queue ")]  # the queue disc is ours here
    q = QUEUES[case["queue"]]["ns3"]
    own = ["--queue", q["queue"]]
    for name, value in q["attrs"].items():
        own += ["--queue-attr", f"{name}={value}"]
    if q.get("quantum"):
        own += ["--quantum", str(q["quantum"])]
    if q.get("ecn"):
        own += ["--ecn"]
    if q.get("variant"):
        cmd[cmd.index("--variant") + 1] = q["variant"]
    return own + cmd, notes


# --------------------------------------------------------------------------- running


def tcpsim_lacks(scenario: dict) -> str | None:
    """Why tcpsim cannot run this scenario (a queue or field it does not have yet), or None."""
    try:
        import tcpsim  # noqa: PLC0415
    except ImportError:
        return "no tcpsim package in this Python"
    try:
        tcpsim.normalize(scenario)
    except tcpsim.ScenarioError as e:
        return (
            f"tcpsim lacks queue {scenario['topology']['dumbbell']['bottleneck']['queue']['type']}"
            + (" with ECN" if "ecn" in str(e) else "")
            + f": {e}"
        )
    return None


def run_ours(scenario: dict) -> dict:
    import tcpsim  # noqa: PLC0415

    t0 = time.perf_counter()
    r = tcpsim.run(scenario)
    wall = time.perf_counter() - t0
    g = [f["goodput_bps"] / 1e6 for f in r["flows"]]
    bn = next(link for link in r["links"] if link["name"] == "bottleneck")

    def ms(x):
        return None if x is None else 1e3 * x

    return {
        "per_flow_mbps": g,
        "aggregate_mbps": sum(g),
        "jain": r["fairness"]["jain"],
        "mean_queue_pkts": bn["mean_queue_pkts"],
        "delay_mean_ms": ms(bn.get("mean_queue_delay_s")),
        "delay_p95_ms": ms(bn.get("p95_queue_delay_s")),
        "delay_p99_ms": ms(bn.get("p99_queue_delay_s")),
        "drops": bn["queue_drops"],
        "overflow_drops": bn.get("overflow_drops"),
        "aqm_drops": bn.get("aqm_drops"),
        "marks": bn.get("marks", bn.get("ecn_marks")),
        "utilization": bn["utilization"],
        "timeouts": sum(f.get("timeouts", 0) for f in r["flows"]),
        "retransmits": sum(f.get("retransmits", 0) for f in r["flows"]),
        "wall_s": wall,
        "link": bn,
    } | {  # the AQM's own view (AQM_METRICS): ours has one stage, so the same values
        "qdisc_mean_queue_pkts": bn["mean_queue_pkts"],
        "sojourn_mean_ms": ms(bn.get("mean_queue_delay_s")),
        "sojourn_p95_ms": ms(bn.get("p95_queue_delay_s")),
        "sojourn_p99_ms": ms(bn.get("p99_queue_delay_s")),
    }


def summarize_ns3(o: dict) -> dict:
    """The probe's JSON line as the metrics compared."""
    drops = o["drops_window"]
    full = OVERFLOW_REASONS[o["qdisc_type"]] | {INTERNAL_QUEUE_DROP}
    overflow = sum(v for k, v in drops.items() if k.removeprefix(CHILD_PREFIX) in full)
    d = o["queue_delay_ms"]
    return {
        "per_flow_mbps": o["per_flow_goodput_mbps"],
        "aggregate_mbps": o["aggregate_goodput_mbps"],
        "jain": o["jain_fairness"],
        "mean_queue_pkts": o["mean_queue_pkts"],
        "delay_mean_ms": d.get("mean"),
        "delay_p95_ms": d.get("p95"),
        "delay_p99_ms": d.get("p99"),
        "qdisc_mean_queue_pkts": o["qdisc_mean_queue_pkts"],
        "sojourn_mean_ms": o["qdisc_sojourn_ms"].get("mean"),
        "sojourn_p95_ms": o["qdisc_sojourn_ms"].get("p95"),
        "sojourn_p99_ms": o["qdisc_sojourn_ms"].get("p99"),
        "drops": o["drops_window_total"],
        "overflow_drops": overflow,
        "aqm_drops": o["drops_window_total"] - overflow,
        "drops_by_reason": drops,
        "marks": o["marks_window_total"],
        "marks_by_reason": o["marks_window"],
        "utilization": o["link_utilization"],
        "timeouts": o.get("timeouts_window"),
        "fast_recoveries": o.get("fast_recoveries_window"),
        "retransmits": o.get("retransmissions_window"),
        "run_wall_s": o["run_wall_s"],
    }


def run_ns3(py: Path, peer_script: Path, probe_args: list[str]) -> dict:
    """One ns-3 run (one process, bench's measured runner)."""
    own = probe_args[: probe_args.index("--")] if "--" in probe_args else probe_args
    rest = probe_args[len(own) :]
    cmd = ["nice", "-n", "10", str(py), str(PROBE), "--peer-script", str(peer_script), *own, *rest]
    p = bench.run_measured(cmd, cwd=HERE, timeout=1800)
    if p.rc != 0 or p.timed_out:
        return {"error": f"exit {p.rc}{' (timed out)' if p.timed_out else ''}: {bench.tail(p.err, 8)}", "command": cmd}
    raw = json.loads([x for x in p.out.strip().splitlines() if x.startswith("{")][-1])
    return {
        "command": cmd[3:],
        "process_wall_s": p.wall_s,
        "peak_rss_mb": p.maxrss_mb,
        "summary": summarize_ns3(raw),
        "raw": raw,
    }


def load_reference(path: Path) -> dict:
    if path.exists():
        return json.loads(path.read_text())
    return {
        "about": "ns-3.44 side of simulator/validation/ns3_aqm_crosscheck.py (deterministic for a seed)",
        "runs": {},
    }


def save_reference(path: Path, ref: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(ref, indent=1, sort_keys=True) + "\n")


# --------------------------------------------------------------------------- comparing

METRICS = [
    # key, label, "pct" or "abs", held to the tolerance
    ("aggregate_mbps", "goodput Mb/s", "pct", True),
    ("jain", "Jain", "abs", True),
    ("mean_queue_pkts", "mean queue p", "pct", True),
    ("delay_mean_ms", "delay mean ms", "pct", True),
    ("delay_p95_ms", "delay p95 ms", "pct", True),
    ("delay_p99_ms", "delay p99 ms", "pct", True),
    ("drops", "drops", "pct", True),
    ("aqm_drops", "AQM drops", "pct", True),
    ("marks", "CE marks", "pct", True),
    ("timeouts", "timeouts", "pct", False),
]


# The queue as the AQM sees it. ns-3's queue disc hands each packet to a 1-packet device queue,
# where it waits up to one packet time more (0.42 ms at 20 Mb/s) after CoDel and PIE have
# measured its sojourn; tcpsim has one stage, whose delay its AQM measures. So these compare
# ns-3's queue disc alone (its PacketsInQueue and SojournTime traces) with tcpsim's queue.
AQM_METRICS = [
    ("qdisc_mean_queue_pkts", "mean queue p (ns-3: queue disc only)", "pct", True),
    ("sojourn_mean_ms", "delay mean ms (ns-3: queue disc sojourn)", "pct", True),
    ("sojourn_p95_ms", "p95 ms (ns-3: sojourn)", "pct", True),
    ("sojourn_p99_ms", "p99 ms (ns-3: sojourn)", "pct", True),
]


def within(key: str, d: float | None, held: bool) -> bool | None:
    if d is None or not held:
        return None
    return abs(d) <= 0.1 if key == "jain" else abs(d) <= TOLERANCE_PCT


def fmt(x, key: str) -> str:
    if x is None:
        return "-"
    if key == "jain":
        return f"{x:.3f}"
    if key in ("drops", "aqm_drops", "marks", "timeouts"):
        return f"{x:,.0f}"
    if key == "aggregate_mbps":
        return f"{x:.2f}"
    return f"{x:.1f}" if x >= 10 else f"{x:.2f}"


def cells(ours: dict | None, ns3: dict | None, metrics: list = METRICS) -> list[tuple[str, bool]]:
    """Each metric as ("ours / ns-3 (diff)", outside) ; ours None: "- / ns-3"."""
    out = []
    for key, _, how, held in metrics:
        a = ours.get(key) if ours else None
        b = ns3.get(key) if ns3 else None
        if key == "aqm_drops" and ours is not None and a is None:
            b = None  # ours does not split this queue's drops (Drop-Tail, RED): totals only
        d = xc.diff(a, b, how) if (a is not None and b is not None and (b or how == "abs")) else None
        if a is not None and b == 0 and a == 0:
            d = 0.0
        txt = f"{fmt(a, key)} / {fmt(b, key)}" + (f" ({xc.fmt_diff(d, how)})" if d is not None else "")
        out.append((txt, within(key, d, held) is False))
    return out


def markdown_table(rows: list[dict], metrics: list = METRICS) -> str:
    head = ["variant", "flows", "buffer", "queue"] + [lab for _, lab, _, _ in metrics]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        c = cells(r.get("ours"), r.get("ns3"), metrics)
        seed = f" (seed {r['seed']})" if r.get("seed", 1) != 1 else ""
        row = [xc.VARIANTS[r["variant"]]["ours"], str(r["flows"]), str(r["buffer"]), r["queue"] + seed]
        row += [f"**{t}**" if bad else t for t, bad in c]
        out.append("| " + " | ".join(row) + " |")
    return "\n".join(out)


def ns3_markdown_table(rows: list[dict]) -> str:
    """ns-3 alone: the reference values, with its drops and marks by reason."""
    head = ["variant", "flows", "buffer", "queue", "goodput Mb/s (per flow)", "Jain", "mean queue p",
            "delay mean / p95 / p99 ms", "qdisc sojourn mean ms", "drops by reason", "marks", "timeouts", "retx"]  # fmt: skip
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        n = r.get("ns3")
        if not n:
            continue
        per = ", ".join(f"{x:.2f}" for x in n["per_flow_mbps"])
        reasons = "; ".join(f"{k}: {v}" for k, v in sorted(n["drops_by_reason"].items())) or "0"
        marks = "; ".join(f"{k}: {v}" for k, v in sorted(n["marks_by_reason"].items())) or "0"
        out.append(
            "| "
            + " | ".join(
                [
                    QUEUES[r["queue"]]["ns3"].get("variant", xc.VARIANTS[r["variant"]]["ns3"]),
                    str(r["flows"]),
                    str(r["buffer"]),
                    r["queue"] + (f" (seed {r['seed']})" if r.get("seed", 1) != 1 else ""),
                    f"{n['aggregate_mbps']:.2f}" + (f" ({per})" if len(n["per_flow_mbps"]) > 1 else ""),
                    f"{n['jain']:.3f}",
                    f"{n['mean_queue_pkts']:.1f}",
                    f"{n['delay_mean_ms']:.2f} / {n['delay_p95_ms']:.2f} / {n['delay_p99_ms']:.2f}",
                    f"{n['sojourn_mean_ms']:.2f}",
                    reasons,
                    marks,
                    str(n["timeouts"]),
                    str(n["retransmits"]),
                ]
            )  # fmt: skip
            + " |"
        )
    return "\n".join(out)


def seed_means(rows: list[dict]) -> list[dict]:
    """One row per case over its seeds: each metric's mean where every seed has it on that side."""
    keys = [k for k, *_ in METRICS + AQM_METRICS]
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        groups.setdefault((r["variant"], r["flows"], r["buffer"], r["queue"]), []).append(r)
    out = []
    for (v, n, b, q), rs in groups.items():
        if len(rs) < 2:
            continue
        row = {
            "variant": v,
            "flows": n,
            "buffer": b,
            "queue": f"{q} (mean of seeds {', '.join(str(r['seed']) for r in rs)})",
        }
        for side in ("ours", "ns3"):
            vals = [r.get(side) for r in rs]
            if all(vals):
                row[side] = {
                    k: statistics.fmean(x[k] for x in vals) if all(x.get(k) is not None for x in vals) else None
                    for k in keys
                }
        out.append(row)
    return out


# --------------------------------------------------------------------------- main


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description="tcpsim's AQM queues against ns-3.44's queue discs.")
    p.add_argument("--variants", default=",".join(VARIANTS), help=f"from {', '.join(xc.VARIANTS)}")
    p.add_argument("--flows", default=",".join(map(str, FLOWS)))
    p.add_argument("--buffers", default=",".join(map(str, BUFFERS)))
    p.add_argument("--queues", default=",".join(QUEUES), help=f"from {', '.join(QUEUES)}")
    p.add_argument("--seeds", default="1", help="comma-separated; each seed is its own row")
    p.add_argument("--ns3-only", action="store_true", help="run (or reuse) the ns-3 side only")
    p.add_argument("--no-ns3", action="store_true", help="tcpsim against the stored ns-3 results only; run no ns-3")
    p.add_argument("--rerun-ns3", action="store_true", help="run ns-3 even where the reference has the run")
    p.add_argument(
        "--reference", default=str(REFERENCE), help="the stored ns-3 results (read, and written as runs finish)"
    )
    p.add_argument("--ns3-python", help="Python with the ns3 package (default .venv-ns3/bin/python)")
    p.add_argument("--ns3-script", help="the peer's dumbbell.py (default ../shared/peers/ns3/dumbbell.py)")
    p.add_argument("--dry-run", action="store_true", help="print the matrix, scenarios' queues and ns-3 commands")
    p.add_argument("--json", help="write the pairs here (default bench-results/ns3-aqm-crosscheck-<date>.json)")
    p.add_argument("--markdown", action="store_true", help="print the tables as Markdown")
    a = p.parse_args(argv)
    a.variants = [v for v in a.variants.split(",") if v]
    a.flows = [int(x) for x in a.flows.split(",") if x]
    a.buffers = [int(x) for x in a.buffers.split(",") if x]
    a.queues = [q for q in a.queues.split(",") if q]
    a.seeds = tuple(int(x) for x in a.seeds.split(",") if x)
    for name, given, known in (("--variants", a.variants, xc.VARIANTS), ("--queues", a.queues, QUEUES)):
        bad = [x for x in given if x not in known]
        if bad:
            p.error(f"{name}: unknown {bad}; choose from {', '.join(known)}")
    return a


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    started = dt.datetime.now(dt.UTC)
    cases = matrix(args.variants, args.flows, args.buffers, args.queues, args.seeds)
    ref_path = Path(args.reference)
    ref = load_reference(ref_path)

    if args.dry_run:
        for c in cases:
            s = build_scenario(c)
            cmd, notes = ns3_command(c, s)
            lack = tcpsim_lacks(s)
            print(f"{c['key']}: tcpsim queue {json.dumps(s['topology']['dumbbell']['bottleneck']['queue'])}"
                  + (f" [{lack.split(':')[0]}]" if lack else "")
                  + (" [ns-3 stored]" if c["key"] in ref["runs"] else ""))  # fmt: skip
            print(f"  ns-3: ns3_aqm_probe.py --peer-script dumbbell.py {' '.join(cmd)}")
            for n in notes:
                print(f"  mapping note: {n}")
        return 0

    ns3_py = ns3_script = None
    if not args.no_ns3:
        ns3_py, ns3_script, msg = bench.find_ns3(
            argparse.Namespace(no_ns3=False, ns3_script=args.ns3_script, ns3_python=args.ns3_python, install_ns3=False)
        )
        log(f"ns3_aqm_crosscheck: {msg}")
    todo = [c for c in cases if args.rerun_ns3 or c["key"] not in ref["runs"]]
    if todo and ns3_py is None and not args.no_ns3:
        log("ns3_aqm_crosscheck: no ns-3 to run the missing reference runs; comparing what is stored")
    if todo and ns3_py is not None:
        log(f"ns3_aqm_crosscheck: {len(todo)} ns-3 run(s), one at a time (about 30-45 s each)")
        for c in todo:
            s = build_scenario(c)
            cmd, notes = ns3_command(c, s)
            t0 = time.perf_counter()
            r = run_ns3(ns3_py, ns3_script, cmd)
            if "error" in r:
                log(f"ns3_aqm_crosscheck: ns-3 FAILED for {c['key']}: {r['error']}")
                continue
            r.update({"case": c, "mapping_notes": notes, "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds")})
            ref["runs"][c["key"]] = r
            ref["machine"] = bench.machine_info()
            ref["ns3"] = bench.ns3_version_in(ns3_py)
            save_reference(ref_path, ref)
            n = r["summary"]
            log(
                f"ns3_aqm_crosscheck: {c['key']}: {n['aggregate_mbps']:.2f} Mb/s, queue {n['mean_queue_pkts']:.1f} p, "
                f"delay {n['delay_mean_ms']:.1f} / p99 {n['delay_p99_ms']:.1f} ms, drops {n['drops_by_reason']}, "
                f"marks {n['marks']} ({time.perf_counter() - t0:.0f} s)"
            )

    rows = []
    for c in cases:
        s = build_scenario(c)
        row = dict(c)
        stored = ref["runs"].get(c["key"])
        row["ns3"] = summarize_ns3(stored["raw"]) if stored else None
        if not args.ns3_only:
            lack = tcpsim_lacks(s)
            if lack:
                row["ours_missing"] = lack
                log(f"ns3_aqm_crosscheck: {c['key']}: {lack}")
            else:
                row["ours"] = run_ours(s)
                row["scenario"] = s
        rows.append(row)

    print(
        f"tcpsim vs ns-3.44, AQM: {RATE_MBPS} Mb/s, {xc.RTT_MS} ms RTT, window [{WARMUP_S}, {DURATION_S}] s, seed {', '.join(map(str, args.seeds))}"
    )
    for q in args.queues:
        print(f"  {q}: {QUEUES[q]['about']}")
    lacking = sorted({r["ours_missing"].split(":")[0] for r in rows if r.get("ours_missing")})
    for m in lacking:
        print(f"  {m}")
    if not args.ns3_only:
        shown = rows if len(args.seeds) == 1 else rows + seed_means(rows)
        for title, metrics in (("End to end", METRICS), ("The queue as the AQM sees it", AQM_METRICS)):
            table = markdown_table(shown, metrics)
            print(f"\n{title}:\n")
            print(table if args.markdown else table.replace("**", "!"))
        print("  (tcpsim / ns-3 (difference); bold or ! = outside 10 % (Jain 0.1); timeouts shown only)")
    if args.markdown or args.ns3_only:
        print()
        print(ns3_markdown_table(rows))

    if not args.ns3_only:
        out = (
            Path(args.json)
            if args.json
            else xc.REPO / "bench-results" / f"ns3-aqm-crosscheck-{started:%Y-%m-%d-%H%M%S}.json"
        )
        out.parent.mkdir(parents=True, exist_ok=True)
        for r in rows:
            if r.get("ours"):
                r["ours"].pop("link", None)
        out.write_text(
            json.dumps({"date": started.isoformat(timespec="seconds"), "rows": rows}, indent=1, default=str) + "\n"
        )
        print(f"\nAll figures: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
