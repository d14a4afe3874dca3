#!/usr/bin/env python3
"""Results across the binding: what `tcpsim.run(scenario, columns=True)` saves per run against
the JSON path of `tcpsim.run(scenario)` (issue 12, "Results across the binding").

The JSON path serialises the core's result with serde_json and reads it with `json.loads`;
`columns=True` builds the result's Python objects directly, the per-flow table as columns and
the traces' series as numpy arrays. For each scenario, in rounds that run every way once (in a
rotating order, so a noisy machine weighs on each alike), this script times per run:

- `records`: `tcpsim.run(s)`;
- `columns`: `tcpsim.run(s, columns=True)`;
- `columns → records`: `tcpsim.to_records(tcpsim.run(s, columns=True))`, the records form got
  the new way (what a caller that still wants records pays);
- the core's own time (`stats.wall_s`, the same in every way), so that "binding" is what a run
  costs beyond simulating: the scenario in (json.dumps, parse, plan) and the result out;
- the scenario in alone: `tcpsim.validate(s)` (json.dumps, parse, plan: the same steps), so
  that "out" (binding − in) is the result's way out.

It prints medians over the rounds and the median of each round's difference records − columns
in binding time ("saved": the core's own time, the same work in both, is left out of both). With traces, it also times what the trace store (services/runs/trace_codec.py) does
per value today before compressing: turning each series' list into a numpy array, which a
columns result already is.

Scenarios: paper 000's Fig. 2 dumbbell cut to one simulated second (about 1 ms of core time,
the worker benchmark's runs), the same traced every millisecond (1,001 samples × 5 series),
and Table II's 66 flows cut to one second (a large per-flow table).

    .venv/bin/python -m bench.binding_results [--rounds 300] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import tcpsim
from services.presets import build_scenario
from services.runs import trace_codec
from services.scenarios import validate_scenario

SCENARIOS: dict[str, tuple[str, dict[str, Any]]] = {
    "fig2a-1s": ("paper000-fig2a", {"duration_s": 1, "warmup_s": 0.5}),
    "fig2a-1s-traced-1ms": ("paper000-fig2a", {"duration_s": 1, "warmup_s": 0.5, "outputs.trace_interval_s": 0.001}),
    "table2-66-flows-1s": ("paper000-table2-droptail", {"duration_s": 1, "warmup_s": 0.5}),
}
"""name -> (preset, overrides): run as the worker runs them, the canonical scenario as a dict."""


def _records(s: dict[str, Any]) -> dict[str, Any]:
    return tcpsim.run(s)


def _columns(s: dict[str, Any]) -> dict[str, Any]:
    return tcpsim.run(s, columns=True)


def _columns_to_records(s: dict[str, Any]) -> dict[str, Any]:
    result = tcpsim.run(s, columns=True)
    records = tcpsim.to_records(result)
    records["stats"] = result["stats"]
    return records


WAYS: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "records": _records,
    "columns": _columns,
    "columns_to_records": _columns_to_records,
}


def _series_to_arrays(traces: dict[str, Any]) -> None:
    """What trace_codec.encode does per value before compressing: each series as an array."""
    for _, _, _, values in trace_codec.series_of(traces):
        trace_codec._array(values)  # noqa: SLF001  (the step a columns result skips)


def _median_us(values: list[float]) -> float:
    return statistics.median(values) * 1e6


def measure(name: str, rounds: int) -> dict[str, Any]:
    preset, overrides = SCENARIOS[name]
    _, scenario = validate_scenario(build_scenario(preset, overrides))
    records = tcpsim.run(scenario)
    for way in WAYS.values():
        way(scenario)  # warm-up: imports, numpy's C API, caches
    total: dict[str, list[float]] = {way: [] for way in WAYS}
    binding: dict[str, list[float]] = {way: [] for way in WAYS}
    core: list[float] = []
    order = list(WAYS)
    for r in range(rounds):
        for way in order[r % len(order) :] + order[: r % len(order)]:
            started = time.perf_counter()
            result = WAYS[way](scenario)
            elapsed = time.perf_counter() - started
            total[way].append(elapsed)
            binding[way].append(elapsed - result["stats"]["wall_s"])
            core.append(result["stats"]["wall_s"])
    # Each run's binding time (its wall time less the core's own) leaves out what the machine's
    # other work does to the simulation itself, the bulk of the noise on a shared machine.
    saved = [a - b for a, b in zip(binding["records"], binding["columns"], strict=True)]
    scenario_in = []
    for _ in range(max(20, rounds // 5)):
        started = time.perf_counter()
        tcpsim.validate(scenario)
        scenario_in.append(time.perf_counter() - started)
    out: dict[str, Any] = {
        "scenario": name,
        "preset": preset,
        "overrides": overrides,
        "flows": len(records["flows"]),
        "links": len(records["links"]),
        "result_json_bytes": len(json.dumps(records)),
        "rounds": rounds,
        "core_us": _median_us(core),
        "run_us": {way: _median_us(t) for way, t in total.items()},
        "binding_us": {way: _median_us(t) for way, t in binding.items()},
        "scenario_in_us": _median_us(scenario_in),
        "saved_us_per_run": _median_us(saved),
        "saved_fraction_of_binding": _median_us(saved) / _median_us(binding["records"]),
    }
    traces = records.get("traces")
    if traces:
        out["trace_values"] = sum(len(v) for _, _, _, v in trace_codec.series_of(traces))
        times = []
        for _ in range(max(20, rounds // 5)):
            started = time.perf_counter()
            _series_to_arrays(traces)
            times.append(time.perf_counter() - started)
        out["store_series_to_arrays_us"] = _median_us(times)
    return out


def report(results: list[dict[str, Any]]) -> str:
    head = (
        f"{'scenario':<22} {'flows':>5} {'core':>8} {'records':>8} {'columns':>8} {'col→rec':>8}"
        f" {'binding rec/col':>16} {'in':>5} {'out rec/col':>12} {'saved/run':>10}"
    )
    lines = ["Results across the binding: median µs per tcpsim.run (a scenario dict in)", head]
    for r in results:
        run, binding = r["run_us"], r["binding_us"]
        lines.append(
            f"{r['scenario']:<22} {r['flows']:>5} {r['core_us']:>8.0f} {run['records']:>8.0f} {run['columns']:>8.0f}"
            f" {run['columns_to_records']:>8.0f} {binding['records']:>7.0f} / {binding['columns']:<6.0f}"
            f" {r['scenario_in_us']:>5.0f} {binding['records'] - r['scenario_in_us']:>5.0f} /"
            f" {binding['columns'] - r['scenario_in_us']:<4.0f} {r['saved_us_per_run']:>7.1f} µs"
        )
    lines.append(
        "binding = run − core; in = tcpsim.validate (json.dumps, parse, plan); out = binding − in;"
        " saved = median of records − columns binding per round"
    )
    for r in results:
        if "store_series_to_arrays_us" in r:
            lines.append(
                f"{r['scenario']}: the trace store's lists → arrays step ({r['trace_values']:,} values) takes"
                f" {r['store_series_to_arrays_us']:.0f} µs, which a columns result skips"
            )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=300, help="rounds per scenario, each running every way once")
    parser.add_argument("--scenarios", nargs="+", choices=list(SCENARIOS), default=list(SCENARIOS))
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    args = parser.parse_args()
    results = [measure(name, args.rounds) for name in args.scenarios]
    if args.json:
        print(
            json.dumps(
                {"benchmark": "binding_results", "core_version": tcpsim.__version__, "results": results}, indent=2
            )
        )
    else:
        print(report(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
