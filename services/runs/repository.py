"""Every query of the runs feature. No commits here: the caller's boundary commits."""

from __future__ import annotations

import datetime as dt
import json
import uuid
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, cast

import numpy as np
from sqlalchemy import ColumnElement, Uuid, any_, func, literal, select, text
from sqlalchemy.dialects.postgresql import ARRAY, insert
from sqlalchemy.orm import Session

from services.db.models import FLOW_METRICS, FlowResult, Result, Run, RunStatus, Trace, TraceChunk
from services.runs.trace_codec import encode as encode_traces


def among(run_ids: Iterable[uuid.UUID]) -> ColumnElement[bool]:
    """`runs.id = ANY(:ids)`: one array parameter whatever the number of ids, so the statement's
    text stays the same (psycopg converts it once, and its cache holds it) — `IN (…)` writes a
    placeholder per id, a new statement for every batch size."""
    return Run.id == any_(literal(list(run_ids), ARRAY(Uuid)))


def run_for_update(session: Session, run_id: uuid.UUID) -> Run | None:
    """The run, locked until the transaction ends: claims and completions serialise on it."""
    return session.execute(select(Run).where(Run.id == run_id).with_for_update()).scalar_one_or_none()


def runs_for_update(session: Session, run_ids: Sequence[uuid.UUID]) -> list[Run]:
    """The runs among `run_ids` that exist, locked until the transaction ends, in id order (so
    two transactions locking overlapping batches take their locks in one order: no deadlock)."""
    return list(
        session.execute(select(Run).where(Run.id.in_(list(run_ids))).order_by(Run.id).with_for_update()).scalars()
    )


# A run's scenario (of `runs AS r`): its own, or — a sweep run — its point's with the run's
# seed (migration 0012: the point's replications differ only by their seed).
_SCENARIO_OF_R = "coalesce(r.scenario, p.scenario || jsonb_build_object('seed', r.seed))"
_POINT_OF_R = 'LEFT JOIN sweep_points p ON p.sweep_id = r.sweep_id AND p."index" = r.sweep_point'


def scenarios_of(session: Session, run_ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, dict[str, Any]]:
    """The runs' canonical scenarios (a sweep run's is its point's with its own seed)."""
    rows = session.execute(
        text(f"SELECT r.id, {_SCENARIO_OF_R} FROM runs r {_POINT_OF_R} WHERE r.id = ANY(:ids)"), {"ids": list(run_ids)}
    ).all()
    return dict(rows)


# The scenario as the core must run it: its limits the tighter of its own and the caps —
# events, the owner's quota (a user's own cap never lifts the server's) and the server's;
# wall-clock time, the server's. Written by PostgreSQL as JSON text, which the core reads as
# it is (no Python objects in between).
_LIMITS = (
    "CASE WHEN jsonb_typeof(locked.scenario->'limits') = 'object' THEN locked.scenario->'limits' ELSE '{}'::jsonb END"
)
_CAPPED_SCENARIO = (
    f"jsonb_set(locked.scenario, '{{limits}}', {_LIMITS} || jsonb_build_object("
    f"'max_wall_s', least(coalesce(nullif(({_LIMITS}->>'max_wall_s')::float8, 0), :max_wall_s), :max_wall_s), "
    f"'max_events', least(coalesce(nullif(({_LIMITS}->>'max_events')::numeric, 0), locked.events_cap), locked.events_cap)"
    "))::text"
)


def claim_runs(
    session: Session,
    run_ids: Sequence[uuid.UUID],
    worker: str,
    *,
    started_at: dt.datetime,
    dead_after_s: float,
    max_wall_s: float,
    max_events: int,
) -> list[tuple[uuid.UUID, str]]:
    """Marks running for `worker` (with a first heartbeat, by PostgreSQL's clock) those of
    `run_ids` there is something to do for — queued; or running for `worker` itself (a retry);
    or running for a worker silent for `dead_after_s` (heartbeat, else start) — and returns
    their (id, scenario as JSON text with the caps applied: the server's `max_wall_s` and
    `max_events`, the owner's quota of events). One UPDATE: a run two workers claim at once is
    re-read by the second after the first's commit, and skipped while its claimer is alive."""
    _expire(session, run_ids)
    return list(
        session.execute(
            text(
                # The batch's rows locked in id order first, the order a sweep's cancel takes.
                "UPDATE runs SET status = 'running', started_at = :started, heartbeat_at = clock_timestamp(), "
                "attempts = attempts + 1, worker = :worker "
                "FROM (SELECT r.id, least(coalesce(u.max_events_per_run, :max_events), :max_events) AS events_cap, "
                f"{_SCENARIO_OF_R} AS scenario FROM runs r LEFT JOIN users u ON u.id = r.owner_id {_POINT_OF_R} "
                "WHERE r.id = ANY(:ids) ORDER BY r.id FOR UPDATE OF r) AS locked "
                "WHERE runs.id = locked.id AND (status = 'queued' OR (status = 'running' AND (worker = :worker "
                "OR coalesce(heartbeat_at, started_at) IS NULL "
                "OR coalesce(heartbeat_at, started_at) < clock_timestamp() - make_interval(secs => :dead)))) "
                f"RETURNING runs.id, {_CAPPED_SCENARIO}"
            ),
            {
                "ids": list(run_ids),
                "worker": worker,
                "started": started_at,
                "dead": dead_after_s,
                "max_wall_s": float(max_wall_s),
                "max_events": int(max_events),
            },
        ).all()
    )


