#!/usr/bin/env python3
"""Cross-check of tcpsim against ns-2.35, the simulator papers 000, 002 and 003 used.

    .venv/bin/python simulator/validation/ns2_crosscheck.py                     # the whole matrix, ~2 min
    .venv/bin/python simulator/validation/ns2_crosscheck.py --variants newreno-impatient --m 10,26
    .venv/bin/python simulator/validation/ns2_crosscheck.py --rfc               # tcpsim with its RFC defaults
    .venv/bin/python simulator/validation/ns2_crosscheck.py --install-ns2       # apt-get install ns2 when missing
    .venv/bin/python simulator/validation/ns2_crosscheck.py --dry-run           # the commands only

Deterministic single loss events, as the ns-2 peer's `compare.py det` first ran them: one
flow on a 45 Mb/s dumbbell with a 70 ms round trip, a receiver window W small enough that
the bottleneck never queues, and packets k+1..k+m dropped by a list loss module on the
flow's first link; 10 s from a start at t = 0, no SYN round trip in ns-2 (tcpsim has no
handshake). Nothing is random, so the two simulators must agree packet for packet: the same
retransmissions, the same timeouts, and the same packets sent up to the run's end, within
END_SLACK. Packets delivered are shown, not judged: ns-2 counts what the sender has seen
acknowledged, tcpsim what reached the receiver, so at the 10 s mark they differ by whatever
was between the two, up to a window and a half-RTT of ACKs.

tcpsim runs with the `ns2` TCP profile (ns-2.35's defaults and its three ways of its own:
the recover guard that waits for an ACK past `recover`, ssthresh in whole segments, halved
again on a repeated timeout; docs/validation/ns2-crosscheck.md cites ns-2's source for each),
with the run's window and limited transmit (`singledup_`) given on both sides. `--rfc` runs
tcpsim with its own defaults instead (the RFCs' behaviour), the same window, timers and
limited transmit.

ns-2 runs our `ns2/det.tcl` beside this script: one flow of any variant both simulators have
(Tahoe = `Agent/TCP`, Reno, NewReno Slow-but-Steady and Impatient, SACK = `Sack1`, FACK =
`Fack`, Vegas), the same path and drops; it prints one JSON line per run.

The aggregate suite (`--suite aggregate`) runs what is random on both sides, where only
averages can agree: N = 1, 8, 64 long-lived flows of one variant through a 15 Mb/s, 150-packet
Drop-Tail bottleneck (50 ms round trip, starts Uniform[0, 1) s, 100 s, the first 10 s not
measured), and 2 flows with 0.1 % uniform loss on the bottleneck; `ns2/dumbbell.tcl` on
ns-2's side. The verdict: the mean aggregate rate of new data sent over the seeds within
AGG_TOLERANCE (goodput is shown, not judged: ns-2 and tcpsim count it at different ends).
The table goes to stdout (`--markdown` too); every run to bench-results/ns2-crosscheck-<date>.json.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
TCL = HERE / "ns2" / "det.tcl"

VARIANTS = ["tahoe", "reno", "newreno-sbs", "newreno-impatient", "sack", "fack", "vegas"]
"""Every variant ns-2.35 and tcpsim both have, under tcpsim's names (det.tcl maps them to agents)."""
WINDOWS = [30, 45, 60]
"""Receiver windows W; an odd one makes the halved window fractional (ns-2 keeps the fraction in cwnd_)."""
M_VALUES = list(range(1, 41))
DROP_AFTER = [3000, 1500]
"""k: the first dropped packet is k + 1 (the flow's (k+1)-th data packet on its first link)."""
END_SLACK = 2
"""Packets sent may differ by this much at the run's end (issue 14's "±2")."""

PATH = {"bw": 45, "rtt": 70, "bdelay": 5, "queue": 1000, "dur": 10}
SUITES = ["det", "aggregate"]
AGG_TCL = HERE / "ns2" / "dumbbell.tcl"
AGG_PATH = {"bw": 15, "rtt": 50, "bdelay": 24, "queue": 150, "dur": 100, "warm": 10, "spread": 1.0}
AGG_VARIANTS = ["tahoe", "reno", "newreno-sbs", "newreno-impatient", "sack", "fack"]
"""The variants that agree packet for packet (Vegas does not: docs/validation/ns2-crosscheck.md)."""
AGG_CASES = [{"flows": n, "uniform": 0.0, "seeds": [1, 2, 3]} for n in (1, 8, 64)] + [
    {"flows": 2, "uniform": 0.001, "seeds": list(range(1, 9))}
]
AGG_TOLERANCE = 0.02
"""Mean aggregate goodput over the seeds within 2 % (issue 14)."""
RFC_TCP = {"min_rto_s": 0.2, "timer_granularity_s": 0.01}
"""With `--rfc`: ns-2's timers on tcpsim's defaults, nothing of ns-2's own ways."""


