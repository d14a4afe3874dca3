"""From a sweep spec to its grid: points (axis values), their scenarios, and the seeds.

Kept apart from persistence so scripts can expand a sweep without a database.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
from collections.abc import Mapping, Sequence
from typing import Any

from services.presets import UnknownPreset, build_scenario
from services.scenarios import ScenarioInvalid, apply_overrides, validate_scenario
from services.scenarios.paths import PathError
from services.scenarios.errors import FieldError
from services.sweeps.spec import Combine, SweepSpec, value_key
from services.errors import InvalidInputError

AxisValues = Sequence[tuple[str, Sequence[Any]]]
"""(path, values) per axis, in the spec's order."""


def replication_seed(sweep_seed: int, replication: int) -> int:
    """The seed of replication `replication` at every point of a sweep seeded `sweep_seed`:
    the first 8 bytes of sha256("tcplab-sweep:{seed}:{replication}") as a u64.

    Hashing (rather than seed + r) keeps two sweeps seeded 1 and 2 from sharing all but one of
    their replications.
    """
    digest = hashlib.sha256(f"tcplab-sweep:{sweep_seed}:{replication}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def axis_values(spec: SweepSpec) -> list[tuple[str, list[Any]]]:
    return [(axis.path, axis.resolved()) for axis in spec.axes]


def grid_points(axes: AxisValues, combine: Combine) -> list[dict[str, Any]]:
    """The points, each {path: value}: every combination (product, the last axis varying
    fastest) or the i-th values together (zip; every axis must have as many values)."""
    paths = [path for path, _ in axes]
    if combine == Combine.zip:
        lengths = {len(values) for _, values in axes}
        if len(lengths) > 1:
            raise InvalidInputError(
                f"zipped axes need as many values each, got {[len(v) for _, v in axes]}",
                path="$.axes",
                kind="zip_lengths",
            )
        rows: Any = zip(*(values for _, values in axes), strict=True)
    else:
        rows = itertools.product(*(values for _, values in axes))
    return [dict(zip(paths, row, strict=True)) for row in rows]


def point_scenario(spec: SweepSpec, values: Mapping[str, Any]) -> dict[str, Any]:
    """The base scenario with the point's axis values set (not yet validated)."""
    if spec.preset is not None:
        try:
            return build_scenario(spec.preset, {**(spec.overrides or {}), **values})
        except UnknownPreset as e:
            raise InvalidInputError(str(e), path="$.preset", kind="unknown_preset") from None
    assert spec.scenario is not None
    base = spec.scenario.model_dump(mode="json", exclude_none=True)
    try:
        return apply_overrides(base, values)
    except PathError as e:
        raise ScenarioInvalid([FieldError(path=_axis_path(spec, e.path), reason=e.reason, source="overrides", kind="axis")]) from None


def _axis_path(spec: SweepSpec, path: str) -> str:
    for i, axis in enumerate(spec.axes):
        if axis.path == path:
            return f"$.axes[{i}].path"
    return path


@dataclasses.dataclass(frozen=True)
class PlannedPoint:
    values: dict[str, Any]
    canonical: dict[str, Any]
    """The validated scenario at this point (seed not yet set per replication)."""
    flow_groups: list[dict[str, Any]]


def plan_point(spec: SweepSpec, values: Mapping[str, Any]) -> PlannedPoint:
    """Builds and validates one point. A refused point's errors say at which axis values."""
    try:
        _, canonical = validate_scenario(point_scenario(spec, values))
    except ScenarioInvalid as e:
        where = ", ".join(f"{p} = {value_key(v)}" for p, v in values.items())
        raise ScenarioInvalid(
            [dataclasses.replace(err, reason=f"at the point {where}: {err.reason}") for err in e.errors]
        ) from None
    return PlannedPoint(dict(values), canonical, flow_groups(canonical))


def flow_groups(canonical: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The scenario's flow entries as groups: the core expands an entry with `count` n into n
    consecutive flows, so positions map back to entries by these counts."""
    return [
        {
            "name": flow.get("name") or f"flow{i}",
            "count": int(flow.get("count", 1)),
            "type": flow.get("type", "tcp"),
            "variant": flow.get("variant") if flow.get("type", "tcp") == "tcp" else None,
            "app": (flow.get("app") or {}).get("type"),
        }
        for i, flow in enumerate(canonical["flows"])
    ]


def with_seed(canonical: Mapping[str, Any], seed: int) -> dict[str, Any]:
    return {**canonical, "seed": seed}
