#!/usr/bin/env python3
"""CUBIC's closed-form average window (RFC 9438 §5.1, model `cubic`) against tcpsim's CUBIC.

Why: model-vs-simulation comparisons fit CUBIC flows with the `cubic` model instead of the
Reno-family ones (issue 15); this checks the model against the simulator on the setting the
RFC's analysis assumes — one CUBIC flow, a path that never queues (10 Gb/s, no window limit),
loss events only from a loss module — at three RTTs and three loss event rates, with loss
events periodic (one every 1/p packets, the analysis' assumption) and random (Bernoulli). The
model is fed the measured loss event rate and mean RTT, as a comparison does; the square-root
law (Reno's average window, `mathis`) is shown beside it.

Usage: .venv/bin/python simulator/validation/cubic_model.py [--duration 400] [--seeds 1]
       [--markdown docs/validation/cubic-model.md]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import tcpsim  # noqa: E402
from services.models import evaluate  # noqa: E402

RTTS_MS = (20, 100, 200)
PS = (1e-4, 1e-3, 1e-2)
SPACINGS = ("periodic", "random")


def scenario(rtt_ms: float, p: float, spacing: str, duration_s: float, seed: int) -> dict:
    return {
        "name": "cubic-model-check",
        "duration_s": duration_s,
        "warmup_s": duration_s / 4,
        "seed": seed,
        "topology": {
            "dumbbell": {
                "bottleneck": {"rate_mbps": 10000, "delay_ms": 1, "queue": {"type": "droptail", "limit_pkts": 100000}}
            }
        },
        "flows": [
            {
                "name": "c",
                "variant": "cubic",
                "rtt_ms": rtt_ms,
                "tcp": {"max_window_pkts": 1_000_000},
                "loss": {"type": "bernoulli_events", "p": p, "m": 1, "spacing": spacing},
            }
        ],
    }


def one(rtt_ms: float, p: float, spacing: str, duration_s: float, seeds: int) -> dict:
    sims, ps, rtts = [], [], []
    for seed in range(1, seeds + 1):
        flow = tcpsim.run(scenario(rtt_ms, p, spacing, duration_s, seed))["flows"][0]
        sims.append(flow["throughput_pkts_per_rtt"])
        ps.append(flow["loss_event_rate"])
        rtts.append(flow["mean_rtt_s"])
    sim, p_meas, rtt = statistics.mean(sims), statistics.mean(ps), statistics.mean(rtts)
    cubic = evaluate("cubic", {"p": p_meas, "rtt_s": rtt})
    reno = float(evaluate("mathis", {"p": p_meas, "rtt_s": rtt}).outputs["throughput_pkts_per_rtt"])
    model = float(cubic.outputs["throughput_pkts_per_rtt"])
    return {
        "rtt_ms": rtt_ms,
        "p": p,
        "spacing": spacing,
        "sim": sim,
        "p_meas": p_meas,
        "cubic": model,
        "cubic_err": abs(sim - model) / sim,
        "region": "Reno-friendly" if bool(cubic.outputs["reno_friendly"]) else "cubic",
        "reno": reno,
        "reno_err": abs(sim - reno) / sim,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--duration", type=float, default=400.0, help="simulated seconds per run (a quarter is warm-up)")
    ap.add_argument("--seeds", type=int, default=1)
    ap.add_argument("--markdown", type=Path, help="also write the table here")
    args = ap.parse_args()
    start = time.time()
    header = (
        "| R | p | loss events | tcpsim pkts/RTT | measured p | `cubic` model | error | region | "
        "Reno's √(3/2p) | error |\n|---|---|---|---|---|---|---|---|---|---|"
    )
    lines = [header]
    print(header)
    for rtt_ms in RTTS_MS:
        for p in PS:
            for spacing in SPACINGS:
                r = one(rtt_ms, p, spacing, args.duration, args.seeds)
                line = (
                    f"| {rtt_ms} ms | {p:g} | {spacing} | {r['sim']:.1f} | {r['p_meas']:.2e} | {r['cubic']:.1f} | "
                    f"{r['cubic_err']:.1%} | {r['region']} | {r['reno']:.1f} | {r['reno_err']:.1%} |"
                )
                lines.append(line)
                print(line, flush=True)
    print(f"({time.time() - start:.0f} s)")
    if args.markdown:
        args.markdown.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
