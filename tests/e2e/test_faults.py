"""Faults against real processes: Redis stopped and started again (losing its data) while a
sweep is queued and running; a task delivered twice. PostgreSQL is the source of truth (it
holds every queued run; the broker only the dispatched window's worth), the reconciler
re-sends what Redis lost, and every run completes exactly once."""

from __future__ import annotations

import time

import pytest
from sqlalchemy import func, select

from services.db.models import Result, Run, RunStatus
from tests.e2e.test_reconcile import later
from tests.e2e.test_runs import FIG2_SHORT, finished
from tests.support import wait_for
from worker.app import app as celery_app
from worker.enqueue import SIMULATE
from worker.reconcile import reconcile

LONG_SWEEP = {
    "preset": "paper000-fig2a",
    # About a second of simulation per run here: the sweep is still queued and running when
    # Redis goes away.
    "overrides": {"duration_s": 1000},
    "axes": [{"path": "flows[*].loss.m", "values": [3, 12, 30]}],
    "replications": 3,
    "seed": 41,
}


def test_a_sweep_survives_a_redis_restart_that_loses_every_message(
    client, celery_worker_process, redis_server, test_settings, db_session
):
    if redis_server is None:
        pytest.skip("needs the embedded test Redis, which this test restarts (an external one is configured)")
    sweep = client.post("/v1/sweeps", json=LONG_SWEEP).json()
    total = sweep["created"]["enqueued"]
    assert total == 9

    def some_done_some_not() -> bool:
        p = client.get(f"/v1/sweeps/{sweep['id']}").json()["progress"]
        return p["succeeded"] >= 1 and p["queued"] >= 1

    wait_for(some_done_some_not, timeout_s=120, interval_s=0.1)
    redis_server.stop()  # no persistence: every queued and unacknowledged message is gone
    # A run submitted while Redis is down is stored and answered; it waits in PostgreSQL for
    # its turn like any run (the dispatcher sends it once there is room and Redis answers).
    during = client.post("/v1/runs", json={**FIG2_SHORT, "overrides": {**FIG2_SHORT["overrides"], "seed": 808}})
    assert during.status_code == 201 and during.json()["status"] == "queued"
    time.sleep(1.0)
    redis_server.start()

    # The worker reconnects on its own; the reconciler (beat's job, called here to keep the
    # test short) re-sends whatever PostgreSQL says was dispatched or is running and Redis
    # does not hold, then dispatches; each finished run's task dispatches the next.
    resent: set[str] = set()

    def all_done() -> bool:
        resent.update(str(r) for r in reconcile(test_settings, now=later()).resent)
        return client.get(f"/v1/sweeps/{sweep['id']}").json()["status"] == "done"

    wait_for(all_done, timeout_s=240, interval_s=2.0)
    assert resent, "Redis lost the in-flight run's message: the reconciler must have re-sent it"

    db_session.expire_all()
    runs = db_session.execute(select(Run).where(Run.sweep_id == sweep["id"])).scalars().all()
    assert {r.status for r in runs} == {RunStatus.succeeded}
    assert all(1 <= r.attempts <= 2 for r in runs), [r.attempts for r in runs]  # a run cut off by the loss ran again
    keys = {r.cache_key for r in runs}
    stored = db_session.execute(select(func.count()).select_from(Result).where(Result.cache_key.in_(keys))).scalar_one()
    assert stored == len(keys) == 9  # one result each, none twice
    late = finished(client, during.json()["id"])
    assert (late["status"], late["attempts"]) == ("succeeded", 1)


def test_a_task_delivered_twice_stores_one_result_and_simulates_once(client, celery_worker_process, db_session):
    run = client.post("/v1/runs", json={**FIG2_SHORT, "overrides": {**FIG2_SHORT["overrides"], "seed": 4242}}).json()
    first = finished(client, run["id"])
    assert first["status"] == "succeeded" and first["attempts"] == 1
    celery_app.send_task(SIMULATE, args=[run["id"]])  # the same message again, as a redelivery would
    # One worker process, one message at a time, in order: once a run sent after the
    # duplicate has finished, the duplicate has been taken (and skipped).
    marker = client.post("/v1/runs", json={**FIG2_SHORT, "overrides": {**FIG2_SHORT["overrides"], "seed": 4343}}).json()
    assert finished(client, marker["id"])["status"] == "succeeded"
    again = client.get(f"/v1/runs/{run['id']}").json()
    assert (again["status"], again["attempts"], again["finished_at"]) == ("succeeded", 1, first["finished_at"])
    db_session.expire_all()
    assert db_session.execute(select(func.count()).select_from(Result)).scalar_one() == 2  # the run's and the marker's


def test_the_api_answers_503_while_postgresql_restarts_and_no_run_is_stuck_or_doubled(
    client, celery_worker_process, postgres_server, db_session
):
    if postgres_server is None:
        pytest.skip("needs the embedded test PostgreSQL, which this test restarts (an external one is configured)")
    sweep = client.post(
        "/v1/sweeps", json={**LONG_SWEEP, "seed": 43, "axes": [{"path": "flows[*].loss.m", "values": [5, 25]}]}
    ).json()

    def some_done_some_not() -> bool:
        p = client.get(f"/v1/sweeps/{sweep['id']}").json()["progress"]
        return p["succeeded"] >= 1 and p["queued"] >= 1

    wait_for(some_done_some_not, timeout_s=120, interval_s=0.1)
    postgres_server.stop()
    try:
        down = client.get(f"/v1/sweeps/{sweep['id']}")
        assert down.status_code == 503 and "database is unavailable" in down.json()["detail"]
        assert down.headers["retry-after"] == "5"
        assert client.post("/v1/runs", json=FIG2_SHORT).status_code == 503
        assert client.get("/readyz").status_code == 503
        time.sleep(2.0)  # the worker's claims and completions fail meanwhile and are retried
    finally:
        postgres_server.start()

    assert client.get("/readyz").status_code == 200
    finished_sweep = wait_for(
        lambda: (s := client.get(f"/v1/sweeps/{sweep['id']}").json())["status"] == "done" and s,
        timeout_s=240,
        interval_s=1.0,
    )
    assert finished_sweep["progress"]["succeeded"] == 6
    db_session.expire_all()
    runs = db_session.execute(select(Run).where(Run.sweep_id == sweep["id"])).scalars().all()
    keys = {r.cache_key for r in runs}
    stored = db_session.execute(select(func.count()).select_from(Result).where(Result.cache_key.in_(keys))).scalar_one()
    assert stored == len(keys) == 6 and all(1 <= r.attempts <= 2 for r in runs), [r.attempts for r in runs]
