#!/usr/bin/env python3
"""Sweep reads at 50,000 finished runs: the summary (one metric, all metrics), the per-point
table, the model comparison and the sweep page, read from the aggregates kept as runs succeed
(services/sweeps/aggregates.py) — beside the old way (every observation read and summarised
on each request), timed in this process on the same database.

Starts the service as the README does (`python -m infra.launch --no-worker`: embedded PostgreSQL
and Redis, no worker — nothing simulates) with its state in --state, on a free port; creates a
sweep of paper000-fig2a with `POST /v1/sweeps` (1,000 points × 50 replications by default;
10,000 × 5 is the case of many points: two TCP flow groups per run either way), then finishes every run from this process through the services
layer, 1,000 runs per transaction: a made-up but well-formed result per run (per-flow rows
with every metric drawn at random — a read benchmark needs the rows, not the physics), the
runs marked succeeded and `aggregates.add_succeeded` called as `complete` calls it. Then times
`GET /v1/sweeps/{id}` at once (`progress_runs_just_changed`: every run row rewritten and not
yet vacuumed, as while a sweep runs), runs VACUUM (ANALYZE) on the runs table as autovacuum
does within a minute, and times each read over loopback (the median of --repeat after the
first, which is kept as `first_ms`: a summary's or model comparison's first read at a version
of the aggregates builds the body the API then keeps, and fills its memo of predictions):

- `GET /v1/sweeps/{id}/summary?metric=throughput_pkts_per_rtt` (what the page plots) and
  `GET /v1/sweeps/{id}/summary` (all 22 metrics);
- `GET /v1/sweeps/{id}/points` (the per-point table);
- `GET /v1/comparisons/models?sweep_id=` (the model comparison);
- the sweep page: `GET /dashboard/sweeps/{id}` and the requests its script makes to draw
  (the sweep, the summary of one metric, the model comparison of the flows' own models), one
  after the other (the script makes them at once: an upper bound); with --browser, the page
  in headless Chromium until its plot and per-point table are drawn.

Goals (issue 12): each read < 100 ms, the page < 1 s.

    .venv/bin/python -m bench.sweep_reads [--state /tmp/h-aggregates-state] [--points 1000]
        [--replications 50] [--repeat 5] [--no-before] [--browser] [--reuse] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(ROOT))
from service import admin_headers, launched  # noqa: E402  (bench/service.py)
from sweep_admission import sweep_body  # noqa: E402  (the same sweeps, admitted)

READ_GOAL_MS = 100.0
PAGE_GOAL_MS = 1000.0
CHUNK = 1000


def fake_flow(rng: random.Random, name: str, variant: str) -> dict[str, Any]:
    """One flow's row: every metric present, drawn around plausible values."""
    from services.db.models import FLOW_METRICS, FlowResult

    ints = {c.name for c in FlowResult.__table__.columns if str(c.type) == "BIGINT"}
    row: dict[str, Any] = {"name": name, "type": "tcp", "variant": variant}
    for metric in FLOW_METRICS:
        if metric in row:
            continue
        row[metric] = rng.randrange(0, 100_000) if metric in ints else rng.uniform(0.001, 50.0)
    row.update(
        loss_event_rate=rng.uniform(0.001, 0.05),
        drops_per_loss_event=rng.uniform(1.0, 6.0),
        mean_rtt_s=rng.uniform(0.05, 0.08),
        mean_rto_s=rng.uniform(0.2, 0.4),
    )
    return row


