#!/usr/bin/env python3
"""Reproduce paper 000 Fig. 2 (Parvez, Mahanti & Williamson, ICC 2006) on tcpsim.

Two foreground NewReno flows, one Slow-but-Steady and one Impatient, 70 ms round-trip
propagation, a 45 Mb/s bottleneck, and a Bernoulli loss-event module (p, m) on each
receiver's path; m = 1..40; 1000 s simulated, the last 750 s measured (paper 000 §IV-B).
Prints, per m, the simulated throughput of both variants in packets per RTT (mean over seeds,
with the spread), the predictions of eq. (4) (SBS) and eq. (8) (IMP, applicable for m >= m*),
and the model errors |sim - model| / sim; then the crossover m_t, in simulation and by the
models. `--markdown FILE` also writes the table as the committed document shows it.

Usage: .venv/bin/python simulator/validation/fig2.py [--p 0.0005] [--seeds 3] [--duration 1000]
       [--m 1-40] [--jobs 2] [--markdown docs/validation/fig2.md]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


# Paper 000 §III models: eq. (2), (4), (8) and m* (§II-C) from the service's model package
# (services/models/newreno.py), which needs numpy: run this with the project's environment.
sys.path.insert(0, str(ROOT))
try:
    from services.models.newreno import (
        imp_timeout_pkts_per_rtt as imp_pkts_per_rtt,  # eq. (8) times R: Impatient for m >= m*
    )
    from services.models.newreno import (
        m_star,  # floor(RTO / R) + 2
        sbs_pkts_per_rtt,  # eq. (4) times R
        w_sbs,  # eq. (2)
    )

    # The experiment itself is the paper000-fig2a/b preset's: one builder for both.
    from services.presets.paper000 import fig2_scenario as scenario
except ImportError as exc:  # e.g. a system Python without numpy
    sys.exit(
        f"fig2.py: {exc}; run it with the project's Python: .venv/bin/python {Path(__file__).relative_to(ROOT)} (make install)"
    )


# ---- simulation -----------------------------------------------------------------------------


def runner():
    """tcpsim.run from the Python package when installed, else the CLI binary."""
    try:
        import tcpsim  # type: ignore

        return tcpsim.run
    except ImportError:
        binary = shutil.which("tcpsim") or str(ROOT / "simulator/target/release/tcpsim")
        if not os.path.exists(binary):
            subprocess.run(["cargo", "build", "--release", "-p", "tcpsim-core"], cwd=ROOT / "simulator", check=True)

        def run_cli(s: dict) -> dict:
            out = subprocess.run([binary, "run", "-"], input=json.dumps(s), capture_output=True, text=True, check=True)
            return json.loads(out.stdout)

        return run_cli


def mean_sd(xs: list[float]) -> tuple[float, float]:
    return statistics.fmean(xs), (statistics.stdev(xs) if len(xs) > 1 else 0.0)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--p", type=float, default=0.0005)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--duration", type=float, default=1000.0)
    ap.add_argument("--m", default="1-40", help="range a-b or comma list")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--markdown", type=Path)
    a = ap.parse_args()
    ms = (
        list(range(int(a.m.split("-")[0]), int(a.m.split("-")[1]) + 1))
        if "-" in a.m
        else [int(x) for x in a.m.split(",")]
    )
    warmup = a.duration / 4  # the paper measures the last 750 of 1000 s
    run = runner()
    jobs = [(m, seed) for m in ms for seed in range(1, a.seeds + 1)]
    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=a.jobs) as pool:
        results = list(pool.map(lambda job: (job, run(scenario(a.p, job[0], job[1], a.duration, warmup))), jobs))
    wall = time.perf_counter() - started

    rows = []
    rtts, rtos = [], []
    for m in ms:
        runs = [r for (mm, _), r in results if mm == m]
        per = {name: [next(f for f in r["flows"] if f["name"] == name) for r in runs] for name in ("sbs", "imp")}
        sbs = mean_sd([f["throughput_pkts_per_rtt"] or 0.0 for f in per["sbs"]])
        imp = mean_sd([f["throughput_pkts_per_rtt"] or 0.0 for f in per["imp"]])
        rtts += [f["mean_rtt_s"] for f in per["sbs"] + per["imp"] if f["mean_rtt_s"]]
        rtos += [f["mean_rto_s"] for f in per["sbs"] + per["imp"] if f["mean_rto_s"]]
        timeouts = (
            statistics.fmean(f["timeouts"] for f in per["sbs"]),
            statistics.fmean(f["timeouts"] for f in per["imp"]),
        )
        rows.append((m, sbs, imp, timeouts))
    r = statistics.fmean(rtts)
    rto = statistics.fmean(rtos)
    mstar = int(m_star(r, rto))
    imp_model = imp_pkts_per_rtt(a.p, r, rto)

    lines = [
        f"p = {a.p}, R = {r * 1000:.1f} ms (measured), RTO = {rto * 1000:.0f} ms (measured), m* = {mstar}, "
        f"{a.seeds} seed(s), {a.duration:g} s simulated ({warmup:g} s warm-up); {len(jobs)} runs in {wall:.1f} s wall",
        "",
        "| m | SBS sim | IMP sim | eq. 4 (SBS) | eq. 8 (IMP) | SBS err | IMP err | timeouts SBS/IMP | better |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|:---|",
    ]
    sbs_errors, imp_errors = [], []
    crossover_sim = None
    for m, (s, s_sd), (i, i_sd), (to_s, to_i) in rows:
        sbs_model = sbs_pkts_per_rtt(a.p, m)
        imp_pred = imp_model if m >= mstar else sbs_model
        e_s = abs(s - sbs_model) / s * 100 if s else float("nan")
        e_i = abs(i - imp_pred) / i * 100 if i else float("nan")
        sbs_errors.append((m, e_s))
        if m >= mstar:
            imp_errors.append((m, e_i))
        # "better" only where the seeds' spreads do not overlap.
        if i - i_sd > s + s_sd:
            better = "IMP"
            crossover_sim = crossover_sim or m
        elif s - s_sd > i + i_sd:
            better = "SBS"
        else:
            better = "≈"
        lines.append(
            f"| {m} | {s:.2f} ± {s_sd:.2f} | {i:.2f} ± {i_sd:.2f} | {sbs_model:.2f} | {imp_pred:.2f} | "
            f"{e_s:.1f} % | {e_i:.1f} % | {to_s:.0f} / {to_i:.0f} | {better} |"
        )
    crossing = [m for m in range(1, 400) if w_sbs(a.p, m) - 3 >= m and imp_model > sbs_pkts_per_rtt(a.p, m)]
    model_mt = crossing[0] if crossing else None
    lines += [
        "",
        f"Crossover by the models (first integer m where eq. 8 > eq. 4, m <= W_SBS - 3): m_t = {model_mt}",
        f"First m where IMP beats SBS in simulation beyond the seed spread: {crossover_sim}",
        f"SBS model error: {min(e for _, e in sbs_errors):.1f} % to {max(e for _, e in sbs_errors):.1f} %; "
        f"IMP model error for m >= m*: "
        + (f"{min(e for _, e in imp_errors):.1f} % to {max(e for _, e in imp_errors):.1f} %" if imp_errors else "n/a"),
    ]
    text = "\n".join(lines)
    print(text)
    if a.markdown:
        a.markdown.parent.mkdir(parents=True, exist_ok=True)
        a.markdown.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
