"""The reconciler against real processes: PostgreSQL says which runs are unfinished, Redis
what messages it holds; runs whose message was lost are sent again and complete once."""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import func, select

from services.broker import redis_client
from services.db.models import Result, Run
from services.embedded import effective_redis_url
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


def test_runs_whose_messages_redis_lost_are_sent_again_and_complete_once(client, test_settings, start_worker, db_session):
    sweep = client.post("/v1/sweeps", json=SWEEP).json()
    run_ids = {r["run_id"] for r in client.get(f"/v1/sweeps/{sweep['id']}/runs").json()}
    assert len(run_ids) == 4
    # No worker consumes in this test yet: the four messages wait in the broker.
    assert run_ids <= run_ids_in_broker(test_settings)
    nothing = reconcile(test_settings, now=later())
    assert nothing.stale >= 4 and nothing.resent == []

    # Redis loses its data (a restart without persistence, a failover, a flush).
    broker = redis_client(effective_redis_url(test_settings))
    try:
        broker.flushdb()
    finally:
        broker.close()
    assert not run_ids & run_ids_in_broker(test_settings)
    # A young run is left alone: its message may still be on its way.
    assert reconcile(test_settings).resent == []

    # A worker (re)connects, declaring its queue again; the reconciler sends the lost runs.
    worker = start_worker()
    try:
        report = reconcile(test_settings, now=later())
        assert {str(r) for r in report.resent} == run_ids
        finished = done(client, sweep["id"], timeout_s=120)
        assert finished["progress"]["succeeded"] == 4
        assert reconcile(test_settings, now=later()).stale == 0
    finally:
        worker.stop()

    db_session.expire_all()
    attempts = db_session.execute(select(func.sum(Run.attempts)).where(Run.sweep_id == sweep["id"])).scalar_one()
    assert attempts == 4  # each simulated once
    assert db_session.execute(select(func.count()).select_from(Result)).scalar_one() == 4


def test_a_run_stuck_running_without_a_message_is_sent_again(client, test_settings, db_session):
    run = client.post("/v1/runs", json={"preset": "paper000-fig2a", "overrides": {"duration_s": 5, "warmup_s": 1, "seed": 77}}).json()
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
    beyond = reconcile(test_settings, now=later(test_settings.broker_visibility_timeout_s + test_settings.reconcile_grace_s + 1))
    assert [str(r) for r in beyond.resent] == [run["id"]]
    wait_for(lambda: run["id"] in run_ids_in_broker(test_settings), timeout_s=5)
