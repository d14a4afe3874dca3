"""Watching a run while the core simulates it, from a thread beside it (the core runs without
the GIL). Three things stop a simulation early, all through the core's cooperative stop
(`tcpsim.StopToken`, checked every few thousand events):

- the run was cancelled (or finished, or handed to another worker): polled every
  `POLL_S`, so a cancelled run frees its worker within about half a second;
- the worker is shutting down (SIGTERM's warm shutdown, or a cold one): its run goes back to
  the queue at once, for a worker that stays, instead of holding the shutdown for as long as
  the run has left. The main process sets a flag its pool processes inherited (Python signal
  handlers cannot run in a pool process while its main thread is inside the core);
- (the wall-clock cap is the core's own `limits.max_wall_s`).

Every `TCPLAB_WORKER_HEARTBEAT_S` the check is also the worker's heartbeat in PostgreSQL: a run
whose worker falls silent (killed, its machine gone) is handed to another by the reconciler
(`services.runs.reclaim_abandoned`).
"""

from __future__ import annotations

import logging
import multiprocessing
import threading
import time
import uuid
from multiprocessing.synchronize import Event
from typing import Any

import tcpsim
from celery.signals import worker_init, worker_shutting_down

from services.db.session import session_scope
from services.runs import check_in

POLL_S = 0.25
"""How often the watcher asks PostgreSQL whether the run is still this worker's to simulate."""

log = logging.getLogger("tcplab.worker")

_stopping: Event | None = None
"""Set when the worker shuts down; made in the main process before the pool forks, so every
pool process holds the same one."""


@worker_init.connect
def _share_a_shutdown_flag(**_: Any) -> None:
    global _stopping
    _stopping = multiprocessing.get_context("fork").Event()


@worker_shutting_down.connect
def _stop_the_runs(**_: Any) -> None:
    if _stopping is not None:
        _stopping.set()


def shutting_down() -> bool:
    return _stopping is not None and _stopping.is_set()


class RunWatch:
    """``with RunWatch(run_id, worker, heartbeat_s) as watch: tcpsim.run(s, stop=watch.token)``.

    After the run, ``watch.reason`` says why the token was stopped: ``"gone"`` (cancelled,
    finished or taken over elsewhere), ``"shutdown"``, or None (it was not)."""

    def __init__(self, run_id: uuid.UUID, worker: str, heartbeat_s: float) -> None:
        self.run_id = run_id
        self.worker = worker
        self.heartbeat_s = heartbeat_s
        self.token = tcpsim.StopToken()
        self.reason: str | None = None
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, name=f"watch-{run_id}", daemon=True)

    def __enter__(self) -> RunWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        self._thread.join(timeout=10)

    def _stop(self, reason: str) -> None:
        self.reason = reason
        self.token.stop()

    def _watch(self) -> None:
        last_beat = time.monotonic()
        while not self._done.wait(POLL_S):
            if shutting_down():
                self._stop("shutdown")
                return
            beat = time.monotonic() - last_beat >= self.heartbeat_s
            try:
                with session_scope() as session:
                    mine = check_in(session, self.run_id, self.worker, beat=beat)
            except Exception as exc:  # noqa: BLE001 - the database away: keep simulating, try again
                log.warning("could not check in run %s (%s: %s)", self.run_id, type(exc).__name__, exc)
                continue
            if beat:
                last_beat = time.monotonic()
            if not mine:
                self._stop("gone")
                return
