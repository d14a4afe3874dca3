"""Firing schedules: the beat task's pass over the schedules whose time has come, and the
one firing both it and "fire now" make.

Exactly once per firing, with any number of beat processes: a pass locks one due schedule
(`FOR UPDATE SKIP LOCKED`: another pass skips it rather than waits), creates its sweep for
`fired_for` = the schedule's `next_fire_at`, moves `next_fire_at` past now, and commits —
one transaction per schedule, so a schedule that fails does not undo the others. The unique
index on (sweeps.schedule_id, sweeps.fired_for) is the backstop: a second sweep for the same
firing cannot be stored.

A schedule that was not fired for a while (beat down for days) fires once, for its oldest
missed time, and then waits for the cron's next time after now: missed slots are not
replayed one by one.
"""

from __future__ import annotations

import datetime as dt
import logging
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from croniter import CroniterError
from pydantic import ValidationError
from sqlalchemy.exc import IntegrityError, InterfaceError, OperationalError
from sqlalchemy.orm import Session, sessionmaker

import tcpsim
from services import sweeps
from services.db.models import Schedule, Sweep
from services.db.session import run_after_commit, session_scope
from services.errors import DomainError, InvalidInputError
from services.scenarios import ScenarioInvalid
from services.schedules import repository as repo
from services.schedules.spec import next_fire
from services.settings import Settings
from services.sweeps import Created, SweepSpec
from services.users import Identity, identity_of

log = logging.getLogger("tcplab.schedules")

FIRING_INDEX = "uq_sweeps_schedule_firing"
MAX_PER_PASS = 1000
"""Schedules one pass fires at most (the next tick goes on)."""


@dataclass(frozen=True)
class Firing:
    """What one firing did: the sweep it created and the runs to enqueue once committed, or
    why it created none (`error`, also stored as the schedule's `last_error`)."""

    schedule_id: uuid.UUID
    fired_for: dt.datetime
    sweep_id: uuid.UUID | None = None
    to_enqueue: list[uuid.UUID] = field(default_factory=list)
    error: str | None = None
    duplicate: bool = False
    """The firing's sweep existed already (another process made it)."""


def _sweep_spec(schedule: Schedule, fired_for: dt.datetime) -> SweepSpec:
    """The firing's sweep: the template, named after the schedule and the firing, shared as
    the schedule is. A stored template the current SweepSpec refuses is an InvalidInputError."""
    name = f"{schedule.name[:170]} · {fired_for.astimezone(dt.UTC):%Y-%m-%d %H:%M} UTC"
    try:
        return SweepSpec.model_validate({**schedule.template, "name": name, "shared": schedule.shared})
    except ValidationError as e:
        first = e.errors()[0]
        path = "$.template" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in first["loc"])
        raise InvalidInputError(
            f"the template no longer validates: {first['msg']}", path=path, kind="template"
        ) from None


def fire_into(
    session: Session, schedule: Schedule, fired_for: dt.datetime, settings: Settings, *, owner: Identity
) -> tuple[Sweep, Created]:
    """Creates the sweep of one firing, as `owner`, linked to the schedule, inside a
    savepoint (a refusal leaves the caller's transaction usable). Raises what
    `sweeps.create` raises, and IntegrityError when this firing's sweep exists already.

    A firing must have room in the queues for every run of its template, stored results or
    not: what counting alone decides, before anything is built, so a firing bound to fail
    (a template past its owner's quota, a full queue) is refused in milliseconds."""
    spec = _sweep_spec(schedule, fired_for)
    with session.begin_nested():
        sweep, created = sweeps.create(
            session, spec, owner=owner, max_queued=settings.max_queued_runs, room_for_every_run=True
        )
        sweep.schedule_id = schedule.id
        sweep.fired_for = fired_for
        session.flush()
    return sweep, created


def describe(error: BaseException) -> str:
    """An error as the one line stored in `last_error`."""
    if isinstance(error, InvalidInputError):
        return f"{error.path}: {error.reason}"
    if isinstance(error, tcpsim.ScenarioError):
        return f"{error.path}: {error}"
    return str(error)


def fire_one(session: Session, now: dt.datetime, settings: Settings) -> Firing | None:
    """Fires the due schedule whose time came first (None when none is due), within the
    caller's transaction: the caller commits, then enqueues `to_enqueue`."""
    schedule = repo.next_due(session, now)
    return None if schedule is None else fire_schedule(session, schedule, now, settings)


