"""Finding runs and sweeps again: by name, tags, preset, a parameter's value, archived or not.

A *parameter* is a scenario path and a value, `PATH=VALUE`: `flows[0].variant=cubic`,
`duration_s=20`, `flows[*].loss.m=8` (any flow). The path is the overrides' and axes' syntax
(services/scenarios/paths.py); the value is JSON when it parses as a scalar (`20`, `true`,
`"20"` for the string), else the text as given. A run matches when its scenario has that
value there (a sweep run: its point's scenario); a sweep, when one of its points does. Each
becomes a jsonpath predicate (`$."flows"[0]."variant" == "cubic"`), which the GIN index on a
run's scenario (`ix_runs_scenario_path`, jsonb_path_ops) answers for standalone runs.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import ColumnElement, and_, cast, exists, not_, or_, select, union_all
from sqlalchemy.dialects.postgresql import JSONPATH

from services.db.models import Run, Sweep, SweepPoint
from services.errors import InvalidInputError
from services.experiments.tags import check_tags
from services.scenarios.paths import WILDCARD, PathError, parse_path

MAX_PARAMS = 8
MAX_NAME = 200


class SweepStatus(enum.StrEnum):
    """A sweep's status as `services.sweeps.status_of` tells it."""

    queued = "queued"
    running = "running"
    done = "done"
    cancelled = "cancelled"


class Archived(enum.StrEnum):
    """Which to list: the active ones (default), the archived ones, or both."""

    false = "false"
    true = "true"
    all = "all"


@dataclass(frozen=True)
class Param:
    path: str
    value: str | int | float | bool | None

    def jsonpath(self) -> str:
        """The jsonpath predicate `$.<path> == <value>` (keys quoted: any key is safe)."""
        steps = []
        for step in parse_path(self.path):
            if step is WILDCARD:
                steps.append("[*]")
            elif isinstance(step, int):
                steps.append(f"[{step}]")
            else:
                steps.append("." + json.dumps(step))
        return "$" + "".join(steps) + " == " + json.dumps(self.value)


@dataclass(frozen=True)
class Search:
    """What a list is filtered by beyond its own filters; the default hides archived ones."""

    name: str | None = None
    tags: Sequence[str] = ()
    params: Sequence[Param] = ()
    archived: Archived = Archived.false


def parse_param(text: str, index: int = 0) -> Param:
    """`PATH=VALUE` as a Param; InvalidInputError naming `$.param[index]` otherwise."""
    where = f"$.param[{index}]"
    depth, cut = 0, -1
    for i, ch in enumerate(text):
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        elif ch == "=" and depth == 0:
            cut = i
            break
    if cut <= 0:
        raise InvalidInputError(
            f"{text!r}: a parameter is PATH=VALUE, e.g. flows[0].variant=cubic", path=where, kind="param_syntax"
        )
    path, raw = text[:cut], text[cut + 1 :]
    try:
        parse_path(path)
    except PathError as e:
        raise InvalidInputError(f"{text!r}: {e}", path=where, kind="param_path") from None
    try:
        value: Any = json.loads(raw)
    except ValueError:
        value = raw
    if isinstance(value, dict | list):
        raise InvalidInputError(
            f"{text!r}: the value must be a string, number, boolean or null", path=where, kind="param_value"
        )
    return Param(path, value)


def make_search(
    *, name: str | None, tags: Sequence[str] | None, params: Sequence[str] | None, archived: Archived
) -> Search:
    """A Search from query parameters, each checked (422 naming the field and the reason)."""
    if name is not None and len(name) > MAX_NAME:
        raise InvalidInputError(f"a name to search is at most {MAX_NAME} characters", path="$.name", kind="too_long")
    params = list(params or [])
    if len(params) > MAX_PARAMS:
        raise InvalidInputError(f"at most {MAX_PARAMS} parameters at once", path="$.param", kind="too_many")
    return Search(
        name=name or None,
        tags=tuple(check_tags(list(tags or []), path="$.tag")),
        params=tuple(parse_param(p, i) for i, p in enumerate(params)),
        archived=archived,
    )


