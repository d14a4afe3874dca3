"""The dispatcher: fair share between users. Free of HTTP and Celery.

PostgreSQL holds every queued run; the broker only ever holds about a *window* of them (the
worker processes' worth): runs queued and handed to the broker (``dispatched_at`` set) plus
runs running never exceed it. Whenever room opens (a run was submitted, a run finished, the
reconciler passes), the dispatcher picks the next runs and marks them dispatched; the caller
commits and only then sends their ids (worker/tasks.py). So a 10,000-run sweep waits in
PostgreSQL, not in front of everyone else in Redis, and another user's run is the next one
sent whenever it is that user's turn.

Whose turn: each owner's k-th waiting run (oldest first) has the rank *runs the owner has in
flight + k*; lower ranks go first. That is round-robin across owners, least loaded first.
Equal ranks go to the owner served least recently (its last dispatch among the runs in flight
and the last finished ones; never or long ago first), then to the oldest run: with a window
of one, every owner has nothing in flight whenever the slot frees, and "oldest first" alone
would hand it back to the sweep that was there first, every time. Runs from before users
(``owner_id`` NULL) count as one owner.

Dispatchers serialise on a transaction-scoped advisory lock, so two of them (two workers
finishing at once, a submission meanwhile) never see the same room twice. Each owner's
waiting runs are read through ``ix_runs_waiting`` limited to the room, so a long sweep is
never sorted whole.
"""

from __future__ import annotations

import datetime as dt
import uuid
from dataclasses import dataclass

from sqlalchemy import text
from sqlalchemy.orm import Session

from services.db.session import session_scope
from services.settings import get_settings

# pg_advisory_xact_lock's key: the bytes "tcplabDP".
DISPATCH_LOCK = 0x7463706C61624450

# How many of the last finished runs tell who was served recently (beyond the runs in
# flight): more than the owners that ever compete at once, cheap to read (ix_runs_finished_at).
SERVED_MEMORY = 1000

_IN_FLIGHT = "(status = 'running' OR (status = 'queued' AND dispatched_at IS NOT NULL))"
_WAITING = "status = 'queued' AND dispatched_at IS NULL"

# Each owner's waiting runs, oldest first, numbered k = 1, 2, … up to the room. The range
# `owner_id >= u.id AND owner_id <= u.id` (rather than `=`) keeps (owner_id, created_at) an
# ordering the planner must take from an index on both — ix_runs_waiting — instead of walking
# ix_runs_created_at through everyone's runs when it misjudges how many are this owner's.
_PICK = text(
    f"""
WITH load AS (
    SELECT * FROM unnest(CAST(:load_owners AS uuid[]), CAST(:load_counts AS bigint[]))
        AS l(owner_id, n)
),
served AS (
    SELECT owner_id, max(at) AS at FROM (
        SELECT * FROM unnest(CAST(:load_owners AS uuid[]), CAST(:load_served AS timestamptz[]))
            AS f(owner_id, at)
        UNION ALL
        (SELECT owner_id, dispatched_at FROM runs
         WHERE finished_at IS NOT NULL AND dispatched_at IS NOT NULL
         ORDER BY finished_at DESC LIMIT :memory)
    ) recent GROUP BY owner_id
),
waiting AS (
    SELECT w.id, w.owner_id, w.created_at, w.k
    FROM users u CROSS JOIN LATERAL (
        SELECT id, owner_id, created_at, row_number() OVER () AS k FROM (
            SELECT id, owner_id, created_at FROM runs
            WHERE owner_id >= u.id AND owner_id <= u.id AND {_WAITING}
            ORDER BY owner_id, created_at LIMIT :room
        ) oldest
    ) w
    UNION ALL
    SELECT id, owner_id, created_at, row_number() OVER () AS k FROM (
        SELECT id, owner_id, created_at FROM runs
        WHERE owner_id IS NULL AND {_WAITING}
        ORDER BY owner_id, created_at LIMIT :room
    ) legacy
),
picked AS (
    SELECT w.id, row_number() OVER (
        ORDER BY coalesce(l.n, 0) + w.k, s.at NULLS FIRST, w.created_at, w.owner_id NULLS FIRST, w.k
    ) AS turn
    FROM waiting w
    LEFT JOIN load l ON l.owner_id IS NOT DISTINCT FROM w.owner_id
    LEFT JOIN served s ON s.owner_id IS NOT DISTINCT FROM w.owner_id
    ORDER BY turn
    LIMIT :room
)
UPDATE runs SET dispatched_at = :at
FROM picked
WHERE runs.id = picked.id AND runs.status = 'queued' AND runs.dispatched_at IS NULL
RETURNING runs.id, picked.turn
"""
)


@dataclass(frozen=True)
class Load:
    """One owner's runs in flight, and when the latest of them was dispatched."""

    owner_id: uuid.UUID | None
    runs: int
    last_dispatched_at: dt.datetime | None


def in_flight(session: Session) -> list[Load]:
    """The runs in flight (handed to the broker and not finished: queued with a message, or
    running), by owner. One pass over the unfinished runs."""
    rows = session.execute(
        text(f"SELECT owner_id, count(*), max(dispatched_at) FROM runs WHERE {_IN_FLIGHT} GROUP BY owner_id")
    ).all()
    return [Load(owner, int(n), at) for owner, n, at in rows]


def in_flight_count(session: Session) -> int:
    return sum(load.runs for load in in_flight(session))


def pick(session: Session, window: int, *, memory: int = SERVED_MEMORY) -> list[uuid.UUID]:
    """Marks the runs that fill the window as dispatched and returns them in the order to
    send. Nothing is sent here: the caller commits first (a worker must find the mark), then
    sends. Holds the dispatch lock until the transaction ends."""
    session.execute(text("SELECT set_config('lock_timeout', '10s', true)"))
    session.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": DISPATCH_LOCK})
    # The time the lock was taken, not the transaction's start: picks are ordered by it (who
    # was served last), and a dispatcher may have waited for the lock behind a later one.
    at = session.execute(text("SELECT clock_timestamp()")).scalar_one()
    loads = in_flight(session)
    room = window - sum(load.runs for load in loads)
    if room <= 0:
        return []
    rows = session.execute(
        _PICK,
        {
            "room": room,
            "memory": memory,
            "at": at,
            "load_owners": [load.owner_id for load in loads],
            "load_counts": [load.runs for load in loads],
            "load_served": [load.last_dispatched_at for load in loads],
        },
    ).all()
    return [run_id for run_id, _ in sorted(rows, key=lambda row: row[1])]


def dispatch(window: int | None = None) -> list[uuid.UUID]:
    """The dispatcher as a unit of work of its own: picks, commits, and returns the ids the
    caller must now send to the broker (in that order). ``window`` defaults to the settings'
    (``TCPLAB_DISPATCH_WINDOW``, or the worker concurrency)."""
    if window is None:
        window = get_settings().effective_dispatch_window
    with session_scope() as session:
        return pick(session, window)


def stale_in_flight(
    session: Session, *, dispatched_before: dt.datetime, started_before: dt.datetime
) -> list[uuid.UUID]:
    """For the reconciler: runs dispatched before `dispatched_before` and still queued, and
    runs started before `started_before` and still running — those whose broker message may
    be lost. Waiting runs are not among them: they have no message yet, by design."""
    return list(
        session.execute(
            text(
                "SELECT id FROM runs WHERE (status = 'queued' AND dispatched_at < :dispatched) "
                "OR (status = 'running' AND started_at < :started)"
            ),
            {"dispatched": dispatched_before, "started": started_before},
        ).scalars()
    )
