"""Handing runs to the workers, send-only: the dispatcher's pass and the simulate messages,
sent by task name (``send_task``) so that whoever enqueues — the API's routers, the schedules'
tick, the reconciler, the simulate task itself — imports neither the task bodies nor the
simulator (worker/tasks.py holds those; ``.importlinter`` keeps `api` off them).
"""

from __future__ import annotations

import logging
import os
import threading
import time
import uuid
from collections.abc import Iterable, Sequence

from sqlalchemy.orm import Session, sessionmaker

from services.runs.dispatch import dispatch
from services.settings import Settings
from worker.app import app

# The simulate task's name (worker/tasks.py registers its body under it).
SIMULATE = "tcplab.simulate"

log = logging.getLogger("tcplab.worker")


def enqueue(
    run_ids: Iterable[uuid.UUID] = (),
    *,
    factory: sessionmaker[Session],
    settings: Settings,
) -> None:
    """Hands runs to the workers, fairly: asks for a pass of the dispatcher
    (services/runs/dispatch.py), which fills the window with whoever's turn it is among every
    owner's waiting runs, and sends those. Whoever stores runs calls it — submissions and
    sweeps after their commit (`run_after_commit`: the dispatcher only sees committed runs);
    the simulate task and the reconciler call `fill_window`, which raises instead of logging.

    The pass runs at once in the process's dispatch thread, not in the caller's: a request
    does not wait for it, and the requests that arrive during a pass share the next one (one
    pass fills all the room there is), so a burst of submissions costs a few passes, not one
    each, and does not queue on the dispatch lock.

    `run_ids` are the runs the caller just stored: a hint only. They wait in PostgreSQL
    until their turn, which may be now or after other users' runs.

    Neither a database nor a broker that does not answer fails the caller, whose runs are
    committed: the failure is logged, and the reconciler (worker/reconcile.py), which ends
    every pass with the dispatcher and re-sends dispatched runs the broker lost, moves them
    once both answer again.

    ``factory`` and ``settings`` are the database and the dispatch window to use: the API
    passes its app's (api/deps.py, ``EnqueueDep``), a worker its process's (worker/db.py).
    """
    _DISPATCH.request(factory, settings)


class _DispatchThread:
    """One thread per process that runs dispatcher passes on request, coalescing the requests
    that arrive while a pass runs, or within `PASS_GAP_S` of the last pass's start: a pass
    costs the process a few milliseconds of CPU (its queries, the broker's sends), and under a
    stream of submissions a pass for nearly every one was a large part of the API's CPU (8
    clients submitting: 8.3 ms of API CPU a submission, 5.9-7.7 with the gap, on a noisy VM).
    A request after a quiet moment is served at once; under a stream, a run waits at most
    `PASS_GAP_S` longer to be sent. Started on first use, and again in a forked child (threads
    do not survive a fork)."""

    PASS_GAP_S = 0.025

    def __init__(self) -> None:
        self._wanted = threading.Event()
        self._guard = threading.Lock()
        self._thread: threading.Thread | None = None
        self._pid = 0
        # The databases with a pass requested, by factory; one pass each.
        self._targets: dict[int, tuple[sessionmaker[Session], Settings]] = {}

    def request(self, factory: sessionmaker[Session], settings: Settings) -> None:
        with self._guard:
            if self._thread is None or self._pid != os.getpid() or not self._thread.is_alive():
                self._wanted = threading.Event()
                self._pid = os.getpid()
                self._thread = threading.Thread(
                    target=self._serve, args=(self._wanted,), name="tcplab-dispatch", daemon=True
                )
                self._thread.start()
            self._targets[id(factory)] = (factory, settings)
            self._wanted.set()

    def _take_targets(self) -> list[tuple[sessionmaker[Session], Settings]]:
        with self._guard:
            targets, self._targets = list(self._targets.values()), {}
        return targets

    def _serve(self, wanted: threading.Event) -> None:
        last_pass = -float("inf")
        while True:
            wanted.wait()
            time.sleep(max(0.0, last_pass + self.PASS_GAP_S - time.monotonic()))
            wanted.clear()
            last_pass = time.monotonic()
            for factory, settings in self._take_targets():
                try:
                    fill_window(factory, settings)
                except Exception as exc:  # noqa: BLE001 - committed runs wait; the reconciler dispatches them
                    log.warning(
                        "the dispatcher did not run (%s: %s); queued runs wait in PostgreSQL for the next "
                        "finished run or the reconciler",
                        type(exc).__name__,
                        exc,
                    )


_DISPATCH = _DispatchThread()


def fill_window(factory: sessionmaker[Session], settings: Settings) -> list[uuid.UUID]:
    """Dispatches (marks and commits the next batches) and only then sends them, one message
    per batch; returns the runs sent. Raises the database's errors (the simulate task retries
    on them); a broker that does not take a message is logged: those runs stay marked
    dispatched and the reconciler re-sends them. The database and the window are the caller's:
    ``factory`` and ``settings``."""
    batches = dispatch(factory, settings)
    send(batches)
    return [run_id for batch in batches for run_id in batch]


def send(batches: Sequence[Sequence[uuid.UUID]]) -> None:
    """One simulate message per batch. A broker that does not take one is logged, not raised:
    the runs hold their place in the window and the reconciler re-sends them."""
    for i, batch in enumerate(batches):
        try:
            app.send_task(SIMULATE, args=[str(run_id) for run_id in batch])
        except Exception as exc:  # noqa: BLE001 - any broker failure: the reconciler covers it
            log.warning(
                "the broker did not take %d batch(es) (%s: %s); their runs stay queued in PostgreSQL and "
                "the reconciler will send them",
                len(batches) - i,
                type(exc).__name__,
                exc,
            )
            break
