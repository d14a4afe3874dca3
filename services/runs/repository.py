"""Every query of the runs feature. No commits here: the caller's boundary commits."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy import ColumnElement, any_, func, literal, select, text
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session

from services.db.models import FLOW_METRICS, FlowResult, Result, Run, RunStatus, Trace, TraceChunk
from services.runs.trace_codec import encode as encode_traces


def run_for_update(session: Session, run_id: uuid.UUID) -> Run | None:
    """The run, locked until the transaction ends: claims and completions serialise on it."""
    return session.execute(select(Run).where(Run.id == run_id).with_for_update()).scalar_one_or_none()


def run_by_id(session: Session, run_id: uuid.UUID) -> Run | None:
    return session.get(Run, run_id)


def database_now(session: Session) -> dt.datetime:
    """PostgreSQL's clock: heartbeats are written and judged by it alone, so workers and the
    reconciler on machines whose clocks disagree still agree on who is silent."""
    return session.execute(text("SELECT clock_timestamp()")).scalar_one()


def beat(session: Session, run_id: uuid.UUID, worker: str) -> bool:
    """Records `worker`'s heartbeat on its running run (PostgreSQL's clock); False when the run
    is not running for `worker` any more. One indexed UPDATE (heartbeat_at is in no index: a
    HOT update)."""
    updated = session.execute(
        text(
            "UPDATE runs SET heartbeat_at = clock_timestamp() "
            "WHERE id = :id AND status = 'running' AND worker = :worker"
        ),
        {"id": run_id, "worker": worker},
    )
    return updated.rowcount == 1  # type: ignore[attr-defined]


def still_running_for(session: Session, run_id: uuid.UUID, worker: str) -> bool:
    """Whether the run is still running for `worker` (not cancelled, finished or handed on)."""
    found = session.execute(
        text("SELECT 1 FROM runs WHERE id = :id AND status = 'running' AND worker = :worker"),
        {"id": run_id, "worker": worker},
    ).first()
    return found is not None


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
    """Stores a core result once per cache key; a second delivery finds the first one's row.

    `INSERT … ON CONFLICT DO NOTHING` makes two workers racing on the same key store one
    result; only the one whose insert took writes the per-flow rows and the traces.
    """
    summary = {k: v for k, v in result.items() if k not in ("flows", "traces")}
    inserted = session.execute(
        insert(Result)
        .values(cache_key=cache_key, core_version=core_version, summary=summary)
        .on_conflict_do_nothing(index_elements=[Result.cache_key])
        .returning(Result.id)
    ).scalar_one_or_none()
    if inserted is None:
        existing = result_id_by_key(session, cache_key)
        assert existing is not None, "a conflicting result exists"
        return existing
    session.add_all(
        FlowResult(result_id=inserted, position=i, **{m: flow.get(m) for m in FLOW_METRICS})
        for i, flow in enumerate(result["flows"])
    )
    if result.get("traces") is not None:
        layout, chunks = encode_traces(result["traces"])
        session.execute(insert(Trace).values(result_id=inserted, **layout))
        for start in range(0, len(chunks), 1000):
            session.execute(insert(TraceChunk), [{"result_id": inserted, **c} for c in chunks[start : start + 1000]])
    session.flush()
    return inserted


def flows_of(session: Session, result_id: uuid.UUID) -> Sequence[FlowResult]:
    return session.execute(
        select(FlowResult).where(FlowResult.result_id == result_id).order_by(FlowResult.position)
    ).scalars().all()


def summary_of(session: Session, result_id: uuid.UUID) -> dict[str, Any]:
    return session.execute(select(Result.summary).where(Result.id == result_id)).scalar_one()


def trace_of(session: Session, result_id: uuid.UUID) -> Trace | None:
    """The layout of a result's traces; their values are read with `trace_chunks`."""
    return session.get(Trace, result_id)


def trace_chunks(session: Session, result_id: uuid.UUID, *, series: Iterable[int], chunks: range) -> list[tuple[int, int, bytes]]:
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
    limit: int,
    offset: int,
) -> tuple[Sequence[Run], int]:
    """Newest first, with the total count of runs matching the filters."""
    conditions = [visible]
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
    rows = session.execute(
        select(Run).where(*conditions).order_by(Run.created_at.desc(), Run.id).limit(limit).offset(offset)
    ).scalars().all()
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
    """Queued runs on the server, or of one owner."""
    query = select(func.count()).select_from(Run).where(Run.status == RunStatus.queued)
    if owner_id is not None:
        query = query.where(Run.owner_id == owner_id)
    return session.execute(query).scalar_one()
