"""The reconciler: PostgreSQL is the source of truth, so a run the database says was handed
to the broker (or is running for too long) but whose message the broker no longer holds is
sent again; and runs waiting for their turn are dispatched even when nothing else triggers it.

Messages are lost when Redis restarts without its data, is flushed, or fails over; runs are
abandoned when their worker dies (a killed process, a lost machine). Each pass:

0. hands on the runs whose worker fell silent: running, with no heartbeat for
   `worker_dead_after_s` (a live worker beats every `worker_heartbeat_s`, worker/watch.py).
   They go back to the queue with their place in the dispatch window and are sent again, so
   another worker takes them within `worker_dead_after_s` + `reconcile_interval_s`;
1. reads the runs still queued though dispatched more than `reconcile_grace_s` ago (a younger
   one's message may be on its way: it is sent after the dispatcher's commit), and the runs
   still running though started before the broker's visibility timeout (a live worker
   acknowledges before that). Runs waiting in PostgreSQL (not dispatched) have no message by
   design: they are the dispatcher's, not the reconciler's;
2. reads every simulate message the broker holds: the queue's lists (one per priority step)
   and the hash of delivered-but-unacknowledged messages;
3. sends the runs of (1) that are not in (2) and are still unfinished when checked again;
4. runs the dispatcher (`enqueue`), which fills whatever room the window has: after Redis
   lost everything, or a dispatcher that failed, the waiting runs move again.

A run sent twice is harmless — `claim` skips finished runs and results are stored once per
cache key — so the rare race (a worker takes a message between steps 2 and 3) costs at most
one repeated simulation, never a lost or duplicated result.

Runs every `reconcile_interval_s` under Celery beat (`tcplab.reconcile`, on the control queue:
never behind simulations), or once by hand: `python -m worker.reconcile`.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import logging
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from infra.broker import UNACKED_HASH, queue_keys, redis_client
from infra.embedded import effective_redis_url
from services.runs import reclaim_abandoned
from services.runs import repository as runs_repo
from services.runs.dispatch import stale_in_flight
from services.settings import Settings, get_settings
from worker.app import app
from worker.db import get_session_factory, session_scope
from worker.enqueue import SIMULATE, fill_window

RECONCILE = "tcplab.reconcile"

log = logging.getLogger("tcplab.reconcile")


@dataclass(frozen=True)
class Report:
    stale: int
    """Dispatched or running runs old enough to be checked."""
    in_broker: int
    """Simulate messages the broker holds (queued or delivered, unacknowledged)."""
    resent: list[uuid.UUID]
    dispatched: list[uuid.UUID] = field(default_factory=list)
    """Waiting runs the closing dispatcher pass handed to the broker."""
    reclaimed: list[uuid.UUID] = field(default_factory=list)
    """Running runs whose worker fell silent, handed to the broker again."""


def _run_ids_of(message: Any) -> list[str]:
    """The run ids a kombu/Celery message carries (a batch), if it is a simulate task."""
    if not isinstance(message, dict) or message.get("headers", {}).get("task") != SIMULATE:
        return []
    body = message.get("body")
    try:
        if message.get("properties", {}).get("body_encoding") == "base64":
            body = base64.b64decode(body)
        args = json.loads(body)[0]
        return [str(uuid.UUID(str(arg))) for arg in args]
    except (ValueError, TypeError, IndexError, KeyError):
        return []


def run_ids_in_broker(settings: Settings) -> set[str]:
    """Every run id the broker holds a simulate message for."""
    client = redis_client(effective_redis_url(settings), timeout_s=10.0)
    try:
        raw: list[bytes] = []
        for key in queue_keys(settings.queue):
            raw.extend(client.lrange(key, 0, -1))
        unacked = [json.loads(v)[0] for v in client.hvals(UNACKED_HASH)]
    finally:
        client.close()
    return {run_id for m in raw for run_id in _run_ids_of(json.loads(m))} | {
        run_id for m in unacked for run_id in _run_ids_of(m)
    }


def reconcile(settings: Settings | None = None, *, now: dt.datetime | None = None) -> Report:
    settings = settings or get_settings()
    now = now or dt.datetime.now(dt.UTC)
    with session_scope() as session:
        reclaimed = reclaim_abandoned(session, settings)
    _send(reclaimed)
    if reclaimed:
        log.warning("handed on %d run(s) whose worker fell silent: %s", len(reclaimed), _short(reclaimed))
    with session_scope() as session:
        stale = stale_in_flight(
            session,
            dispatched_before=now - dt.timedelta(seconds=settings.reconcile_grace_s),
            started_before=now
            - dt.timedelta(seconds=settings.broker_visibility_timeout_s + settings.reconcile_grace_s),
        )
    present: set[str] = set()
    resend: list[uuid.UUID] = []
    if stale:
        present = run_ids_in_broker(settings)
        missing = [r for r in stale if str(r) not in present]
        with session_scope() as session:
            resend = runs_repo.unfinished_among(session, missing)
        _send(resend)
        if resend:
            log.warning("re-sent %d run(s) whose broker message was lost: %s", len(resend), _short(resend))
    dispatched = fill_window(get_session_factory(), settings)
    if dispatched:
        log.info("dispatched %d waiting run(s): %s", len(dispatched), _short(dispatched))
    return Report(len(stale), len(present), resend, dispatched, reclaimed)


def _send(run_ids: list[uuid.UUID]) -> None:
    """Sends runs that already hold their place in the window (their dispatched_at stays), one
    message per batch they were dispatched in: the window counts batches."""
    if not run_ids:
        return
    with session_scope() as session:
        batches = runs_repo.batches_of(session, run_ids)
    for batch in batches:
        app.send_task(SIMULATE, args=[str(run_id) for run_id in batch])


def _short(ids: Iterable[uuid.UUID], limit: int = 10) -> str:
    ids = list(ids)
    head = ", ".join(str(i) for i in ids[:limit])
    return head + (f" … (+{len(ids) - limit})" if len(ids) > limit else "")


@app.task(name=RECONCILE, acks_late=False, ignore_result=True)
def reconcile_task() -> dict[str, int]:
    report = reconcile()
    return {
        "stale": report.stale,
        "in_broker": report.in_broker,
        "resent": len(report.resent),
        "dispatched": len(report.dispatched),
        "reclaimed": len(report.reclaimed),
    }


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO)
    result = reconcile()
    print(
        f"stale runs {result.stale}, simulate messages in the broker {result.in_broker}, "
        f"re-sent {len(result.resent)}, dispatched {len(result.dispatched)}, "
        f"handed on from silent workers {len(result.reclaimed)}"
    )
