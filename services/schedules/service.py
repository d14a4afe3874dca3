"""The schedules domain: create, read, change, delete, and fire now. Services never commit:
the API request does (the beat task's passes are in `firing.py`)."""

from __future__ import annotations

import dataclasses
import datetime as dt
import uuid
from collections.abc import Sequence
from typing import Any

from sqlalchemy.orm import Session

from services import admission
from services.db.models import Schedule, Sweep
from services.errors import ConflictError, InvalidInputError, NotFoundError
from services.runs.service import check_scenario_size
from services.scenarios import ScenarioInvalid
from services.schedules import repository as repo
from services.schedules.firing import fire_into
from services.schedules.history import BASELINE_FIRINGS, axis_paths, history_rows
from services.schedules.spec import ScheduleSpec, ScheduleUpdate, next_fire, stored_template
from services.settings import Settings
from services.sweeps import Created, SweepSpec, grid_points, plan_point
from services.sweeps.grid import axis_values
from services.users import Identity, check_modifiable, identity_of, visible_to
from services.users.access import can_see


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def check_template(template: SweepSpec, owner: Identity, max_queued: int | None = None) -> None:
    """Refuses now, with its path under `$.template`, a template that can never fire rather
    than at 3 a.m.: first what counting tells (a firing needs room for every one of its runs,
    `check_fits`), then every point built as a firing would (`plan_point`)."""
    try:
        values = grid_points(axis_values(template), template.combine)
        check_fits(len(values) * template.replications, owner, max_queued)
        for v in values:
            check_scenario_size(plan_point(template, v).canonical, owner, path="$.axes")
    except InvalidInputError as e:
        raise InvalidInputError(e.reason, path="$.template" + e.path.removeprefix("$"), kind=e.kind) from None
    except ScenarioInvalid as e:
        raise ScenarioInvalid([_under_template(err, template) for err in e.errors]) from None


def check_fits(runs: int, owner: Identity, max_queued: int | None) -> None:
    """InvalidInputError (422, `$.axes`) when a firing of `runs` runs could not be admitted
    even with nothing else queued: past the per-sweep cap, the owner's quota of queued runs or
    the server's (a firing must have room for all of them: services/schedules/firing.py)."""
    admission.check_sweep_size(runs, what="each firing")
    limits = [(owner.quotas.max_queued_runs, f"{owner.name}'s quota of {owner.quotas.max_queued_runs} queued runs")]
    if max_queued is not None:
        limits.append((max_queued, f"the server's limit of {max_queued} queued runs (TCPLAB_MAX_QUEUED_RUNS)"))
    for limit, what in limits:
        if runs > limit:
            raise InvalidInputError(
                f"each firing needs room for {runs} queued runs, more than {what}: it could never fire "
                "(fewer axis values or replications, or ask an admin to raise max_queued_runs)",
                path="$.axes",
                kind="too_many_runs",
            )


def _under_template(error: Any, template: SweepSpec) -> Any:
    """A point's scenario error as a path of the request: under `$.template.scenario` for a
    scenario template; a preset's scenario is not in the request, so `$.template` with the
    scenario's path in the reason."""
    if error.path.startswith("$.axes"):
        return dataclasses.replace(error, path="$.template" + error.path.removeprefix("$"))
    if template.scenario is not None:
        return dataclasses.replace(error, path="$.template.scenario" + error.path.removeprefix("$"))
    return dataclasses.replace(
        error, path="$.template", reason=f"in preset {template.preset}'s scenario at {error.path}: {error.reason}"
    )


def create(
    session: Session,
    spec: ScheduleSpec,
    *,
    owner: Identity,
    max_queued: int | None = None,
    now: dt.datetime | None = None,
) -> Schedule:
    """Stores `owner`'s schedule; its first firing is the cron's next time after `now`.
    `max_queued`: the server's TCPLAB_MAX_QUEUED_RUNS, which a firing must fit in too."""
    check_template(spec.template, owner, max_queued)
    now = now or _now()
    schedule = Schedule(
        name=spec.name,
        owner_id=owner.id,
        shared=spec.shared,
        cron=spec.cron,
        template=stored_template(spec.template),
        enabled=spec.enabled,
        next_fire_at=next_fire(spec.cron, now) if spec.enabled else None,
        created_at=now,
        updated_at=now,
    )
    session.add(schedule)
    session.flush()
    return schedule


def get_schedule(
    session: Session, schedule_id: uuid.UUID, viewer: Identity | None, *, for_update: bool = False
) -> Schedule:
    """The schedule if `viewer` may see it (None: the system itself); else NotFoundError, as
    if it did not exist."""
    schedule = repo.schedule_by_id(session, schedule_id, for_update=for_update)
    if schedule is None or (viewer is not None and not can_see(schedule, viewer)):
        raise NotFoundError("schedule", schedule_id)
    return schedule


def list_schedules(
    session: Session, viewer: Identity, *, mine_only: bool = False, limit: int, offset: int
) -> tuple[Sequence[Schedule], int]:
    """The schedules `viewer` sees, newest first."""
    return repo.page_of_schedules(
        session,
        visible=visible_to(Schedule, viewer),
        owner_id=viewer.id if mine_only else None,
        limit=limit,
        offset=offset,
    )


