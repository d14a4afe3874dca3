"""The dispatcher: fair share between users. Free of HTTP and Celery.

PostgreSQL holds every queued run; the broker only ever holds about a *window* of work (the
worker processes' worth): batches queued and handed to the broker (``dispatched_at`` set) plus
batches running never exceed it. A *batch* is one task's work: a few of one owner's waiting
runs, oldest first, as many as the owner's latest core times say fill about
``TCPLAB_BATCH_TARGET_S`` (``batch_id``: its first run's id). Short runs then cost one claim,
one store and one dispatch per batch instead of per run, while another owner's run waits at
most one batch for a slot; a run of unknown cost goes alone. Whenever room opens (a run was submitted, a run finished, the
reconciler passes), the dispatcher picks the next runs and marks them dispatched; the caller
commits and only then sends their ids (worker/enqueue.py). So a 10,000-run sweep waits in
PostgreSQL, not in front of everyone else in Redis, and another user's run is the next one
sent whenever it is that user's turn.

Whose turn (a batch is led by its first run): each owner's k-th waiting run (oldest first) has the rank *runs the owner has in
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
from sqlalchemy.orm import Session, sessionmaker

from services.db.session import session_scope
from services.settings import Settings

# pg_advisory_xact_lock's key: the bytes "tcplabDP".
DISPATCH_LOCK = 0x7463706C61624450

# How many of the last finished runs tell who was served recently (beyond the runs in
# flight): more than the owners that ever compete at once, cheap to read (ix_runs_finished_at).
SERVED_MEMORY = 1000

_IN_FLIGHT = "(status = 'running' OR (status = 'queued' AND dispatched_at IS NOT NULL))"
# A run dispatched before batches (batch_id NULL) is a batch of its own.
_BATCH = "coalesce(batch_id, id)"
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
UPDATE runs SET dispatched_at = :at, batch_id = runs.id
FROM picked
WHERE runs.id = picked.id AND runs.status = 'queued' AND runs.dispatched_at IS NULL
RETURNING runs.id, runs.owner_id, picked.turn
"""
)

# The owner's next waiting runs, oldest first, join the batch `:batch` (its first run is
# dispatched already). Same index walk as `_PICK`'s.
_EXTEND = """
UPDATE runs SET dispatched_at = :at, batch_id = :batch
FROM (
    SELECT id FROM runs WHERE {owner} AND {waiting} ORDER BY owner_id, created_at LIMIT :more
) more
WHERE runs.id = more.id AND runs.status = 'queued' AND runs.dispatched_at IS NULL
RETURNING runs.id, runs.created_at
"""
_EXTEND_OWNER = text(_EXTEND.format(owner="owner_id >= :owner AND owner_id <= :owner", waiting=_WAITING))
_EXTEND_LEGACY = text(_EXTEND.format(owner="owner_id IS NULL", waiting=_WAITING))

# An owner's latest core times (ix_runs_owner_cost): what its next runs probably cost.
_RECENT_COST = """
SELECT avg(core_wall_s) FROM (
    SELECT core_wall_s FROM runs WHERE {owner} AND core_wall_s IS NOT NULL AND finished_at IS NOT NULL
    ORDER BY finished_at DESC LIMIT :latest
) latest
"""
_RECENT_COST_OWNER = text(_RECENT_COST.format(owner="owner_id = :owner"))
_RECENT_COST_LEGACY = text(_RECENT_COST.format(owner="owner_id IS NULL"))
COST_MEMORY = 32
"""How many of an owner's latest finished runs estimate what its next ones cost."""


@dataclass(frozen=True)
class Batching:
    """How big a batch is: as many of an owner's runs as fill `target_s` of core time by its
    latest runs' mean, at most `max_runs`; one run when the owner has no core time yet."""

    target_s: float
    max_runs: int

    def runs_for(self, mean_core_s: float | None) -> int:
        if self.max_runs <= 1 or self.target_s <= 0 or not mean_core_s or mean_core_s <= 0:
            return 1
        return max(1, min(self.max_runs, int(self.target_s / mean_core_s)))


ONE_RUN = Batching(target_s=0, max_runs=1)
"""Every batch a single run: the dispatcher as it was before batches."""


@dataclass(frozen=True)
class Load:
    """One owner's batches in flight, and when the latest of them was dispatched."""

    owner_id: uuid.UUID | None
    runs: int
    """Batches, in fact: the window's unit (a run dispatched alone is a batch of one)."""
    last_dispatched_at: dt.datetime | None


def in_flight(session: Session) -> list[Load]:
    """The batches in flight (handed to the broker with a run not finished: queued with a
    message, or running), by owner. One pass over the unfinished runs."""
    rows = session.execute(
        text(
            f"SELECT owner_id, count(DISTINCT {_BATCH}), max(dispatched_at) FROM runs "
            f"WHERE {_IN_FLIGHT} GROUP BY owner_id"
        )
    ).all()
    return [Load(owner, int(n), at) for owner, n, at in rows]


def in_flight_count(session: Session) -> int:
    """Batches in flight: what the window bounds."""
    return sum(load.runs for load in in_flight(session))


