#!/usr/bin/env python3
"""Paper 000's experiments as sweeps through the service: Fig. 2 (a) and (b) and Table II.

Starts the service as the README does (embedded PostgreSQL and Redis, one worker with
`--concurrency` processes) and drives it over HTTP only, like a researcher's script:

1. Fig. 2(a) and 2(b) as sweeps of `flows[*].loss.m` (1..40, 1..35) with `--replications`
   seeds each, through the workers; time to done.
2. The same Fig. 2(a) sweep submitted again (counts: every run answered from the cache), then
   extended by two seeds (counts: only the new runs are simulated).
3. Table II as a sweep of `background_flows` over the paper's 15 sizes (Drop-Tail).
4. The comparisons: against the paper (`/v1/comparisons/paper`) and model vs simulation.

With `--state DIR` the service's database is kept there: a second invocation finds every run
in the cache and only recomputes the comparisons. `--json PATH` writes every figure.

    .venv/bin/python bench/paper000_sweeps.py --state .state/paper000 --json bench-results/paper000-sweeps.json
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from service import launched  # noqa: E402  (bench/service.py: the service as the README starts it)

TABLE2_SIZES = [4, 8, 12, 16, 24, 32, 48, 64, 96, 128, 160, 180, 192, 224, 256]


def wait_done(client: httpx.Client, sweep_id: str, label: str) -> tuple[dict[str, Any], float]:
    started = time.perf_counter()
    last = ""
    while True:
        sweep = client.get(f"/v1/sweeps/{sweep_id}").json()
        p = sweep["progress"]
        line = f"  {label}: {p['succeeded'] + p['failed'] + p['cancelled']}/{p['total']} done ({p['running']} running, {p['failed']} failed)"
        if line != last:
            print(line, flush=True)
            last = line
        if sweep["status"] in ("done", "cancelled"):
            return sweep, time.perf_counter() - started
        time.sleep(2)


def submit(client: httpx.Client, body: dict[str, Any]) -> dict[str, Any]:
    r = client.post("/v1/sweeps", json=body)
    if r.status_code != 201:
        raise SystemExit(f"POST /v1/sweeps: {r.status_code} {r.text}")
    return r.json()


def fig2_body(panel: str, m_max: int, replications: int) -> dict[str, Any]:
    return {
        "name": f"paper 000 Fig. 2({panel})",
        "preset": f"paper000-fig2{panel}",
        "axes": [{"path": "flows[*].loss.m", "range": {"start": 1, "stop": m_max}}],
        "replications": replications,
        "seed": 1,
    }


def table2_body(replications: int) -> dict[str, Any]:
    return {
        "name": "paper 000 Table II (Drop-Tail)",
        "preset": "paper000-table2-droptail",
        "axes": [{"path": "background_flows", "values": TABLE2_SIZES}],
        "replications": replications,
        "seed": 1,
    }


def comparison(client: httpx.Client, kind: str, **params: Any) -> dict[str, Any] | None:
    r = client.get(f"/v1/comparisons/{kind}", params=params)
    if r.status_code != 200:
        print(f"  /v1/comparisons/{kind}: {r.status_code} {r.text[:300]}")
        return None
    return r.json()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--replications", type=int, default=5)
    ap.add_argument("--concurrency", type=int, default=2, help="worker processes")
    ap.add_argument("--state", type=Path, help="keep the service's state here (default: a temporary folder)")
    ap.add_argument("--json", type=Path)
    a = ap.parse_args()
    figures: dict[str, Any] = {"date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"), "replications": a.replications}
    with tempfile.TemporaryDirectory(prefix="tcplab-paper000-") as tmp:
        state = a.state.resolve() if a.state else Path(tmp)
        state.mkdir(parents=True, exist_ok=True)
        with launched(state, worker_concurrency=str(a.concurrency)) as base, httpx.Client(base_url=base, timeout=120) as client:
            print(f"service at {base}, state in {state}")
            sweeps: dict[str, dict[str, Any]] = {}
            for key, body in (
                ("fig2a", fig2_body("a", 40, a.replications)),
                ("fig2b", fig2_body("b", 35, a.replications)),
                ("table2", table2_body(a.replications)),
            ):
                created = submit(client, body)
                print(f"{body['name']}: {created['points']} points × {a.replications} = {created['created']['runs']} runs, "
                      f"{created['created']['cached']} from the cache, {created['created']['enqueued']} enqueued")
                done, wall = wait_done(client, created["id"], key)
                sweeps[key] = {"id": created["id"], "created": created["created"], "wall_s": wall, "progress": done["progress"]}
                print(f"  done in {wall:.1f} s: {json.dumps(done['progress'])}")

            # Resubmission and extension of Fig. 2(a).
            again = submit(client, fig2_body("a", 40, a.replications))
            figures["fig2a_resubmitted"] = {"created": again["created"], "status": again["status"]}
            print(f"Fig. 2(a) submitted again: {again['created']} -> status {again['status']}")
            extended = client.post(f"/v1/sweeps/{sweeps['fig2a']['id']}/extend", json={"replications": a.replications + 2}).json()
            if "created" not in extended:
                raise SystemExit(f"extend: {extended}")
            _, wall = wait_done(client, sweeps["fig2a"]["id"], "fig2a extended")
            figures["fig2a_extended"] = {"created": extended["created"], "wall_s": wall}
            print(f"Fig. 2(a) extended to {a.replications + 2} seeds: {extended['created']} in {wall:.1f} s")
            figures["sweeps"] = sweeps

            for key in ("fig2a", "fig2b", "table2"):
                sid = sweeps[key]["id"]
                figures[f"{key}_paper"] = comparison(client, "paper", sweep_id=sid)
                figures[f"{key}_models"] = comparison(client, "models", sweep_id=sid)
            print(json.dumps({k: figures.get(f"{k}_paper") for k in ("fig2a", "fig2b", "table2")}, indent=1, default=str)[:20000])
    if a.json:
        a.json.parent.mkdir(parents=True, exist_ok=True)
        a.json.write_text(json.dumps(figures, indent=1, default=str))
        print(f"figures written to {a.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
