"""Simulation tasks. A task takes a run id, opens its own sessions, and leaves every state
change in PostgreSQL; the message only says which run to look at.

Delivery is at least once (acks late, rejected back to the queue when a worker dies), so the
task is idempotent: `claim` skips finished runs, and results are stored once per cache key.

The broker only holds the runs the dispatcher handed it (about one per worker process; the
rest wait in PostgreSQL for their owner's turn, docs/fair-share.md), so every task ends by
running the dispatcher: the slot its run freed is filled at once.
"""

from __future__ import annotations

import logging
import socket
import uuid
from collections.abc import Iterable
from typing import Any

import tcpsim
from sqlalchemy.exc import DBAPIError, OperationalError

from services import sweeps
from services.db.session import session_scope
from services.runs import claim, complete, fail, release
from services.runs.dispatch import dispatch
from services.settings import get_settings
from worker.app import app
from worker.watch import RunWatch

SIMULATE = "tcplab.simulate"

log = logging.getLogger("tcplab.worker")


def enqueue(run_ids: Iterable[uuid.UUID] = ()) -> None:
    """Hands runs to the workers, fairly: runs the dispatcher (services/runs/dispatch.py),
    which fills the window with whoever's turn it is among every owner's waiting runs, and
    sends those. Whoever stores runs calls it — submissions and sweeps after their commit
    (`run_after_commit`: the dispatcher only sees committed runs); the simulate task and the
    reconciler call `fill_window`, which raises instead of logging.

    `run_ids` are the runs the caller just stored: a hint only. They wait in PostgreSQL
    until their turn, which may be now or after other users' runs.

    Neither a database nor a broker that does not answer fails the caller, whose runs are
    committed: the failure is logged, and the reconciler (worker/reconcile.py), which ends
    every pass with the dispatcher and re-sends dispatched runs the broker lost, moves them
    once both answer again.
    """
    try:
        fill_window()
    except Exception as exc:  # noqa: BLE001 - committed runs wait; the reconciler dispatches them
        log.warning(
            "the dispatcher did not run (%s: %s); queued runs wait in PostgreSQL for the next "
            "finished run or the reconciler",
            type(exc).__name__,
            exc,
        )


def fill_window() -> list[uuid.UUID]:
    """Dispatches (marks and commits the next runs) and only then sends their ids; returns
    them. Raises the database's errors (the simulate task retries on them); a broker that
    does not take a message is logged: those runs stay marked dispatched and the reconciler
    re-sends them."""
    ids = dispatch()
    for i, run_id in enumerate(ids):
        try:
            app.send_task(SIMULATE, args=[str(run_id)])
        except Exception as exc:  # noqa: BLE001 - any broker failure: the reconciler covers it
            log.warning(
                "the broker did not take %d run(s) (%s: %s); they stay queued in PostgreSQL and "
                "the reconciler will send them",
                len(ids) - i,
                type(exc).__name__,
                exc,
            )
            break
    return ids


def _with_server_limits(scenario: dict[str, Any], max_wall_s: float, max_events: int) -> dict[str, Any]:
    """The scenario with the server's caps on wall-clock time and events applied (the tighter
    of each pair): past either, the core stops the run with a limit_exceeded failure."""
    limits = dict(scenario.get("limits") or {})
    limits["max_wall_s"] = min(limits.get("max_wall_s") or max_wall_s, max_wall_s)
    limits["max_events"] = min(limits.get("max_events") or max_events, max_events)
    return {**scenario, "limits": limits}


@app.task(
    name=SIMULATE,
    bind=True,
    # Only transient trouble is retried: the database going away. The core's verdicts are
    # final and recorded as failures.
    autoretry_for=(OperationalError, DBAPIError),
    retry_backoff=True,
    retry_backoff_max=60,
    max_retries=8,
)
def simulate(self: Any, run_id: str) -> None:
    rid = uuid.UUID(run_id)
    worker = self.request.hostname or socket.gethostname()
    with session_scope() as session:
        scenario = claim(session, rid, worker)
    if scenario is None:
        # Finished or cancelled already (a redelivery, a retry after the database went away, a
        # cancelled run's message): only what follows a run may still be owed. It is idempotent.
        _after_run(rid)
        return
    settings = get_settings()
    watch = RunWatch(rid, worker, settings.worker_heartbeat_s)
    try:
        with watch:
            result = tcpsim.run(
                _with_server_limits(scenario, settings.run_max_wall_s, settings.run_max_events), stop=watch.token
            )
    except tcpsim.Stopped:
        _stopped(rid, worker, watch.reason)
        return
    except tcpsim.LimitExceeded as e:
        outcome: tuple[str, str] | None = (str(e), "limit_exceeded")
    except tcpsim.ScenarioError as e:
        outcome = (str(e), f"scenario.{e.kind}")
    except tcpsim.InternalError as e:
        outcome = (str(e), "internal")
    else:
        outcome = None
    with session_scope() as session:
        if outcome is None:
            complete(session, rid, result)
        else:
            fail(session, rid, *outcome)
    _after_run(rid)


def _stopped(run_id: uuid.UUID, worker: str, reason: str | None) -> None:
    """The core stopped early at the watcher's request. Cancelled (or handed to another
    worker): nothing to store, the slot is free. Shutting down: the run goes back to the queue
    with its place in the window and is sent again, for a worker that stays."""
    if reason == "shutdown":
        with session_scope() as session:
            released = release(session, run_id, worker)
        if released:
            log.info("run %s given back to the queue: this worker is shutting down", run_id)
            app.send_task(SIMULATE, args=[str(run_id)])
        return
    log.info("run %s stopped: it was cancelled or is no longer this worker's", run_id)
    _after_run(run_id)


def _after_run(run_id: uuid.UUID) -> None:
    """The run has left the window. A sweep with a stopping rule may want more replications
    of its point (decided in a transaction of its own, after the result is safe); they wait
    in PostgreSQL like any run. Then the dispatcher fills the freed slot at once, with whoever's
    turn it is. A database error here propagates: the task is retried, and does this again."""
    with session_scope() as session:
        sweeps.after_run(session, run_id)
    fill_window()
