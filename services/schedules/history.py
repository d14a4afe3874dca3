"""A schedule's history: per firing, grid point, flow group and metric, this firing's mean
and 95 % interval beside the previous firings' (the baseline), and a flag when the firing
moved away from them (after a core upgrade, say).

Two kinds of metric, two tests (docs/schedules.md):

- **simulated** (every per-flow metric): the simulator is deterministic — the same scenario,
  seed and core version give the same result — so a firing that changed nothing reproduces
  the previous one exactly, seed by seed. The test is exact: the firing is flagged when any
  replication differs (beyond a relative 1e-9) from the same seed's value in the latest
  previous firing that ran it; never when all agree. Only when no seed is shared (the
  template's seed changed) does it fall back to the Welch test below.
- **measured** (`core_events_per_s`, `core_wall_s`: the core's own wall clock, per run; flow
  group "core"): noisy, so a Welch test at 95 %: flagged when |mean − baseline mean| exceeds
  t(ν) · √(s²/n + s_b²/n_b) — the baseline's interval widened by this firing's own standard
  error, ν by Welch–Satterthwaite. A side with one value adds no variance term; with no
  spread at all any difference beyond the tolerance is flagged (`services.stats.welch_direction`;
  the tolerance is `services.stats.differs`).

The baseline is the values of up to the last `BASELINE_FIRINGS` previous firings that have
any for the same point, group and metric, pooled; its interval is Student's t on them.
"""

from __future__ import annotations

import datetime as dt
import math
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sqlalchemy.orm import Session

from services.db.models import Sweep
from services.schedules import repository as repo
from services.stats import DEFAULT_CONFIDENCE, differs, summarize, welch_direction
from services.sweeps import NUMERIC_METRICS, observations
from services.sweeps import repository as sweeps_repo
from services.sweeps.spec import point_key

CORE_FLOW = "core"
"""The flow group of the run-level metrics: what the core measured of itself."""
MEASURED_METRICS: tuple[str, ...] = ("core_events_per_s", "core_wall_s")
HISTORY_METRICS: tuple[str, ...] = (*NUMERIC_METRICS, *MEASURED_METRICS)
BASELINE_FIRINGS = 5
RELATIVE_TOLERANCE = 1e-9
"""Two values closer than this (relative) are equal: a mean over 15 copies of a value and
over 3 may differ in the last bit."""

Values = Mapping[int, float]
"""seed -> value: one firing's replications of one (point, group, metric)."""


def _differ(a: float, b: float) -> bool:
    return differs(a, b, RELATIVE_TOLERANCE)


def _direction(diff: float) -> str:
    return "up" if diff > 0 else "down"


def welch_shift(
    current: Sequence[float], baseline: Sequence[float], confidence: float = DEFAULT_CONFIDENCE
) -> str | None:
    """ "up"/"down" when the means differ beyond the tolerance and at `confidence` by Welch's
    test (`services.stats.welch_direction`), else None."""
    cur, base = np.asarray(current, dtype=float), np.asarray(baseline, dtype=float)
    if cur.size == 0 or base.size == 0:
        return None
    if not _differ(float(cur.mean()), float(base.mean())):
        return None
    direction = welch_direction(cur, base, confidence)
    return None if direction == 0 else "up" if direction > 0 else "down"


def exact_shift(current: Values, previous: Sequence[Values]) -> tuple[str | None, bool]:
    """Seed by seed against the latest previous firing that ran each seed: ("up"/"down" or
    None, whether any seed was shared). The direction is the sign of the summed differences
    (of the first differing seed when they cancel)."""
    reference: dict[int, float] = {}
    for firing in previous:  # oldest first: later firings overwrite
        reference.update(firing)
    shared = sorted(set(current) & set(reference))
    if not shared:
        return None, False
    diffs = [current[s] - reference[s] for s in shared if _differ(current[s], reference[s])]
    if not diffs:
        return None, True
    total = sum(diffs)
    return _direction(total if total != 0 else diffs[0]), True


def shift_of(current: Values, previous: Sequence[Values], *, measured: bool) -> tuple[str | None, str | None]:
    """(shift, test): test is "exact" or "welch", None without a baseline."""
    previous = [p for p in previous if p]
    if not current or not previous:
        return None, None
    if not measured:
        shift, comparable = exact_shift(current, previous)
        if comparable:
            return shift, "exact"
    pooled = [v for firing in previous for v in firing.values()]
    return welch_shift(list(current.values()), pooled), "welch"


@dataclass
class _FiringData:
    sweep: Sweep
    core_version: str | None = None
    cells: dict[tuple[str, str, str], dict[int, float]] = field(default_factory=dict)
    points: dict[str, tuple[int, dict[str, Any]]] = field(default_factory=dict)
    variants: dict[str, str | None] = field(default_factory=dict)
    """Flow group -> variant, in the scenario's order."""


