"""A paper's experiments run in this process, through `tcpsim.run`, without a database.

For the bench scripts (bench/paper00X.py): the same grid, seeds and flow groups as the sweeps
the service would create (`services.sweeps.grid`), the same observations, so the same judging
(`Paper.evaluate`) gives the same verdicts as the API for the same runs.
"""

from __future__ import annotations

import copy
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from services.reproductions.model import Experiment, Paper
from services.settings import get_settings
from services.stats import finite_values
from services.sweeps import (
    Observation,
    SweepSpec,
    flow_groups,
    grid_points,
    level_metrics,
    plan_point,
    replication_seed,
)
from services.sweeps.grid import axis_values, with_seed
from services.sweeps.observations import run_variant
from services.sweeps.spec import NUMERIC_METRICS
from services.traces.builtin import builtin_by_hash
from services.traces.files import with_trace_files


def _group_metrics(flows: Sequence[Mapping[str, Any]]) -> dict[str, float | None]:
    out: dict[str, float | None] = {}
    for metric in NUMERIC_METRICS:
        data = finite_values(f.get(metric) for f in flows)
        out[metric] = float(data.mean()) if data.size else None
    return out


def observations_of(
    result: Mapping[str, Any],
    canonical: Mapping[str, Any],
    *,
    point: int = 0,
    values: Mapping[str, Any] | None = None,
    replication: int = 0,
    levels: bool = False,
) -> list[Observation]:
    """One run's result as observations, one per flow group (as the sweeps store them), then,
    with `levels`, one per shared link and one for the run (`sweeps.level_observations`)."""
    flows = list(result["flows"])
    out, start = [], 0
    run_id = uuid.uuid4()
    common: dict[str, Any] = {
        "sweep_id": None,
        "point": point,
        "values": dict(values or {}),
        "replication": replication,
        "run_id": run_id,
        "seed": int(canonical.get("seed", 0)),
    }
    for group in flow_groups(canonical):
        members = flows[start : start + group["count"]]
        start += group["count"]
        out.append(
            Observation(
                **common,
                flow=group["name"],
                variant=group["variant"],
                type=group["type"],
                metrics=_group_metrics(members),
                app=group.get("app"),
            )
        )
    if levels:
        variant = run_variant(flow_groups(canonical))
        for name, level, metrics in level_metrics(result.get("fairness"), result.get("links", [])):
            out.append(Observation(**common, flow=name, variant=variant, type=level, metrics=metrics))
    return out


def _run_with_builtin_traces(scenario: dict[str, Any]) -> dict[str, Any]:
    """`tcpsim.run`, each trace address swapped for a built-in trace's file (no database here)."""
    import tcpsim

    cache_dir = get_settings().effective_trace_cache_dir
    files = with_trace_files(copy.deepcopy(scenario), cache_dir, lambda h: getattr(builtin_by_hash(h), "text", None))
    return tcpsim.run(files)


def simulate(
    experiment: Experiment,
    overrides: Mapping[str, Any] | None = None,
    *,
    run: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
    levels: bool = False,
) -> list[Observation]:
    """Every point and replication of `experiment`, run with `run` (default `tcpsim.run`);
    `levels` adds each run's link and run observations (`Paper.levels`)."""
    if run is None:
        run = _run_with_builtin_traces
    spec = SweepSpec.model_validate(experiment.spec(overrides))
    out: list[Observation] = []
    for index, values in enumerate(grid_points(axis_values(spec), spec.combine)):
        planned = plan_point(spec, values)
        canonical = dict(planned.canonical)
        canonical.pop("outputs", None)  # traces are not judged
        for r in range(spec.replications):
            scenario = with_seed(canonical, replication_seed(spec.seed, r))
            out += observations_of(
                run(scenario), scenario, point=index, values=planned.values, replication=r, levels=levels
            )
    return out


def simulate_paper(
    paper: Paper, overrides: Mapping[str, Any] | None = None, *, only: Sequence[str] | None = None
) -> dict[str, list[Observation]]:
    """Observations per experiment key, for every experiment (or those in `only`)."""
    return {
        e.key: simulate(e, overrides, levels=paper.levels) for e in paper.experiments if only is None or e.key in only
    }
