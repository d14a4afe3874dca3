#!/usr/bin/env python3
"""tcpsim's core cost at modern scales (issue 13): µs of core wall time per bottleneck packet.

    .venv/bin/python simulator/bench/scaling.py                  # the whole matrix (what `make bench` runs)
    .venv/bin/python simulator/bench/scaling.py --quick          # a small subset, ~20 s
    .venv/bin/python simulator/bench/scaling.py --flows 1,10 --rates 1G --rtts 100 --variants newreno,sack
    .venv/bin/python simulator/bench/scaling.py --from bench-results/scaling-X.json --markdown --plot docs/img/scaling-us-per-pkt.svg

The matrix: N ∈ {1, 10, 100, 1000, 10000} flows × bottleneck rate ∈ {10 Mb/s, 100 Mb/s, 1 Gb/s,
10 Gb/s} × RTT ∈ {10, 100, 200 ms} × variant ∈ {newreno (newreno-sbs), sack, cubic, bbr}. Every
case is a dumbbell as ../shared/peers/htsim/compare.py builds its C cases: bottleneck buffer
1 BDP of 1040-B packets (1000 B payload + 40 B header), access links 10× the bottleneck with
1-BDP queues (0.5 ms each way), max_window_pkts raised to 10 BDP when that is above tcpsim's
default 100,000, all flows bulk (ftp) from t = 0, slow start from 2 segments, seed 1.

Each case runs in a fresh child process (this file with --child, under .venv's Python and GNU
time), which calls `tcpsim.run` with warmup_s 0 so that the bottleneck's counters cover the whole
run (tcpsim's links report the measurement window only). Per case:

* µs/pkt = stats.wall_s (the core's event loop) / packets served by the forward bottleneck;
* events/pkt, goodput utilisation (aggregate goodput over the run / (rate × 1000/1040)),
  bottleneck drops, retransmission timeouts;
* peak RSS of the child process (GNU time %M: Python + tcpsim + the result as Python objects);
* the core's memory: the child's RSS sampled every 2 ms while the core simulates (the binding
  releases the GIL), minus its RSS just before the call; KB/flow = (that − peak_packets ×
  INFLIGHT_BYTES_PER_PKT) / N, i.e. beyond what is in flight.

Goals (issue 13): ≤ 0.5 µs/pkt on every case; sack, cubic and bbr within 1.5× of newreno's
µs/pkt on the same case; ≤ 2 KB per flow beyond what is in flight, checked from 1,000 flows up
(below that the fixed cost dominates), and the core under 50 MB at 10,000 flows.

A case that exceeds --timeout (the scenario's limits.max_wall_s, so the core stops itself) is
reported as "> T s" with a lower bound on its µs/pkt (the bottleneck cannot have served more
than rate × the simulated time reached). Once a variant times out at some (N, rate, RTT), its
cases at the same N with a higher rate, or the same rate with a longer RTT, are skipped
(--no-skip runs them anyway): they only cost more.

Results go to bench-results/scaling-<date>.json (--json), written after every case.
--markdown prints the docs table from it, --plot PATH draws µs/pkt against the window per flow
(BDP/N packets) as a self-contained SVG (standard library only).
"""

from __future__ import annotations

import argparse
import datetime as dt
import html
import importlib.util
import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]


def _load_bench():
    """simulator/bench/bench.py under its own module name (the repository's top-level `bench`
    package would shadow a plain `import bench`)."""
    name = "tcplab_simulator_bench"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, HERE / "bench.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


WIRE_BYTES = 1040  # 1000 B payload + 40 B header: tcpsim's defaults and htsim/compare.py's
PAYLOAD_BYTES = 1000
DEFAULT_MAX_WINDOW = 100_000
# Memory allowed per packet slot the core held at its peak (stats.peak_packets, the most
# packets alive at once) before the per-flow figure: the packet itself (~64 B), its event, its queue
# entry, and the sender's and receiver's per-segment state. Deliberately generous.
INFLIGHT_BYTES_PER_PKT = 256

GOAL_US_PER_PKT = 0.5
GOAL_SACK_RATIO = 1.5
GOAL_KB_PER_FLOW = 2.0
GOAL_KB_MIN_FLOWS = 1000
GOAL_MB_AT_10K = 50.0

VARIANT_ALIASES = {"newreno": "newreno-sbs"}
SACK_BASED = ("sack", "cubic", "bbr")
BASELINE_VARIANT = "newreno-sbs"

FULL = {
    "flows": [1, 10, 100, 1000, 10000],
    "rates": [10.0, 100.0, 1000.0, 10000.0],
    "rtts": [10.0, 100.0, 200.0],
    "variants": ["newreno-sbs", "sack", "cubic", "bbr"],
}
QUICK = {"flows": [1, 100, 10000], "rates": [10.0, 100.0], "rtts": [10.0, 100.0], "variants": FULL["variants"]}

# Simulated duration: at least MIN_RTTS round trips and slow start plus SETTLE_RTTS, at least
# MIN_PKTS bottleneck packets (for a measurable wall time), at most BUDGET_PKTS unless slow
# start itself needs more, and at most MAX_SIM_S simulated seconds.
PLAN = {"min_rtts": 30, "settle_rtts": 10, "min_pkts": 200_000, "budget_pkts": 4_000_000, "max_sim_s": 300.0}
QUICK_PLAN = {"min_rtts": 30, "settle_rtts": 10, "min_pkts": 100_000, "budget_pkts": 300_000, "max_sim_s": 60.0}