def pick(session: Session, window: int, *, memory: int = SERVED_MEMORY) -> list[uuid.UUID]:
    """`pick_batches` with one run per batch: the runs that fill the window, in send order."""
    return [batch[0] for batch in pick_batches(session, window, ONE_RUN, memory=memory)]


def pick_batches(
    session: Session, window: int, batching: Batching, *, memory: int = SERVED_MEMORY
) -> list[list[uuid.UUID]]:
    """Marks the batches that fill the window as dispatched and returns them in the order to
    send, each its runs in the order to simulate. Nothing is sent here: the caller commits
    first (a worker must find the mark), then sends. Holds the dispatch lock until the
    transaction ends."""
    session.execute(text("SELECT set_config('lock_timeout', '10s', true)"))
    lock_dispatcher(session)
    finish_cancels(session)
    # The time the lock was taken, not the transaction's start: picks are ordered by it (who
    # was served last), and a dispatcher may have waited for the lock behind a later one.
    at = session.execute(text("SELECT clock_timestamp()")).scalar_one()
    loads = in_flight(session)
    room = window - sum(load.runs for load in loads)
    if room <= 0:
        return []
    leaders = session.execute(
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
    sizes: dict[uuid.UUID | None, int] = {}
    batches = []
    for leader, owner, _ in sorted(leaders, key=lambda row: row[2]):
        if owner not in sizes:
            sizes[owner] = batching.runs_for(_recent_cost(session, owner)) if batching.max_runs > 1 else 1
        batches.append([leader, *_extend(session, leader, owner, sizes[owner] - 1, at)])
    return batches


def lock_dispatcher(session: Session) -> None:
    """Takes the dispatch lock until the transaction ends: dispatcher passes, and whoever must
    not cross one (a sweep's cancel), serialise on it."""
    session.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": DISPATCH_LOCK})


def finish_cancels(session: Session, sweep_id: uuid.UUID | None = None) -> None:
    """Marks cancelled the waiting runs of the sweeps whose cancel is pending (of `sweep_id`
    only, when given). A sweep's cancel (services/sweeps) cancels its runs in
    flight and leaves its waiting ones — up to 50,000 rows to rewrite — to this, which every
    dispatcher pass runs before it picks: only the dispatcher sends waiting runs, so none of
    them is sent meanwhile. The caller holds the dispatch lock."""
    pending = (
        session.execute(_TAKE_PENDING_CANCELS if sweep_id is None else _TAKE_PENDING_CANCEL_OF, {"sweep": sweep_id})
        .scalars()
        .all()
    )
    for sweep in sorted(pending):
        session.execute(_CANCEL_WAITING, {"sweep": sweep})


_TAKE_PENDING_CANCELS = text("DELETE FROM pending_cancels RETURNING sweep_id")
_TAKE_PENDING_CANCEL_OF = text("DELETE FROM pending_cancels WHERE sweep_id = :sweep RETURNING sweep_id")
_CANCEL_WAITING = text(
    "UPDATE runs SET status = 'cancelled', finished_at = now() "
    "WHERE sweep_id = :sweep AND status = 'queued' AND dispatched_at IS NULL"
)


def _recent_cost(session: Session, owner: uuid.UUID | None) -> float | None:
    """The mean core time of the owner's latest finished runs (None: none yet)."""
    if owner is None:
        return session.execute(_RECENT_COST_LEGACY, {"latest": COST_MEMORY}).scalar_one()
    return session.execute(_RECENT_COST_OWNER, {"owner": owner, "latest": COST_MEMORY}).scalar_one()


def _extend(session: Session, batch: uuid.UUID, owner: uuid.UUID | None, more: int, at: dt.datetime) -> list[uuid.UUID]:
    """Marks up to `more` of the owner's next waiting runs as dispatched in `batch`; returns
    them oldest first."""
    if more <= 0:
        return []
    params = {"at": at, "batch": batch, "more": more, "owner": owner}
    rows = session.execute(_EXTEND_LEGACY if owner is None else _EXTEND_OWNER, params).all()
    return [run_id for run_id, _ in sorted(rows, key=lambda row: (row[1], row[0]))]


def dispatch(
    factory: sessionmaker[Session],
    settings: Settings,
    window: int | None = None,
    batching: Batching | None = None,
) -> list[list[uuid.UUID]]:
    """The dispatcher as a unit of work of its own, in a session of ``factory``: picks,
    commits, and returns the batches the caller must now send to the broker (in that order,
    one message each). ``window`` and ``batching`` default to ``settings``'
    (``TCPLAB_DISPATCH_WINDOW`` or the worker concurrency; ``TCPLAB_BATCH_TARGET_S``,
    ``TCPLAB_BATCH_MAX_RUNS``). Both are passed in, never fetched: an API built with other
    settings than the process's dispatches on its own database, with its own window."""
    if window is None:
        window = settings.effective_dispatch_window
    if batching is None:
        batching = Batching(target_s=settings.batch_target_s, max_runs=settings.batch_max_runs)
    with session_scope(factory) as session:
        return pick_batches(session, window, batching)


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
