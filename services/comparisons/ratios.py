"""Variant versus variant: ratios with confidence intervals, and where one is better.

Two kinds of pairs, both *paired by replication*: replication r of a sweep uses the same seed at
every grid point (common random numbers), so the two sides of a pair saw the same random draws
and their difference is much less noisy than two independent means.

- **Two flow groups of the same runs** (:func:`flow_ratios`): paper 000's foreground pair, one
  Slow-but-Steady and one Impatient flow in every run (§IV-A: "All experiments have two
  foreground NewReno flows"). A pair is the two flows' metric in one run.
- **Two values of one axis** (:func:`axis_ratios`), the other axes held equal: e.g. the axis
  ``flows[*].variant`` with baseline ``newreno-sbs`` and other ``sack``. A pair is the same
  flow group at the two points in replication r (the same seed).

Per point, over the n pairs (a_i, b_i) where both are defined:

- ``mean_a``, ``mean_b`` and ``ratio`` = mean_b / mean_a (the ratio of means);
- ``ratio_ci_low``/``ratio_ci_high``: **Fieller's** 95 % interval for mean_b / mean_a with the
  paired covariance (``services.stats.fieller_interval``, which says why Fieller's): an
  interval for the ratio reported, using the pairing, and agreeing exactly with the verdict
  (ρ = 1 lies in it iff the paired t interval of b − a contains 0). It is unbounded (null,
  with a note) when ā itself is not significantly different from 0;
- ``diff`` = mean of b_i − a_i with its paired Student-t 95 % interval (``services.stats.
  paired_difference``), and ``verdict``: ``b_better`` / ``a_better`` when that interval excludes 0
  (``services.stats.significant_direction``; better meaning higher, or lower for a metric where
  less is better: loss rates, timeouts, RTT …), ``no_significant_difference`` when it contains 0,
  ``insufficient_data`` with fewer than two pairs.

:func:`regions` then groups the points along one axis into contiguous runs with the same
verdict — the simulated counterpart of paper 000's regions (Fig. 2, §IV-B: "a region where
Slow-but-Steady is superior; a region where Impatient is superior; and an equality region").
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeGuard

import numpy as np

from services.comparisons.common import (
    ObservationLike,
    axis_order,
    axis_paths,
    check_flow,
    check_metric,
    flows_of,
    higher_is_better,
    matches,
    metric_of,
    point_key,
    value_key,
)
from services.errors import InvalidInputError
from services.stats import DEFAULT_CONFIDENCE, fieller_interval, paired_difference, significant_direction

A_BETTER, B_BETTER, NO_DIFFERENCE, INSUFFICIENT = (
    "a_better",
    "b_better",
    "no_significant_difference",
    "insufficient_data",
)
VERDICTS = (A_BETTER, B_BETTER, NO_DIFFERENCE, INSUFFICIENT)

COLUMNS = (
    "pairs",
    "mean_a",
    "mean_b",
    "ratio",
    "ratio_ci_low",
    "ratio_ci_high",
    "diff",
    "diff_ci_low",
    "diff_ci_high",
    "verdict",
    "note",
)
FLOW_FIRST_COLUMNS = ("point", "flow_a", "flow_b", *COLUMNS)
"""The columns of :func:`flow_ratios`' rows after the axis values, in order."""
AXIS_FIRST_COLUMNS = ("point_a", "point_b", "flow", "axis", "baseline", "other", *COLUMNS)
"""The columns of :func:`axis_ratios`' rows after the other axes' values, in order."""


