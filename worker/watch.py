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

from celery.signals import worker_init, worker_shutting_down

import tcpsim
from services.runs import check_in_batch
from worker.db import session_scope

POLL_S = 0.25
"""How often the watcher asks PostgreSQL whether the batch's runs are still this worker's."""

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


class BatchWatch:
    """Watches the runs of one task's batch while the worker simulates them one by one::

        with BatchWatch(run_ids, worker, heartbeat_s) as watch:
            for run_id in run_ids:
                if watch.stopping or run_id in watch.gone:
                    ...  # shutting down: give the rest back; gone: skip it
                tcpsim.run(scenario, stop=watch.start(run_id))

    Every claimed run gets the heartbeat until the watch ends (a simulated run's result is
    stored with the batch's, at its end). ``watch.gone`` holds the runs cancelled, finished or
    taken over elsewhere; the one being simulated is stopped at once (``reason`` "gone").
    ``stopping`` turns true when the worker shuts down; the run being simulated is stopped
    (``reason`` "shutdown")."""

    def __init__(self, run_ids: list[uuid.UUID], worker: str, heartbeat_s: float) -> None:
        self.run_ids = list(run_ids)
        self.worker = worker
        self.heartbeat_s = heartbeat_s
        self.gone: set[uuid.UUID] = set()
        self.stopping = False
        self.reason: str | None = None
        self._current: uuid.UUID | None = None
        self._token = tcpsim.StopToken()
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, name=f"watch-{self.run_ids[0]}", daemon=True)

    def __enter__(self) -> BatchWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        self._thread.join(timeout=10)

    def start(self, run_id: uuid.UUID) -> tcpsim.StopToken:
        """The stop token for simulating `run_id` now (stopped already when it is gone or the
        worker is stopping)."""
        with self._lock:
            self._current, self._token, self.reason = run_id, tcpsim.StopToken(), None
            if self.stopping:
                self._stop("shutdown")
            elif run_id in self.gone:
                self._stop("gone")
            return self._token

    def _stop(self, reason: str) -> None:
        self.reason = reason
        self._token.stop()

    def _watch(self) -> None:
        last_beat = time.monotonic()
        while not self._done.wait(POLL_S):
            if shutting_down():
                with self._lock:
                    self.stopping = True
                    self._stop("shutdown")
                return
            beat = time.monotonic() - last_beat >= self.heartbeat_s
            watched = [r for r in self.run_ids if r not in self.gone]
            if not watched:
                return
            try:
                with session_scope() as session:
                    mine = check_in_batch(session, watched, self.worker, beat=beat)
            except Exception as exc:  # noqa: BLE001 - the database away: keep simulating, try again
                log.warning("could not check in %d run(s) (%s: %s)", len(watched), type(exc).__name__, exc)
                continue
            if beat:
                last_beat = time.monotonic()
            with self._lock:
                self.gone.update(r for r in watched if r not in mine)
                if self._current in self.gone:
                    self._stop("gone")
