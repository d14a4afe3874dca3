#!/usr/bin/env python3
"""Worker throughput against the core's own: the same ~1-ms scenarios run in a plain
`tcpsim.run` loop in this process, then as one sweep through a launched service (`infra.launch`,
embedded PostgreSQL and Redis, the default worker: one process), side by side in one run.

The worker's rate counts the runs over the span from the first run's start to the last one's
end (claim, simulate, store, the sweep's bookkeeping, dispatch, broker: all but the sweep's
admission, which bench/sweep_admission.py measures); end to end, from the sweep's POST to the
last result seen, is printed beside it. The loop's rate counts only `tcpsim.run`. Goal
(issue 12): the worker reaches >= 50 % of the loop's rate.

    .venv/bin/python -m bench.worker_overhead [--runs 1000] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import create_engine, text

import tcpsim
from bench.service import admin_headers, launched
from infra.embedded import running_postgres_url
from services.presets import build_scenario
from services.scenarios import validate_scenario

PRESET = "paper000-fig2a"
OVERRIDES = {"duration_s": 1, "warmup_s": 0.5}
"""Paper 000's Fig. 2 dumbbell cut to one simulated second: about 1 ms of core time."""
GOAL = 0.5
REPLICATIONS = 100
"""Replications per point; the points are Fig. 2's m = 1, 2, … (as many as the runs need)."""