def _expire(session: Session, run_ids: Sequence[uuid.UUID]) -> None:
    """Forgets what the session holds of these runs before a statement changes them behind the
    ORM's back (a caller reading them afterwards reads them again)."""
    wanted = set(run_ids)
    for obj in list(session.identity_map.values()):
        if isinstance(obj, Run) and obj.id in wanted:
            session.expire(obj)


def cache_keys_of(session: Session, run_ids: Sequence[uuid.UUID], *, lock: bool = False) -> dict[uuid.UUID, str]:
    """The runs' cache keys; with `lock`, the runs locked until the transaction ends, in id
    order (the order a sweep's cancel takes them in: no deadlock between the two)."""
    query = select(Run.id, Run.cache_key).where(among(run_ids)).order_by(Run.id)
    rows = session.execute(query.with_for_update() if lock else query).all()
    return {run_id: key for run_id, key in rows}


def mark_succeeded(
    session: Session,
    outcomes: Sequence[tuple[uuid.UUID, uuid.UUID, float | None, int | None]],
    *,
    finished_at: dt.datetime,
) -> list[uuid.UUID]:
    """Marks runs succeeded with their (run, result, core wall time, events), except those
    cancelled or succeeded already (a cancellation meanwhile, a redelivery); returns the runs
    it marked. One UPDATE, whose condition PostgreSQL reads again on a row another transaction
    changed meanwhile."""
    if not outcomes:
        return []
    ids, result_ids, walls, events = (list(column) for column in zip(*outcomes, strict=True))
    _expire(session, ids)
    return list(
        session.execute(
            text(
                "UPDATE runs SET status = 'succeeded', result_id = v.result_id, finished_at = :finished, "
                "core_wall_s = v.wall, events = v.events, error = NULL, error_kind = NULL "
                "FROM unnest(CAST(:ids AS uuid[]), CAST(:results AS uuid[]), CAST(:walls AS float8[]), "
                "CAST(:events AS bigint[])) AS v(id, result_id, wall, events) "
                "WHERE runs.id = v.id AND runs.status NOT IN ('cancelled', 'succeeded') RETURNING runs.id"
            ),
            {"ids": ids, "results": result_ids, "walls": walls, "events": events, "finished": finished_at},
        ).scalars()
    )


def run_by_id(session: Session, run_id: uuid.UUID) -> Run | None:
    return session.get(Run, run_id)


def database_now(session: Session) -> dt.datetime:
    """PostgreSQL's clock: heartbeats are written and judged by it alone, so workers and the
    reconciler on machines whose clocks disagree still agree on who is silent."""
    return session.execute(text("SELECT clock_timestamp()")).scalar_one()


def beat(session: Session, run_id: uuid.UUID, worker: str) -> bool:
    """Records `worker`'s heartbeat on its running run (PostgreSQL's clock); False when the run
    is not running for `worker` any more."""
    return run_id in beat_batch(session, [run_id], worker)


def beat_batch(session: Session, run_ids: Sequence[uuid.UUID], worker: str) -> set[uuid.UUID]:
    """Records `worker`'s heartbeat on those of its runs still running for it (PostgreSQL's
    clock) and returns them. One UPDATE by primary key (heartbeat_at is in no index: HOT)."""
    return set(
        session.execute(
            text(
                "UPDATE runs SET heartbeat_at = clock_timestamp() "
                "WHERE id = ANY(:ids) AND status = 'running' AND worker = :worker RETURNING id"
            ),
            {"ids": list(run_ids), "worker": worker},
        ).scalars()
    )


