"""Every query of the sweeps feature. No commits here: the caller's boundary commits."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Sequence
from typing import Any

from psycopg.errors import DeadlockDetected
from sqlalchemy import ColumnElement, cast, func, literal, select, text, update
from sqlalchemy.dialects.postgresql import JSONPATH
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session

from services.db.models import FLOW_METRICS, FlowResult, Result, Run, RunStatus, Sweep, SweepPoint
from services.runs.dispatch import finish_cancels, lock_dispatcher

STATUSES = tuple(s.value for s in RunStatus)


def sweep_by_id(session: Session, sweep_id: uuid.UUID, *, for_update: bool = False) -> Sweep | None:
    """The sweep; with `for_update`, locked FOR NO KEY UPDATE (a cancel, an extension, a
    re-share serialise on it) — not FOR UPDATE, which would also block the foreign-key checks
    of rows naming the sweep: a worker storing a batch's aggregates waited for a cancel that
    waited for the batch's runs (a deadlock)."""
    query = select(Sweep).where(Sweep.id == sweep_id)
    if for_update:
        query = query.with_for_update(key_share=True)
    return session.execute(query).scalar_one_or_none()


def page_of_sweeps(
    session: Session,
    *,
    visible: ColumnElement[bool],
    owner_id: uuid.UUID | None,
    preset: str | None,
    extra: Sequence[ColumnElement[bool]] = (),
    limit: int,
    offset: int,
) -> tuple[Sequence[Sweep], int]:
    conditions = [visible, *extra]
    if owner_id is not None:
        conditions.append(Sweep.owner_id == owner_id)
    if preset is not None:
        conditions.append(Sweep.preset == preset)
    total = session.execute(select(func.count()).select_from(Sweep).where(*conditions)).scalar_one()
    rows = (
        session.execute(
            select(Sweep).where(*conditions).order_by(Sweep.created_at.desc(), Sweep.id).limit(limit).offset(offset)
        )
        .scalars()
        .all()
    )
    return rows, total


def points_of(session: Session, sweep_id: uuid.UUID, index: int | None = None) -> Sequence[SweepPoint]:
    """The sweep's points in order (only point `index` when given)."""
    conditions = [SweepPoint.sweep_id == sweep_id]
    if index is not None:
        conditions.append(SweepPoint.index == index)
    return session.execute(select(SweepPoint).where(*conditions).order_by(SweepPoint.index)).scalars().all()


def point_counts(session: Session, sweep_ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, int]:
    rows = session.execute(
        select(SweepPoint.sweep_id, func.count())
        .where(SweepPoint.sweep_id.in_(sweep_ids))
        .group_by(SweepPoint.sweep_id)
    ).all()
    return dict(rows)


def sweeps_for_share(session: Session, sweep_ids: Iterable[uuid.UUID]) -> dict[uuid.UUID, Sweep]:
    """The sweeps, locked FOR SHARE in id order until the transaction ends: a cancel or an
    extension (FOR NO KEY UPDATE) waits for the holder, and the holder for them; two holders
    do not wait for each other, nor do foreign-key checks (KEY SHARE)."""
    query = select(Sweep).where(Sweep.id.in_(sorted(set(sweep_ids)))).order_by(Sweep.id).with_for_update(read=True)
    return {sweep.id: sweep for sweep in session.execute(query).scalars()}


def point_for_update(session: Session, sweep_id: uuid.UUID, index: int) -> SweepPoint | None:
    """The point, locked: the stopping rule's decisions on one point serialise on it."""
    return session.execute(
        select(SweepPoint).where(SweepPoint.sweep_id == sweep_id, SweepPoint.index == index).with_for_update()
    ).scalar_one_or_none()


def status_counts(
    session: Session, sweep_ids: Sequence[uuid.UUID], *, by_point: bool = False
) -> dict[Any, dict[str, int]]:
    """Runs per status, per sweep (or per (sweep, point)); every status present, zeros too."""
    keys = [Run.sweep_id, Run.sweep_point] if by_point else [Run.sweep_id]
    rows = session.execute(
        select(*keys, Run.status, func.count()).where(Run.sweep_id.in_(sweep_ids)).group_by(*keys, Run.status)
    ).all()
    counts: dict[Any, dict[str, int]] = {}
    for row in rows:
        key = (row[0], row[1]) if by_point else row[0]
        entry = counts.setdefault(key, dict.fromkeys(STATUSES, 0))
        entry[row[-2].value] = row[-1]
    return counts


def runs_of(session: Session, sweep_id: uuid.UUID, point: int | None = None) -> Sequence[Run]:
    conditions = [Run.sweep_id == sweep_id]
    if point is not None:
        conditions.append(Run.sweep_point == point)
    return session.execute(select(Run).where(*conditions).order_by(Run.sweep_point, Run.replication)).scalars().all()


def run_count(session: Session, sweep_id: uuid.UUID) -> int:
    """Every run the sweep has, whatever its status (the per-sweep cap counts them all)."""
    return session.execute(select(func.count()).select_from(Run).where(Run.sweep_id == sweep_id)).scalar_one()


