"""What a sweep measured: one observation per flow group per succeeded run, and their
per-point summaries.

Beside the flow groups, a run has link- and run-level observations (`level_observations`):
one per shared link (a dumbbell's bottleneck and bottleneck-rev, every link of a graph),
named after the link and carrying LINK_METRICS, and one named "run" carrying RUN_METRICS
(Jain's index, UF). Their `type` is "link" or "run"; their `variant` is the run's TCP
variant when all its TCP groups have one, so a variant axis reads the same on every level.

A flow group is one entry of the scenario's `flows` (`sbs`, or `bg-http` with `count` 48):
the level at which researchers think and name things. A group's metric in one run is the mean
over its flows (undefined values left out), so 48 HTTP flows give one observation per run, and
the summary's CI is across replications — the independent unit — never across flows.
"""

from __future__ import annotations

import json
import math
import re
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select, text
from sqlalchemy.orm import Session

from services.db.models import Run, RunStatus, SweepPoint
from services.errors import ConflictError, NotFoundError
from services.runs import repository as runs_repo
from services.stats import finite_values, summarize
from services.sweeps import aggregates
from services.sweeps import repository as repo
from services.sweeps.grid import flow_groups
from services.sweeps.spec import (
    LINK_FIELDS,
    LINK_METRICS,
    NUMERIC_METRICS,
    RUN_GROUP,
    RUN_METRICS,
    level_of,
    metric_bounds,
)


@dataclass(frozen=True)
class Observation:
    """One flow group of one succeeded run."""

    sweep_id: uuid.UUID | None
    point: int
    """The grid point's index (0 for a single run)."""
    values: dict[str, Any]
    """Axis path -> value at this point ({} for a single run)."""
    replication: int
    run_id: uuid.UUID
    seed: int
    flow: str
    """The group's name: the scenario's flows[i].name."""
    variant: str | None
    type: str
    metrics: dict[str, float | None]
    """Every numeric per-flow metric, averaged over the group's flows."""
    app: str | None = None
    """The group's application (`ftp`, `http`, `cbr`), when the scenario names one."""


LEVEL_OF_TYPE = {"link": "link", "run": "run"}
"""An observation's or cell's level by its type (any other type — tcp, udp — is a flow group)."""
_LEVEL_ORDER = {"flow": 0, "link": 1, "run": 2}