def finish_runs(url: str, sweep_id: uuid.UUID, seed: int) -> dict[str, float]:
    """Every run of the sweep succeeded with a made-up result, CHUNK runs per transaction, each
    transaction adding its runs to the aggregates as a completion does."""
    from sqlalchemy import create_engine, insert, select, update

    from services.db.models import FlowResult, Result, Run, RunStatus
    from services.db.session import create_session_factory
    from services.sweeps import aggregates

    engine = create_engine(url.replace("postgresql://", "postgresql+psycopg://", 1))
    factory = create_session_factory(engine)
    rng = random.Random(seed)
    with factory() as session:
        # In the order a worker's batches take them: point by point, replication by replication.
        ids = list(
            session.execute(
                select(Run.id, Run.cache_key).where(Run.sweep_id == sweep_id).order_by(Run.sweep_point, Run.replication)
            ).all()
        )
    started = time.perf_counter()
    adding = 0.0
    for start in range(0, len(ids), CHUNK):
        chunk = ids[start : start + CHUNK]
        with factory.begin() as session:
            result_ids = dict(
                session.execute(
                    insert(Result).returning(Result.cache_key, Result.id),
                    [{"cache_key": key, "core_version": "bench", "summary": {"bench": "made up"}} for _, key in chunk],
                ).all()
            )
            session.execute(
                insert(FlowResult),
                [
                    {"result_id": result_ids[key], "position": i, **fake_flow(rng, name, variant)}
                    for _, key in chunk
                    for i, (name, variant) in enumerate((("sbs", "newreno-sbs"), ("imp", "newreno-impatient")))
                ],
            )
            session.execute(
                update(Run)
                .where(Run.id.in_([rid for rid, _ in chunk]))
                .values(
                    status=RunStatus.succeeded,
                    result_id=select(Result.id).where(Result.cache_key == Run.cache_key).scalar_subquery(),
                    core_wall_s=0.001,
                    events=1,
                )
                .execution_options(synchronize_session=False)
            )
            t = time.perf_counter()
            aggregates.add_succeeded(session, [rid for rid, _ in chunk])
            adding += time.perf_counter() - t
    engine.dispose()
    return {
        "runs": len(ids),
        "finish_s": time.perf_counter() - started,
        "add_succeeded_ms_per_run": adding / max(1, len(ids)) * 1e3,
    }


def old_way(url: str, sweep_id: uuid.UUID) -> dict[str, float]:
    """The reads as they were: every observation read and summarised, in this process."""
    from sqlalchemy import create_engine

    from services import sweeps
    from services.comparisons import models as model_cmp
    from services.db.session import create_session_factory

    engine = create_engine(url.replace("postgresql://", "postgresql+psycopg://", 1))
    out = {}
    with create_session_factory(engine)() as session:
        t = time.perf_counter()
        obs = sweeps.observations(session, sweep_id)
        out["observations_s"] = time.perf_counter() - t
        t = time.perf_counter()
        sweeps.summary_rows(obs, metrics=["throughput_pkts_per_rtt"])
        out["summary_one_metric_s"] = out["observations_s"] + time.perf_counter() - t
        t = time.perf_counter()
        sweeps.summary_rows(obs)
        out["summary_all_metrics_s"] = out["observations_s"] + time.perf_counter() - t
        t = time.perf_counter()
        model_cmp.model_vs_sim(obs)
        out["models_s"] = out["observations_s"] + time.perf_counter() - t
    engine.dispose()
    return out