@dataclass(frozen=True)
class PairedComparison:
    pairs: int
    mean_a: float | None
    mean_b: float | None
    ratio: float | None
    ratio_ci_low: float | None
    ratio_ci_high: float | None
    diff: float | None
    diff_ci_low: float | None
    diff_ci_high: float | None
    verdict: str
    note: str | None

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def compare_pairs(
    pairs: Sequence[tuple[float | None, float | None]],
    *,
    higher_better: bool = True,
    confidence: float = DEFAULT_CONFIDENCE,
) -> PairedComparison:
    """The paired comparison of b against a over the pairs where both are finite numbers."""
    clean = [(float(a), float(b)) for a, b in pairs if _finite(a) and _finite(b)]
    n = len(clean)
    if n == 0:
        return PairedComparison(
            0, None, None, None, None, None, None, None, None, INSUFFICIENT, "no pair with both values defined"
        )
    a = np.array([x for x, _ in clean])
    b = np.array([y for _, y in clean])
    with np.errstate(all="ignore"):
        mean_a, mean_b = float(a.mean()), float(b.mean())
        d = paired_difference(clean, confidence)
    notes: list[str] = []
    ratio = mean_b / mean_a if mean_a != 0 and math.isfinite(mean_a) and math.isfinite(mean_b) else None
    if ratio is not None and not math.isfinite(ratio):
        ratio = None
    if ratio is None:
        notes.append("mean_a is 0 or not finite: no ratio")
    with np.errstate(all="ignore"):
        low, high, why = fieller_interval(a, b, confidence) if n >= 2 else (None, None, None)
    if why and n >= 2:
        notes.append(why)
    if n < 2 or d.mean is None:
        verdict = INSUFFICIENT
        notes.append("fewer than two pairs: no confidence interval, no verdict")
    elif direction := significant_direction(d):
        verdict = B_BETTER if (direction > 0) == higher_better else A_BETTER
    else:
        verdict = NO_DIFFERENCE
    return PairedComparison(
        pairs=n,
        mean_a=_or_none(mean_a),
        mean_b=_or_none(mean_b),
        ratio=ratio,
        ratio_ci_low=low,
        ratio_ci_high=high,
        diff=_or_none(d.mean),
        diff_ci_low=_or_none(d.ci_low),
        diff_ci_high=_or_none(d.ci_high),
        verdict=verdict,
        note="; ".join(notes) or None,
    )


def _finite(x: Any) -> TypeGuard[float]:
    return x is not None and not isinstance(x, bool) and isinstance(x, int | float) and math.isfinite(x)


def _or_none(x: float | None) -> float | None:
    return x if x is not None and math.isfinite(x) else None


# ---- flow group against flow group ------------------------------------------------------------


def flow_ratios(
    observations: Sequence[ObservationLike],
    *,
    metric: str,
    flow_a: str,
    flow_b: str,
    axes: Sequence[Mapping[str, Any]] | None = None,
    confidence: float = DEFAULT_CONFIDENCE,
) -> list[dict[str, Any]]:
    """Per grid point, flow group b against flow group a in the same runs (paired by run)."""
    check_metric(metric)
    check_flow(observations, flow_a, "$.flow_a")
    check_flow(observations, flow_b, "$.flow_b")
    paths = axis_paths(observations, axes)
    by_point: dict[int, dict[str, Any]] = {}
    for obs in observations:
        if obs.flow not in (flow_a, flow_b):
            continue
        entry = by_point.setdefault(obs.point, {"values": obs.values, "runs": {}})
        side = entry["runs"].setdefault(obs.replication, {})
        side[obs.flow] = metric_of(obs, metric)
    rows = []
    for point in sorted(by_point):
        entry = by_point[point]
        pairs = [(sides.get(flow_a), sides.get(flow_b)) for _, sides in sorted(entry["runs"].items())]
        result = compare_pairs(pairs, higher_better=higher_is_better(metric), confidence=confidence)
        row: dict[str, Any] = {"point": point}
        row.update({p: entry["values"].get(p) for p in paths})
        row.update(flow_a=flow_a, flow_b=flow_b, **result.as_dict())
        rows.append(row)
    return rows


# ---- axis value against axis value ------------------------------------------------------------


def axis_ratios(
    observations: Sequence[ObservationLike],
    *,
    metric: str,
    axis: str,
    baseline: str,
    other: str,
    flow: str | None = None,
    axes: Sequence[Mapping[str, Any]] | None = None,
    confidence: float = DEFAULT_CONFIDENCE,
) -> list[dict[str, Any]]:
    """Per combination of the other axes and per flow group (or only ``flow``): the points
    where ``axis`` is ``other`` (b) against those where it is ``baseline`` (a), paired by
    replication. ``baseline``/``other`` are given as text (query strings) and matched against
    the axis values (``"12"`` matches 12, ``"newreno-sbs"`` the string)."""
    check_metric(metric)
    paths = axis_paths(observations, axes)
    if axis not in paths:
        listed = ", ".join(paths) if paths else "none (a single run has no axes)"
        raise InvalidInputError(
            f"{axis!r} is not an axis of this sweep; its axes: {listed}", path="$.axis", kind="unknown_axis"
        )
    present = [o.values[axis] for o in observations if axis in (o.values or {})]
    declared = next((a.get("values") for a in axes or () if a.get("path") == axis), None)
    if isinstance(declared, list):
        present += declared
    for name, text in (("baseline", baseline), ("other", other)):
        if present and not any(matches(v, text) for v in present):
            known = ", ".join(sorted({str(v) for v in present}))
            raise InvalidInputError(
                f"{text!r} is not a value of axis {axis!r}; its values: {known}", path=f"$.{name}", kind="unknown_value"
            )
    if flow is not None:
        check_flow(observations, flow, "$.flow")
    rest = [p for p in paths if p != axis]
    groups: dict[tuple[Hashable, str], dict[str, Any]] = {}
    for obs in observations:
        if flow is not None and obs.flow != flow:
            continue
        value = (obs.values or {}).get(axis)
        side = "a" if matches(value, baseline) else "b" if matches(value, other) else None
        if side is None:
            continue
        key = (point_key(obs.values, leave_out=[axis]), obs.flow)
        entry = groups.setdefault(key, {"values": obs.values, "flow": obs.flow, "a": {}, "b": {}, "points": {}})
        entry[side][obs.replication] = metric_of(obs, metric)
        entry["points"][side] = obs.point
    flow_rank = {name: i for i, name in enumerate(flows_of(observations))}
    rows = []
    for entry in sorted(
        groups.values(), key=lambda e: (e["points"].get("a", e["points"].get("b", 0)), flow_rank[e["flow"]])
    ):
        reps = sorted(set(entry["a"]) | set(entry["b"]))
        pairs = [(entry["a"].get(r), entry["b"].get(r)) for r in reps]
        result = compare_pairs(pairs, higher_better=higher_is_better(metric), confidence=confidence)
        row: dict[str, Any] = {"point_a": entry["points"].get("a"), "point_b": entry["points"].get("b")}
        row.update({p: entry["values"].get(p) for p in rest})
        row.update(flow=entry["flow"], axis=axis, baseline=baseline, other=other, **result.as_dict())
        rows.append(row)
    return rows


