"""Admission: may these runs be added now? The one check every path that creates runs goes
through — a run, a sweep's creation and extension, the stopping rule's extra replications, a
schedule's firing, a paper's reproduction — so none of them passes a limit the others keep.

Three limits (docs/users.md):
- the owner's quota of queued runs (`max_queued_runs`);
- the server's (`TCPLAB_MAX_QUEUED_RUNS`). Both count queued runs: a run answered from a stored
  result costs nothing;
- the per-sweep cap (`MAX_RUNS_PER_SWEEP`): every run a sweep has, answered from the cache or not.

A request past a limit is refused whole (`check`: 422 for the sweep cap, which waiting never
lifts; 429 for a queue, which drains). The stopping rule takes what fits instead (`room`), and
its point says which limit stopped it.

An owner's admissions serialise on a transaction-scoped advisory lock, taken before the counts
and held until the new runs are committed, so two workers growing two points of one sweep
cannot both take the last of the quota. The server-wide count is not serialised across
owners: a coarse guard against a flood, not an exact one.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from enum import StrEnum

from sqlalchemy.orm import Session

from services.errors import InvalidInputError, QuotaExceededError
from services.runs import repository as runs_repo
from services.users import Identity

MAX_RUNS_PER_SWEEP = 50_000
"""Runs one sweep may have (points × replications, extensions and the stopping rule's extra
replications included): a typo in a range should be a 422, not a million queued runs."""


class Limit(StrEnum):
    quota = "quota"
    sweep_cap = "sweep cap"
    server_queue = "server queue"


@dataclass(frozen=True)
class Room:
    """How many more runs may be added now, and the limit that sets that number (None when no
    limit applies)."""

    runs: int
    limit: Limit | None


def check_sweep_size(runs: int, *, path: str = "$.axes", what: str = "the sweep") -> None:
    """InvalidInputError (422) when a sweep would have more than `MAX_RUNS_PER_SWEEP` runs."""
    if runs > MAX_RUNS_PER_SWEEP:
        raise InvalidInputError(
            f"{what} would have {runs} runs; at most {MAX_RUNS_PER_SWEEP} (fewer axis values or replications)",
            path=path,
            kind="too_many_runs",
        )


def check(
    session: Session, owner: Identity | None, *, queued: int, max_queued: int | None, added: bool = False
) -> None:
    """Refuses (QuotaExceededError, 429: the request rolls back) adding `queued` runs to the
    queue when the owner would have more than their quota, or the server more than
    `max_queued` (TCPLAB_MAX_QUEUED_RUNS). Nothing to queue is always admitted.

    `added`: the `queued` runs are already flushed in this transaction, so the counts include
    them. Inserting first keeps the insert out of the owner's lock, which is then held for one
    count and the commit: one user's concurrent submissions queue on it (issue 12: a flushed
    run's INSERT took 3.6 of the 8.2 ms the lock was held)."""
    if queued <= 0:
        return
    uncounted = 0 if added else queued
    # The server's count first, outside the owner's lock (it guards nothing across owners):
    # the lock, held until the request commits, then covers one count (and the insert).
    if max_queued is not None:
        waiting = runs_repo.queued_count(session) + uncounted
        if waiting > max_queued:
            raise QuotaExceededError(
                f"the queue is full: {waiting} runs would wait, this server takes at most {max_queued} "
                "(TCPLAB_MAX_QUEUED_RUNS); try again once some have run",
            )
    lock(session, owner)
    if owner is not None:
        mine = runs_repo.queued_count(session, owner_id=owner.id) + uncounted
        if mine > owner.quotas.max_queued_runs:
            raise QuotaExceededError(
                f"{owner.name} would have {mine} runs queued, more than their quota of "
                f"{owner.quotas.max_queued_runs}; try again once some have run",
            )


def room(session: Session, owner: Identity | None, *, max_queued: int | None, sweep_runs: int | None = None) -> Room:
    """How many runs may still be added for `owner` (to a sweep that has `sweep_runs` runs;
    None: not a sweep), each counted as queued, and which limit binds first."""
    lock(session, owner)
    bounds: list[tuple[int, Limit]] = []
    if sweep_runs is not None:
        bounds.append((MAX_RUNS_PER_SWEEP - sweep_runs, Limit.sweep_cap))
    if owner is not None:
        bounds.append((owner.quotas.max_queued_runs - runs_repo.queued_count(session, owner_id=owner.id), Limit.quota))
    if max_queued is not None:
        bounds.append((max_queued - runs_repo.queued_count(session), Limit.server_queue))
    if not bounds:
        return Room(sys.maxsize, None)
    runs, limit = min(bounds, key=lambda bound: bound[0])
    return Room(max(0, runs), limit)


def lock(session: Session, owner: Identity | None) -> None:
    """The owner's admission lock, until the transaction ends. Take it before any row lock a
    worker's stopping rule also takes (a sweep point): one order, no deadlock."""
    runs_repo.lock_admissions(session, owner.id if owner is not None else None)
