"""Every query of the schedules feature. No commits here: the caller's boundary commits."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Sequence
from typing import Any, cast

from sqlalchemy import ColumnElement, func, select, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session

from services.db.models import Run, RunStatus, Schedule, Sweep


def schedule_by_id(session: Session, schedule_id: uuid.UUID, *, for_update: bool = False) -> Schedule | None:
    query = select(Schedule).where(Schedule.id == schedule_id)
    if for_update:
        query = query.with_for_update()
    return session.execute(query).scalar_one_or_none()


def page_of_schedules(
    session: Session, *, visible: ColumnElement[bool], owner_id: uuid.UUID | None, limit: int, offset: int
) -> tuple[Sequence[Schedule], int]:
    conditions = [visible]
    if owner_id is not None:
        conditions.append(Schedule.owner_id == owner_id)
    total = session.execute(select(func.count()).select_from(Schedule).where(*conditions)).scalar_one()
    rows = (
        session.execute(
            select(Schedule)
            .where(*conditions)
            .order_by(Schedule.created_at.desc(), Schedule.id)
            .limit(limit)
            .offset(offset)
        )
        .scalars()
        .all()
    )
    return rows, total


def next_due(session: Session, now: dt.datetime) -> Schedule | None:
    """The enabled schedule whose time came first, locked; one another transaction holds
    is skipped (it is being fired there), so concurrent passes share the work, never repeat it."""
    return session.execute(
        select(Schedule)
        .where(Schedule.enabled.is_(True), Schedule.next_fire_at <= now)
        .order_by(Schedule.next_fire_at, Schedule.id)
        .limit(1)
        .with_for_update(skip_locked=True)
    ).scalar_one_or_none()


def insert_builtin(session: Session, values: dict[str, Any]) -> None:
    """Adds a built-in schedule unless its key exists (two API processes starting together
    add it once)."""
    session.execute(insert(Schedule).values(**values).on_conflict_do_nothing(index_elements=[Schedule.builtin]))


def firing_count(session: Session, schedule_ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, int]:
    rows = session.execute(
        select(Sweep.schedule_id, func.count()).where(Sweep.schedule_id.in_(schedule_ids)).group_by(Sweep.schedule_id)
    ).all()
    return {cast(uuid.UUID, schedule_id): count for schedule_id, count in rows}  # in_() leaves out NULL


def firings_of(session: Session, schedule_id: uuid.UUID, *, limit: int, offset: int = 0) -> tuple[Sequence[Sweep], int]:
    """The schedule's sweeps, latest firing first."""
    condition = Sweep.schedule_id == schedule_id
    total = session.execute(select(func.count()).select_from(Sweep).where(condition)).scalar_one()
    rows = (
        session.execute(
            select(Sweep).where(condition).order_by(Sweep.fired_for.desc(), Sweep.id).limit(limit).offset(offset)
        )
        .scalars()
        .all()
    )
    return rows, total


def share_firings(session: Session, schedule_id: uuid.UUID, shared: bool) -> None:
    """The schedule's sweeps and their runs are seen as the schedule is: whoever reads its
    history may follow its links."""
    ids = select(Sweep.id).where(Sweep.schedule_id == schedule_id).scalar_subquery()
    session.execute(update(Sweep).where(Sweep.schedule_id == schedule_id).values(shared=shared))
    session.execute(update(Run).where(Run.sweep_id.in_(ids)).values(shared=shared))


RunTiming = tuple[uuid.UUID, int, int, int, int | None, float | None, str]
"""(sweep id, point, replication, seed, events, core wall s, core version)."""


def run_timings(session: Session, sweep_ids: Sequence[uuid.UUID]) -> list[RunTiming]:
    """The succeeded runs of these sweeps with what the core measured of itself (null for a
    run answered from a stored result: nothing was simulated)."""
    rows = session.execute(
        select(Run.sweep_id, Run.sweep_point, Run.replication, Run.seed, Run.events, Run.core_wall_s, Run.core_version)
        .where(Run.sweep_id.in_(sweep_ids), Run.status == RunStatus.succeeded)
        .order_by(Run.sweep_id, Run.sweep_point, Run.replication)
    ).all()
    return [tuple(r) for r in rows]  # type: ignore[misc]