def _finite(value: float | int | None) -> float | None:
    """A value as a float when finite, else None (what `finite_values` keeps, and its mean)."""
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def _link_field(link: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    """The value at `path` in a link's result (`("wifi", "mac_retries")`); None where missing."""
    value: Any = link
    for key in path:
        if not isinstance(value, Mapping):
            return None
        value = value.get(key)
    return value


def _group_observations(
    rows: Sequence[repo.FlowRow],
    groups_at: Mapping[int, Sequence[Mapping[str, Any]]],
    values_at: Mapping[int, dict[str, Any]],
    sweep_id: uuid.UUID | None,
) -> list[Observation]:
    by_run: dict[uuid.UUID, list[repo.FlowRow]] = {}
    for row in rows:
        by_run.setdefault(row[2], []).append(row)
    out: list[Observation] = []
    for run_rows in by_run.values():
        point, replication, run_id, seed = run_rows[0][:4]
        flows = [r[5] for r in sorted(run_rows, key=lambda r: r[4])]
        start = 0
        for group in groups_at[point]:
            members = flows[start : start + group["count"]]
            start += group["count"]
            if len(members) == 1:  # most groups: the flow's own values, as numpy's mean of one gives them
                metrics = {metric: _finite(members[0][metric]) for metric in NUMERIC_METRICS}
            else:
                metrics = {}
                for metric in NUMERIC_METRICS:
                    data = finite_values(f[metric] for f in members)
                    metrics[metric] = float(data.mean()) if data.size else None
            out.append(
                Observation(
                    sweep_id=sweep_id,
                    point=point,
                    values=values_at.get(point, {}),
                    replication=replication,
                    run_id=run_id,
                    seed=seed,
                    flow=group["name"],
                    variant=group["variant"],
                    type=group["type"],
                    metrics=metrics,
                    app=group.get("app"),
                )
            )
    return out


def run_variant(groups: Sequence[Mapping[str, Any]]) -> str | None:
    """The TCP variant of a point's flow groups when they have one between them, else None."""
    variants = {g.get("variant") for g in groups if g.get("type") == "tcp"}
    return variants.pop() if len(variants) == 1 else None


def _level_observations(
    rows: Sequence[repo.LevelRow],
    groups_at: Mapping[int, Sequence[Mapping[str, Any]]],
    values_at: Mapping[int, dict[str, Any]],
    sweep_id: uuid.UUID | None,
) -> list[Observation]:
    out: list[Observation] = []
    for _, point, replication, run_id, seed, fairness, links in rows:
        common: dict[str, Any] = {
            "sweep_id": sweep_id,
            "point": point,
            "values": values_at.get(point, {}),
            "replication": replication,
            "run_id": run_id,
            "seed": seed,
            "variant": run_variant(groups_at.get(point, ())),
        }
        for name, level, metrics in level_metrics(fairness, links):
            out.append(Observation(**common, flow=name, type=level, metrics=metrics))
    return out


ACCESS_LINK = re.compile(r"\.(src|dst)-access(-rev)?$")
"""A dumbbell's per-flow access link: left out of the level observations (the stored rows
leave them out already, `repository.SHARED_LINKS`)."""


def level_metrics(
    fairness: Mapping[str, Any] | None, links: Sequence[Mapping[str, Any]]
) -> list[tuple[str, str, dict[str, float | None]]]:
    """A run's link- and run-level observations as (name, type, metrics): each link's
    LINK_METRICS, then the run's RUN_METRICS, from the core's `links` and `fairness` (stored or
    straight from `tcpsim.run`)."""
    out = [
        (str(link["name"]), "link", {m: _finite(_link_field(link, LINK_FIELDS.get(m, (m,)))) for m in LINK_METRICS})
        for link in links
        if not ACCESS_LINK.search(str(link["name"]))
    ]
    out.append((RUN_GROUP, "run", {m: _finite((fairness or {}).get(m)) for m in RUN_METRICS}))
    return out


def level_observations(session: Session, sweep_id: uuid.UUID, point: int | None = None) -> list[Observation]:
    """The sweep's link- and run-level observations (succeeded runs), by point and
    replication, each run's links first (in the core's order), then its "run"."""
    if repo.sweep_by_id(session, sweep_id) is None:
        raise NotFoundError("sweep", sweep_id)
    points = repo.points_of(session, sweep_id, point)
    conditions = [Run.sweep_id == sweep_id] + ([Run.sweep_point == point] if point is not None else [])
    return _level_observations(
        repo.level_rows(session, conditions),
        {p.index: p.flow_groups for p in points},
        {p.index: p.values for p in points},
        sweep_id,
    )


def run_level_observations(session: Session, run: Run) -> list[Observation]:
    """A single run's link- and run-level observations; the caller has checked that its
    viewer may see `run` and that it succeeded (`run_observations`)."""
    rows = [(None, 0, 0, *row[3:]) for row in repo.level_rows(session, [Run.id == run.id])]
    scenario = runs_repo.scenarios_of(session, [run.id])[run.id]
    return _level_observations(rows, {0: flow_groups(scenario)}, {}, None)


def observations(session: Session, sweep_id: uuid.UUID, point: int | None = None) -> list[Observation]:
    """The sweep's observations (succeeded runs), by point, replication and group order."""
    if repo.sweep_by_id(session, sweep_id) is None:
        raise NotFoundError("sweep", sweep_id)
    # One point's observations (the stopping rule, after each run) read that point's row only.
    points = repo.points_of(session, sweep_id, point)
    groups_at = {p.index: p.flow_groups for p in points}
    values_at = {p.index: p.values for p in points}
    return _group_observations(repo.flow_rows(session, sweep_id, point), groups_at, values_at, sweep_id)


def run_observations(session: Session, run: Run) -> list[Observation]:
    """A single run's observations (point 0, replication 0, no axis values); the caller has
    checked that its viewer may see `run`."""
    if run.status != RunStatus.succeeded:
        raise ConflictError(f"run {run.id} has no result: it is {run.status.value}")
    rows = [(0, 0, *row[2:]) for row in repo.flow_rows_of_run(session, run.id)]
    scenario = runs_repo.scenarios_of(session, [run.id])[run.id]  # a sweep run's is its point's
    return _group_observations(rows, {0: flow_groups(scenario)}, {}, None)


def sweep_summary_rows(
    session: Session,
    sweep_id: uuid.UUID,
    *,
    metrics: Sequence[str] = NUMERIC_METRICS,
    flow: str | None = None,
) -> list[dict[str, Any]]:
    """`summary_rows(observations(session, sweep_id), …)` read from the sweep's aggregates
    (aggregates.py) instead of every run's flow results: the same rows in the same order; the
    mean and spread come from exact sums, so they may differ from numpy's pass over the
    values in the last bits."""
    values_at: dict[int, dict[str, Any]] = dict(
        session.execute(select(SweepPoint.index, SweepPoint.values).where(SweepPoint.sweep_id == sweep_id)).all()
    )
    levels = [m for m in metrics if level_of(m) != "flow"]
    if levels and not aggregates.levels_complete(session, sweep_id):
        # Runs counted before link and run metrics were aggregated: from the results themselves.
        flow_metrics = [m for m in metrics if level_of(m) == "flow"]
        fallback = sweep_summary_rows(session, sweep_id, metrics=flow_metrics, flow=flow) if flow_metrics else []
        fallback += summary_rows(level_observations(session, sweep_id), metrics=levels, flow=flow)
        return sorted(fallback, key=lambda r: (r["point"], _LEVEL_ORDER[r["level"]]))
    rows = []
    for cell in aggregates.read_cells(session, sweep_id, metrics, flow=flow):
        values = values_at.get(cell.point, {})
        for metric in metrics:
            s = cell.summaries.get(metric)
            if s is None:  # a metric of another level than the cell's
                continue
            rows.append(
                {
                    "point": cell.point,
                    **values,
                    "flow": cell.flow,
                    "variant": cell.variant,
                    "metric": metric,
                    "level": cell.level,
                    "replications": cell.observations,
                    "count": s.count,
                    # ±inf (absurd values) as null, as a JSON, CSV or Parquet table writes it.
                    "mean": _finite(s.mean),
                    "std": _finite(s.std),
                    "ci_low": _finite(s.ci_low),
                    "ci_high": _finite(s.ci_high),
                    "half_width": _finite(s.half_width),
                    "interval": s.interval,
                }
            )
    return rows


def points_json(session: Session, sweep_id: uuid.UUID) -> bytes:
    """`GET /v1/sweeps/{id}/points`' body as JSON text — every point's index, axis values, flow
    groups, runs by status and stop reason, as `PointList` gives it — written straight from
    the stored JSON texts (10,000 points: no document parsed and serialised again)."""
    counts = repo.status_counts(session, [sweep_id], by_point=True)
    zero = dict.fromkeys(repo.STATUSES, 0)
    rows = session.execute(
        text(
            'SELECT "index", "values"::text, flow_groups::text, stop_reason FROM sweep_points '
            'WHERE sweep_id = :sweep_id ORDER BY "index"'
        ),
        {"sweep_id": sweep_id},
    ).all()
    parts = []
    for index, values, groups, reason in rows:
        by_status = counts.get((sweep_id, index), zero)
        progress = {"total": sum(by_status.values()), **{status: by_status[status] for status in repo.STATUSES}}
        parts.append(
            f'{{"point":{index},"values":{values},"flow_groups":{groups},'
            f'"progress":{json.dumps(progress, separators=(",", ":"))},"stop_reason":{json.dumps(reason)}}}'
        )
    return ('{"items":[' + ",".join(parts) + "]}").encode()


def summary_rows(
    obs: Iterable[Observation],
    *,
    metrics: Sequence[str] = NUMERIC_METRICS,
    flow: str | None = None,
) -> list[dict[str, Any]]:
    """Per (point, flow group, metric): mean, std, count and the 95 % CI across replications
    (on the metric's own scale: services/stats.py); the point's axis values as columns named
    by their paths. Link and run observations are summarised for their own level's metrics only."""
    cells: dict[tuple[int, str, str], list[Observation]] = {}
    for o in obs:
        if flow is None or o.flow == flow:
            # Keyed by level too: a flow group and a link may share a name.
            cells.setdefault((o.point, LEVEL_OF_TYPE.get(o.type, "flow"), o.flow), []).append(o)
    rows = []
    for (point, level, group), members in cells.items():
        first = members[0]
        for metric in metrics:
            if level_of(metric) != level:
                continue
            s = summarize((m.metrics.get(metric) for m in members), bounds=metric_bounds(metric))
            rows.append(
                {
                    "point": point,
                    **first.values,
                    "flow": group,
                    "variant": first.variant,
                    "metric": metric,
                    "level": level,
                    "replications": len(members),
                    **s.as_dict(),
                }
            )
    return rows