def stop_reasons(session: Session, sweep_id: uuid.UUID) -> dict[int, str | None]:
    """point -> why the stopping rule stopped there (None: it did not)."""
    rows = session.execute(select(SweepPoint.index, SweepPoint.stop_reason).where(SweepPoint.sweep_id == sweep_id))
    return dict(rows.all())


def replications_at(session: Session, sweep_id: uuid.UUID) -> dict[int, set[int]]:
    """point -> the replications it has runs for."""
    rows = session.execute(select(Run.sweep_point, Run.replication).where(Run.sweep_id == sweep_id)).all()
    out: dict[int, set[int]] = {}
    for point, replication in rows:
        assert point is not None and replication is not None  # a sweep's run has both (sweep_fields_together)
        out.setdefault(point, set()).add(replication)
    return out


def scenario_of_point(session: Session, sweep_id: uuid.UUID, point: int) -> dict[str, Any] | None:
    """The canonical scenario of the point's runs, without their seed (None: no such point)."""
    return session.execute(
        select(SweepPoint.scenario).where(SweepPoint.sweep_id == sweep_id, SweepPoint.index == point)
    ).scalar_one_or_none()


RUN_COLUMNS = (
    "id",
    "status",
    "scenario",
    "preset",
    "variants",
    "seed",
    "cache_key",
    "core_version",
    "started_at",
    "finished_at",
    "result_id",
    "sweep_id",
    "sweep_point",
    "replication",
    "owner_id",
    "shared",
)
"""The columns `copy_runs` writes, in its rows' order (the others take their defaults)."""


def _copy(session: Session, statement: str, rows: Iterable[Sequence[Any]]) -> None:
    """COPY `rows` into a table within the session's transaction (after its pending objects
    are flushed, so that the rows' foreign keys find them)."""
    session.flush()
    driver = session.connection().connection.driver_connection
    assert driver is not None
    with driver.cursor() as cursor, cursor.copy(statement) as copy:
        for row in rows:
            copy.write_row(row)


def copy_runs(session: Session, rows: Iterable[Sequence[Any]]) -> None:
    """Stores runs by COPY, one row per run with `RUN_COLUMNS`' values: a sweep's tens of
    thousands of runs in one statement, not one ORM object each. The session's identity map
    does not hold them: read them back with a query."""
    _copy(session, f"COPY runs ({', '.join(RUN_COLUMNS)}) FROM STDIN", rows)


def copy_points(
    session: Session, sweep_id: uuid.UUID, points: Iterable[tuple[int, dict[str, Any], list[dict[str, Any]], str]]
) -> None:
    """Stores a sweep's points (index, axis values, flow groups, the runs' scenario without
    its seed as JSON text) by COPY."""
    dumps = json.JSONEncoder(allow_nan=False).encode
    _copy(
        session,
        'COPY sweep_points (sweep_id, "index", "values", flow_groups, scenario) FROM STDIN',
        ((sweep_id, index, dumps(values), dumps(groups), scenario) for index, values, groups, scenario in points),
    )


def result_ids_by_keys(session: Session, cache_keys: Sequence[str]) -> dict[str, uuid.UUID]:
    """The stored results among `cache_keys`: one query (an array parameter) however many."""
    if not cache_keys:
        return {}
    rows = session.execute(
        text("SELECT cache_key, id FROM results WHERE cache_key = ANY(CAST(:keys AS text[]))"),
        {"keys": list(dict.fromkeys(cache_keys))},
    ).all()
    return dict(rows)


def answer_from_cache(session: Session, sweep_id: uuid.UUID, now: Any) -> dict[uuid.UUID, uuid.UUID]:
    """Every queued run of the sweep whose cache key has a stored result becomes succeeded
    with it (started and finished `now`), in one statement; returns run id -> result id."""
    rows = session.execute(
        text(
            "UPDATE runs SET status = 'succeeded', result_id = results.id, started_at = :now, finished_at = :now "
            "FROM results WHERE runs.sweep_id = :sweep AND runs.status = 'queued' "
            "AND results.cache_key = runs.cache_key RETURNING runs.id, results.id"
        ),
        {"sweep": sweep_id, "now": now},
    ).all()
    return dict(rows)


