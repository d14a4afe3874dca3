"""The reconciler against real processes: PostgreSQL says which runs were handed to the
broker and are unfinished, Redis what messages it holds; runs whose message was lost are sent
again and complete once, and runs waiting for their turn are dispatched by every pass."""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import func, select, update

from infra.broker import redis_client
from infra.embedded import effective_redis_url
from services.db.models import Result, Run, RunStatus
from tests.e2e.test_sweeps import done
from tests.support import wait_for
from worker.reconcile import reconcile, run_ids_in_broker

SWEEP = {
    "preset": "paper000-fig2a",
    "overrides": {"duration_s": 5, "warmup_s": 1},
    "axes": [{"path": "flows[*].loss.m", "values": [2, 9]}],
    "replications": 2,
    "seed": 31,
}


def later(seconds: float = 3600) -> dt.datetime:
    """A clock past the reconciler's grace period, so the runs just made count as stale."""
    return dt.datetime.now(dt.UTC) + dt.timedelta(seconds=seconds)


def broker_holds(settings: Any, run_ids: set[str], count: int, timeout_s: float = 30.0) -> set[str]:
    """The ids among `run_ids` the broker holds, once there are `count` of them.

    Waited for, never read once: a message can be out of Redis for a moment while a worker
    holds it. The shared test worker is parked with cancel_consumer, but a BRPOP it had already
    sent (kombu polls with a 1 s timeout) still pops the next message of the queue, and kombu
    puts it back (``_reject_inbound_message``) a moment later — on a loaded machine, long
    enough for a single read to find the message neither queued nor unacknowledged."""
    return wait_for(lambda: len(held := run_ids & run_ids_in_broker(settings)) == count and held, timeout_s=timeout_s)


def test_runs_whose_messages_redis_lost_are_sent_again_and_complete_once(
    client, test_settings, start_worker, db_session
):
    sweep = client.post("/v1/sweeps", json=SWEEP).json()
    run_ids = {r["run_id"] for r in client.get(f"/v1/sweeps/{sweep['id']}/runs").json()}
    assert len(run_ids) == 4
    # No worker consumes in this test yet. The broker holds the window's worth (one per
    # worker process: one here); the other runs wait in PostgreSQL for their turn.
    window = test_settings.effective_dispatch_window
    assert window == 1
    sent = broker_holds(test_settings, run_ids, window)
    nothing = reconcile(test_settings, now=later())
    assert (nothing.stale, nothing.resent, nothing.dispatched) == (window, [], [])

    # Redis loses its data (a restart without persistence, a failover, a flush).
    broker = redis_client(effective_redis_url(test_settings))
    try:
        broker.flushdb()
    finally:
        broker.close()
    assert not run_ids & run_ids_in_broker(test_settings)
    # A young run is left alone: its message may still be on its way.
    assert reconcile(test_settings).resent == []

    # A worker (re)connects, declaring its queue again; the reconciler sends the lost run,
    # and each finished run's task dispatches the next.
    worker = start_worker()
    try:
        report = reconcile(test_settings, now=later())
        assert {str(r) for r in report.resent} == sent
        finished = done(client, sweep["id"], timeout_s=120)
        assert finished["progress"]["succeeded"] == 4
        assert reconcile(test_settings, now=later()).stale == 0
    finally:
        worker.stop()

    db_session.expire_all()
    attempts = db_session.execute(select(func.sum(Run.attempts)).where(Run.sweep_id == sweep["id"])).scalar_one()
    assert attempts == 4  # each simulated once
    assert db_session.execute(select(func.count()).select_from(Result)).scalar_one() == 4


def _waiting(db_session: Any, sweep_id: str) -> int:
    db_session.expire_all()
    return db_session.execute(
        select(func.count()).select_from(Run).where(Run.sweep_id == sweep_id, Run.dispatched_at.is_(None))
    ).scalar_one()


def test_every_pass_dispatches_runs_waiting_for_room_nobody_filled(client, test_settings, db_session):
    """Room opens without a task finishing and without the API filling it (here: the
    dispatched run is cancelled behind the API's back, and no worker runs): the reconciler's
    pass hands the next run to the broker. (Cancelling through the API fills it at once.)"""
    sweep = client.post("/v1/sweeps", json={**SWEEP, "seed": 32}).json()
    run_ids = {r["run_id"] for r in client.get(f"/v1/sweeps/{sweep['id']}/runs").json()}
    (first,) = broker_holds(test_settings, run_ids, 1)
    assert client.post(f"/v1/runs/{first}/cancel").json()["status"] == "cancelled"
    # The cancelled run's message stays in the broker (its task will skip it); the freed slot
    # went to the next run.
    (second,) = broker_holds(test_settings, run_ids - {first}, 1)
    assert _waiting(db_session, sweep["id"]) == 2

    db_session.execute(update(Run).where(Run.id == second).values(status=RunStatus.cancelled))
    db_session.commit()
    report = reconcile(test_settings)
    assert len(report.dispatched) == 1 and report.resent == []
    (third,) = report.dispatched
    assert str(third) not in (first, second)
    broker_holds(test_settings, {str(third)}, 1)
    assert _waiting(db_session, sweep["id"]) == 1
    assert reconcile(test_settings).dispatched == []  # the window is full again


def test_a_run_stuck_running_without_a_message_is_sent_again(client, test_settings, db_session):
    run = client.post(
        "/v1/runs", json={"preset": "paper000-fig2a", "overrides": {"duration_s": 5, "warmup_s": 1, "seed": 77}}
    ).json()
    broker_holds(test_settings, {run["id"]}, 1)  # dispatched (the API's dispatch thread sends it)
    broker = redis_client(effective_redis_url(test_settings))
    try:
        broker.flushdb()  # its message is gone ...
    finally:
        broker.close()
    row: Any = db_session.get(Run, run["id"])
    row.status, row.started_at, row.attempts = "running", dt.datetime.now(dt.UTC), 1  # ... after a worker claimed it
    db_session.commit()

    within_timeout = reconcile(test_settings, now=later(test_settings.broker_visibility_timeout_s / 2))
    assert within_timeout.resent == []  # a live worker may still be running it
    beyond = reconcile(
        test_settings, now=later(test_settings.broker_visibility_timeout_s + test_settings.reconcile_grace_s + 1)
    )
    assert [str(r) for r in beyond.resent] == [run["id"]]
    wait_for(lambda: run["id"] in run_ids_in_broker(test_settings), timeout_s=5)
