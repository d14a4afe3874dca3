"""Figures for monitoring, read from where the truth is: runs and sweeps from PostgreSQL, the
queue's depth from Redis. Plain numbers only — the API turns them into Prometheus metrics
(api/metrics.py) at scrape time, so every API process reports the same figures whichever
process or worker changed them.

Two sets, by cost. :func:`live_runs` (queued and running runs, the oldest queued run, active
sweeps, each user's queue) reads the unfinished runs only, through the ``(status,
created_at)`` index: about a millisecond whatever the history, plus a few milliseconds per
10,000 queued runs for the users' queues. :func:`settled_runs` (finished runs by status, the recent
runs' durations and core speed) counts the whole history and scans for the runs finished
within the window: about 0.2 s at 100,000 runs and 1 s at a million on a small machine (an
index on ``runs.finished_at`` would make the window's part a few milliseconds), so the API
reads it less often.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlalchemy import Connection, text

from infra.broker import PRIORITY_STEPS, UNACKED_HASH, queue_keys, redis_client
from services.db.models import RunStatus

DURATION_QUANTILES: tuple[float, ...] = (0.5, 0.9, 0.99)

_FINISHED_WITHIN = "finished_at >= now() - make_interval(secs => :window)"


@dataclass(frozen=True)
class Durations:
    """Wall time from start to finish (``finished_at - started_at``) of some runs."""

    count: int = 0
    sum_s: float = 0.0
    max_s: float | None = None
    quantiles: dict[float, float] = field(default_factory=dict)


@dataclass(frozen=True)
class RecentRuns:
    """Runs that finished within the last ``window_s`` seconds."""

    window_s: float
    finished: dict[str, int]  # final status -> runs
    durations: dict[str, Durations]  # final status -> their durations (runs that started)
    events: int  # simulated events of the succeeded runs
    core_wall_s: float  # the core's own wall time for them

    @property
    def core_events_per_s(self) -> float | None:
        """The core's speed over these runs: all their events over all their core time."""
        return self.events / self.core_wall_s if self.core_wall_s > 0 else None


@dataclass(frozen=True)
class UserQueue:
    """One user's unfinished runs, by where they are (docs/fair-share.md)."""

    waiting: int = 0  # queued in PostgreSQL, not yet handed to the broker
    dispatched: int = 0  # queued and handed to the broker
    running: int = 0


LEGACY_OWNER = "none"
"""The label runs from before users (no owner) are reported under."""


@dataclass(frozen=True)
class LiveRuns:
    """What changes by the second: cheap to read (the runs not yet finished are few, and
    ``(status, created_at)`` is indexed)."""

    by_status: dict[str, int]  # queued, running
    oldest_queued_age_s: float | None  # None: nothing queued
    active_sweeps: int  # sweeps with a queued or running run
    by_user: dict[str, UserQueue] = field(default_factory=dict)
    """Every user by id (zeros included), and ``none`` for runs without an owner when there are any."""

    @property
    def waiting(self) -> int:
        return sum(q.waiting for q in self.by_user.values())

    @property
    def dispatched(self) -> int:
        return sum(q.dispatched for q in self.by_user.values())


@dataclass(frozen=True)
class SettledRuns:
    """What grows with the whole history: counting a million finished runs takes a good part
    of a second, so the API reads these less often."""

    by_status: dict[str, int]  # succeeded, failed, cancelled
    recent: RecentRuns


def live_runs(conn: Connection, *, timeout_ms: int = 2000) -> LiveRuns:
    """Queued and running runs, the oldest queued run's age, active sweeps. Read in one
    transaction that no query holds longer than ``timeout_ms``: a slow database makes the
    scrape fail fast, not hang."""
    with conn.begin():
        _statement_timeout(conn, timeout_ms)
        by_status = {
            status: conn.execute(
                text("SELECT count(*) FROM runs WHERE status = :status"), {"status": status}
            ).scalar_one()
            for status in (RunStatus.queued.value, RunStatus.running.value)
        }
        oldest = conn.execute(
            text("SELECT extract(epoch FROM now() - min(created_at)) FROM runs WHERE status = 'queued'")
        ).scalar_one()
        active_sweeps = conn.execute(
            text(
                "SELECT count(DISTINCT sweep_id) FROM runs "
                "WHERE status IN ('queued', 'running') AND sweep_id IS NOT NULL"
            )
        ).scalar_one()
        by_user = _queues_by_user(conn)
    return LiveRuns(
        by_status=by_status,
        oldest_queued_age_s=float(oldest) if oldest is not None else None,
        active_sweeps=int(active_sweeps),
        by_user=by_user,
    )