def still_running_for(session: Session, run_id: uuid.UUID, worker: str) -> bool:
    """Whether the run is still running for `worker` (not cancelled, finished or handed on)."""
    return run_id in running_for(session, [run_id], worker)


def running_for(session: Session, run_ids: Sequence[uuid.UUID], worker: str) -> set[uuid.UUID]:
    """Those of `run_ids` still running for `worker` (not cancelled, finished or handed on)."""
    return set(
        session.execute(
            text("SELECT id FROM runs WHERE id = ANY(:ids) AND status = 'running' AND worker = :worker"),
            {"ids": list(run_ids), "worker": worker},
        ).scalars()
    )


def give_back(session: Session, run_ids: Sequence[uuid.UUID], worker: str) -> list[uuid.UUID]:
    """Runs `worker` claimed but never started go back to waiting in PostgreSQL, as if never
    dispatched (the dispatcher hands them out again in their turn; their age keeps their
    place). Returns those it gave back: a run no longer `worker`'s is left alone."""
    return list(
        session.execute(
            text(
                "UPDATE runs SET status = 'queued', dispatched_at = NULL, batch_id = NULL, heartbeat_at = NULL, "
                "started_at = NULL, worker = NULL, attempts = greatest(attempts - 1, 0) "
                "WHERE id = ANY(:ids) AND status = 'running' AND worker = :worker RETURNING id"
            ),
            {"ids": list(run_ids), "worker": worker},
        ).scalars()
    )


def sweep_points_of(session: Session, run_ids: Sequence[uuid.UUID]) -> list[tuple[uuid.UUID, int]]:
    """The (sweep, point) pairs the runs among `run_ids` belong to, each once."""
    rows = session.execute(
        select(Run.sweep_id, Run.sweep_point)
        .where(among(run_ids), Run.sweep_id.is_not(None), Run.sweep_point.is_not(None))
        .distinct()
    ).all()
    return cast(list[tuple[uuid.UUID, int]], list(rows))  # the query excludes NULLs


def batches_of(session: Session, run_ids: Sequence[uuid.UUID]) -> list[list[uuid.UUID]]:
    """`run_ids` grouped by the batch they were dispatched in (a run of no batch alone), each
    in its batch's order (its first run first): one message per batch keeps the dispatch
    window's count of batches in flight true when they are sent again."""
    rows = session.execute(
        text(
            "SELECT id, coalesce(batch_id, id) AS batch FROM runs WHERE id = ANY(:ids) "
            "ORDER BY batch, id <> coalesce(batch_id, id), created_at, id"
        ),
        {"ids": list(run_ids)},
    ).all()
    batches: dict[uuid.UUID, list[uuid.UUID]] = {}
    for run_id, batch in rows:
        batches.setdefault(batch, []).append(run_id)
    return list(batches.values())


def requeue_silent(session: Session, dead_after_s: float) -> list[uuid.UUID]:
    """Running runs not heard of for `dead_after_s` (by PostgreSQL's clock) back to queued,
    dispatched now so they keep their slot in the window; returns their ids. Runs from before
    heartbeats (heartbeat_at NULL) are the broker's visibility timeout's, as before."""
    return list(
        session.execute(
            text(
                "UPDATE runs SET status = 'queued', dispatched_at = clock_timestamp(), heartbeat_at = NULL "
                "WHERE id IN (SELECT id FROM runs WHERE status = 'running' "
                "AND heartbeat_at < clock_timestamp() - make_interval(secs => :dead) "
                "FOR UPDATE SKIP LOCKED) RETURNING id"
            ),
            {"dead": dead_after_s},
        ).scalars()
    )


def result_id_by_key(session: Session, cache_key: str) -> uuid.UUID | None:
    return session.execute(select(Result.id).where(Result.cache_key == cache_key)).scalar_one_or_none()


def result_ids_by_keys(session: Session, cache_keys: Sequence[str]) -> dict[str, uuid.UUID]:
    """The stored results among `cache_keys`, in one query per 5000 keys."""
    found: dict[str, uuid.UUID] = {}
    unique = list(dict.fromkeys(cache_keys))
    for start in range(0, len(unique), 5000):
        chunk = unique[start : start + 5000]
        found.update(session.execute(select(Result.cache_key, Result.id).where(Result.cache_key.in_(chunk))).all())
    return found


def insert_result(session: Session, cache_key: str, core_version: str, result: dict[str, Any]) -> uuid.UUID:
    """Stores a core result once per cache key; a second delivery finds the first one's row."""
    return insert_results(session, [(cache_key, core_version, result)])[cache_key]