def log(*a: object) -> None:
    print(*a, file=sys.stderr, flush=True)


def drops(k: int, m: int) -> list[int]:
    return list(range(k + 1, k + m + 1))


def scenario(variant: str, window: int, k: int, m: int, singledup: bool, ns2_ways: bool) -> dict:
    """tcpsim's side: det.tcl's dumbbell, with the `ns2` profile or (not ns2_ways) our defaults."""
    tcp = {"profile": "ns2"} if ns2_ways else dict(RFC_TCP)
    tcp |= {"limited_transmit": singledup, "max_window_pkts": window}
    return {
        "name": f"ns2-det-{variant}-w{window}-k{k}-m{m}",
        "duration_s": PATH["dur"],
        "warmup_s": 0,
        "seed": 1,
        "topology": {
            "dumbbell": {
                "bottleneck": {
                    "rate_mbps": PATH["bw"],
                    "delay_ms": PATH["bdelay"],
                    "queue": {"type": "droptail", "limit_pkts": PATH["queue"]},
                },
                "access": {"rate_mbps": 1000, "queue": {"type": "droptail", "limit_pkts": 1000}},
            }
        },
        "flows": [
            {
                "name": "f",
                "variant": variant,
                "rtt_ms": PATH["rtt"],
                "start_s": 0,
                "app": {"type": "ftp"},
                "tcp": tcp,
                "loss": {"type": "scheduled", "packets": drops(k, m)},
            }
        ],
    }


def ns2_command(ns: str, variant: str, window: int, k: int, m: int, singledup: bool) -> list[str]:
    args = {
        "variant": variant,
        "bw": PATH["bw"],
        "rtt": PATH["rtt"],
        "bdelay": PATH["bdelay"],
        "queue": PATH["queue"],
        "window": window,
        "dur": PATH["dur"],
        "drops": ",".join(map(str, drops(k, m))),
        "singledup": int(singledup),
    }
    return [ns, str(TCL)] + [f"{a}={v}" for a, v in args.items()]


def run_ns2(cmd: list[str]) -> dict:
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        raise RuntimeError(f"ns-2 failed ({p.returncode}): {p.stderr[-1500:]}")
    f = json.loads(p.stdout.strip().splitlines()[-1])
    return {
        "sent": f["data_pkts_sent"],
        "delivered": f["acked_pkts"],
        "retransmits": f["retransmits"],
        "timeouts": f["timeouts"],
        "nrexmit": f["nrexmit"],
        "drops": f["drops"],
    }


def run_ours(sc: dict) -> dict:
    import tcpsim  # noqa: PLC0415  (the project's .venv)

    f = tcpsim.run(sc)["flows"][0]
    delivered = round(f["goodput_bps"] * sc["duration_s"] / (8 * 1000))  # 1000-byte segments on both sides
    return {
        "sent": f["packets_sent"],
        "delivered": delivered,
        "retransmits": f["retransmits"],
        "timeouts": f["timeouts"],
        "drops": f["drops"],
        "fast_retransmits": f["fast_retransmits"],
    }


def verdict(ours: dict, ns2: dict) -> str:
    """`agree`, or what differs: retransmissions and timeouts exactly, packets sent within END_SLACK."""
    off = [k for k in ("retransmits", "timeouts") if ours[k] != ns2[k]]
    off += ["sent"] * (abs(ours["sent"] - ns2["sent"]) > END_SLACK)
    return "agree" if not off else "differs: " + ", ".join(off)


