"""Simulation tasks. A task takes a run id, opens its own sessions, and leaves every state
change in PostgreSQL; the message only says which run to look at.

Delivery is at least once (acks late, rejected back to the queue when a worker dies), so the
task is idempotent: `claim` skips finished runs, and results are stored once per cache key.
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
from services.db.session import run_after_commit, session_scope
from services.runs import claim, complete, fail
from services.settings import get_settings
from worker.app import app

SIMULATE = "tcplab.simulate"

log = logging.getLogger("tcplab.worker")


def enqueue(run_ids: Iterable[uuid.UUID]) -> None:
    """Sends each run id to the workers. Call it after the runs' rows have committed
    (`run_after_commit`): a worker must find the row it is sent.

    A broker that does not answer (after kombu's own retries) loses nothing: the runs are
    stored as queued, and the reconciler (worker/reconcile.py) sends them once it answers
    again. So the failure is logged, not raised into a request that has already committed.
    """
    ids = [str(run_id) for run_id in run_ids]
    for i, run_id in enumerate(ids):
        try:
            app.send_task(SIMULATE, args=[run_id])
        except Exception as exc:  # noqa: BLE001 - any broker failure: the reconciler covers it
            log.warning(
                "the broker did not take %d run(s) (%s: %s); they stay queued in PostgreSQL and "
                "the reconciler will send them",
                len(ids) - i,
                type(exc).__name__,
                exc,
            )
            return


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
        # Finished already (a redelivery, or a retry after the database went away): only the
        # stopping rule may still be owed. It is idempotent.
        _apply_stopping_rule(rid)
        return
    try:
        settings = get_settings()
        result = tcpsim.run(_with_server_limits(scenario, settings.run_max_wall_s, settings.run_max_events))
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
    _apply_stopping_rule(rid)


def _apply_stopping_rule(run_id: uuid.UUID) -> None:
    """A sweep with a stopping rule may want more replications of the run's point: decided
    in a transaction of its own, after the result is safe."""
    with session_scope() as session:
        more = sweeps.after_run(session, run_id)
        if more:
            run_after_commit(session, lambda: enqueue(more))
