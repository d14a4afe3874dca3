#!/usr/bin/env python3
"""Sweep admission: how long `POST /v1/sweeps` takes to accept a big sweep (response sent,
every run stored), and `POST /v1/sweeps/{id}/cancel` to cancel one.

Starts the service as the README does (`python -m infra.launch`: embedded PostgreSQL and Redis,
the default worker consuming in the background) with its state in --state, on a free port,
and times each request's round trip over loopback:

- 10,000 runs as 1,000 points × 10 replications (the issue's shape), and as 10,000 points × 1;
- 50,000 runs as 5,000 points × 10 replications, and as 10,000 points × 5;
- cancelling each sweep once it is stored (so the next one fits the quota): the 50,000-run
  cancels are the goal's. The cancel answers once the runs in flight are cancelled; the
  dispatcher's next pass marks the waiting ones, and the bench waits for that too (read from
  PostgreSQL), so that the next case does not share the machine with it.

Every point is validated by the schema and the core (a few hundred µs each) and stores the
scenario its runs share; every run is a row: point-heavy shapes cost more than
replication-heavy ones.

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
import psutil
import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent))
from service import admin_headers, launched  # noqa: E402  (bench/service.py: the service as the README starts it)

GOALS = {10_000: 1.0, 50_000: 3.0}
CANCEL_GOAL_S = 1.0


def sweep_body(points: int, replications: int, seed: int, *, name: str = "admission", **fields: Any) -> dict[str, Any]:
    """paper000-fig2a along loss.m (1..1000) — or loss.m × loss.p for more than 1,000 points;
    `fields` are further fields of the sweep (`reuse_results`)."""
    if points <= 1000:
        axes = [{"path": "flows[*].loss.m", "range": {"start": 1, "stop": points}}]
    else:
        assert points % 1000 == 0
        axes = [
            {"path": "flows[*].loss.m", "range": {"start": 1, "stop": 1000}},
            {"path": "flows[*].loss.p", "range": {"start": 0.0001, "stop": 0.0001 * (points // 1000), "step": 0.0001}},
        ]
    return {
        "name": f"{name} {points}x{replications}",
        "preset": "paper000-fig2a",
        "overrides": {"duration_s": 20},
        "axes": axes,
        "replications": replications,
        "seed": seed,
        **fields,
    }


CASES = [(1000, 10), (10_000, 1), (5000, 10), (10_000, 5)]


class Cpu:
    """CPU seconds of the API (its processes: the launcher and its helpers) and of PostgreSQL (the
    postmaster of the state folder and its children): on a loaded machine the wall time says
    how busy the machine was, these what the request itself cost. On an idle 2-core machine a
    request takes about the larger of the two (the API validates points while PostgreSQL
    stores the runs already sent)."""

    def __init__(self, state: Path) -> None:
        self.state = state
        # Every API process (the launcher and its helpers, TCPLAB_API_PROCESSES): any may answer.
        self.apis = [
            p
            for p in psutil.process_iter(["cmdline"])
            if "infra.launch" in " ".join(p.info["cmdline"] or []) and _environ(p).get("TCPLAB_STATE_DIR") == str(state)
        ]
        self.postmaster = next(
            p
            for p in psutil.process_iter(["name", "cmdline"])
            if p.info["name"] == "postgres" and str(state) in " ".join(p.info["cmdline"] or [])
        )

    def now(self) -> tuple[float, float]:
        def cpu(p: psutil.Process) -> float:
            try:
                t = p.cpu_times()
            except psutil.NoSuchProcess:
                return 0.0
            return t.user + t.system

        db = cpu(self.postmaster) + sum(cpu(c) for c in self.postmaster.children(recursive=True))
        return sum(cpu(p) for p in self.apis), db


def marked_cancelled(state: Path, sweep_id: str, *, since: float, timeout_s: float = 120) -> float:
    """Seconds from `since` until every run of the cancelled sweep is marked cancelled in
    PostgreSQL: the cancel answers once the runs in flight are, the dispatcher's next pass
    marks the waiting ones (migration 0013). Read from the embedded database directly."""
    from infra.embedded import running_postgres_url

    url = running_postgres_url(state)
    if url is None:
        raise SystemExit(f"no embedded PostgreSQL runs in {state}")
    with psycopg.connect(url, autocommit=True) as conn:
        deadline = time.perf_counter() + timeout_s
        while conn.execute(
            "SELECT count(*) FROM runs WHERE sweep_id = %s AND status = 'queued'", (sweep_id,)
        ).fetchone()[0]:
            if time.perf_counter() > deadline:
                raise SystemExit(f"the cancelled sweep {sweep_id} still has queued runs after {timeout_s:.0f} s")
            time.sleep(0.02)
    return time.perf_counter() - since


def _environ(p: psutil.Process) -> dict[str, str]:
    try:
        return p.environ()
    except (psutil.AccessDenied, psutil.NoSuchProcess):
        return {}


def timed(
    client: httpx.Client, cpu: Cpu, method: str, url: str, **kwargs: Any
) -> tuple[httpx.Response, dict[str, float]]:
    api0, db0 = cpu.now()
    start = time.perf_counter()
    response = client.request(method, url, **kwargs)
    wall = time.perf_counter() - start
    api1, db1 = cpu.now()
    return response, {"wall_s": round(wall, 3), "api_cpu_s": round(api1 - api0, 3), "db_cpu_s": round(db1 - db0, 3)}


def run_case(client: httpx.Client, cpu: Cpu, points: int, replications: int, seed: int) -> dict[str, Any]:
    runs = points * replications
    response, post = timed(client, cpu, "POST", "/v1/sweeps", json=sweep_body(points, replications, seed))
    if response.status_code != 201:
        raise SystemExit(f"POST /v1/sweeps ({runs} runs) answered {response.status_code}: {response.text[:500]}")
    sweep = response.json()
    stored = client.get(f"/v1/sweeps/{sweep['id']}").json()
    total = stored["progress"]["total"]
    if total != runs or stored["points"] != points:
        raise SystemExit(f"the sweep has {total} runs and {stored['points']} points, not {runs} and {points}")
    cancel, cancelled = timed(client, cpu, "POST", f"/v1/sweeps/{sweep['id']}/cancel")
    refused = None
    if cancel.status_code != 200:  # e.g. a 503 for a deadlock with a worker: said, and tried again
        refused = f"{cancel.status_code}: {cancel.text[:300]}"
        print(f"cancel answered {refused}; trying again", file=sys.stderr)
        cancel, cancelled = timed(client, cpu, "POST", f"/v1/sweeps/{sweep['id']}/cancel")
        if cancel.status_code != 200:
            raise SystemExit(f"cancel answered {cancel.status_code}: {cancel.text[:500]}")
    applied_s = marked_cancelled(cpu.state, sweep["id"], since=time.perf_counter() - cancelled["wall_s"])
    left = client.get(f"/v1/sweeps/{sweep['id']}").json()["progress"]
    return {
        "runs": runs,
        "points": points,
        "replications": replications,
        "post_s": post["wall_s"],
        "post_cpu": {"api_s": post["api_cpu_s"], "db_s": post["db_cpu_s"]},
        "cancel_s": cancelled["wall_s"],
        "cancel_cpu": {"api_s": cancelled["api_cpu_s"], "db_s": cancelled["db_cpu_s"]},
        "cancel_marked_s": round(applied_s, 3),
        "created": sweep.get("created"),
        "unfinished_after_cancel": left["queued"] + left["running"],
        "cancel_refused_first": refused,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--state", type=Path, default=Path("/tmp/h-admission-state"), help="the service's state folder (emptied first)"
    )
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
        cpu = Cpu(a.state.resolve())
        with httpx.Client(base_url=base, timeout=600, headers=admin_headers(a.state)) as client:
            seed = 1000
            for _ in range(a.repeat):
                for points, replications in CASES:
                    seed += 1
                    case = run_case(client, cpu, points, replications, seed)
                    figures["cases"].append(case)
                    if not a.json:
                        print(
                            f"{case['runs']:>6} runs ({points} points x {replications}): POST {case['post_s']:.2f} s "
                            f"(goal < {GOALS[case['runs']]:.0f} s; CPU: API {case['post_cpu']['api_s']:.2f} s, "
                            f"PostgreSQL {case['post_cpu']['db_s']:.2f} s), cancel {case['cancel_s']:.2f} s "
                            f"(CPU: PostgreSQL {case['cancel_cpu']['db_s']:.2f} s), every run marked cancelled after "
                            f"{case['cancel_marked_s']:.2f} s (load {os.getloadavg()[0]:.1f})",
                            flush=True,
                        )
    figures["load_after"] = os.getloadavg()[0]
    # Per shape, the worst of the repeats against the goal for its number of runs.
    goals: dict[str, Any] = {}
    for case in figures["cases"]:
        shape = f"{case['runs']} runs ({case['points']} x {case['replications']})"
        goal = goals.setdefault(shape, {"goal_s": GOALS[case["runs"]], "post_s": 0.0, "cancel_s": 0.0})
        goal["post_s"] = max(goal["post_s"], case["post_s"])
        goal["cancel_s"] = max(goal["cancel_s"], case["cancel_s"])
        goal["met"] = goal["post_s"] < goal["goal_s"]
        if case["runs"] == 50_000:
            goal["cancel_met"] = goal["cancel_s"] < CANCEL_GOAL_S
    figures["goals"] = goals
    if a.json:
        print(json.dumps(figures, indent=2))
    else:
        print(
            f"load average {figures['load_before']:.2f} before, {figures['load_after']:.2f} after ({figures['cpus']} CPUs)"
        )
        for shape, goal in goals.items():
            line = f"  {shape}: POST {goal['post_s']:.2f} s, goal < {goal['goal_s']:.0f} s: {'met' if goal['met'] else 'NOT met'}"
            if "cancel_met" in goal:
                line += f"; cancel {goal['cancel_s']:.2f} s, goal < {CANCEL_GOAL_S:.0f} s: {'met' if goal['cancel_met'] else 'NOT met'}"
            print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