def aggregate_scenario(variant: str, flows: int, uniform: float, seed: int, singledup: bool, ns2_ways: bool) -> dict:
    """tcpsim's side of dumbbell.tcl: N flows of one variant, optional uniform loss on the bottleneck."""
    tcp = {"profile": "ns2"} if ns2_ways else dict(RFC_TCP)
    tcp |= {"limited_transmit": singledup, "max_window_pkts": 100_000}
    bottleneck = {
        "rate_mbps": AGG_PATH["bw"],
        "delay_ms": AGG_PATH["bdelay"],
        "queue": {"type": "droptail", "limit_pkts": AGG_PATH["queue"]},
    }
    if uniform > 0:
        bottleneck["loss"] = {"type": "uniform", "rate": uniform}
    return {
        "name": f"ns2-agg-{variant}-n{flows}-u{uniform}-s{seed}",
        "duration_s": AGG_PATH["dur"],
        "warmup_s": AGG_PATH["warm"],
        "seed": seed,
        "topology": {
            "dumbbell": {
                "bottleneck": bottleneck,
                "access": {"rate_mbps": 1000, "queue": {"type": "droptail", "limit_pkts": 1000}},
            }
        },
        "flows": [
            {
                "name": "f",
                "count": flows,
                "variant": variant,
                "rtt_ms": AGG_PATH["rtt"],
                "start_s": {"uniform": [0, AGG_PATH["spread"]]},
                "app": {"type": "ftp"},
                "tcp": tcp,
            }
        ],
    }


def aggregate_command(ns: str, variant: str, flows: int, uniform: float, seed: int, singledup: bool) -> list[str]:
    args = {"variant": variant, "flows": flows, "uniform": uniform, "seed": seed, "singledup": int(singledup)}
    args |= {k: AGG_PATH[k] for k in ("bw", "rtt", "bdelay", "queue", "dur", "warm", "spread")}
    return [ns, str(AGG_TCL)] + [f"{a}={v}" for a, v in args.items()]


def new_data_mbps(packets: int) -> float:
    """New data sent in the measurement window, Mb/s of 1000-byte payloads: counted at the
    sender on both sides (goodput is not: ns-2 counts what the sender saw acknowledged,
    tcpsim what reached the receiver, which differ by a recovery straddling the warm-up)."""
    return packets * 8000 / (AGG_PATH["dur"] - AGG_PATH["warm"]) / 1e6


def aggregate_ns2(cmd: list[str]) -> dict:
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        raise RuntimeError(f"ns-2 failed ({p.returncode}): {p.stderr[-1500:]}")
    r = json.loads(p.stdout.strip().splitlines()[-1])
    return {
        "new_data_mbps": new_data_mbps(sum(f["data_pkts_sent"] - f["retransmits"] for f in r["flows"])),
        "goodput_mbps": sum(f["goodput_bps"] for f in r["flows"]) / 1e6,
        "retransmits": sum(f["retransmits"] for f in r["flows"]),
        "timeouts": sum(f["timeouts"] for f in r["flows"]),
        "drops": r["queue_drops"] + r["loss_drops"],
    }


def aggregate_ours(sc: dict) -> dict:
    import tcpsim  # noqa: PLC0415

    r = tcpsim.run(sc)
    link = next(x for x in r["links"] if x["name"] == "bottleneck")
    return {
        "new_data_mbps": new_data_mbps(sum(f["packets_sent"] - f["retransmits"] for f in r["flows"])),
        "goodput_mbps": sum(f["goodput_bps"] for f in r["flows"]) / 1e6,
        "retransmits": sum(f["retransmits"] for f in r["flows"]),
        "timeouts": sum(f["timeouts"] for f in r["flows"]),
        "drops": link["queue_drops"] + link["loss_drops"],
    }


def aggregate_verdict(ours: float, theirs: float) -> str:
    gap = ours / theirs - 1 if theirs else float("inf")
    return "agree" if abs(gap) <= AGG_TOLERANCE else f"differs: {gap:+.1%}"


def run_aggregate(ns: str, a: argparse.Namespace) -> list[dict]:
    rows = []
    for variant in a.agg_variants:
        for case in AGG_CASES:
            ours, theirs = [], []
            for seed in case["seeds"]:
                sc = aggregate_scenario(variant, case["flows"], case["uniform"], seed, bool(a.singledup), not a.rfc)
                ours.append(aggregate_ours(sc))
                theirs.append(
                    aggregate_ns2(
                        aggregate_command(ns, variant, case["flows"], case["uniform"], seed, bool(a.singledup))
                    )
                )
            mean = lambda runs, k: sum(x[k] for x in runs) / len(runs)  # noqa: E731
            row = {
                "variant": variant,
                "flows": case["flows"],
                "uniform": case["uniform"],
                "seeds": len(case["seeds"]),
                "ours": {k: mean(ours, k) for k in ours[0]},
                "ns2": {k: mean(theirs, k) for k in theirs[0]},
            }
            row["verdict"] = aggregate_verdict(row["ours"]["new_data_mbps"], row["ns2"]["new_data_mbps"])
            rows.append(row)
            log(f"ns2_crosscheck: aggregate {variant} N={case['flows']} loss={case['uniform']}: {row['verdict']}")
    return rows