# ---- regions ----------------------------------------------------------------------------------


def default_along(rows: Sequence[Mapping[str, Any]], candidates: Sequence[str]) -> str | None:
    """The axis to walk along for regions: the first candidate with more than one value."""
    for path in candidates:
        if len({value_key(r.get(path)) for r in rows}) > 1:
            return path
    return candidates[0] if candidates else None


def regions(
    rows: Sequence[Mapping[str, Any]],
    along: str | None,
    *,
    order: Mapping[Hashable, int] | None = None,
    group_by: Sequence[str] = (),
) -> list[dict[str, Any]]:
    """Contiguous runs of points along axis ``along`` with the same verdict, separately for each
    combination of ``group_by`` columns (the other axes, the flow): ``{"verdict", "from", "to",
    "points", "fixed": {column: value}}``, ``from``/``to`` the first and last axis value of the run.
    Without an axis (a single run) every row is its own region."""
    if along is None:
        return [
            {
                "verdict": r.get("verdict"),
                "from": None,
                "to": None,
                "points": 1,
                "fixed": {g: r.get(g) for g in group_by},
            }
            for r in rows
        ]
    groups: dict[tuple[Hashable, ...], list[Mapping[str, Any]]] = {}
    for r in rows:
        groups.setdefault(tuple(value_key(r.get(g)) for g in group_by), []).append(r)
    rank = order or {}

    def position(r: Mapping[str, Any]) -> tuple[int, float | str]:
        v = r.get(along)
        key = value_key(v)
        if key in rank:
            return (rank[key], 0.0)
        return (len(rank), float(v) if isinstance(v, int | float) and not isinstance(v, bool) else str(v))

    out: list[dict[str, Any]] = []
    for members in groups.values():
        members = sorted(members, key=position)
        current: dict[str, Any] | None = None
        for r in members:
            if current is not None and current["verdict"] == r.get("verdict"):
                current["to"] = r.get(along)
                current["points"] += 1
                continue
            current = {
                "verdict": r.get("verdict"),
                "from": r.get(along),
                "to": r.get(along),
                "points": 1,
                "fixed": {g: members[0].get(g) for g in group_by},
            }
            out.append(current)
    return out


def ratio_context(
    observations: Sequence[ObservationLike],
    rows: Sequence[Mapping[str, Any]],
    *,
    axis: str | None,
    along: str | None,
    axes: Sequence[Mapping[str, Any]] | None,
) -> tuple[str | None, list[dict[str, Any]]]:
    """The axis the regions walk along (``along``, else the first swept axis with several
    values other than ``axis``) and the regions."""
    paths = [p for p in axis_paths(observations, axes) if p != axis]
    if along is not None and along not in paths:
        listed = ", ".join(paths) if paths else "none"
        raise InvalidInputError(
            f"{along!r} is not an axis to walk along here; the candidates: {listed}",
            path="$.along",
            kind="unknown_axis",
        )
    along = along or default_along(rows, paths)
    group_by = [p for p in paths if p != along] + (["flow"] if axis is not None else [])
    order = axis_order(observations, along, axes) if along else None
    return along, regions(rows, along, order=order, group_by=group_by)