def _points(runs: int) -> list[int]:
    if runs % REPLICATIONS:
        raise SystemExit(f"--runs must be a multiple of {REPLICATIONS}")
    return list(range(1, runs // REPLICATIONS + 1))


def loop_rate(runs: int, seed: int) -> dict[str, float]:
    """Runs per second of a plain loop over the scenarios the sweep's runs simulate."""
    _, canonical = validate_scenario(build_scenario(PRESET, OVERRIDES))
    scenarios = []
    for m in _points(runs):
        flows = [{**f, "loss": {**f["loss"], "m": m}} if f.get("loss") else f for f in canonical["flows"]]
        scenarios += [{**canonical, "flows": flows, "seed": seed + r} for r in range(REPLICATIONS)]
    tcpsim.run(scenarios[0])  # warm-up
    core = 0.0
    started = time.perf_counter()
    for scenario in scenarios:
        core += tcpsim.run(scenario)["stats"]["wall_s"]
    wall = time.perf_counter() - started
    return {"runs": runs, "wall_s": wall, "runs_per_s": runs / wall, "core_ms_per_run": core / runs * 1e3}


def service_rate(runs: int, seed: int, state: Path, timeout_s: float) -> dict[str, Any]:
    """Runs per second of the launched service's default worker over one sweep of `runs`
    replications, from the POST to the last run finished."""
    body = {
        "preset": PRESET,
        "overrides": OVERRIDES,
        "axes": [{"path": "flows[*].loss.m", "values": _points(runs)}],
        "replications": REPLICATIONS,
        "seed": seed,
    }
    with launched(state) as base, httpx.Client(base_url=base, headers=admin_headers(state), timeout=60) as client:
        # A warm worker (imports, connections), as in a running lab; its run is not counted.
        warm = client.post("/v1/runs", json={"preset": PRESET, "overrides": {**OVERRIDES, "seed": seed - 1}})
        warm.raise_for_status()
        _wait(client, f"/v1/runs/{warm.json()['id']}", lambda r: r["status"] not in ("queued", "running"), timeout_s)
        started = time.perf_counter()
        created = client.post("/v1/sweeps", json=body)
        created.raise_for_status()
        admitted = time.perf_counter() - started
        sweep = _wait(client, f"/v1/sweeps/{created.json()['id']}", lambda s: _done(s) == runs, timeout_s)
        wall = time.perf_counter() - started
        span, batches = _worker_span(state, created.json()["id"])
    if sweep["progress"]["succeeded"] != runs:
        raise SystemExit(f"not every run succeeded: {sweep['progress']}")
    return {
        "runs": runs,
        "wall_s": wall,
        "admission_s": admitted,
        "runs_per_s": runs / wall,
        "ms_per_run": wall / runs * 1e3,
        "worker_span_s": span,
        "worker_runs_per_s": runs / span,
        "batches": batches,
    }


def _worker_span(state: Path, sweep_id: str) -> tuple[float, int]:
    """From the first run's start to the last one's end (the worker's share of the wall time:
    the sweep's admission left out), and how many batches carried the runs — read from the
    service's PostgreSQL."""
    engine = create_engine(running_postgres_url(state) or "")
    try:
        with engine.connect() as connection:
            span, batches = connection.execute(
                text(
                    "SELECT extract(epoch FROM max(finished_at) - min(started_at)), count(DISTINCT batch_id) "
                    "FROM runs WHERE sweep_id = :sweep"
                ),
                {"sweep": sweep_id},
            ).one()
    finally:
        engine.dispose()
    return float(span), int(batches)


def _done(sweep: dict[str, Any]) -> int:
    p = sweep["progress"]
    return p["succeeded"] + p["failed"] + p["cancelled"]


def _wait(client: httpx.Client, path: str, done: Any, timeout_s: float) -> dict[str, Any]:
    deadline = time.monotonic() + timeout_s
    while True:
        body = client.get(path).raise_for_status().json()
        if done(body):
            return body
        if time.monotonic() > deadline:
            raise SystemExit(f"{path} not done in {timeout_s:.0f} s: {body}")
        time.sleep(0.05)


def measure(runs: int, seed: int = 7_000_000, timeout_s: float = 900) -> dict[str, Any]:
    # The loop runs before and after the service, and counts at their mean rate: on a machine
    # whose other load changes, one side measured at a quiet moment would skew the ratio.
    before = loop_rate(runs, seed)
    with tempfile.TemporaryDirectory(prefix="tcplab-bench-overhead-") as state:
        service = service_rate(runs, seed, Path(state), timeout_s)
    after = loop_rate(runs, seed)
    loop = {
        "runs": runs,
        "wall_s": (before["wall_s"] + after["wall_s"]) / 2,
        "runs_per_s": 2 * runs / (before["wall_s"] + after["wall_s"]),
        "core_ms_per_run": (before["core_ms_per_run"] + after["core_ms_per_run"]) / 2,
        "before_runs_per_s": before["runs_per_s"],
        "after_runs_per_s": after["runs_per_s"],
    }
    ratio = service["worker_runs_per_s"] / loop["runs_per_s"]
    end_to_end = service["runs_per_s"] / loop["runs_per_s"]
    return {
        "loop": loop,
        "service": service,
        "ratio": ratio,
        "end_to_end_ratio": end_to_end,
        "goal": GOAL,
        "meets_goal": ratio >= GOAL,
    }


def report(result: dict[str, Any]) -> str:
    loop, service = result["loop"], result["service"]
    return "\n".join(
        [
            f"worker throughput on ~{loop['core_ms_per_run']:.2f}-ms runs ({PRESET}, {OVERRIDES}), {loop['runs']} runs:",
            f"  in-process tcpsim.run loop   {loop['runs_per_s']:8.1f} runs/s  ({loop['wall_s']:.2f} s; "
            f"{loop['before_runs_per_s']:.0f} runs/s before the service, {loop['after_runs_per_s']:.0f} after)",
            f"  service, default worker      {service['worker_runs_per_s']:8.1f} runs/s  ({service['worker_span_s']:.2f} s "
            f"from the first run's start to the last one's end, in {service['batches']} batches)",
            f"    end to end                 {service['runs_per_s']:8.1f} runs/s  ({service['wall_s']:.2f} s from the "
            f"POST, whose answer took {service['admission_s']:.2f} s, to the last result seen)",
            f"  worker at {result['ratio'] * 100:.1f} % of the loop's rate (goal >= {GOAL * 100:.0f} %): "
            + ("met" if result["meets_goal"] else "NOT met")
            + f"; end to end {result['end_to_end_ratio'] * 100:.1f} %",
        ]
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    result = measure(args.runs)
    print(report(result))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