def firing_counts(session: Session, schedules: Sequence[Schedule]) -> dict[uuid.UUID, int]:
    return repo.firing_count(session, [s.id for s in schedules])


def update(
    session: Session,
    schedule_id: uuid.UUID,
    changes: ScheduleUpdate,
    viewer: Identity,
    settings: Settings,
    *,
    now: dt.datetime | None = None,
) -> Schedule:
    """Owner or admin. A new cron line or enabling computes the next firing from `now`;
    disabling clears it. Read at the next beat tick: no restart. A template, or enabling a
    schedule whose template has grown past its owner's limits since, is checked as at create."""
    schedule = get_schedule(session, schedule_id, viewer, for_update=True)
    check_modifiable(schedule, viewer, "schedule", "change")
    now = now or _now()
    given = changes.changes()
    owner = _owner_identity(schedule, viewer, settings)
    if "template" in given:
        check_template(given["template"], owner, settings.max_queued_runs)
        schedule.template = stored_template(given["template"])
    elif given.get("enabled"):
        _check_stored_fits(schedule, owner, settings.max_queued_runs)
    if "name" in given:
        schedule.name = given["name"]
    if "shared" in given and given["shared"] != schedule.shared:
        schedule.shared = given["shared"]
        repo.share_firings(session, schedule.id, schedule.shared)
    cron, enabled = given.get("cron", schedule.cron), given.get("enabled", schedule.enabled)
    timing_changed = (cron, enabled) != (schedule.cron, schedule.enabled)
    schedule.cron, schedule.enabled = cron, enabled
    if not schedule.enabled:
        schedule.next_fire_at = None
    elif timing_changed or schedule.next_fire_at is None:
        schedule.next_fire_at = next_fire(schedule.cron, now)
    schedule.updated_at = now
    session.flush()
    return schedule


def _check_stored_fits(schedule: Schedule, owner: Identity, max_queued: int | None) -> None:
    """`check_fits` on the stored template (one that no longer validates is the firing's to
    report, as before)."""
    try:
        template = SweepSpec.model_validate(schedule.template)
    except ValueError:
        return
    try:
        check_fits(len(grid_points(axis_values(template), template.combine)) * template.replications, owner, max_queued)
    except InvalidInputError as e:
        raise InvalidInputError(e.reason, path="$.enabled", kind=e.kind) from None


def _owner_identity(schedule: Schedule, viewer: Identity, settings: Settings) -> Identity:
    """Whom the firings run as: the owner (an admin editing or firing another's schedule
    makes runs of the owner, within the owner's quotas); the admin when the owner is gone."""
    if viewer.owns(schedule.owner_id) or schedule.owner is None:
        return viewer
    return identity_of(schedule.owner, settings)


def delete(session: Session, schedule_id: uuid.UUID, viewer: Identity) -> None:
    """Owner or admin. The sweeps it fired stay (their `schedule_id` becomes null)."""
    schedule = get_schedule(session, schedule_id, viewer, for_update=True)
    check_modifiable(schedule, viewer, "schedule", "delete")
    if schedule.builtin is not None:
        raise ConflictError(
            f"schedule {schedule_id} is the built-in {schedule.builtin!r}, made again at every start: "
            "disable it instead"
        )
    session.delete(schedule)
    session.flush()


def fire_now(
    session: Session, schedule_id: uuid.UUID, viewer: Identity, settings: Settings, *, now: dt.datetime | None = None
) -> tuple[Schedule, Sweep, Created]:
    """Owner or admin: a firing at `now`, enabled or not; the cron's own firings go on as
    before. A template that no longer builds is a 422, a full queue a 429, as for a sweep."""
    schedule = get_schedule(session, schedule_id, viewer, for_update=True)
    check_modifiable(schedule, viewer, "schedule", "fire")
    now = now or _now()
    sweep, created = fire_into(session, schedule, now, settings, owner=_owner_identity(schedule, viewer, settings))
    schedule.last_fired_at = now
    schedule.last_error = None
    return schedule, sweep, created


def firings(
    session: Session, schedule_id: uuid.UUID, viewer: Identity, *, limit: int, offset: int
) -> tuple[Sequence[Sweep], int]:
    """The sweeps the schedule fired, latest first."""
    get_schedule(session, schedule_id, viewer)
    return repo.firings_of(session, schedule_id, limit=limit, offset=offset)


def history(
    session: Session,
    schedule_id: uuid.UUID,
    viewer: Identity,
    *,
    metrics: Sequence[str],
    flow: str | None = None,
    limit: int = 100,
) -> tuple[Schedule, list[str], list[dict[str, Any]]]:
    """The schedule, the axis paths its firings used, and the history rows of its last
    `limit` firings (docs/schedules.md; the firings before them serve as baseline)."""
    schedule = get_schedule(session, schedule_id, viewer)
    latest, _ = repo.firings_of(session, schedule.id, limit=limit + BASELINE_FIRINGS)
    ordered = list(reversed(latest))
    rows = history_rows(session, ordered, metrics=metrics, flow=flow, show_last=limit)
    return schedule, axis_paths(ordered), rows


__all__ = [
    "check_fits",
    "check_template",
    "create",
    "delete",
    "fire_now",
    "firing_counts",
    "firings",
    "get_schedule",
    "history",
    "list_schedules",
    "update",
]