def insert_results(session: Session, results: Sequence[tuple[str, str, dict[str, Any]]]) -> dict[str, uuid.UUID]:
    """Stores core results (cache key, core version, result) once per cache key, in a few
    statements whatever their number; returns each key's result id.

    One multi-row `INSERT … ON CONFLICT DO NOTHING` makes two workers racing on the same key
    store one result; only the rows whose insert took get their per-flow rows and traces (a
    second delivery, or a key already stored, finds the first one's row).
    """
    by_key = {key: (version, result) for key, version, result in results}
    if not by_key:
        return {}
    keys = list(by_key)
    # One statement over arrays, whatever the batch's size (the ORM's bulk path, or a VALUES
    # row per result, costs more in Python than the database spends on the rows).
    returned = session.execute(
        text(
            # The summaries travel as one JSON array: a text[] of JSON documents would be
            # escaped element by element on the way.
            "INSERT INTO results (cache_key, core_version, summary) "
            "SELECT k.key, k.version, s.summary "
            "FROM unnest(CAST(:keys AS text[]), CAST(:versions AS text[])) WITH ORDINALITY AS k(key, version, i) "
            "JOIN jsonb_array_elements(CAST(:summaries AS jsonb)) WITH ORDINALITY AS s(summary, i) USING (i) "
            "ON CONFLICT (cache_key) DO NOTHING RETURNING cache_key, id"
        ),
        {
            "keys": keys,
            "versions": [by_key[key][0] for key in keys],
            "summaries": json.dumps(
                [{k: v for k, v in by_key[key][1].items() if k not in ("flows", "traces")} for key in keys]
            ),
        },
    ).all()
    inserted: dict[str, uuid.UUID] = {key: result_id for key, result_id in returned}
    _copy_flow_rows(session, [(result_id, by_key[key][1]["flows"]) for key, result_id in inserted.items()])
    for key, result_id in inserted.items():
        traces = by_key[key][1].get("traces")
        if traces is not None:
            layout, chunks = encode_traces(traces)
            session.execute(insert(Trace).values(result_id=result_id, **layout))
            for start in range(0, len(chunks), 1000):
                session.execute(
                    insert(TraceChunk), [{"result_id": result_id, **c} for c in chunks[start : start + 1000]]
                )
    missing = [key for key in by_key if key not in inserted]
    return {**inserted, **result_ids_by_keys(session, missing)} if missing else inserted


_FLOW_COLUMNS = ("result_id", "position", *FLOW_METRICS)
_COPY_FLOWS = f"COPY flow_results ({', '.join(_FLOW_COLUMNS)}) FROM STDIN"


def _copy_flow_rows(session: Session, results: Sequence[tuple[uuid.UUID, Sequence[dict[str, Any]]]]) -> None:
    """The per-flow rows of new results, through COPY (the cheapest bulk path PostgreSQL has),
    on the session's own connection and transaction."""
    if not results:
        return
    driver = session.connection().connection.driver_connection
    assert driver is not None
    with driver.cursor() as cursor, cursor.copy(_COPY_FLOWS) as copy:
        for result_id, flows in results:
            for position, row in enumerate(_flow_rows(flows)):
                copy.write_row((result_id, position, *row))


def _flow_rows(flows: Sequence[Mapping[str, Any]] | Mapping[str, Any]) -> list[tuple[Any, ...]]:
    """A result's per-flow table as rows of FLOW_METRICS, from the core's records (a dict per
    flow) or its columns (`tcpsim.run(..., columns=True)`: numpy arrays, NaN where a record
    has null — stored as NULL, as the record's null is)."""
    if not isinstance(flows, Mapping):
        return [tuple(flow.get(m) for m in FLOW_METRICS) for flow in flows]
    count = len(flows["name"])
    return list(zip(*(_column_values(flows.get(m), count) for m in FLOW_METRICS), strict=True))


def _column_values(column: Any, count: int) -> list[Any]:
    if column is None:
        return [None] * count
    if isinstance(column, np.ndarray):
        values = column.tolist()
        return [None if v != v else v for v in values] if column.dtype.kind == "f" else values
    return list(column)


def flows_of(session: Session, result_id: uuid.UUID) -> Sequence[FlowResult]:
    return (
        session.execute(select(FlowResult).where(FlowResult.result_id == result_id).order_by(FlowResult.position))
        .scalars()
        .all()
    )