def _queues_by_user(conn: Connection) -> dict[str, UserQueue]:
    """Each user's waiting, dispatched and running runs: one pass over the unfinished runs."""
    rows = conn.execute(
        text(
            "SELECT owner_id, "
            "count(*) FILTER (WHERE status = 'queued' AND dispatched_at IS NULL), "
            "count(*) FILTER (WHERE status = 'queued' AND dispatched_at IS NOT NULL), "
            "count(*) FILTER (WHERE status = 'running') "
            "FROM runs WHERE status IN ('queued', 'running') GROUP BY owner_id"
        )
    ).all()
    # By id, never by name: /metrics is open to any scraper, and names identify people (an
    # admin maps an id to its user with GET /v1/users/{id}).
    ids = [str(user_id) for user_id in conn.execute(text("SELECT id FROM users")).scalars()]
    queues = {user_id: UserQueue() for user_id in ids}
    for owner_id, waiting, dispatched, running in rows:
        queues[str(owner_id) if owner_id is not None else LEGACY_OWNER] = UserQueue(waiting, dispatched, running)
    return queues


def settled_runs(conn: Connection, *, window_s: float = 900.0, timeout_ms: int = 5000) -> SettledRuns:
    """Finished runs by final status, and the durations and core speed of those that
    finished within the last ``window_s`` seconds."""
    with conn.begin():
        _statement_timeout(conn, timeout_ms)
        by_status = {s.value: 0 for s in RunStatus if s.is_final}
        rows = conn.execute(
            text(
                "SELECT status, count(*) FROM runs WHERE status IN ('succeeded', 'failed', 'cancelled') GROUP BY status"
            )
        )
        for status, n in rows:
            by_status[status] = n
        recent = _recent_runs(conn, window_s)
    return SettledRuns(by_status=by_status, recent=recent)


def _statement_timeout(conn: Connection, timeout_ms: int) -> None:
    conn.execute(text("SELECT set_config('statement_timeout', :ms, true)"), {"ms": str(int(timeout_ms))})


def _recent_runs(conn: Connection, window_s: float) -> RecentRuns:
    finished: dict[str, int] = {s.value: 0 for s in RunStatus if s.is_final}
    durations: dict[str, Durations] = {}
    rows = conn.execute(
        text(
            "SELECT status, count(*), count(started_at), "
            "sum(extract(epoch FROM finished_at - started_at)), "
            "max(extract(epoch FROM finished_at - started_at)), "
            "percentile_cont(CAST(:quantiles AS double precision[])) WITHIN GROUP "
            "(ORDER BY extract(epoch FROM finished_at - started_at)) "
            f"FROM runs WHERE {_FINISHED_WITHIN} GROUP BY status"
        ),
        {"window": window_s, "quantiles": list(DURATION_QUANTILES)},
    )
    for status, n, started, total, longest, quantiles in rows:
        finished[status] = n
        if started:
            durations[status] = Durations(
                count=started,
                sum_s=float(total),
                max_s=float(longest),
                quantiles={
                    q: float(v) for q, v in zip(DURATION_QUANTILES, quantiles or (), strict=False) if v is not None
                },
            )
    events, core_wall_s = conn.execute(
        text(
            "SELECT coalesce(sum(events), 0), coalesce(sum(core_wall_s), 0) FROM runs "
            "WHERE status = 'succeeded' AND events IS NOT NULL AND core_wall_s > 0 "
            f"AND {_FINISHED_WITHIN}"
        ),
        {"window": window_s},
    ).one()
    return RecentRuns(
        window_s=window_s,
        finished=finished,
        durations=durations,
        events=int(events),
        core_wall_s=float(core_wall_s),
    )


@dataclass(frozen=True)
class QueueFigures:
    depth: dict[str, int]  # queue -> messages waiting (all priorities)
    unacked: int  # messages delivered to a worker and not yet acknowledged (every queue)


def queue_figures(redis_url: str, queues: list[str], *, timeout_s: float = 1.0) -> QueueFigures:
    """How many task messages wait in each queue (LLEN of its keys), and how many workers hold."""
    client = redis_client(redis_url, timeout_s=timeout_s)
    try:
        pipe = client.pipeline(transaction=False)
        for queue in queues:
            for key in queue_keys(queue):
                pipe.llen(key)
        pipe.hlen(UNACKED_HASH)
        answers = pipe.execute()
    finally:
        client.close()
    steps = len(PRIORITY_STEPS)
    depth = {q: int(sum(answers[i * steps : (i + 1) * steps])) for i, q in enumerate(queues)}
    return QueueFigures(depth=depth, unacked=int(answers[-1]))
