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
in the cache and only recomputes the comparisons. `--json PATH` writes every figure,
`--report PATH` the tables as Markdown (docs/validation/paper000-sweeps-tables.md);
`--from-json PATH --report …` rewrites the tables from an earlier run's figures without
launching anything.

    .venv/bin/python bench/paper000_sweeps.py --state .state/paper000 \
        --json bench-results/paper000-sweeps.json --report docs/validation/paper000-sweeps-tables.md
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
from service import admin_headers, launched  # noqa: E402  (bench/service.py: the service as the README starts it)

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


def _num(x: Any, digits: int = 2) -> str:
    return "–" if x is None else f"{x:.{digits}f}"


def _ci(mean: Any, low: Any, high: Any, digits: int = 2) -> str:
    if mean is None:
        return "–"
    if low is None or high is None:
        return _num(mean, digits)
    return f"{mean:.{digits}f} [{low:.{digits}f}, {high:.{digits}f}]"


def _pct(x: Any) -> str:
    return "–" if x is None else f"{100 * x:.1f} %"


def fig2_table(paper: dict[str, Any]) -> list[str]:
    s = paper["summary"]
    sim = s["simulated"][0]
    pub = s["paper"]
    lines = [
        f"Paper: equality below m = {pub['equality_region_m_below']}, SBS superior for m = {pub['sbs_superior_m'][0]}–{pub['sbs_superior_m'][1]}, "
        f"IMP superior from m = {pub['imp_superior_m_from']}; analytic m_t = {pub['analytic_crossover_m_t']}; model errors SBS "
        f"{pub['sbs_model_error_pct'][0]}–{pub['sbs_model_error_pct'][1]} %, IMP {pub['imp_model_error_pct'][0]}–{pub['imp_model_error_pct'][1]} %.",
        "",
        f"Ours ({paper['replications']} replications per m): regions "
        + ", ".join(f"{r['region']} {r['from']}–{r['to']}" for r in s["regions"])
        + f"; IMP significantly better from m = {sim['imp_superior_m_from']}, means cross at m = {sim['crossover_m_means']}; "
        f"models' m_t at our measured R and RTO = {s['model_crossover']['measured_p']['m_t']:.2f}; "
        f"model errors SBS {sim['sbs_model_error_pct'][0]:.1f}–{sim['sbs_model_error_pct'][1]:.1f} %, "
        f"IMP {sim['imp_model_error_pct'][0]:.1f}–{sim['imp_model_error_pct'][1]:.1f} %.",
        "",
        "| m | SBS pkts/RTT [95 % CI] | IMP pkts/RTT [95 % CI] | IMP / SBS [95 % CI] | ours | paper | SBS eq. 4 (error) | IMP eq. 8 (error) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in paper["rows"]:
        lines.append(
            f"| {r['m']} | {_ci(r['sbs_mean'], r['sbs_ci_low'], r['sbs_ci_high'])} | {_ci(r['imp_mean'], r['imp_ci_low'], r['imp_ci_high'])} "
            f"| {_ci(r['ratio'], r['ratio_ci_low'], r['ratio_ci_high'], 3)} | {r['region']} | {r['paper_region']} "
            f"| {_num(r['sbs_model_pkts_per_rtt'])} ({_pct(r['sbs_model_error'])}) | {_num(r['imp_model_pkts_per_rtt'])} ({_pct(r['imp_model_error'])}) |"
        )
    return lines


def table2_table(paper: dict[str, Any]) -> list[str]:
    s = paper["summary"]
    lines = [
        f"Mean |model error| for 4–200 flows: paper {s['paper_mean_error_pct_4_to_200']:.2f} % (from its columns), ours "
        f"{s['our_mean_error_pct_4_to_200']:.2f} %; largest: paper {s['paper_max_error']['error_pct']:.1f} % at "
        f"{s['paper_max_error']['background_flows']}, ours {s['our_max_error']['error_pct']:.1f} % at {s['our_max_error']['background_flows']}. "
        f"m = {s['m_from']}.",
        "",
        "| flows | loss event rate: paper / ours [CI] | loss rate: paper / ours [CI] | sim pkts/RTT: paper / ours [CI] | SBS model: paper / ours | model error: paper / ours | note |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in paper["rows"]:
        lines.append(
            f"| {r['background_flows']} | {_num(r['paper_loss_event_rate'], 5)} / {_ci(r['loss_event_rate'], r['loss_event_rate_ci_low'], r['loss_event_rate_ci_high'], 5)} "
            f"| {_num(r['paper_loss_rate'], 4)} / {_ci(r['loss_rate'], r['loss_rate_ci_low'], r['loss_rate_ci_high'], 4)} "
            f"| {_num(r['paper_sim_pkts_per_rtt'])} / {_ci(r['sim_pkts_per_rtt'], r['sim_ci_low'], r['sim_ci_high'])} "
            f"| {_num(r['paper_model_pkts_per_rtt'])} / {_num(r['model_pkts_per_rtt'])} | {_pct(r['paper_model_error'])} / {_pct(r['model_error'])} "
            f"| {r['note'] or ''} |"
        )
    return lines


def write_report(figures: dict[str, Any], path: Path) -> None:
    sweeps = figures["sweeps"]
    lines = [
        "# Paper 000 as sweeps: the tables",
        "",
        f"Written by `bench/paper000_sweeps.py` on {figures['date']} (the analysis is in `paper000-sweeps.md`).",
        "",
        "## Through the workers",
        "",
        "| sweep | runs | from the cache | simulated | wall to done |",
        "|---|---|---|---|---|",
    ]
    for key, label in (
        ("fig2a", "Fig. 2(a), m = 1..40"),
        ("fig2b", "Fig. 2(b), m = 1..35"),
        ("table2", "Table II, 15 sizes"),
    ):
        c = sweeps[key]["created"]
        lines.append(
            f"| {label} × {figures['replications']} seeds | {c['runs']} | {c['cached']} | {c['enqueued']} | {sweeps[key]['wall_s']:.0f} s |"
        )
    again, ext = figures["fig2a_resubmitted"]["created"], figures["fig2a_extended"]
    lines.append(
        f"| Fig. 2(a) submitted again | {again['runs']} | {again['cached']} | {again['enqueued']} | at once ({figures['fig2a_resubmitted']['status']}) |"
    )
    lines.append(
        f"| Fig. 2(a) extended by 2 seeds | {ext['created']['runs']} | {ext['created']['cached']} | {ext['created']['enqueued']} | {ext['wall_s']:.0f} s |"
    )
    for key, title in (("fig2a", "Fig. 2(a), p = 0.05 %"), ("fig2b", "Fig. 2(b), p = 0.1 %")):
        if figures.get(f"{key}_paper"):
            lines += ["", f"## {title}", "", *fig2_table(figures[f"{key}_paper"])]
    if figures.get("table2_paper"):
        lines += ["", "## Table II (Drop-Tail), the SBS flow", "", *table2_table(figures["table2_paper"])]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    print(f"tables written to {path}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--replications", type=int, default=5)
    ap.add_argument("--concurrency", type=int, default=2, help="worker processes")
    ap.add_argument("--state", type=Path, help="keep the service's state here (default: a temporary folder)")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--report", type=Path, help="write the tables as Markdown here")
    ap.add_argument("--from-json", type=Path, help="only rewrite the report from these figures")
    a = ap.parse_args()
    if a.from_json:
        if not a.report:
            ap.error("--from-json needs --report")
        write_report(json.loads(a.from_json.read_text()), a.report)
        return 0
    figures: dict[str, Any] = {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "replications": a.replications,
    }
    with tempfile.TemporaryDirectory(prefix="tcplab-paper000-") as tmp:
        state = a.state.resolve() if a.state else Path(tmp)
        state.mkdir(parents=True, exist_ok=True)
        with (
            launched(state, worker_concurrency=str(a.concurrency)) as base,
            httpx.Client(base_url=base, timeout=120, headers=admin_headers(state)) as client,
        ):
            print(f"service at {base}, state in {state}")
            sweeps: dict[str, dict[str, Any]] = {}
            for key, body in (
                ("fig2a", fig2_body("a", 40, a.replications)),
                ("fig2b", fig2_body("b", 35, a.replications)),
                ("table2", table2_body(a.replications)),
            ):
                created = submit(client, body)
                print(
                    f"{body['name']}: {created['points']} points × {a.replications} = {created['created']['runs']} runs, "
                    f"{created['created']['cached']} from the cache, {created['created']['enqueued']} enqueued"
                )
                done, wall = wait_done(client, created["id"], key)
                sweeps[key] = {
                    "id": created["id"],
                    "created": created["created"],
                    "wall_s": wall,
                    "progress": done["progress"],
                }
                print(f"  done in {wall:.1f} s: {json.dumps(done['progress'])}")

            # Resubmission and extension of Fig. 2(a).
            again = submit(client, fig2_body("a", 40, a.replications))
            figures["fig2a_resubmitted"] = {"created": again["created"], "status": again["status"]}
            print(f"Fig. 2(a) submitted again: {again['created']} -> status {again['status']}")
            extended = client.post(
                f"/v1/sweeps/{sweeps['fig2a']['id']}/extend", json={"replications": a.replications + 2}
            ).json()
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
            print(
                json.dumps({k: figures.get(f"{k}_paper") for k in ("fig2a", "fig2b", "table2")}, indent=1, default=str)[
                    :20000
                ]
            )
    if a.json:
        a.json.parent.mkdir(parents=True, exist_ok=True)
        a.json.write_text(json.dumps(figures, indent=1, default=str))
        print(f"figures written to {a.json}")
    if a.report:
        write_report(figures, a.report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