def summary_of(session: Session, result_id: uuid.UUID) -> dict[str, Any]:
    return session.execute(select(Result.summary).where(Result.id == result_id)).scalar_one()


def trace_of(session: Session, result_id: uuid.UUID) -> Trace | None:
    """The layout of a result's traces; their values are read with `trace_chunks`."""
    return session.get(Trace, result_id)


def trace_chunks(
    session: Session, result_id: uuid.UUID, *, series: Iterable[int], chunks: range
) -> list[tuple[int, int, bytes]]:
    """(chunk, series, data) of `series` in `chunks`, by chunk then series (the table's row
    order). The caller asks for a few chunks at a time: their bytes are all in memory."""
    query = (
        select(TraceChunk.chunk, TraceChunk.series, TraceChunk.data)
        .where(
            TraceChunk.result_id == result_id,
            TraceChunk.series.in_(list(series)),
            TraceChunk.chunk >= chunks.start,
            TraceChunk.chunk < chunks.stop,
        )
        .order_by(TraceChunk.chunk, TraceChunk.series)
    )
    return [(row.chunk, row.series, row.data) for row in session.execute(query)]


def page_of_runs(
    session: Session,
    *,
    visible: ColumnElement[bool],
    mine_only: uuid.UUID | None,
    status: RunStatus | None,
    variant: str | None,
    preset: str | None,
    created_after: dt.datetime | None,
    created_before: dt.datetime | None,
    extra: Sequence[ColumnElement[bool]] = (),
    limit: int,
    offset: int,
) -> tuple[Sequence[Run], int]:
    """Newest first, with the total count of runs matching the filters (and `extra`)."""
    conditions = [visible, *extra]
    if mine_only is not None:
        conditions.append(Run.owner_id == mine_only)
    if status is not None:
        conditions.append(Run.status == status)
    if variant is not None:
        conditions.append(literal(variant) == any_(Run.variants))
    if preset is not None:
        conditions.append(Run.preset == preset)
    if created_after is not None:
        conditions.append(Run.created_at >= created_after)
    if created_before is not None:
        conditions.append(Run.created_at < created_before)
    total = session.execute(select(func.count()).select_from(Run).where(*conditions)).scalar_one()
    rows = (
        session.execute(
            select(Run).where(*conditions).order_by(Run.created_at.desc(), Run.id).limit(limit).offset(offset)
        )
        .scalars()
        .all()
    )
    return rows, total


def unfinished_among(session: Session, run_ids: Sequence[uuid.UUID]) -> list[uuid.UUID]:
    """Those of `run_ids` that are still queued or running."""
    if not run_ids:
        return []
    return list(
        session.execute(
            select(Run.id).where(Run.id.in_(run_ids), Run.status.in_([RunStatus.queued, RunStatus.running]))
        ).scalars()
    )


# pg_advisory_xact_lock's first key for admissions (services/admission.py): the bytes "tcla".
ADMISSION_LOCK = 0x74636C61


def lock_admissions(session: Session, owner_id: uuid.UUID | None) -> None:
    """Serialises one owner's admissions (runs from before users: one owner) until the
    transaction ends."""
    session.execute(
        text("SELECT pg_advisory_xact_lock(:kind, hashtext(:owner))"),
        {"kind": ADMISSION_LOCK, "owner": str(owner_id)},
    )


def queued_count(session: Session, *, owner_id: uuid.UUID | None = None) -> int:
    """Queued runs on the server, or of one owner — less those of sweeps whose cancel is
    pending (they will never be sent: the dispatcher marks them cancelled at its next pass)."""
    if owner_id is None:
        return session.execute(_QUEUED).scalar_one()
    return session.execute(_QUEUED_OF_OWNER, {"owner": owner_id}).scalar_one()


# Constant statements: every admission counts twice, and building the two counts' expression
# took 121 us a call in Python (a plain count's, 42 us) before PostgreSQL saw it.
_QUEUED = text(
    "SELECT (SELECT count(*) FROM runs WHERE status = 'queued') - (SELECT count(*) FROM pending_cancels p "
    "JOIN runs r ON r.sweep_id = p.sweep_id WHERE r.status = 'queued')"
)
_QUEUED_OF_OWNER = text(
    "SELECT (SELECT count(*) FROM runs WHERE status = 'queued' AND owner_id = :owner) - (SELECT count(*) "
    "FROM pending_cancels p JOIN runs r ON r.sweep_id = p.sweep_id WHERE r.status = 'queued' AND r.owner_id = :owner)"
)
