"""Simulation tasks. A task takes a batch of run ids (one or more of one owner's runs, the
dispatcher's choice), opens its own sessions, and leaves every state change in PostgreSQL; the
message only says which runs to look at.

A batch costs one claim, one store and one dispatch whatever its size, so a sweep of 1-ms runs
is not paced by per-run transactions (docs/fair-share.md, "Batches"): the task claims its runs
in one transaction, simulates them one after another, and stores every result in one more.
Past twice `TCPLAB_BATCH_TARGET_S` it starts no further run and gives the rest back to the
dispatcher, so a batch whose runs cost more than their owner's latest ones still ends in time.

Delivery is at least once (acks late, rejected back to the queue when a worker dies), so the
task is idempotent: `claim_batch` skips finished runs, and results are stored once per cache
key. A worker killed mid-batch stored nothing: its runs are handed on by their silent
heartbeat (worker/reconcile.py) and simulated again, each result stored once.

The broker only holds the batches the dispatcher handed it (about one per worker process; the
rest wait in PostgreSQL for their owner's turn), so every task ends by running the dispatcher:
the slot its batch freed is filled at once.
"""

from __future__ import annotations

import logging
import socket
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.exc import DBAPIError, OperationalError

import tcpsim
from services import sweeps
from services.runs import claim_batch, complete_batch, fail_batch, give_back, release_batch
from services.settings import Settings, get_settings
from worker.app import app
from worker.db import get_session_factory, session_scope
from worker.enqueue import SIMULATE, fill_window, send
from worker.watch import BatchWatch

log = logging.getLogger("tcplab.worker")


@dataclass
class _Outcomes:
    """What a batch leaves to store: results, the core's verdicts, and the runs it did not
    simulate (given back past its time budget, or released when the worker shuts down)."""

    completed: list[tuple[uuid.UUID, dict[str, Any]]] = field(default_factory=list)
    failed: list[tuple[uuid.UUID, str, str]] = field(default_factory=list)
    unstarted: list[uuid.UUID] = field(default_factory=list)
    shutting_down: bool = False


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
def simulate(self: Any, *run_ids: str) -> None:
    """Simulates a batch of runs (one run is a batch of one)."""
    ids = [uuid.UUID(run_id) for run_id in run_ids]
    worker = self.request.hostname or socket.gethostname()
    settings = get_settings()
    with session_scope() as session:
        scenarios = claim_batch(session, ids, worker, settings)
    # Runs not claimed are finished or cancelled already (a redelivery, a retry after the
    # database went away, a cancelled run's message): only what follows them may be owed.
    if scenarios:
        started = time.monotonic()
        outcomes = _simulate(scenarios, worker, settings)
        released = _store(outcomes, worker)
        # One line per batch; `run_ids` names every run it claimed, so that a run's task is
        # found in the log whatever its place in the batch (the task's run_id is the first's).
        log.info(
            "batch of %d run(s): %d succeeded, %d failed, %d not started, in %.3f s",
            len(scenarios),
            len(outcomes.completed),
            len(outcomes.failed),
            len(outcomes.unstarted),
            time.monotonic() - started,
            extra={"run_ids": list(scenarios)},
        )
        if released:
            log.info("%d run(s) given back to the queue: this worker is shutting down", len(released))
            send([released])
    _after_runs(ids, settings)


def _simulate(scenarios: dict[uuid.UUID, str], worker: str, settings: Settings) -> _Outcomes:
    """Runs the batch's simulations one after another, under one watch."""
    budget_s = 2 * settings.batch_target_s
    outcomes = _Outcomes()
    ids = list(scenarios)
    started = time.monotonic()
    with BatchWatch(ids, worker, settings.worker_heartbeat_s) as watch:
        for i, run_id in enumerate(ids):
            if watch.stopping or (i > 0 and time.monotonic() - started > budget_s):
                outcomes.unstarted = ids[i:]
                break
            if run_id in watch.gone:
                continue
            scenario = scenarios[run_id]  # JSON text, the server's and the owner's caps applied
            try:
                # Columns: the per-flow table and traces as arrays, no JSON text in between.
                outcomes.completed.append((run_id, tcpsim.run(scenario, stop=watch.start(run_id), columns=True)))
            except tcpsim.Stopped:
                if watch.reason == "shutdown":
                    outcomes.unstarted = ids[i:]
                    break
                log.info("run %s stopped: it was cancelled or is no longer this worker's", run_id)
            except tcpsim.LimitExceeded as e:
                outcomes.failed.append((run_id, str(e), "limit_exceeded"))
            except tcpsim.ScenarioError as e:
                outcomes.failed.append((run_id, str(e), f"scenario.{e.kind}"))
            except tcpsim.InternalError as e:
                outcomes.failed.append((run_id, str(e), "internal"))
        outcomes.shutting_down = watch.stopping
    return outcomes


def _store(outcomes: _Outcomes, worker: str) -> list[uuid.UUID]:
    """Stores the batch's results and verdicts in one transaction, and hands back what it did
    not simulate: past its budget, to wait for the dispatcher again; when the worker shuts
    down, released with their place in the window (returned: the caller sends them again,
    for a worker that stays)."""
    released: list[uuid.UUID] = []
    with session_scope() as session:
        if outcomes.completed:
            complete_batch(session, outcomes.completed)
        if outcomes.failed:
            fail_batch(session, outcomes.failed)
        if outcomes.unstarted and outcomes.shutting_down:
            released = release_batch(session, outcomes.unstarted, worker)
        elif outcomes.unstarted:
            give_back(session, outcomes.unstarted, worker)
    return released


def _after_runs(run_ids: list[uuid.UUID], settings: Settings) -> None:
    """The batch has left the window. A sweep with a stopping rule may want more replications
    of its points (decided in a transaction of its own, after the results are safe); they wait
    in PostgreSQL like any run. Then the dispatcher fills the freed slot at once, with whoever's
    turn it is. A database error here propagates: the task is retried, and does this again."""
    with session_scope() as session:
        sweeps.after_runs(session, run_ids, settings)
    fill_window(get_session_factory(), settings)