def log(*a: object) -> None:
    print(*a, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- the matrix


def pkt_rate(rate_mbps: float) -> float:
    """Bottleneck packets per second at full rate."""
    return rate_mbps * 1e6 / (WIRE_BYTES * 8)


def bdp_pkts(rate_mbps: float, rtt_ms: float) -> float:
    return pkt_rate(rate_mbps) * rtt_ms / 1000


def buffer_pkts(rate_mbps: float, rtt_ms: float) -> int:
    return max(2, int(round(bdp_pkts(rate_mbps, rtt_ms))))


def _round2(x: float) -> float:
    """Two significant digits, upwards, so durations read well (0.36, 2.8, 170)."""
    if x <= 0:
        return x
    e = math.floor(math.log10(x)) - 1
    return math.ceil(x / 10**e) * 10**e


def plan_duration(n: int, rate_mbps: float, rtt_ms: float, plan: dict) -> dict:
    """Simulated seconds for one case and the estimate behind them.

    Slow start (from 2 segments, one doubling per RTT) fills the link after about
    t_fill = RTT·(log2(BDP/N/2) + 1) and, with ssthresh unlimited and a 1-BDP buffer,
    overshoots and loses one or two RTTs later (ss_end = t_fill + 2 RTT). Until t_fill the
    bottleneck serves about 2·BDP packets, then the full rate."""
    r = rtt_ms / 1000
    pr = pkt_rate(rate_mbps)
    bdp = bdp_pkts(rate_mbps, rtt_ms)
    t_fill = r * (math.log2(max(bdp / n / 2, 1.0)) + 1)
    ss_end = t_fill + 2 * r

    def est(d: float) -> float:
        return min(pr * d, 2 * bdp + pr * max(0.0, d - t_fill))

    d = max(plan["min_rtts"] * r, ss_end + plan["settle_rtts"] * r)
    if est(d) < plan["min_pkts"]:
        d = max(d, t_fill + max(0.0, plan["min_pkts"] - 2 * bdp) / pr, plan["min_pkts"] / pr)
    d = min(d, plan["max_sim_s"])
    if est(d) > plan["budget_pkts"]:
        d_budget = t_fill + max(0.0, plan["budget_pkts"] - 2 * bdp) / pr
        d = max(ss_end + plan["settle_rtts"] * r, d_budget)
    d = _round2(d)
    return {
        "duration_s": d,
        "t_fill_s": t_fill,
        "slow_start_end_s": ss_end,
        "est_bottleneck_pkts": est(d),
        "rtts": d / r,
    }


def fmt_rate(mbps: float) -> str:
    return f"{mbps / 1000:g}G" if mbps >= 1000 else f"{mbps:g}M"


def case_id(n: int, rate: float, rtt: float, variant: str) -> str:
    short = "newreno" if variant == BASELINE_VARIANT else variant
    return f"n{n}-{fmt_rate(rate)}-{rtt:g}ms-{short}"


def scenario(n: int, rate: float, rtt: float, variant: str, duration: float, timeout: float | None) -> dict:
    buf = buffer_pkts(rate, rtt)
    s = {
        "name": f"scaling {case_id(n, rate, rtt, variant)}",
        "duration_s": duration,
        "warmup_s": 0,
        "seed": 1,
        "topology": {
            "dumbbell": {
                # Access links 0.5 ms each way, as compare.py: the bottleneck takes the rest.
                "bottleneck": {
                    "rate_mbps": rate,
                    "delay_ms": rtt / 2 - 1.0,
                    "queue": {"type": "droptail", "limit_pkts": buf},
                },
                "access": {"rate_mbps": 10 * rate, "queue": {"type": "droptail", "limit_pkts": buf}},
            }
        },
        "flows": [
            {
                "name": "f",
                "count": n,
                "type": "tcp",
                "variant": variant,
                "rtt_ms": rtt,
                "app": {"type": "ftp"},
                "tcp": {"max_window_pkts": max(DEFAULT_MAX_WINDOW, 10 * buf)},
            }
        ],
    }
    if timeout:
        s["limits"] = {"max_wall_s": timeout}
    return s


def build_cases(flows: list[int], rates: list[float], rtts: list[float], variants: list[str], plan: dict) -> list[dict]:
    """Cases ordered by N, variant, rate, RTT: cheapest first within each (N, variant), which
    the skip-after-timeout rule relies on."""
    cases = []
    for n in flows:
        for v in variants:
            for rate in rates:
                for rtt in rtts:
                    p = plan_duration(n, rate, rtt, plan)
                    bdp = bdp_pkts(rate, rtt)
                    cases.append(
                        {
                            "case": case_id(n, rate, rtt, v),
                            "n": n,
                            "rate_mbps": rate,
                            "rtt_ms": rtt,
                            "variant": v,
                            "bdp_pkts": bdp,
                            "buffer_pkts": buffer_pkts(rate, rtt),
                            "window_per_flow_pkts": bdp / n,
                            "duration_s": p["duration_s"],
                            "plan": p,
                        }
                    )
    return cases


# --------------------------------------------------------------------------- the child


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def child(path: str) -> int:
    """Runs one scenario in this process and prints one JSON line (the parent measures the
    process's peak RSS and wall). The binding may be rebuilt under us: retry its import."""
    for attempt in range(12):
        try:
            import tcpsim

            break
        except ImportError as e:
            if attempt == 11:
                print(json.dumps({"ok": False, "error_kind": "import", "message": str(e)}))
                return 3
            time.sleep(5)
    sc = json.loads(Path(path).read_text())
    samples: list[tuple[float, float]] = []
    stop = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            samples.append((time.perf_counter(), _rss_mb()))
            stop.wait(0.002)

    base = _rss_mb()
    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    t0 = time.perf_counter()
    try:
        r = tcpsim.run(sc)
    except Exception as e:  # noqa: BLE001 - reported to the parent as data
        stop.set()
        sampler.join()
        msg = str(e)
        m = re.search(r"simulated time ([0-9.eE+-]+) s", msg)
        print(
            json.dumps(
                {
                    "ok": False,
                    "error_kind": getattr(e, "kind", type(e).__name__),
                    "message": msg,
                    "reached_s": float(m.group(1)) if m else None,
                    "call_wall_s": time.perf_counter() - t0,
                }
            )
        )
        return 0
    t1 = time.perf_counter()
    stop.set()
    sampler.join()
    st = r["stats"]
    # While the core simulates (GIL released) the sampler sees its memory only; afterwards the
    # result becomes Python objects. The event loop ends at least wall_s after the call began.
    during = [v for t, v in samples if t <= t0 + st["wall_s"]]
    core_how = "sampled while simulating"
    if len(during) < 3:  # too short to sample: the whole call, result included (an upper bound)
        during = [v for _, v in samples] + [_rss_mb()]
        core_how = "whole call (upper bound)"
    core_mb = max(during) - base
    bn = next(x for x in r["links"] if x["name"] == "bottleneck")
    flows = r["flows"]
    so = next(Path(tcpsim.__file__).parent.glob("_core*.so"), None)
    out = {
        "ok": True,
        "core_version": r.get("core_version"),
        "binding": {
            "file": tcpsim.__file__,
            "so_mtime": so and dt.datetime.fromtimestamp(so.stat().st_mtime, dt.UTC).isoformat(timespec="seconds"),
        },
        "stats": st,
        "call_wall_s": t1 - t0,
        "bottleneck": {k: bn[k] for k in ("packets", "drops", "queue_drops", "utilization", "mean_queue_pkts")},
        "goodput_bps": sum(f["goodput_bps"] for f in flows),
        "timeouts": sum(f["timeouts"] for f in flows),
        "fast_recoveries": sum(f["fast_recoveries"] for f in flows),
        "retransmits": sum(f["retransmits"] for f in flows),
        "rss_base_mb": base,
        "core_mb": core_mb,
        "core_mb_samples": len(during),
        "core_mb_how": core_how,
        "rss_after_mb": _rss_mb(),
    }
    print(json.dumps(out))
    return 0


# --------------------------------------------------------------------------- the parent


def run_case(c: dict, timeout: float | None, tmp: Path, python: str, bench, repeat: int = 1) -> dict:
    """The case `repeat` times (each in a fresh process); figures from the first run, the
    core's wall time the minimum over them (the simulated run is deterministic)."""
    rec = run_case_once(c, timeout, tmp, python, bench)
    walls = [rec["core_wall_s"]] if rec["status"] == "ok" else []
    for _ in range(repeat - 1):
        if rec["status"] != "ok":
            break
        again = run_case_once(c, timeout, tmp, python, bench)
        if again["status"] != "ok":
            break
        walls.append(again["core_wall_s"])
        rec["peak_rss_mb"] = max(rec["peak_rss_mb"], again["peak_rss_mb"])
    if len(walls) > 1:
        rec["core_wall_s_runs"] = walls
        rec["core_wall_s"] = min(walls)
        rec["us_per_pkt"] = rec["core_wall_s"] * 1e6 / rec["bottleneck_pkts"] if rec["bottleneck_pkts"] else None
    return rec


def run_case_once(c: dict, timeout: float | None, tmp: Path, python: str, bench) -> dict:
    sc = scenario(c["n"], c["rate_mbps"], c["rtt_ms"], c["variant"], c["duration_s"], timeout)
    path = tmp / f"{c['case']}.json"
    path.write_text(json.dumps(sc))
    # The core stops itself at max_wall_s; the process gets set-up and result time on top.
    proc_timeout = (timeout + 120 + c["n"] / 100) if timeout else None
    for attempt in range(3):
        p = bench.run_measured([python, str(Path(__file__).resolve()), "--child", str(path)], timeout=proc_timeout)
        line = next((x for x in reversed(p.out.strip().splitlines()) if x.startswith("{")), None)
        res = json.loads(line) if line else None
        if res and res.get("error_kind") == "import" and attempt < 2:
            log(f"scaling: tcpsim import failed in the child ({res['message']}); retrying in 20 s")
            time.sleep(20)
            continue
        break
    rec = dict(c)
    rec["process_wall_s"] = p.wall_s
    rec["peak_rss_mb"] = p.maxrss_mb
    rec["rss_how"] = p.rss_how
    if p.timed_out:
        rec.update(status="timeout", timeout_s=timeout, note=f"process killed after {proc_timeout:.0f} s")
        return rec
    if res is None or (p.rc != 0 and res.get("ok")):
        rec.update(status="error", error=f"exit {p.rc}: {bench.tail(p.err, 8) or bench.tail(p.out, 8)}")
        return rec
    if not res["ok"]:
        if res.get("error_kind") == "limit_exceeded" and "wall-clock" in res.get("message", ""):
            reached = res.get("reached_s")
            rec.update(status="timeout", timeout_s=timeout, reached_s=reached, message=res["message"])
            if reached:
                # The bottleneck cannot have served more than rate × reached.
                rec["us_per_pkt_lower_bound"] = timeout * 1e6 / max(1.0, pkt_rate(c["rate_mbps"]) * reached)
        else:
            rec.update(status="error", error=f"{res.get('error_kind')}: {res.get('message')}")
        return rec
    st = res["stats"]
    pk = res["bottleneck"]["packets"]
    cap = c["rate_mbps"] * 1e6 * PAYLOAD_BYTES / WIRE_BYTES
    core_mb = res["core_mb"]
    inflight_mb = st.get("peak_packets", 0) * INFLIGHT_BYTES_PER_PKT / 2**20
    # Beyond the in-flight allowance; 0 when the allowance covers everything measured.
    kb_flow = max(0.0, core_mb - inflight_mb) * 1024 / c["n"] if core_mb is not None else None
    rec.update(
        status="ok",
        core_version=res.get("core_version"),
        bottleneck_pkts=pk,
        core_wall_s=st["wall_s"],
        us_per_pkt=st["wall_s"] * 1e6 / pk if pk else None,
        events=st["events"],
        events_per_pkt=st["events"] / pk if pk else None,
        goodput_util=res["goodput_bps"] / cap,
        drops=res["bottleneck"]["drops"],
        timeouts=res["timeouts"],
        fast_recoveries=res["fast_recoveries"],
        retransmits=res["retransmits"],
        peak_packets=st.get("peak_packets"),
        call_wall_s=res["call_wall_s"],
        rss_base_mb=res["rss_base_mb"],
        core_mb=core_mb,
        core_mb_samples=res["core_mb_samples"],
        core_mb_how=res.get("core_mb_how"),
        inflight_allowance_mb=inflight_mb,
        binding=res.get("binding"),
        kb_per_flow=kb_flow,
    )
    return rec


def skip_reason(c: dict, timed_out: list[dict]) -> str | None:
    """A timed-out (N, variant) at rate r, RTT t makes every case with rate ≥ r and RTT ≥ t
    (same N and variant) at least as long: more packets and larger windows."""
    for t in timed_out:
        if (
            (t["n"], t["variant"]) == (c["n"], c["variant"])
            and c["rate_mbps"] >= t["rate_mbps"]
            and c["rtt_ms"] >= t["rtt_ms"]
        ):
            return t["case"]
    return None


def us_value(r: dict) -> tuple[float | None, bool]:
    """(µs/pkt, is_lower_bound)."""
    if r.get("status") == "ok":
        return r.get("us_per_pkt"), False
    if r.get("status") == "timeout":
        return r.get("us_per_pkt_lower_bound"), True
    return None, False


def evaluate(results: list[dict]) -> dict:
    """Marks each case against the goals (in place) and returns the summary."""
    base = {(r["n"], r["rate_mbps"], r["rtt_ms"]): r for r in results if r["variant"] == BASELINE_VARIANT}
    for r in results:
        goals = {}
        us, lower = us_value(r)
        if r["status"] in ("ok", "timeout"):
            goals["us"] = us is not None and not lower and us <= GOAL_US_PER_PKT
        r["ratio_vs_newreno"] = None
        r["ratio_is_lower_bound"] = False
        b = base.get((r["n"], r["rate_mbps"], r["rtt_ms"]))
        if r["variant"] in SACK_BASED and b is not None and us is not None:
            bus, blower = us_value(b)
            if bus and not blower:
                r["ratio_vs_newreno"] = us / bus
                r["ratio_is_lower_bound"] = lower
                # A timed-out case's ratio is a lower bound: a miss only when that bound misses.
                if not lower or us / bus > GOAL_SACK_RATIO:
                    goals["ratio"] = us / bus <= GOAL_SACK_RATIO
        if r["status"] == "ok" and r["n"] >= GOAL_KB_MIN_FLOWS and r.get("kb_per_flow") is not None:
            ok = r["kb_per_flow"] <= GOAL_KB_PER_FLOW
            if r["n"] >= 10000:
                ok = ok and r["kb_per_flow"] * r["n"] / 1024 < GOAL_MB_AT_10K
            goals["mem"] = ok
        r["goals"] = goals
        r["meets_goals"] = r["status"] == "ok" and all(goals.values())

    def worst(key, pred=lambda r: True):
        xs = [r for r in results if pred(r) and r.get(key) is not None]
        return max(xs, key=lambda r: r[key]) if xs else None

    w_us = worst("us_per_pkt", lambda r: r["status"] == "ok")
    w_ratio = worst("ratio_vs_newreno")
    w_kb = worst("kb_per_flow", lambda r: r["n"] >= GOAL_KB_MIN_FLOWS)
    measured = [r for r in results if r["status"] in ("ok", "timeout")]
    return {
        "cases": len(results),
        "ok": sum(r["status"] == "ok" for r in results),
        "timeouts": sum(r["status"] == "timeout" for r in results),
        "skipped": sum(r["status"] == "skipped" for r in results),
        "errors": sum(r["status"] == "error" for r in results),
        "over_us_goal": sum(not r["goals"].get("us", True) for r in measured),
        "meeting_all_goals": sum(r["meets_goals"] for r in results),
        "worst_us_per_pkt": w_us and {"case": w_us["case"], "value": w_us["us_per_pkt"]},
        "worst_ratio_vs_newreno": w_ratio
        and {
            "case": w_ratio["case"],
            "value": w_ratio["ratio_vs_newreno"],
            "lower_bound": w_ratio["ratio_is_lower_bound"],
        },
        "worst_kb_per_flow": w_kb and {"case": w_kb["case"], "value": w_kb["kb_per_flow"]},
        "max_core_mb_at_10k": max(
            (r["core_mb"] for r in results if r["n"] >= 10000 and r.get("core_mb") is not None), default=None
        ),
        "max_core_mb_beyond_inflight_at_10k": max(
            (r["kb_per_flow"] * r["n"] / 1024 for r in results if r["n"] >= 10000 and r.get("kb_per_flow") is not None),
            default=None,
        ),
        "median_us_per_pkt": statistics.median(
            [r["us_per_pkt"] for r in results if r["status"] == "ok" and r.get("us_per_pkt")] or [0]
        )
        or None,
    }


# --------------------------------------------------------------------------- output


def f_num(x: float | None, nd: int = 2) -> str:
    if x is None:
        return "-"
    if abs(x) >= 1000:
        return f"{x:,.0f}"
    if abs(x) >= 100:
        return f"{x:.0f}"
    if abs(x) >= 10:
        return f"{x:.1f}" if nd > 0 else f"{x:.0f}"
    return f"{x:.{nd}f}"


def f_win(x: float) -> str:
    return f"{x:,.0f}" if x >= 10 else (f"{x:.1f}" if x >= 1 else f"{x:.2g}")


def f_us(r: dict) -> str:
    if r["status"] == "ok":
        return f_num(r.get("us_per_pkt"))
    if r["status"] == "timeout":
        return f"> {r['timeout_s']:g} s"
    if r["status"] == "skipped":
        return "skipped"
    return "ERROR"


def f_ratio(r: dict) -> str:
    x = r.get("ratio_vs_newreno")
    if x is None:
        return "-"
    return (">" if r.get("ratio_is_lower_bound") else "") + f"{x:.1f}x"


def f_goals(r: dict) -> str:
    if r["status"] == "skipped":
        return f"skip (after {r.get('skipped_after')})"
    if r["status"] == "error":
        return "ERROR"
    bad = [k for k, ok in r.get("goals", {}).items() if not ok]
    if r["status"] == "timeout":
        rest = [k for k in bad if k != "us"]
        return "TIMEOUT" + (" " + ",".join(rest) if rest else "")
    return "ok" if not bad else "over: " + ",".join(bad)


HEADER = ["case", "N", "rate", "RTT", "variant", "win/flow", "sim s", "bneck pkts", "wall s", "µs/pkt", "ev/pkt",
          "util", "drops", "TOs", "RSS MB", "core MB", "KB/flow", "×NR", "goals"]  # fmt: skip


def row(r: dict) -> list[str]:
    ok = r["status"] == "ok"
    short = "newreno" if r["variant"] == BASELINE_VARIANT else r["variant"]
    return [
        r["case"],
        f"{r['n']:,}",
        fmt_rate(r["rate_mbps"]),
        f"{r['rtt_ms']:g}",
        short,
        f_win(r["window_per_flow_pkts"]),
        f"{r['duration_s']:g}",
        f"{r['bottleneck_pkts']:,}" if ok else "-",
        f"{r['core_wall_s']:.3f}" if ok else "-",
        f_us(r),
        f_num(r.get("events_per_pkt")) if ok else "-",
        f"{r['goodput_util']:.2f}" if ok else "-",
        f"{r['drops']:,}" if ok else "-",
        f"{r['timeouts']:,}" if ok else "-",
        f_num(r.get("peak_rss_mb"), 1) if r["status"] in ("ok", "timeout") else "-",
        f_num(r.get("core_mb"), 1) if ok else "-",
        f_num(r.get("kb_per_flow"), 2) if ok else "-",
        f_ratio(r),
        f_goals(r),
    ]


def summary_line(s: dict) -> str:
    def w(key: str, unit: str, fmt=lambda x: f"{x:.2f}") -> str:
        x = s.get(key)
        if not x:
            return "-"
        lb = ">" if x.get("lower_bound") else ""
        return f"{lb}{fmt(x['value'])}{unit} ({x['case']})"

    mb10k = s.get("max_core_mb_beyond_inflight_at_10k")
    return (
        f"worst µs/pkt {w('worst_us_per_pkt', '')} [goal {GOAL_US_PER_PKT}]; "
        f"cases over the µs goal {s['over_us_goal']}/{s['ok'] + s['timeouts']} measured "
        f"({s['timeouts']} timed out, {s['skipped']} skipped, {s['errors']} errors); "
        f"worst sack-based/newreno {w('worst_ratio_vs_newreno', 'x', lambda x: f'{x:.1f}')} [goal {GOAL_SACK_RATIO}x]; "
        f"worst KB/flow (N >= {GOAL_KB_MIN_FLOWS:,}) {w('worst_kb_per_flow', ' KB')} [goal {GOAL_KB_PER_FLOW}]"
        + (
            f"; core at 10,000 flows up to {mb10k:.1f} MB beyond in-flight [goal < {GOAL_MB_AT_10K:.0f}]"
            if mb10k is not None
            else ""
        )
        + f"; {s['meeting_all_goals']}/{s['cases']} cases meet every goal"
    )


def print_table(results: list[dict], bench) -> None:
    print(bench.table([row(r) for r in results], HEADER))


def markdown(report: dict) -> str:
    """The docs table: one row per (N, rate, RTT), µs/pkt per variant, sack-based/newreno,
    KB/flow and the core's MB; then the summary."""
    results = report["results"]
    variants = list(dict.fromkeys(r["variant"] for r in results))
    keys = list(dict.fromkeys((r["n"], r["rate_mbps"], r["rtt_ms"]) for r in results))
    keys.sort()
    by = {(r["n"], r["rate_mbps"], r["rtt_ms"], r["variant"]): r for r in results}
    names = ["newreno" if v == BASELINE_VARIANT else v for v in variants]
    hdr = ["N", "rate", "RTT ms", "win/flow pkts", "sim s", "bneck pkts"] + [f"{v} µs/pkt" for v in names]
    hdr += ["worst ×NR", "max KB/flow", "max core MB", "max RSS MB"]
    lines = ["| " + " | ".join(hdr) + " |", "|" + "---|" * len(hdr)]

    def cell(r: dict | None) -> str:
        if r is None:
            return ""
        s = f_us(r)
        if r["status"] == "ok" and r.get("us_per_pkt") is not None and r["us_per_pkt"] > GOAL_US_PER_PKT:
            s = f"**{s}**"
        if r["status"] == "timeout" and r.get("us_per_pkt_lower_bound"):
            s = f"> {r['timeout_s']:g} s (≥ {f_num(r['us_per_pkt_lower_bound'])})"
        return s

    for n, rate, rtt in keys:
        rs = [by.get((n, rate, rtt, v)) for v in variants]
        present = [r for r in rs if r]
        okr = [r for r in present if r["status"] == "ok"]
        ratios = [r for r in present if r.get("ratio_vs_newreno") is not None]
        wr = max(ratios, key=lambda r: r["ratio_vs_newreno"]) if ratios else None
        # Per flow only where flows dominate the core's memory (below, its fixed cost does).
        kb = [r["kb_per_flow"] for r in okr if r.get("kb_per_flow") is not None and n >= GOAL_KB_MIN_FLOWS]
        cm = [r["core_mb"] for r in okr if r.get("core_mb") is not None]
        rss = [r["peak_rss_mb"] for r in present if r.get("peak_rss_mb") and r["status"] == "ok"]
        pk = [r["bottleneck_pkts"] for r in okr]
        first = present[0]
        cells = [f"{n:,}", fmt_rate(rate), f"{rtt:g}", f_win(first["window_per_flow_pkts"]), f"{first['duration_s']:g}",
                 f"{statistics.median(pk) / 1e6:.2f} M" if pk else "-"]  # fmt: skip
        cells += [cell(r) for r in rs]
        cells += [
            f_ratio(wr) if wr else "-",
            f_num(max(kb)) if kb else "-",
            f_num(max(cm), 1) if cm else "-",
            f_num(max(rss), 1) if rss else "-",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    s = report["summary"]
    m = report.get("machine", {})
    lines.append("")
    lines.append(
        f"{report['date']}, {m.get('cpu')} ×{m.get('cpus')}, repo {m.get('git_commit')}, tcpsim {report.get('core_version')}; "
        f"per-case timeout {report['args'].get('timeout')} s; {report.get('elapsed_s', 0) / 60:.1f} min in all"
        + (
            f" (binding built {b['so_mtime']}, before core commit {b['core_commit'].split()[0]})"
            if (b := report.get("binding") or {}).get("older_than_core_commit")
            else ""
        )
        + ". "
        "µs/pkt in bold: over the 0.5 goal; `> T s (≥ x)`: timed out, x a lower bound on µs/pkt; "
        "`skipped`: a cheaper case of the same N and variant had timed out. bneck pkts: median over the variants. "
        f"KB/flow: the core's memory beyond {INFLIGHT_BYTES_PER_PKT} B per packet slot held, per flow, from {GOAL_KB_MIN_FLOWS:,} flows up; "
        "core MB: the core's peak (RSS sampled while it simulates, less the process's before); RSS MB: the whole child process (Python and the result included)."
    )
    lines.append("")
    lines.append("Summary: " + summary_line(s) + ".")
    return "\n".join(lines)


# --------------------------------------------------------------------------- the plot (SVG)

COLORS = {"newreno-sbs": "#1f77b4", "sack": "#ff7f0e", "cubic": "#2ca02c", "bbr": "#d62728"}
EXTRA_COLORS = ["#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"]
SHAPES = {"newreno-sbs": "circle", "sack": "square", "cubic": "diamond", "bbr": "triangle"}


def _marker(shape: str, x: float, y: float, color: str, hollow: bool, r: float = 4.5) -> str:
    fill = "none" if hollow else color
    style = f'fill="{fill}" stroke="{color}" stroke-width="1.4" fill-opacity="0.8"'
    if shape == "circle":
        return f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{r}" {style}/>'
    if shape == "square":
        return f'<rect x="{x - r:.1f}" y="{y - r:.1f}" width="{2 * r}" height="{2 * r}" {style}/>'
    if shape == "diamond":
        p = f"{x:.1f},{y - r * 1.3:.1f} {x + r * 1.3:.1f},{y:.1f} {x:.1f},{y + r * 1.3:.1f} {x - r * 1.3:.1f},{y:.1f}"
        return f'<polygon points="{p}" {style}/>'
    p = f"{x:.1f},{y - r * 1.2:.1f} {x + r * 1.1:.1f},{y + r * 0.8:.1f} {x - r * 1.1:.1f},{y + r * 0.8:.1f}"
    return f'<polygon points="{p}" {style}/>'


def svg_plot(report: dict) -> str:
    """µs per bottleneck packet against the window per flow (BDP/N packets), log-log, one
    colour and marker per variant; timed-out cases as hollow markers at their lower bound with
    an arrow up; the 0.5 µs goal dashed."""
    pts = []
    for r in report["results"]:
        us, lower = us_value(r)
        if us and us > 0:
            pts.append((r["window_per_flow_pkts"], us, lower, r))
    W, H = 900, 560
    ml, mr, mt, mb = 72, 170, 50, 60
    pw, ph = W - ml - mr, H - mt - mb
    if pts:
        xmin = 10 ** math.floor(math.log10(min(p[0] for p in pts)))
        xmax = 10 ** math.ceil(math.log10(max(p[0] for p in pts)))
        ymin = 10 ** math.floor(math.log10(min(min(p[1] for p in pts), GOAL_US_PER_PKT)))
        ymax = 10 ** math.ceil(math.log10(max(max(p[1] for p in pts), GOAL_US_PER_PKT) * 1.01))
    else:
        xmin, xmax, ymin, ymax = 1e-3, 1e6, 0.1, 100
    if xmax <= xmin:
        xmax = xmin * 10
    if ymax <= ymin:
        ymax = ymin * 10

    def X(v: float) -> float:
        return ml + (math.log10(v) - math.log10(xmin)) / (math.log10(xmax) - math.log10(xmin)) * pw

    def Y(v: float) -> float:
        return mt + ph - (math.log10(v) - math.log10(ymin)) / (math.log10(ymax) - math.log10(ymin)) * ph

    def exp_label(e: int) -> str:
        v = 10.0**e
        return f"{v:g}" if -3 <= e <= 5 else f"1e{e}"

    o = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" font-family="sans-serif" font-size="12">'
    ]
    o.append(f'<rect width="{W}" height="{H}" fill="white"/>')
    m = report.get("machine", {})
    a = report.get("args", {})
    title = "tcpsim: µs of core wall time per bottleneck packet against the window per flow"
    sub = (
        f"dumbbell, 1-BDP drop-tail buffer; N {', '.join(f'{x:,}' for x in a.get('flows', []))}; "
        f"{', '.join(fmt_rate(x) for x in a.get('rates_mbps', []))} b/s; RTT {', '.join(f'{x:g}' for x in a.get('rtts_ms', []))} ms; "
        f"{report['date'][:16].replace('T', ' ')} UTC, repo {str(m.get('git_commit', '')).split()[0]}"
    )
    so = (report.get("binding") or {}).get("so_mtime")
    if so:
        sub += f", tcpsim binding built {so[:16].replace('T', ' ')}"
    o.append(f'<text x="{ml}" y="22" font-size="14" font-weight="bold">{html.escape(title)}</text>')
    o.append(f'<text x="{ml}" y="39" font-size="11" fill="#555">{html.escape(sub)}</text>')
    for e in range(round(math.log10(xmin)), round(math.log10(xmax)) + 1):
        x = X(10.0**e)
        o.append(f'<line x1="{x:.1f}" y1="{mt}" x2="{x:.1f}" y2="{mt + ph}" stroke="#e5e5e5"/>')
        o.append(f'<text x="{x:.1f}" y="{mt + ph + 16}" text-anchor="middle">{exp_label(e)}</text>')
    for e in range(round(math.log10(ymin)), round(math.log10(ymax))):
        for k in (2, 5):
            y = Y(k * 10.0**e)
            o.append(f'<line x1="{ml}" y1="{y:.1f}" x2="{ml + pw}" y2="{y:.1f}" stroke="#f3f3f3"/>')
            o.append(
                f'<text x="{ml - 6}" y="{y + 4:.1f}" text-anchor="end" font-size="10" fill="#888">{k * 10.0**e:g}</text>'
            )
    for e in range(round(math.log10(ymin)), round(math.log10(ymax)) + 1):
        y = Y(10.0**e)
        o.append(f'<line x1="{ml}" y1="{y:.1f}" x2="{ml + pw}" y2="{y:.1f}" stroke="#e5e5e5"/>')
        o.append(f'<text x="{ml - 6}" y="{y + 4:.1f}" text-anchor="end">{exp_label(e)}</text>')
    o.append(f'<rect x="{ml}" y="{mt}" width="{pw}" height="{ph}" fill="none" stroke="#333"/>')
    o.append(
        f'<text x="{ml + pw / 2}" y="{H - 18}" text-anchor="middle">window per flow: BDP / N (packets, log scale)</text>'
    )
    o.append(
        f'<text transform="translate(18,{mt + ph / 2}) rotate(-90)" text-anchor="middle">µs of core wall time per bottleneck packet (log)</text>'
    )
    gy = Y(GOAL_US_PER_PKT)
    o.append(f'<line x1="{ml}" y1="{gy:.1f}" x2="{ml + pw}" y2="{gy:.1f}" stroke="#000" stroke-dasharray="6,4"/>')
    o.append(
        f'<text x="{ml + pw - 4}" y="{gy - 5:.1f}" text-anchor="end" font-size="11">goal {GOAL_US_PER_PKT} µs</text>'
    )
    variants = list(dict.fromkeys(r["variant"] for r in report["results"]))
    colors = {v: COLORS.get(v) or EXTRA_COLORS[i % len(EXTRA_COLORS)] for i, v in enumerate(variants)}
    # Same window, several variants: spread them a little sideways so all stay visible.
    offs = {v: (i - (len(variants) - 1) / 2) * 4 for i, v in enumerate(variants)}
    for w, us, lower, r in pts:
        v = r["variant"]
        x, y = X(w) + offs[v], Y(us)
        tip = f"{r['case']}: " + (f"> {r['timeout_s']:g} s, ≥ {us:.2f} µs/pkt" if lower else f"{us:.3f} µs/pkt")
        o.append(f"<g><title>{html.escape(tip)}</title>{_marker(SHAPES.get(v, 'circle'), x, y, colors[v], lower)}")
        if lower:
            o.append(
                f'<line x1="{x:.1f}" y1="{y - 6:.1f}" x2="{x:.1f}" y2="{y - 16:.1f}" stroke="{colors[v]}" stroke-width="1.4"/>'
            )
            o.append(
                f'<polyline points="{x - 3:.1f},{y - 12:.1f} {x:.1f},{y - 17:.1f} {x + 3:.1f},{y - 12:.1f}" fill="none" stroke="{colors[v]}" stroke-width="1.4"/>'
            )
        o.append("</g>")
    lx, ly = ml + pw + 16, mt + 10
    for i, v in enumerate(variants):
        name = "newreno (-sbs)" if v == BASELINE_VARIANT else v
        o.append(_marker(SHAPES.get(v, "circle"), lx + 6, ly + i * 22, colors[v], False))
        o.append(f'<text x="{lx + 18}" y="{ly + i * 22 + 4}">{html.escape(name)}</text>')
    ly2 = ly + len(variants) * 22 + 10
    o.append(_marker("circle", lx + 6, ly2, "#555", True))
    o.append(f'<text x="{lx + 18}" y="{ly2 + 4}">timed out: lower</text>')
    o.append(f'<text x="{lx + 18}" y="{ly2 + 18}">bound (arrow up)</text>')
    o.append("</svg>")
    return "\n".join(o) + "\n"


# --------------------------------------------------------------------------- main


def parse_list(text: str, conv) -> list:
    return [conv(x.strip()) for x in text.split(",") if x.strip()]


def parse_rate(text: str) -> float:
    t = text.strip().lower().removesuffix("b/s").removesuffix("bps")
    mult = 1.0
    if t.endswith("g"):
        mult, t = 1000.0, t[:-1]
    elif t.endswith("m"):
        t = t[:-1]
    return float(t) * mult


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description="tcpsim's core cost (µs per bottleneck packet) and memory across flows × rate × RTT × variant (issue 13)."
    )
    p.add_argument(
        "--quick",
        action="store_true",
        help="a small subset (N 1,100,10000 × 10M,100M × 10,100 ms × 4 variants, ~0.1 M packets each): ~20 s",
    )
    p.add_argument("--flows", help="comma-separated flow counts (default 1,10,100,1000,10000)")
    p.add_argument(
        "--rates", help="comma-separated bottleneck rates, 10M / 1G / Mb/s numbers (default 10M,100M,1G,10G)"
    )
    p.add_argument("--rtts", help="comma-separated RTTs in ms (default 10,100,200)")
    p.add_argument(
        "--variants", help="comma-separated variants; newreno = newreno-sbs (default newreno,sack,cubic,bbr)"
    )
    p.add_argument(
        "--timeout",
        type=float,
        default=None,
        help="per-case limit on the core's wall time, s (default 60; 20 with --quick)",
    )
    p.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="runs per case, each in a fresh process; the minimum core wall time counts (default 1)",
    )
    p.add_argument(
        "--no-skip", action="store_true", help="run cases that a cheaper timed-out case predicts will time out too"
    )
    p.add_argument(
        "--budget-pkts",
        type=float,
        help=f"bottleneck packets per case, at most (default {PLAN['budget_pkts']:,}; slow start may need more)",
    )
    p.add_argument(
        "--min-pkts", type=float, help=f"bottleneck packets per case, at least (default {PLAN['min_pkts']:,})"
    )
    p.add_argument("--json", help="write the results here (default bench-results/scaling-<date>.json)")
    p.add_argument(
        "--from",
        dest="from_json",
        help="read results from this JSON (or several, comma-separated, merged) instead of running",
    )
    p.add_argument("--markdown", action="store_true", help="print the docs table (markdown) after the results")
    p.add_argument("--plot", help="write the SVG plot of µs/pkt against window per flow here")
    p.add_argument("--python", help="Python for the child processes (default: this one, which must import tcpsim)")
    p.add_argument("--list", action="store_true", help="list the cases and their planned durations, run nothing")
    p.add_argument(
        "--strict", action="store_true", help="exit 1 if any case misses a goal (default: 0 unless a case errors)"
    )
    p.add_argument("--child", help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    base = QUICK if a.quick else FULL
    a.flows_l = parse_list(a.flows, int) if a.flows else base["flows"]
    a.rates_l = parse_list(a.rates, parse_rate) if a.rates else base["rates"]
    a.rtts_l = parse_list(a.rtts, float) if a.rtts else base["rtts"]
    a.variants_l = [VARIANT_ALIASES.get(v, v) for v in parse_list(a.variants, str)] if a.variants else base["variants"]
    if a.timeout is None:
        a.timeout = 20.0 if a.quick else 60.0
    a.plan = dict(QUICK_PLAN if a.quick else PLAN)
    if a.budget_pkts:
        a.plan["budget_pkts"] = a.budget_pkts
    if a.min_pkts:
        a.plan["min_pkts"] = a.min_pkts
    return a


def binding_info(b: dict) -> dict:
    """The binding the children imported, and whether it predates the last commit that touched
    simulator/core (then it measures an older core than the checkout's)."""
    out = dict(b)
    try:
        r = subprocess.run(
            ["git", "-C", str(REPO), "log", "-1", "--format=%h %cI", "--", "simulator/core"],
            capture_output=True,
            text=True,
            timeout=30,
        )
        commit, date = r.stdout.split()
        out["core_commit"] = f"{commit} {date}"
        if b.get("so_mtime"):
            out["older_than_core_commit"] = dt.datetime.fromisoformat(b["so_mtime"]) < dt.datetime.fromisoformat(date)
    except (OSError, ValueError, subprocess.SubprocessError):
        pass
    return out


def merge_reports(reports: list[dict]) -> dict:
    """Several runs as one (e.g. the matrix run in parts): the first's header, every case once
    (a later run's wins), in matrix order, the parts' flows, rates, RTTs and variants unioned."""
    out = dict(reports[0])
    if len(reports) == 1:
        return out
    by_case = {}
    for rep in reports:
        for r in rep["results"]:
            by_case[r["case"]] = r
    order = {v: i for i, v in enumerate(FULL["variants"])}
    out["results"] = sorted(
        by_case.values(), key=lambda r: (r["n"], order.get(r["variant"], 99), r["variant"], r["rate_mbps"], r["rtt_ms"])
    )
    a = dict(out.get("args", {}))
    for key in ("flows", "rates_mbps", "rtts_ms"):
        a[key] = sorted({x for rep in reports for x in rep.get("args", {}).get(key, [])})
    a["variants"] = list(dict.fromkeys(v for rep in reports for v in rep.get("args", {}).get("variants", [])))
    out["args"] = a
    out["elapsed_s"] = sum(rep.get("elapsed_s", 0) for rep in reports)
    out["parts"] = [{"date": rep.get("date"), "cases": len(rep["results"]), "elapsed_s": rep.get("elapsed_s"), "git_commit": rep.get("machine", {}).get("git_commit"),
                     "binding": rep.get("binding")} for rep in reports]  # fmt: skip
    return out


def write_report(report: dict, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(report, indent=1, default=str) + "\n")
    tmp.replace(path)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.child:
        return child(args.child)
    if hasattr(sys.stdout, "reconfigure"):
        sys.stdout.reconfigure(line_buffering=True)
    bench = _load_bench()

    if args.from_json:
        report = merge_reports([json.loads(Path(x).read_text()) for x in args.from_json.split(",") if x.strip()])
        report["summary"] = evaluate(report["results"])
        if not args.markdown and not args.plot:
            print_table(report["results"], bench)
            print("\n" + summary_line(report["summary"]))
    else:
        cases = build_cases(args.flows_l, args.rates_l, args.rtts_l, args.variants_l, args.plan)
        if args.list:
            print(bench.table([[c["case"], f_win(c["window_per_flow_pkts"]), f"{c['duration_s']:g}", f"{c['plan']['rtts']:.0f}",
                                f"{c['plan']['est_bottleneck_pkts']:,.0f}"] for c in cases],
                              ["case", "win/flow", "sim s", "RTTs", "est. bneck pkts"]))  # fmt: skip
            print(
                f"{len(cases)} cases, {sum(c['plan']['est_bottleneck_pkts'] for c in cases) / 1e6:.1f} M bottleneck packets estimated"
            )
            return 0
        python = args.python or sys.executable
        started = dt.datetime.now(dt.UTC)
        out = Path(args.json) if args.json else REPO / "bench-results" / f"scaling-{started:%Y-%m-%d-%H%M%S}.json"
        info = bench.machine_info()
        load0 = os.getloadavg()
        print(f"tcpsim scaling benchmark (issue 13), {started:%Y-%m-%d %H:%M} UTC")
        print(
            f"  machine: {info['cpu']} x{info['cpus']}, {info['mem_gb']} GB, {info['os']}, Python {info['python']}, repo {info['git_commit']}"
        )
        print(f"  {len(cases)} cases; per-case timeout {args.timeout:g} s; child Python {python}; results -> {out}")
        bench.print_load_note(load0[0])
        report = {
            "date": started.isoformat(timespec="seconds"),
            "machine": info,
            "args": {
                "quick": args.quick,
                "flows": args.flows_l,
                "rates_mbps": args.rates_l,
                "rtts_ms": args.rtts_l,
                "variants": args.variants_l,
                "timeout": args.timeout,
                "repeat": args.repeat,
                "skip": not args.no_skip,
                "plan": args.plan,
            },  # fmt: skip
            "constants": {
                "wire_bytes": WIRE_BYTES,
                "inflight_bytes_per_pkt": INFLIGHT_BYTES_PER_PKT,
                "goal_us_per_pkt": GOAL_US_PER_PKT,
                "goal_sack_ratio": GOAL_SACK_RATIO,
                "goal_kb_per_flow": GOAL_KB_PER_FLOW,
                "goal_kb_min_flows": GOAL_KB_MIN_FLOWS,
                "goal_mb_at_10k": GOAL_MB_AT_10K,
            },  # fmt: skip
            "load_average_start": load0,
            "complete": False,
            "results": [],
        }
        timed_out: list[dict] = []
        with tempfile.TemporaryDirectory(prefix="tcplab-scaling-") as tmpdir:
            for i, c in enumerate(cases, 1):
                why = None if args.no_skip else skip_reason(c, timed_out)
                if why:
                    rec = dict(c, status="skipped", skipped_after=why)
                else:
                    log(
                        f"scaling: [{i}/{len(cases)}] {c['case']} ({c['duration_s']:g} s simulated, ~{c['plan']['est_bottleneck_pkts'] / 1e6:.2f} M bottleneck pkts) ..."
                    )
                    rec = run_case(c, args.timeout, Path(tmpdir), python, bench, args.repeat)
                    if rec["status"] == "timeout":
                        timed_out.append(rec)
                    if rec["status"] == "error":
                        log(f"scaling: {c['case']} failed: {rec['error']}")
                    elif rec["status"] == "ok":
                        log(
                            f"scaling:   {rec['us_per_pkt']:.3f} µs/pkt, {rec['bottleneck_pkts']:,} pkts in {rec['core_wall_s']:.3f} s"
                        )
                    else:
                        log(
                            f"scaling:   > {args.timeout:g} s (reached {rec.get('reached_s')} of {c['duration_s']:g} s simulated)"
                        )
                report["results"].append(rec)
                report["core_version"] = report.get("core_version") or rec.get("core_version")
                if rec.get("binding") and not report.get("binding"):
                    report["binding"] = binding_info(rec["binding"])
                    if report["binding"].get("older_than_core_commit"):
                        b = report["binding"]
                        log(
                            f"scaling: NOTE: the tcpsim binding ({b['so_mtime']}) predates the last commit to simulator/core ({b['core_commit']}); `make install` rebuilds it"
                        )
                write_report(report, out)
        seen = sorted(
            {r["binding"]["so_mtime"] for r in report["results"] if r.get("binding") and r["binding"].get("so_mtime")}
        )
        report["bindings_seen"] = seen
        if len(seen) > 1:
            log(
                f"scaling: WARNING: the tcpsim binding changed during the run (built {', '.join(seen)}): the cases measured different cores"
            )
        report["complete"] = True
        report["load_average_end"] = os.getloadavg()
        report["elapsed_s"] = (dt.datetime.now(dt.UTC) - started).total_seconds()
        report["summary"] = evaluate(report["results"])
        write_report(report, out)
        print()
        print_table(report["results"], bench)
        print("\n" + summary_line(report["summary"]))
        print(
            f"\nAll figures: {out}  ({report['elapsed_s'] / 60:.1f} min; load average {load0[0]:.2f} -> {report['load_average_end'][0]:.2f})"
        )

    if args.markdown:
        print(markdown(report))
    if args.plot:
        path = Path(args.plot)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(svg_plot(report))
        log(f"scaling: plot written to {path}")
    s = report["summary"]
    if s["errors"]:
        return 2
    if args.strict and s["meeting_all_goals"] < s["cases"]:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
