#!/usr/bin/env python3
"""Big reads: the API's memory and `/healthz` latency while concurrent clients download a run
with ~9 M trace points (issue 11, finding 2).

Makes (or finds in the cache) one run whose traces hold `--points` samples in all: 100 flows'
cwnd and ssthresh and the bottleneck's queue (201 series) every 10 ms over a long run. Then,
for each read (the trace table as JSON, CSV and Parquet, the result with its traces, and the
dashboard's downsampled series), `--clients` clients download it at once while this script
samples the API processes' RSS, summed (psutil, every 20 ms) and times `/healthz` (every 100 ms).
Prints per read: bytes, the slowest client's time, the API's peak RSS (and above its RSS
before the read), `/healthz` p50 / p99 / max.

Starts the service as the README does (bench/service.py) in `--state`, or measures a running
one (`--url`, with `--state` its state folder, for the admin token):

    .venv/bin/python bench/big_reads.py [--state DIR] [--url http://127.0.0.1:8000] \
        [--clients 4] [--points 9000000] [--reads traces-json traces-csv ...] [--json PATH]
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import contextlib
import json
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parents[1]))
from service import admin_headers, launched  # noqa: E402  (bench/service.py: the service as the README starts it)

FLOWS = 100
INTERVAL_S = 0.01
SERIES = 2 * FLOWS + 1  # cwnd and ssthresh per flow, the bottleneck's queue

READS = {
    "traces-json": "/v1/runs/{id}/traces",
    "traces-csv": "/v1/runs/{id}/traces?format=csv",
    "traces-parquet": "/v1/runs/{id}/traces?format=parquet",
    "result-traces": "/v1/runs/{id}/result?traces=true",
    "traces-dashboard": "/v1/runs/{id}/traces?points=2000",
}


def scenario(points: int) -> dict[str, Any]:
    """100 Reno flows through a 10 Mb/s bottleneck, traced every 10 ms for as long as makes
    `points` samples in all (cheap to simulate: ~1250 packets/s)."""
    samples = points // SERIES
    return {
        "name": "big-reads",
        "duration_s": (samples - 1) * INTERVAL_S,
        "warmup_s": 1,
        "seed": 11,
        "topology": {
            "dumbbell": {
                "bottleneck": {"rate_mbps": 10, "delay_ms": 20, "queue": {"type": "droptail", "limit_pkts": 200}}
            }
        },
        "flows": [{"name": "f", "count": FLOWS, "variant": "reno", "rtt_ms": 60, "start_s": {"uniform": [0, 1]}}],
        "outputs": {
            "trace_interval_s": INTERVAL_S,
            "trace": ["cwnd", "ssthresh", "queue"],
            "max_trace_points": samples * SERIES,
        },
    }


def make_run(client: httpx.Client, points: int) -> str:
    r = client.post("/v1/runs", json={"scenario": scenario(points)})
    r.raise_for_status()
    run = r.json()
    started = time.monotonic()
    while run["status"] in ("queued", "running"):
        if time.monotonic() - started > 1800:
            raise SystemExit("the run did not finish in 30 min")
        time.sleep(1)
        run = client.get(f"/v1/runs/{run['id']}").json()
    if run["status"] != "succeeded":
        raise SystemExit(f"the run {run['status']}: {run.get('error')}")
    print(
        f"run {run['id']}: {'from the cache' if run.get('cached') else 'simulated'}, {run.get('events')} events",
        flush=True,
    )
    return run["id"]


def stored_bytes(state: Path, run_id: str) -> int | None:
    """What the run's traces take in the embedded PostgreSQL of `state` (None without one):
    the chunks' bytes, or the JSONB document's before migration 0005."""
    import psycopg

    from infra.embedded import running_postgres_url

    url = running_postgres_url(state)
    if url is None:
        return None
    queries = (
        "SELECT sum(octet_length(c.data)) FROM trace_chunks c JOIN runs r ON r.result_id = c.result_id WHERE r.id = %s",
        "SELECT pg_column_size(t.data) FROM traces t JOIN runs r ON r.result_id = t.result_id WHERE r.id = %s",
    )
    with psycopg.connect(url, autocommit=True) as conn:
        for query in queries:
            try:
                return conn.execute(query, (run_id,)).fetchone()[0]
            except psycopg.errors.UndefinedTable:
                continue
    return None


def api_processes(url: str) -> list[psutil.Process]:
    """The processes listening on the API's port (the launcher and its helper API processes,
    which share its socket: TCPLAB_API_PROCESSES): a read may be served by any of them."""
    port = httpx.URL(url).port
    pids = {
        conn.pid
        for conn in psutil.net_connections(kind="tcp")
        if conn.status == psutil.CONN_LISTEN and conn.laddr.port == port and conn.pid
    }
    if not pids:
        raise SystemExit(f"no process listens on port {port}")
    return [psutil.Process(pid) for pid in sorted(pids)]


def rss(processes: list[psutil.Process]) -> int:
    return sum(p.memory_info().rss for p in processes)


class Sampler:
    """RSS of the API processes every 20 ms and /healthz latency every 100 ms, in background threads."""

    def __init__(self, processes: list[psutil.Process], url: str) -> None:
        self.processes, self.url = processes, url
        self.rss: list[int] = []
        self.healthz: list[float] = []
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._sample_rss), threading.Thread(target=self._probe)]

    def _sample_rss(self) -> None:
        while not self._stop.is_set():
            self.rss.append(rss(self.processes))
            time.sleep(0.02)

    def _probe(self) -> None:
        with httpx.Client(base_url=self.url, timeout=120) as c:
            while not self._stop.is_set():
                t = time.perf_counter()
                c.get("/healthz").raise_for_status()
                self.healthz.append(time.perf_counter() - t)
                time.sleep(0.1)

    def __enter__(self) -> Sampler:
        for t in self._threads:
            t.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        for t in self._threads:
            t.join()


def download(url: str, headers: dict[str, str], path: str) -> tuple[int, float]:
    """Reads the body as it comes and keeps none of it: (bytes, seconds)."""
    t = time.perf_counter()
    size = 0
    with httpx.Client(base_url=url, headers=headers, timeout=1800) as c, c.stream("GET", path) as r:
        r.raise_for_status()
        for chunk in r.iter_raw(1 << 20):
            size += len(chunk)
    return size, time.perf_counter() - t


def measure(
    url: str, headers: dict[str, str], processes: list[psutil.Process], path: str, clients: int
) -> dict[str, Any]:
    before = rss(processes)
    with Sampler(processes, url) as sampler, cf.ThreadPoolExecutor(clients) as pool:
        results = list(pool.map(lambda _: download(url, headers, path), range(clients)))
    h = np.asarray(sampler.healthz or [float("nan")]) * 1e3
    peak = max(sampler.rss or [before])
    return {
        "path": path,
        "clients": clients,
        "bytes": results[0][0],
        "slowest_s": max(s for _, s in results),
        "rss_before_mb": before / 1e6,
        "rss_peak_mb": peak / 1e6,
        "rss_peak_above_before_mb": (peak - before) / 1e6,
        "healthz_p50_ms": float(np.percentile(h, 50)),
        "healthz_p99_ms": float(np.percentile(h, 99)),
        "healthz_max_ms": float(h.max()),
        "healthz_probes": len(sampler.healthz),
    }


def run(url: str, state: Path, headers: dict[str, str], args: argparse.Namespace) -> dict[str, Any]:
    with httpx.Client(base_url=url, headers=headers, timeout=60) as client:
        run_id = make_run(client, args.points)
    processes = api_processes(url)
    stored = stored_bytes(state, run_id)
    figures: dict[str, Any] = {
        "run_id": run_id,
        "points": (args.points // SERIES) * SERIES,
        "stored_bytes": stored,
        "reads": {},
    }
    print(
        f"{figures['points']:,} trace points, stored in {stored / 1e6 if stored else float('nan'):.1f} MB; API RSS {rss(processes) / 1e6:.0f} MB ({len(processes)} processes)",
        flush=True,
    )
    for name in args.reads:
        path = READS[name].format(id=run_id)
        download(url, headers, path)  # warm-up: the database's caches, the API's imports
        f = measure(url, headers, processes, path, args.clients)
        figures["reads"][name] = f
        print(
            f"{name:17} {f['bytes'] / 1e6:8.1f} MB  {f['clients']} clients, slowest {f['slowest_s']:6.1f} s  "
            f"API RSS peak {f['rss_peak_mb']:7.0f} MB (+{f['rss_peak_above_before_mb']:.0f} MB)  "
            f"/healthz p50 {f['healthz_p50_ms']:.1f} ms, p99 {f['healthz_p99_ms']:.1f} ms, max {f['healthz_max_ms']:.0f} ms",
            flush=True,
        )
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--state", type=Path, help="the service's state folder (default: a temporary one)")
    parser.add_argument("--url", help="measure this running service instead of starting one")
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--points", type=int, default=9_000_000)
    parser.add_argument("--reads", nargs="+", choices=list(READS), default=list(READS))
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    if args.url and not args.state:
        parser.error("--url needs --state (the service's state folder, for the admin token)")
    with contextlib.ExitStack() as stack:
        state = args.state or Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="tcplab-big-reads-")))
        state.mkdir(parents=True, exist_ok=True)
        url = args.url or stack.enter_context(launched(state))
        figures = run(url, state, admin_headers(state), args)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")


if __name__ == "__main__":
    main()
