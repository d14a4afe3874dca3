#!/usr/bin/env python3
"""Sweep admission: how long `POST /v1/sweeps` takes to accept a big sweep (response sent,
every run stored), and `POST /v1/sweeps/{id}/cancel` to cancel one.

Starts the service as the README does (`python -m api.launch`: embedded PostgreSQL and Redis,
the default worker consuming in the background) with its state in --state, on a free port,
and times each request's round trip over loopback:

- 10,000 runs as 1,000 points × 10 replications, and as 10,000 points × 1 replication;
- 50,000 runs as 10,000 points × 5 replications;
- cancelling the 50,000-run sweep (and each other sweep, so the next one fits the quota).

Each sweep is paper000-fig2a (two flows, traces on) along `flows[*].loss.m` (and
`flows[*].loss.p`), seeded afresh so that no stored result answers it. After each POST the
bench checks that the sweep has every run stored (`GET /v1/sweeps/{id}`: total).
Goals (issue 12): 10,000 runs < 1 s, 50,000 runs < 3 s, cancelling 50,000 < 1 s.

    .venv/bin/python -m bench.sweep_admission [--state /tmp/h-admission-state] [--repeat 1] [--json]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from service import admin_headers, launched  # noqa: E402  (bench/service.py: the service as the README starts it)

GOALS = {10_000: 1.0, 50_000: 3.0}
CANCEL_GOAL_S = 1.0


def sweep_body(points: int, replications: int, seed: int) -> dict[str, Any]:
    """paper000-fig2a along loss.m (1..1000) — or loss.m × loss.p for more than 1,000 points."""
    if points <= 1000:
        axes = [{"path": "flows[*].loss.m", "range": {"start": 1, "stop": points}}]
    else:
        assert points % 1000 == 0
        axes = [
            {"path": "flows[*].loss.m", "range": {"start": 1, "stop": 1000}},
            {"path": "flows[*].loss.p", "range": {"start": 0.0001, "stop": 0.0001 * (points // 1000), "step": 0.0001}},
        ]
    return {
        "name": f"admission {points}x{replications}",
        "preset": "paper000-fig2a",
        "overrides": {"duration_s": 20},
        "axes": axes,
        "replications": replications,
        "seed": seed,
    }


CASES = [(1000, 10), (10_000, 1), (10_000, 5)]


def timed(client: httpx.Client, method: str, url: str, **kwargs: Any) -> tuple[httpx.Response, float]:
    start = time.perf_counter()
    response = client.request(method, url, **kwargs)
    return response, time.perf_counter() - start


def run_case(client: httpx.Client, points: int, replications: int, seed: int) -> dict[str, Any]:
    runs = points * replications
    response, post_s = timed(client, "POST", "/v1/sweeps", json=sweep_body(points, replications, seed))
    if response.status_code != 201:
        raise SystemExit(f"POST /v1/sweeps ({runs} runs) answered {response.status_code}: {response.text[:500]}")
    sweep = response.json()
    stored = client.get(f"/v1/sweeps/{sweep['id']}").json()
    total = stored["progress"]["total"]
    if total != runs or stored["points"] != points:
        raise SystemExit(f"the sweep has {total} runs and {stored['points']} points, not {runs} and {points}")
    cancel, cancel_s = timed(client, "POST", f"/v1/sweeps/{sweep['id']}/cancel")
    if cancel.status_code != 200:
        raise SystemExit(f"cancel answered {cancel.status_code}: {cancel.text[:500]}")
    left = client.get(f"/v1/sweeps/{sweep['id']}").json()["progress"]
    return {
        "runs": runs,
        "points": points,
        "replications": replications,
        "post_s": round(post_s, 3),
        "cancel_s": round(cancel_s, 3),
        "created": sweep.get("created"),
        "unfinished_after_cancel": left["queued"] + left["running"],
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--state", type=Path, default=Path("/tmp/h-admission-state"), help="the service's state folder (emptied first)")
    ap.add_argument("--repeat", type=int, default=1, help="times each case runs (fresh seeds each time)")
    ap.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    a = ap.parse_args()
    shutil.rmtree(a.state, ignore_errors=True)
    a.state.mkdir(parents=True)
    figures: dict[str, Any] = {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "cpus": os.cpu_count(),
        "load_before": os.getloadavg()[0],
        "cases": [],
    }
    # The per-user rate limit is not what is measured.
    with launched(a.state, user_submissions_per_minute="100000000") as base:
        with httpx.Client(base_url=base, timeout=600, headers=admin_headers(a.state)) as client:
            seed = 1000
            for _ in range(a.repeat):
                for points, replications in CASES:
                    seed += 1
                    case = run_case(client, points, replications, seed)
                    figures["cases"].append(case)
                    if not a.json:
                        print(
                            f"{case['runs']:>6} runs ({points} points x {replications}): POST {case['post_s']:.2f} s "
                            f"(goal < {GOALS[case['runs']]:.0f} s), cancel {case['cancel_s']:.2f} s",
                            flush=True,
                        )
    figures["load_after"] = os.getloadavg()[0]
    worst: dict[str, float] = {}
    for case in figures["cases"]:
        key = f"post_{case['runs']}_s"
        worst[key] = max(worst.get(key, 0.0), case["post_s"])
        if case["runs"] == 50_000:
            worst["cancel_50000_s"] = max(worst.get("cancel_50000_s", 0.0), case["cancel_s"])
    figures["worst"] = worst
    goals = [("POST of 10,000 runs", "post_10000_s", GOALS[10_000]), ("POST of 50,000 runs", "post_50000_s", GOALS[50_000]),
             ("cancel of 50,000 runs", "cancel_50000_s", CANCEL_GOAL_S)]
    figures["goals"] = {name: {"worst_s": worst.get(key), "goal_s": limit, "met": worst.get(key, 0.0) < limit} for name, key, limit in goals}
    if a.json:
        print(json.dumps(figures, indent=2))
    else:
        print(f"load average {figures['load_before']:.2f} before, {figures['load_after']:.2f} after ({figures['cpus']} CPUs)")
        for name, goal in figures["goals"].items():
            print(f"  {name}: worst {goal['worst_s']:.2f} s, goal < {goal['goal_s']:.0f} s: {'met' if goal['met'] else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