def fire_schedule(session: Session, schedule: Schedule, now: dt.datetime, settings: Settings) -> Firing:
    """One due (and locked) schedule: its sweep for `next_fire_at`, then `next_fire_at`
    moved to the cron's first time after `now`."""
    fired_for = schedule.next_fire_at
    assert fired_for is not None
    schedule.last_fired_at = now
    try:
        schedule.next_fire_at = next_fire(schedule.cron, now)
    except (ValueError, CroniterError) as e:  # a stored line this croniter no longer reads
        schedule.enabled, schedule.next_fire_at = False, None
        schedule.last_error = f"$.cron: {e}; the schedule is disabled until its cron line is changed"
        return Firing(schedule.id, fired_for, error=schedule.last_error)
    owner = schedule.owner
    if owner is None or owner.disabled_at is not None:
        error = f"the owner of schedule {schedule.id} is {'gone' if owner is None else 'disabled'}: nothing fired"
        return _failed(schedule, fired_for, error)
    try:
        sweep, created = fire_into(session, schedule, fired_for, settings, owner=identity_of(owner, settings))
    except IntegrityError as e:
        if getattr(getattr(e.orig, "diag", None), "constraint_name", None) != FIRING_INDEX:
            raise
        log.info("schedule %s was already fired for %s", schedule.id, fired_for.isoformat())
        return Firing(schedule.id, fired_for, duplicate=True)
    except (DomainError, ScenarioInvalid, tcpsim.ScenarioError) as e:
        # A template that no longer builds (a preset removed), the owner's quota or a full
        # queue: recorded, and the schedule waits for its next time.
        return _failed(schedule, fired_for, describe(e))
    schedule.last_error = None
    log.info(
        "schedule %s (%s) fired for %s: sweep %s, %d runs (%d from stored results)",
        schedule.id,
        schedule.name,
        fired_for.isoformat(),
        sweep.id,
        created.runs,
        created.cached,
    )
    return Firing(schedule.id, fired_for, sweep_id=sweep.id, to_enqueue=list(created.to_enqueue))


def _failed(schedule: Schedule, fired_for: dt.datetime, error: str) -> Firing:
    schedule.last_error = error
    log.warning(
        "schedule %s (%s) fired for %s created no sweep: %s", schedule.id, schedule.name, fired_for.isoformat(), error
    )
    return Firing(schedule.id, fired_for, error=error)


def fire_due(
    session_factory: sessionmaker[Session],
    now: dt.datetime,
    settings: Settings,
    *,
    enqueue: Callable[[Sequence[uuid.UUID]], object] | None = None,
    limit: int = MAX_PER_PASS,
) -> list[Firing]:
    """Fires every enabled schedule due at `now`, each in a transaction of its own (this is
    the beat task's unit of work); `enqueue` gets each firing's runs once it has committed.

    A database that does not answer ends the pass (the next tick tries again). Anything else
    that goes wrong with one schedule is recorded on it and the pass goes on, so one broken
    schedule cannot stop the others."""
    fired: list[Firing] = []
    while len(fired) < limit:
        picked: tuple[uuid.UUID, dt.datetime] | None = None
        try:
            with session_scope(session_factory) as session:
                schedule = repo.next_due(session, now)
                if schedule is None:
                    break
                assert schedule.next_fire_at is not None
                picked = (schedule.id, schedule.next_fire_at)
                firing = fire_schedule(session, schedule, now, settings)
                if firing.to_enqueue and enqueue is not None:
                    # mypy cannot type a lambda with a default argument; it is a Callable[[], object].
                    run_after_commit(session, lambda ids=list(firing.to_enqueue): enqueue(ids))  # type: ignore[misc]
        except (OperationalError, InterfaceError):
            raise
        except Exception as e:
            if picked is None:
                raise
            log.exception("schedule %s failed to fire for %s", picked[0], picked[1].isoformat())
            firing = _record_crash(session_factory, *picked, now, e)
        fired.append(firing)
    return fired


def _record_crash(
    session_factory: sessionmaker[Session],
    schedule_id: uuid.UUID,
    fired_for: dt.datetime,
    now: dt.datetime,
    error: Exception,
) -> Firing:
    """After an unexpected failure (rolled back): the error on the schedule, and its next time
    moved on, so the pass does not pick it again."""
    message = f"internal error: {type(error).__name__}: {error}"[:2000]
    with session_scope(session_factory) as session:
        schedule = repo.schedule_by_id(session, schedule_id, for_update=True)
        if schedule is not None and schedule.next_fire_at == fired_for:
            schedule.last_fired_at = now
            schedule.last_error = message
            try:
                schedule.next_fire_at = next_fire(schedule.cron, now)
            except (ValueError, CroniterError):
                schedule.enabled, schedule.next_fire_at = False, None
    return Firing(schedule_id, fired_for, error=message)
