"""From a sweep spec to its grid: points (axis values), their scenarios, and the seeds.

Kept apart from persistence so scripts can expand a sweep without a database.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import itertools
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

from services.errors import InvalidInputError
from services.presets import UnknownPreset, build_scenario, get_preset
from services.scenarios import ScenarioInvalid, apply_overrides, validate_scenario
from services.scenarios.errors import FieldError
from services.scenarios.paths import WILDCARD, PathError, parse_path
from services.sweeps.spec import Combine, SweepSpec, value_key
from services.traces.builtin import builtin_trace_file
from services.traces.refs import TraceFiles

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
        raise ScenarioInvalid(
            [FieldError(path=_axis_path(spec, e.path), reason=e.reason, source="overrides", kind="axis")]
        ) from None


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


def plan_point(spec: SweepSpec, values: Mapping[str, Any], traces: TraceFiles = builtin_trace_file) -> PlannedPoint:
    """Builds and validates one point (`traces`: the trace names it may follow). A refused
    point's errors say at which axis values."""
    return _planned(values, lambda: point_scenario(spec, values), traces)


def plan_points(
    spec: SweepSpec, points: Iterable[Mapping[str, Any]], traces: TraceFiles = builtin_trace_file
) -> Iterator[PlannedPoint]:
    """`plan_point(spec, v)` for each of `points`, in order (lazily), with the base built once.

    The base scenario (the preset with its overrides, or the spec's scenario) is the same at
    every point, so it is built once and each point sets only its axis values on a copy of the
    containers along their paths (`_setter`), instead of building the preset again and copying
    the whole document. Where that would not give what `point_scenario` gives — an axis that
    is a preset parameter, an override key, or the duration or warm-up (which the preset's
    warm-up fraction follows) — or where a path does not resolve, the point is planned the
    usual way, which also raises its usual error."""
    fast = _point_builder(spec)
    for values in points:
        if fast is not None:
            try:
                scenario = fast(values)
            except (KeyError, IndexError, TypeError, ValueError):
                scenario = None
            if scenario is not None:
                # mypy cannot type a lambda with a default argument; it is a Callable[[], dict[str, Any]].
                yield _planned(values, lambda built=scenario: built, traces)  # type: ignore[misc]
                continue
        yield plan_point(spec, values, traces)


def _planned(
    values: Mapping[str, Any], scenario: Callable[[], dict[str, Any]], traces: TraceFiles = builtin_trace_file
) -> PlannedPoint:
    """The point validated; a refused point's errors (building it included) say at which axis values."""
    try:
        _, canonical = validate_scenario(scenario(), traces)
    except ScenarioInvalid as e:
        where = ", ".join(f"{p} = {value_key(v)}" for p, v in values.items())
        raise ScenarioInvalid(
            [dataclasses.replace(err, reason=f"at the point {where}: {err.reason}") for err in e.errors]
        ) from None
    return PlannedPoint(dict(values), canonical, flow_groups(canonical))


def _point_builder(spec: SweepSpec) -> Callable[[Mapping[str, Any]], dict[str, Any] | None] | None:
    """A function from a point's axis values to `point_scenario(spec, values)` (None where it
    cannot tell), or None when the spec's axes need `point_scenario` itself."""
    paths = [a.path for a in spec.axes]
    try:
        steps = {path: parse_path(path) for path in paths}
    except PathError:
        return None
    if any(s[0] in ("duration_s", "warmup_s") or not s for s in steps.values()):
        return None
    if spec.preset is not None:
        try:
            preset = get_preset(spec.preset)
        except UnknownPreset:
            return None
        overrides = spec.overrides or {}
        if any(path in preset.expanders or path in overrides for path in paths):
            return None
        try:
            base = build_scenario(spec.preset, overrides)
        except (ScenarioInvalid, ValueError, TypeError):
            return None
    else:
        assert spec.scenario is not None
        base = spec.scenario.model_dump(mode="json", exclude_none=True)

    def build(values: Mapping[str, Any]) -> dict[str, Any] | None:
        if list(values) != paths:
            return None
        out = dict(base)
        for path, value in values.items():
            if not _set_copying(out, base, steps[path], value):
                return None
        return out

    return build


def _set_copying(out: dict[str, Any], base: dict[str, Any], steps: tuple[Any, ...], value: Any) -> bool:
    """Sets `value` at `steps` in `out` — a shallow copy of `base` — copying each container on
    the way that is still `base`'s (so `base` never changes), as `apply_overrides` would on a
    deep copy; False where the path does not resolve as `apply_overrides` requires (an
    intermediate step missing, a wildcard on a non-list, an index out of range)."""
    shared_ids = _ids_of(base, steps)
    copies: dict[int, Any] = {}  # base's container -> its copy (one copy each, as deepcopy would)

    def own(container: Any) -> Any:
        if id(container) not in shared_ids:
            return container
        if id(container) not in copies:
            copies[id(container)] = dict(container) if isinstance(container, dict) else list(container)
        return copies[id(container)]

    def walk(node: Any, depth: int) -> bool:
        step = steps[depth]
        last = depth == len(steps) - 1
        if step is WILDCARD:
            if not isinstance(node, list):
                return False
            keys: list[Any] = list(range(len(node)))
        elif isinstance(step, int):
            if not isinstance(node, list) or not -len(node) <= step < len(node) or step < 0:
                return False
            keys = [step]
        else:
            if not isinstance(node, dict) or (not last and step not in node):
                return False
            keys = [step]
        for key in keys:
            if last:
                node[key] = copy.deepcopy(value)
                continue
            child = node[key]
            if not isinstance(child, dict | list):
                return False
            child = own(child)
            node[key] = child
            if not walk(child, depth + 1):
                return False
        return True

    return walk(out, 0)


def _ids_of(base: Any, steps: tuple[Any, ...]) -> set[int]:
    """The ids of `base`'s containers that `steps` may pass through (copied before changing)."""
    found: set[int] = set()
    level = [base]
    for step in steps[:-1]:
        nxt = []
        for node in level:
            if isinstance(node, list):
                children = (
                    node
                    if step is WILDCARD
                    else [node[step]]
                    if isinstance(step, int) and 0 <= step < len(node)
                    else []
                )
            elif isinstance(node, dict):
                children = [node[step]] if isinstance(step, str) and step in node else []
            else:
                children = []
            for child in children:
                if isinstance(child, dict | list):
                    found.add(id(child))
                    nxt.append(child)
        level = nxt
    return found


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