def cancel_unfinished(session: Session, sweep_id: uuid.UUID) -> int:
    """Cancels every queued or running run of the sweep — those in flight now, the waiting
    ones (its bulk: up to 50,000 rows) by the dispatcher's next pass, which marks them before it
    picks anything (`runs.dispatch.finish_cancels`; the caller asks for one after commit) —
    and returns how many, both counted.

    Without crossing the others that lock runs (two concurrent transactions locking the same
    rows in two orders deadlock): the dispatcher's lock first, so that no pass marks a waiting
    run dispatched meanwhile, and the runs in flight (sent to a worker, or running) locked in
    id order, as a worker's batch is claimed. A worker storing a batch in another order can
    still cross that: should PostgreSQL pick the cancel as the victim, the step is rolled back
    to its savepoint and run again (a cancel is idempotent)."""
    lock_dispatcher(session)
    in_flight = _retrying(
        session,
        text(
            # The condition of ix_runs_in_flight, whose few entries are read instead of the sweep's.
            "WITH locked AS MATERIALIZED (SELECT id FROM runs WHERE sweep_id = :sweep "
            "AND (status = 'running' OR (status = 'queued' AND dispatched_at IS NOT NULL)) ORDER BY id FOR UPDATE) "
            "UPDATE runs SET status = 'cancelled', finished_at = now() FROM locked "
            "WHERE runs.id = locked.id AND runs.status IN ('queued', 'running')"
        ),
        sweep_id,
    )
    newly_pending = session.execute(
        text("INSERT INTO pending_cancels (sweep_id) VALUES (:sweep) ON CONFLICT DO NOTHING RETURNING sweep_id"),
        {"sweep": sweep_id},
    ).first()
    if newly_pending is None:  # cancelled again before the dispatcher passed: counted the first time
        return in_flight
    waiting = session.execute(
        text("SELECT count(*) FROM runs WHERE sweep_id = :sweep AND status = 'queued'"), {"sweep": sweep_id}
    ).scalar_one()
    return in_flight + waiting


def finish_cancel(session: Session, sweep_id: uuid.UUID) -> None:
    """Marks the sweep's waiting runs cancelled now if its cancel is pending (before it is
    extended: its new runs must not revive them). Takes the dispatcher's lock."""
    lock_dispatcher(session)
    finish_cancels(session, sweep_id)


CANCEL_ATTEMPTS = 3


def _retrying(session: Session, statement: Any, sweep_id: uuid.UUID) -> int:
    """`statement`'s row count, run again from a savepoint when it was a deadlock's victim."""
    for attempt in range(1, CANCEL_ATTEMPTS + 1):
        try:
            with session.begin_nested():
                return session.execute(statement, {"sweep": sweep_id}).rowcount  # type: ignore[attr-defined]
        except DBAPIError as e:
            if not isinstance(e.orig, DeadlockDetected) or attempt == CANCEL_ATTEMPTS:
                raise
    raise AssertionError("unreachable")


FlowRow = tuple[int, int, uuid.UUID, int, int, dict[str, Any]]
"""(point, replication, run id, seed, flow position, {metric: value})."""


def flow_rows(session: Session, sweep_id: uuid.UUID, point: int | None = None) -> list[FlowRow]:
    """The per-flow results of the sweep's succeeded runs, by point, replication, position."""
    conditions = [Run.sweep_id == sweep_id, Run.status == RunStatus.succeeded]
    if point is not None:
        conditions.append(Run.sweep_point == point)
    return _flow_rows(session, conditions)


def flow_rows_of_run(session: Session, run_id: uuid.UUID) -> list[FlowRow]:
    return _flow_rows(session, [Run.id == run_id, Run.status == RunStatus.succeeded])


def _flow_rows(session: Session, conditions: list[Any]) -> list[FlowRow]:
    columns = [getattr(FlowResult, m) for m in FLOW_METRICS]
    rows = session.execute(
        select(Run.sweep_point, Run.replication, Run.id, Run.seed, FlowResult.position, *columns)
        .join(FlowResult, FlowResult.result_id == Run.result_id)
        .where(*conditions)
        .order_by(Run.sweep_point, Run.replication, Run.id, FlowResult.position)
    ).all()
    return [(r[0] or 0, r[1] or 0, r[2], r[3], r[4], dict(zip(FLOW_METRICS, r[5:], strict=True))) for r in rows]


LevelRow = tuple[uuid.UUID | None, int, int, uuid.UUID, int, dict[str, Any] | None, list[dict[str, Any]]]
"""(sweep id, point, replication, run id, seed, the result's `fairness`, its shared links)."""

SHARED_LINKS = '$[*] ? (!(@.name like_regex "\\\\.(src|dst)-access(-rev)?$"))'
"""A result's links less a dumbbell's per-flow access links (`<flow>.src-access`, …): the
links a sweep's link metrics cover (four per flow would be 40,000 cells per point at 10,000
flows, and a flow's own access link measures its sender, not the network)."""


def level_rows(session: Session, conditions: Sequence[Any]) -> list[LevelRow]:
    """The run- and link-level results of the succeeded runs matching `conditions`, by point,
    replication and run; the links filtered in PostgreSQL (`SHARED_LINKS`)."""
    links = func.jsonb_path_query_array(Result.summary["links"], cast(literal(SHARED_LINKS), JSONPATH))
    rows = session.execute(
        select(Run.sweep_id, Run.sweep_point, Run.replication, Run.id, Run.seed, Result.summary["fairness"], links)
        .join(Result, Result.id == Run.result_id)
        .where(*conditions, Run.status == RunStatus.succeeded)
        .order_by(Run.sweep_point, Run.replication, Run.id)
    ).all()
    return [(r[0], r[1] or 0, r[2] or 0, r[3], r[4], r[5], r[6] or []) for r in rows]


def share_runs(session: Session, sweep_id: uuid.UUID, shared: bool) -> None:
    """A sweep's runs are seen as the sweep is."""
    session.execute(update(Run).where(Run.sweep_id == sweep_id).values(shared=shared))