def aggregate_markdown(rows: list[dict]) -> str:
    out = [
        "| variant | flows | uniform loss | seeds | ns-2: new data Mb/s (goodput) / retx / TO / drops "
        "| tcpsim: new data Mb/s (goodput) / retx / TO / drops | verdict (new data) |",
        "|---|---:|---:|---:|---|---|---|",
    ]

    def f(o: dict) -> str:
        return (
            f"{o['new_data_mbps']:.3f} ({o['goodput_mbps']:.3f}) / {o['retransmits']:.0f} / "
            f"{o['timeouts']:.1f} / {o['drops']:.0f}"
        )

    for r in rows:
        out.append(
            f"| {r['variant']} | {r['flows']} | {r['uniform']:g} | {r['seeds']} | {f(r['ns2'])} | {f(r['ours'])} | {r['verdict']} |"
        )
    return "\n".join(out)


def find_ns(install: bool) -> str | None:
    ns = shutil.which("ns")
    if ns or not install:
        return ns
    log("ns2_crosscheck: installing ns-2.35 (apt-get install -y ns2) ...")
    p = subprocess.run(["apt-get", "install", "-y", "ns2"], capture_output=True, text=True)
    if p.returncode != 0:
        log(
            f"ns2_crosscheck: apt-get install ns2 failed ({p.returncode}; root and Debian's archive needed): "
            f"{p.stderr.strip()[-500:]}"
        )
    return shutil.which("ns")


def cases(a: argparse.Namespace) -> list[dict]:
    return [
        {"variant": v, "window": w, "k": k, "m": m} for v in a.variants for w in a.windows for k in a.k for m in a.m
    ]


def case_name(r: dict) -> str:
    return f"W{r['window']} k{r['k']} m{r['m']}"


def fmt(o: dict) -> str:
    return f"{o['delivered']} / {o['sent']} / {o['retransmits']} / {o['timeouts']}"


def markdown(rows: list[dict]) -> str:
    out = [
        "| variant | W | k | m | ns-2 delivered / sent / retx / TO | tcpsim delivered / sent / retx / TO | verdict |",
        "|---|---:|---:|---:|---|---|---|",
    ]
    for r in rows:
        out.append(
            f"| {r['variant']} | {r['window']} | {r['k']} | {r['m']} | {fmt(r['ns2'])} | {fmt(r['ours'])} | {r['verdict']} |"
        )
    return "\n".join(out)


def summary(rows: list[dict]) -> str:
    lines = []
    for v in dict.fromkeys(r["variant"] for r in rows):
        mine = [r for r in rows if r["variant"] == v]
        bad = [r for r in mine if r["verdict"] != "agree"]
        worst = max((abs(r["ours"]["sent"] - r["ns2"]["sent"]) for r in mine), default=0)
        line = f"  {v:18s} {len(mine) - len(bad):4d}/{len(mine)} agree; largest difference in packets sent {worst}"
        if bad:
            line += "; differ: " + ", ".join(case_name(r) for r in bad[:8]) + (" ..." if len(bad) > 8 else "")
        lines.append(line)
    return "\n".join(lines)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ints = lambda s: [int(x) for x in s.split(",")]  # noqa: E731
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument(
        "--variants",
        type=lambda s: s.split(","),
        default=VARIANTS,
        help=f"comma-separated, from {', '.join(VARIANTS)} (default: all)",
    )
    p.add_argument("--windows", type=ints, default=WINDOWS, help="receiver windows W, packets (default 30,45,60)")
    p.add_argument("--m", type=ints, default=M_VALUES, help="numbers of consecutive drops (default 1..40)")
    p.add_argument("--k", type=ints, default=DROP_AFTER, help="drops start after packet k (default 3000,1500)")
    p.add_argument(
        "--singledup",
        type=int,
        choices=(0, 1),
        default=1,
        help="ns-2 singledup_ and tcpsim limited_transmit (default 1, ns-2.35's; 0 as the peer's compare.py det)",
    )
    p.add_argument(
        "--suite",
        type=lambda s: s.split(","),
        default=SUITES,
        help="comma-separated: det (deterministic loss events), aggregate (random, averages) (default both)",
    )
    p.add_argument(
        "--agg-variants",
        type=lambda s: s.split(","),
        default=AGG_VARIANTS,
        help=f"variants of the aggregate suite (default {','.join(AGG_VARIANTS)})",
    )
    p.add_argument("--rfc", action="store_true", help="tcpsim with its own (RFC) defaults instead of the ns2 profile")
    p.add_argument("--install-ns2", action="store_true", help="apt-get install -y ns2 when `ns` is missing")
    p.add_argument("--dry-run", action="store_true", help="print the ns-2 commands and tcpsim scenarios, run nothing")
    p.add_argument("--json", type=Path, help="write every run here (default bench-results/ns2-crosscheck-<date>.json)")
    p.add_argument("--markdown", action="store_true", help="also print the table as Markdown")
    p.add_argument("--strict", action="store_true", help="exit 1 unless every case agrees")
    a = p.parse_args(argv)
    unknown = sorted((set(a.variants) | set(a.agg_variants)) - set(VARIANTS))
    if unknown:
        p.error(f"--variants: unknown {', '.join(unknown)}; both simulators have {', '.join(VARIANTS)}")
    if set(a.suite) - set(SUITES):
        p.error(f"--suite: unknown {', '.join(sorted(set(a.suite) - set(SUITES)))}; known: {', '.join(SUITES)}")
    return a


