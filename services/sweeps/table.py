"""A sweep as one tidy table, the way SEM hands results over: a row per succeeded run × (flow
group | shared link | the run itself), every metric a column, the axis values as columns with
plain names, and the run's point, replication and seed.

    rows, meta = sweep_table(session, sweep_id)
    # meta["axes"]: [{"path": "flows[*].loss.m", "column": "loss_m", "values": [...]}]

A row's `level` says what it measures (`flow`, `link`, `run`) and `name` names it (the flow
group, the link, or "run"); the metrics of the other levels are null on it. Flow rows are the
groups' observations (a group's mean over its flows, as the summary's), link rows the shared
links' (a dumbbell's per-flow access links are left out), the run row Jain's index and UF.
Link and run rows carry the run's TCP variant when its flows share one, so a variant-axis
sweep's bottleneck rows alone draw a throughput (utilization) vs queueing-delay scatter.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy.orm import Session

from services.sweeps.observations import LEVEL_OF_TYPE, level_observations, observations
from services.sweeps.spec import LINK_METRICS, NUMERIC_METRICS, RUN_METRICS, SUMMARY_METRICS

FIXED_COLUMNS: tuple[str, ...] = ("run_id", "point", "replication", "seed", "level", "name", "type", "variant", "app")
"""The columns before the axes'; the metrics (SUMMARY_METRICS) follow the axes."""

LEVEL_METRICS: dict[str, tuple[str, ...]] = {"flow": NUMERIC_METRICS, "link": LINK_METRICS, "run": RUN_METRICS}

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PART = re.compile(r"[A-Za-z0-9_]+")


def axis_columns(paths: Sequence[str]) -> dict[str, str]:
    """path -> a plain column name: the path's last two names joined by `_` (`flows[*].loss.m`
    -> `loss_m`, `topology.dumbbell.bottleneck.rate_mbps` -> `bottleneck_rate_mbps`, a
    one-name path as it is: `background_flows`); where two axes (or an axis and a fixed or
    metric column) would share a name, every part of the path, indices included
    (`flows[0].loss.m` -> `flows_0_loss_m`); a number appended if even that is taken."""
    taken = set(FIXED_COLUMNS) | set(SUMMARY_METRICS)
    short = {p: "_".join(_NAME.findall(p.removeprefix("$."))[-2:]).lower() or "axis" for p in paths}
    clashes = {name for name in short.values() if list(short.values()).count(name) > 1 or name in taken}
    out: dict[str, str] = {}
    for path in paths:
        name = short[path]
        if name in clashes:
            name = "_".join(_PART.findall(path.removeprefix("$."))).lower() or "axis"
        base, n = name, 2
        while name in taken:
            name, n = f"{base}_{n}", n + 1
        taken.add(name)
        out[path] = name
    return out


def sweep_table(
    session: Session, sweep_id: uuid.UUID, axes: Sequence[Mapping[str, Any]]
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The rows (by point, replication, then the run's flow groups, links and run row) and
    what a reader needs beside them: the axes with their columns, the metrics per level, the
    columns in order. `axes`: the sweep's [{"path", "values"}]."""
    columns_of = axis_columns([str(a["path"]) for a in axes])
    obs = [*observations(session, sweep_id), *level_observations(session, sweep_id)]
    order = {"flow": 0, "link": 1, "run": 2}
    obs.sort(key=lambda o: (o.point, o.replication, str(o.run_id), order[LEVEL_OF_TYPE.get(o.type, "flow")]))
    rows = []
    for o in obs:
        level = LEVEL_OF_TYPE.get(o.type, "flow")
        row: dict[str, Any] = {
            "run_id": str(o.run_id),
            "point": o.point,
            "replication": o.replication,
            "seed": o.seed,
            "level": level,
            "name": o.flow,
            "type": o.type,
            "variant": o.variant,
            "app": o.app,
        }
        row.update({columns_of[path]: value for path, value in o.values.items() if path in columns_of})
        row.update({m: o.metrics.get(m) for m in SUMMARY_METRICS})
        rows.append(row)
    meta = {
        "axes": [{"path": a["path"], "column": columns_of[str(a["path"])], "values": a.get("values")} for a in axes],
        "metrics": {level: list(names) for level, names in LEVEL_METRICS.items()},
        "columns": [*FIXED_COLUMNS, *columns_of.values(), *SUMMARY_METRICS],
    }
    return rows, meta