def _like(text: str) -> str:
    """A substring pattern for ILIKE, `%`, `_` and `\\` taken literally."""
    return "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def _jsonpath(param: Param) -> ColumnElement[Any]:
    return cast(param.jsonpath(), JSONPATH)


_ARCHIVED_SWEEPS = select(Sweep.id).where(Sweep.archived_at.is_not(None))


def run_conditions(search: Search) -> list[ColumnElement[bool]]:
    """WHERE conditions on Run. A sweep's run is archived with its sweep and named by it."""
    conditions: list[ColumnElement[bool]] = []
    # sweep_id IS NOT NULL first: `NULL IN (...)` is NULL, and NOT NULL would hide every standalone run.
    archived = or_(Run.archived_at.is_not(None), and_(Run.sweep_id.is_not(None), Run.sweep_id.in_(_ARCHIVED_SWEEPS)))
    if search.archived == Archived.false:
        conditions.append(not_(archived))
    elif search.archived == Archived.true:
        conditions.append(archived)
    if search.name:
        pattern = _like(search.name)
        conditions.append(
            or_(
                Run.scenario["name"].astext.ilike(pattern),
                Run.sweep_id.in_(select(Sweep.id).where(Sweep.name.ilike(pattern))),
            )
        )
    if search.tags:
        conditions.append(Run.tags.contains(list(search.tags)))
    for param in search.params:
        conditions.append(Run.id.in_(_runs_with(param)))
    return conditions


def _runs_with(param: Param) -> Any:
    """The ids of the runs whose scenario has the parameter's value: standalone runs through
    `ix_runs_scenario_path` (a bitmap scan of the GIN index), sweep runs through the points
    that have it — a union, not an OR in the list's WHERE, which no index could answer."""
    standalone = select(Run.id).where(Run.scenario.op("@@")(_jsonpath(param)))
    of_points = (
        select(Run.id)
        .join(SweepPoint, and_(SweepPoint.sweep_id == Run.sweep_id, SweepPoint.index == Run.sweep_point))
        .where(SweepPoint.scenario.op("@@")(_jsonpath(param)))
    )
    return union_all(standalone, of_points)


def _has_runs(*statuses: str) -> ColumnElement[bool]:
    """The sweep has a run in one of `statuses` (found in `ix_runs_sweep_id_sweep_point_status`)."""
    return exists(select(Run.id).where(Run.sweep_id == Sweep.id, Run.status.in_(statuses)))


def sweep_status_condition(status: SweepStatus) -> ColumnElement[bool]:
    """`status_of` in SQL: cancelled; done (nothing queued or running); queued (nothing
    started or finished); running otherwise."""
    if status == SweepStatus.cancelled:
        return Sweep.cancelled_at.is_not(None)
    active = Sweep.cancelled_at.is_(None)
    finished = _has_runs("succeeded", "failed", "cancelled")
    if status == SweepStatus.done:
        return and_(active, not_(_has_runs("queued", "running")))
    if status == SweepStatus.queued:
        return and_(active, _has_runs("queued"), not_(_has_runs("running")), not_(finished))
    return and_(active, or_(_has_runs("running"), and_(_has_runs("queued"), finished)))


def sweep_conditions(search: Search) -> list[ColumnElement[bool]]:
    """WHERE conditions on Sweep."""
    conditions: list[ColumnElement[bool]] = []
    if search.archived == Archived.false:
        conditions.append(Sweep.archived_at.is_(None))
    elif search.archived == Archived.true:
        conditions.append(Sweep.archived_at.is_not(None))
    if search.name:
        conditions.append(Sweep.name.ilike(_like(search.name)))
    if search.tags:
        conditions.append(Sweep.tags.contains(list(search.tags)))
    for param in search.params:
        conditions.append(
            exists(
                select(SweepPoint.index).where(
                    SweepPoint.sweep_id == Sweep.id, SweepPoint.scenario.op("@@")(_jsonpath(param))
                )
            )
        )
    return conditions