def main(argv: list[str] | None = None) -> int:
    a = parse_args(argv)
    todo = cases(a) if "det" in a.suite else []
    ns = find_ns(a.install_ns2) or "ns"
    if a.dry_run:
        for c in todo:
            print(" ".join(ns2_command(ns, c["variant"], c["window"], c["k"], c["m"], bool(a.singledup))))
            print(json.dumps(scenario(c["variant"], c["window"], c["k"], c["m"], bool(a.singledup), not a.rfc)))
        if "aggregate" in a.suite:
            for v in a.agg_variants:
                for c in AGG_CASES:
                    print(
                        " ".join(aggregate_command(ns, v, c["flows"], c["uniform"], c["seeds"][0], bool(a.singledup)))
                    )
                    print(
                        json.dumps(
                            aggregate_scenario(v, c["flows"], c["uniform"], c["seeds"][0], bool(a.singledup), not a.rfc)
                        )
                    )
        return 0
    if not shutil.which(ns):
        log(
            "ns2_crosscheck: ns-2 is not installed (`ns` not on PATH); rerun with --install-ns2, "
            "or `apt-get install -y ns2`"
        )
        return 2
    t0 = time.perf_counter()
    log(
        f"ns2_crosscheck: {len(todo)} deterministic cases, tcpsim {'with its RFC defaults' if a.rfc else 'with the ns2 profile'}"
    )
    rows = []
    for i, c in enumerate(todo, 1):
        sc = scenario(c["variant"], c["window"], c["k"], c["m"], bool(a.singledup), not a.rfc)
        ours = run_ours(sc)
        theirs = run_ns2(ns2_command(ns, c["variant"], c["window"], c["k"], c["m"], bool(a.singledup)))
        rows.append({**c, "ours": ours, "ns2": theirs, "verdict": verdict(ours, theirs)})
        if i % 40 == 0:
            log(f"ns2_crosscheck: {i}/{len(todo)} ({time.perf_counter() - t0:.0f} s)")
    det_s = time.perf_counter() - t0
    agg_rows = run_aggregate(ns, a) if "aggregate" in a.suite else []
    elapsed = time.perf_counter() - t0
    agree = sum(r["verdict"] == "agree" for r in rows)
    if rows:
        print(summary(rows))
        print(f"\n{agree}/{len(rows)} deterministic cases agree packet for packet ({det_s:.0f} s)")
        if a.markdown:
            print("\n" + markdown(rows))
    agg_agree = sum(r["verdict"] == "agree" for r in agg_rows)
    if agg_rows:
        print(
            f"\n{agg_agree}/{len(agg_rows)} aggregate cases agree within {AGG_TOLERANCE:.0%} "
            f"({elapsed - det_s:.0f} s)\n\n" + aggregate_markdown(agg_rows)
        )
    out = a.json or REPO / "bench-results" / f"ns2-crosscheck-{dt.date.today().isoformat()}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        json.dumps(
            {
                "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
                "elapsed_s": round(elapsed, 1),
                "tcpsim_tcp": "rfc" if a.rfc else "ns2 profile",
                "singledup": a.singledup,
                "rows": rows,
                "aggregate": agg_rows,
            },
            indent=1,
        )
    )
    log(f"All runs: {out}")
    return 1 if a.strict and (agree < len(rows) or agg_agree < len(agg_rows)) else 0


if __name__ == "__main__":
    sys.exit(main())