def _finite(value: Any) -> float | None:
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def _load(session: Session, sweeps: Sequence[Sweep], metrics: Sequence[str], flow: str | None) -> list[_FiringData]:
    simulated = [m for m in metrics if m not in MEASURED_METRICS]
    measured = [m for m in metrics if m in MEASURED_METRICS]
    data = {s.id: _FiringData(s) for s in sweeps}
    for sweep in sweeps:
        d = data[sweep.id]
        for p in sweeps_repo.points_of(session, sweep.id):
            d.points[point_key(p.values)] = (p.index, dict(p.values))
        if not simulated or flow == CORE_FLOW:
            continue
        for o in observations(session, sweep.id):
            if flow is not None and o.flow != flow:
                continue
            key = point_key(o.values)
            d.variants[o.flow] = o.variant
            for metric in simulated:
                value = _finite(o.metrics.get(metric))
                if value is not None:
                    d.cells.setdefault((key, o.flow, metric), {})[o.seed] = value
    by_index = {sid: {index: key for key, (index, _) in d.points.items()} for sid, d in data.items()}
    versions: dict[uuid.UUID, set[str]] = {}
    for sweep_id, point, _replication, seed, events, wall_s, core_version in repo.run_timings(session, list(data)):
        versions.setdefault(sweep_id, set()).add(core_version)
        if not measured or flow not in (None, CORE_FLOW):
            continue
        at = by_index[sweep_id].get(point)
        wall = _finite(wall_s)
        if at is None or wall is None:
            continue  # answered from a stored result: the core measured nothing
        timing = {"core_wall_s": wall, "core_events_per_s": events / wall if events is not None and wall > 0 else None}
        for metric in measured:
            if (measure := timing[metric]) is not None:
                data[sweep_id].cells.setdefault((at, CORE_FLOW, metric), {})[seed] = measure
    for sweep_id, d in data.items():
        d.core_version = ", ".join(sorted(versions.get(sweep_id, ()))) or None
        d.variants.setdefault(CORE_FLOW, None)
    return [data[s.id] for s in sweeps]


def history_rows(
    session: Session, sweeps: Sequence[Sweep], *, metrics: Sequence[str], flow: str | None, show_last: int
) -> list[dict[str, Any]]:
    """The rows of the last `show_last` of `sweeps` (a schedule's firings, oldest first); the
    ones before serve as their baseline."""
    firings = _load(session, sweeps, metrics, flow)
    history: dict[tuple[str, str, str], list[dict[int, float]]] = {}
    rows: list[dict[str, Any]] = []
    first_shown = max(0, len(firings) - show_last)
    for position, firing in enumerate(firings):
        groups = list(firing.variants)  # the scenario's order, "core" last
        cells = sorted(
            firing.cells.items(),
            key=lambda kv: (firing.points[kv[0][0]][0], groups.index(kv[0][1]), _metric_order(kv[0][2])),
        )
        for (key, group, metric), values in cells:
            previous = history.setdefault((key, group, metric), [])
            if position >= first_shown:
                rows.append(_row(firing, key, group, metric, values, previous[-BASELINE_FIRINGS:]))
            previous.append(values)
    return rows


def _metric_order(metric: str) -> int:
    return HISTORY_METRICS.index(metric)


def _row(
    firing: _FiringData, key: str, group: str, metric: str, values: Values, baseline: Sequence[Values]
) -> dict[str, Any]:
    index, axis_values = firing.points[key]
    now = summarize(values.values())
    pooled = summarize(v for firing_values in baseline for v in firing_values.values())
    shift, test = shift_of(values, baseline, measured=metric in MEASURED_METRICS)
    fired_for = firing.sweep.fired_for
    return {
        # As the API writes datetimes elsewhere (pydantic: "…Z"), so the two compare as text.
        "fired_for": fired_for.astimezone(dt.UTC).isoformat().replace("+00:00", "Z") if fired_for else None,
        "sweep_id": str(firing.sweep.id),
        "point": index,
        "point_key": key,
        **axis_values,
        "flow": group,
        "variant": firing.variants.get(group),
        "metric": metric,
        "n": now.count,
        "mean": now.mean,
        "std": now.std,
        "ci_low": now.ci_low,
        "ci_high": now.ci_high,
        "baseline_firings": len(baseline),
        "baseline_n": pooled.count,
        "baseline_mean": pooled.mean,
        "baseline_ci_low": pooled.ci_low,
        "baseline_ci_high": pooled.ci_high,
        "shift": shift,
        "test": test,
        "core_version": firing.core_version,
    }


def axis_paths(sweeps: Iterable[Sweep]) -> list[str]:
    """Every axis path the firings used, in first-seen order (a template may have changed)."""
    seen: dict[str, None] = {}
    for s in sweeps:
        seen.update(dict.fromkeys(a["path"] for a in s.spec.get("axes", [])))
    return list(seen)