def vacuumed(url: str) -> None:
    """VACUUM (ANALYZE) of the runs table, what autovacuum does after a sweep's runs finish."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("VACUUM (ANALYZE) runs")


def timed(client: httpx.Client, path: str, repeat: int, **params: Any) -> dict[str, float]:
    t = time.perf_counter()
    client.get(path, params=params).raise_for_status()
    first = time.perf_counter() - t
    times, size = [], 0
    for _ in range(repeat):
        t = time.perf_counter()
        r = client.get(path, params=params)
        times.append(time.perf_counter() - t)
        r.raise_for_status()
        size = len(r.content)
    return {
        "median_ms": statistics.median(times) * 1e3,
        "min_ms": min(times) * 1e3,
        "first_ms": first * 1e3,
        "bytes": size,
    }


def page(client: httpx.Client, sweep_id: str, repeat: int) -> dict[str, float]:
    """The sweep page as its script loads it: the HTML, then the sweep, the summary of the
    plotted metric and the model comparison of the flows' own models, one after the other
    (the preset's detail is the same for every sweep and left out)."""
    steps = [
        (f"/dashboard/sweeps/{sweep_id}", {}),
        (f"/v1/sweeps/{sweep_id}", {}),
        (f"/v1/sweeps/{sweep_id}/summary", {"metric": "throughput_pkts_per_rtt"}),
        # The overlay asks for the flows' own models (sweep.js), not all four.
        ("/v1/comparisons/models", {"sweep_id": sweep_id, "models": "newreno-impatient,newreno-sbs"}),
    ]
    totals = []
    for _ in range(repeat + 1):
        t = time.perf_counter()
        for path, params in steps:
            client.get(path, params=params).raise_for_status()
        totals.append(time.perf_counter() - t)
    totals = totals[1:]
    return {"median_ms": statistics.median(totals) * 1e3, "min_ms": min(totals) * 1e3}


def browser_page(base: str, state: Path, sweep_id: str, repeat: int) -> dict[str, float] | None:
    """The sweep page in headless Chromium (TCPLAB_CHROMIUM, or `chromium` on PATH), signed in
    as the admin: from navigation to the plot drawn and the per-point table filled, after one
    load of the page that compiles Plotly. None without a Chromium."""
    path = os.environ.get("TCPLAB_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if not path:
        return None
    from playwright.sync_api import sync_playwright

    token = (state / "admin-token").read_text().strip()
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=path, headless=True, args=["--no-sandbox", "--disable-dev-shm-usage"]
        )
        try:
            context = browser.new_context(viewport={"width": 1280, "height": 900})
            context.add_cookies(
                [{"name": "tcplab_token", "value": token, "url": base, "httpOnly": True, "sameSite": "Strict"}]
            )
            page = context.new_page()
            times = []
            for _ in range(repeat + 1):
                t = time.perf_counter()
                page.goto(f"{base}/dashboard/sweeps/{sweep_id}")
                page.wait_for_selector("#plot-sweep[data-state='ready']", timeout=120_000)
                page.wait_for_selector("#points-table tbody tr", timeout=120_000)
                times.append(time.perf_counter() - t)
                page.goto("about:blank")
            times = times[1:]
            return {"median_ms": statistics.median(times) * 1e3, "min_ms": min(times) * 1e3}
        finally:
            browser.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--state", type=Path, default=Path("/tmp/h-aggregates-state"), help="the service's state folder (emptied first)"
    )
    parser.add_argument("--points", type=int, default=1_000, help="1,000 or a multiple of 1,000")
    parser.add_argument("--replications", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--no-before", action="store_true", help="skip the old way's timings (minutes at 50,000 runs)")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    parser.add_argument(
        "--browser", action="store_true", help="also time the page in headless Chromium (plot and table drawn)"
    )
    parser.add_argument(
        "--reuse", action="store_true", help="read the sweep an earlier run of this bench left in --state"
    )
    args = parser.parse_args()

    if not args.reuse:
        shutil.rmtree(args.state, ignore_errors=True)
        args.state.mkdir(parents=True)
    figures: dict[str, Any] = {
        "points": args.points,
        "replications": args.replications,
        "runs": args.points * args.replications,
    }
    with (
        launched(args.state, no_worker=True) as base,
        httpx.Client(base_url=base, timeout=600, headers=admin_headers(args.state)) as client,
    ):
        from infra.embedded import running_postgres_url

        url = running_postgres_url(args.state)
        assert url is not None
        if args.reuse:
            sweep = client.get("/v1/sweeps", params={"limit": 1}).json()["items"][0]
            sweep_id = sweep["id"]
            figures.update(
                points=sweep["points"], replications=sweep["replications"], runs=sweep["progress"]["total"], reused=True
            )
        else:
            t = time.perf_counter()
            created = client.post(
                "/v1/sweeps",
                json=sweep_body(
                    args.points, args.replications, random.randrange(1, 2**31), name="reads", reuse_results=False
                ),
            )
            created.raise_for_status()
            sweep_id = created.json()["id"]
            figures["create_s"] = time.perf_counter() - t
            figures["finish"] = finish_runs(url, uuid.UUID(sweep_id), seed=1)
        progress = client.get(f"/v1/sweeps/{sweep_id}").json()["progress"]
        assert progress["succeeded"] == figures["runs"], progress
        # The progress as a page polling a sweep whose runs have just changed reads it: every
        # run row rewritten since the last vacuum, so counting by status still visits the
        # heap. Then VACUUM, as autovacuum does within a minute of a sweep's runs finishing
        # (autovacuum_naptime 60 s; a fifth of the table's rows dead): the reads below are
        # those of a finished sweep.
        if not args.reuse:
            figures["progress_runs_just_changed"] = timed(client, f"/v1/sweeps/{sweep_id}", args.repeat)
        vacuumed(url)
        reads = {
            "summary_one_metric": timed(
                client, f"/v1/sweeps/{sweep_id}/summary", args.repeat, metric="throughput_pkts_per_rtt"
            ),
            "summary_all_metrics": timed(client, f"/v1/sweeps/{sweep_id}/summary", max(1, args.repeat // 2)),
            "points": timed(client, f"/v1/sweeps/{sweep_id}/points", args.repeat),
            "models": timed(client, "/v1/comparisons/models", args.repeat, sweep_id=sweep_id),
            "sweep": timed(client, f"/v1/sweeps/{sweep_id}", args.repeat),
        }
        figures["reads"] = reads
        figures["page"] = page(client, sweep_id, args.repeat)
        if args.browser:
            figures["browser_page"] = browser_page(base, args.state, sweep_id, max(1, args.repeat // 2))
        if not args.no_before:
            figures["before"] = old_way(url, uuid.UUID(sweep_id))
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    print(
        f"sweep of {figures['runs']:,} runs ({figures['points']:,} points × {figures['replications']}, 2 TCP groups)",
        end="",
    )
    if "finish" in figures:
        print(
            f": created in {figures['create_s']:.1f} s, finished in {figures['finish']['finish_s']:.1f} s "
            f"(add_succeeded {figures['finish']['add_succeeded_ms_per_run']:.3f} ms per run, {CHUNK} runs per transaction)",
            end="",
        )
    print()
    print(f"{'read':<22}{'median ms':>11}{'min ms':>9}{'first ms':>10}{'MB':>8}  goal")
    for name, r in reads.items():
        goal = "< 100 ms " + ("met" if r["median_ms"] < READ_GOAL_MS else "NOT met")
        print(
            f"{name:<22}{r['median_ms']:>11.1f}{r['min_ms']:>9.1f}{r['first_ms']:>10.1f}{r['bytes'] / 1e6:>8.2f}  {goal}"
        )
    if "progress_runs_just_changed" in figures:
        r = figures["progress_runs_just_changed"]
        print(
            f"{'sweep, runs changed':<22}{r['median_ms']:>11.1f}{r['min_ms']:>9.1f}{r['first_ms']:>10.1f}{r['bytes'] / 1e6:>8.2f}  "
            "(progress before the runs table's vacuum)"
        )
    p = figures["page"]
    print(
        f"{'sweep page (4 GETs)':<22}{p['median_ms']:>11.1f}{p['min_ms']:>9.1f}{'':>10}{'':>8}  < 1 s {'met' if p['median_ms'] < PAGE_GOAL_MS else 'NOT met'}"
    )
    if figures.get("browser_page"):
        p = figures["browser_page"]
        print(
            f"{'page in Chromium':<22}{p['median_ms']:>11.1f}{p['min_ms']:>9.1f}{'':>10}{'':>8}  < 1 s {'met' if p['median_ms'] < PAGE_GOAL_MS else 'NOT met'}"
        )
    if "before" in figures:
        b = figures["before"]
        print("before (the old way, in this process): " + ", ".join(f"{k} {v:.2f} s" for k, v in b.items()))


if __name__ == "__main__":
    main()
