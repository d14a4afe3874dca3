"""Workers prove they are alive (issue 11, finding 3): the process running a run beats a
heartbeat into PostgreSQL; when it falls silent the reconciler hands the run to another worker
— within TCPLAB_WORKER_DEAD_AFTER_S (20 s) plus a reconciler pass, not the broker's visibility
timeout (an hour by default) — and the run is stored exactly once. A worker asked to stop
(warm shutdown) stops its run at once and gives it back to the queue."""

from __future__ import annotations

import os
import signal
import time
from typing import Any

from sqlalchemy import func, select, text

from services.db.models import Result, Run
from tests.e2e.test_runs import finished
from tests.support import wait_for
from worker.reconcile import reconcile

# Far longer than a test may wait: only a handover gets it done (the wall cap stops it at 20 s,
# so the second attempt is a failure by limit — what matters is who ran it, and how often).
LONG = {"preset": "paper000-fig2a", "overrides": {"duration_s": 100_000, "warmup_s": 1}}
# About three seconds of core time: long enough to be cut off, short enough to finish after.
MEDIUM = {"preset": "paper000-fig2a", "overrides": {"duration_s": 3000, "warmup_s": 1}}


def _row(db_session: Any, run_id: str) -> Run:
    db_session.expire_all()
    row = db_session.get(Run, run_id)
    assert row is not None
    return row


def test_a_run_whose_workers_main_process_was_killed_goes_to_another_worker_within_a_minute(
    client, start_worker, test_settings, db_session, tmp_path
):
    # The broker's own redelivery as in production (an hour): only the heartbeat can hand the
    # run on within the minute (the test settings' 30 s would redeliver it without one). The
    # reconciler runs as in the lab: beat in a control worker, every TCPLAB_RECONCILE_INTERVAL_S
    # (10 s by default), with the default heartbeat (5 s) and silence threshold (20 s).
    hour = {"broker_visibility_timeout_s": 3600}
    assert (test_settings.reconcile_interval_s, test_settings.worker_dead_after_s) == (10, 20)
    control = start_worker("liveness-control", control=True, beat_schedule=tmp_path / "beat", **hour)
    first = start_worker("doomed", **hour)
    run = client.post("/v1/runs", json={**MEDIUM, "overrides": {**MEDIUM["overrides"], "seed": 71}}).json()
    wait_for(lambda: _row(db_session, run["id"]).status.value == "running", timeout_s=60)
    assert _row(db_session, run["id"]).worker == first.nodename

    os.kill(first.pid, signal.SIGKILL)  # the main process only: its pool process dies with it
    killed_at = time.monotonic()
    second = start_worker("survivor", **hour)
    try:

        def handed_on() -> bool:
            row = _row(db_session, run["id"])
            return row.worker == second.nodename and row.status.value in ("running", "succeeded")

        wait_for(handed_on, timeout_s=90, interval_s=0.5)
        took = time.monotonic() - killed_at
        print(f"killed main process to the run taken by another worker: {took:.1f} s")
        assert took < 60, took
        done = finished(client, run["id"], timeout_s=120)
        assert (done["status"], done["attempts"], done["worker"]) == ("succeeded", 2, second.nodename), done
    finally:
        second.stop(grace_s=5)
        control.stop(grace_s=5)
        first.stop(grace_s=0)
    row = _row(db_session, run["id"])
    assert (
        db_session.execute(
            select(func.count()).select_from(Result).where(Result.cache_key == row.cache_key)
        ).scalar_one()
        == 1
    )


def test_a_live_workers_long_run_is_never_taken_from_it(client, start_worker, test_settings, db_session):
    worker = start_worker("steady")
    try:
        run = client.post("/v1/runs", json={**LONG, "overrides": {**LONG["overrides"], "seed": 72}}).json()
        wait_for(lambda: _row(db_session, run["id"]).status.value == "running", timeout_s=60)
        started = _row(db_session, run["id"]).heartbeat_at
        # Past the silence threshold with the worker alive: heartbeats keep it its own.
        deadline = time.monotonic() + test_settings.worker_dead_after_s + 2
        while time.monotonic() < deadline and _row(db_session, run["id"]).status.value == "running":
            assert reconcile(test_settings).reclaimed == []
            time.sleep(1.0)
        row = _row(db_session, run["id"])
        assert row.attempts == 1 and row.worker == worker.nodename
        assert row.status.value != "running" or row.heartbeat_at > started  # it beat meanwhile
    finally:
        worker.stop(grace_s=5)


def test_a_worker_asked_to_stop_gives_its_run_back_at_once_and_another_finishes_it(client, start_worker, db_session):
    leaving = start_worker("leaving")
    run = client.post("/v1/runs", json={**MEDIUM, "overrides": {**MEDIUM["overrides"], "seed": 73}}).json()
    wait_for(lambda: _row(db_session, run["id"]).status.value == "running", timeout_s=60)
    asked = time.monotonic()
    assert leaving.proc is not None
    leaving.proc.send_signal(signal.SIGTERM)  # warm shutdown, as `docker stop` does
    leaving.proc.wait(timeout=30)
    stopped_in = time.monotonic() - asked
    print(f"warm shutdown with a run in progress took {stopped_in:.1f} s")
    assert _row(db_session, run["id"]).status.value == "queued"  # given back, not lost or failed
    staying = start_worker("staying")
    try:
        done = finished(client, run["id"], timeout_s=120)
        assert (done["status"], done["attempts"], done["worker"]) == ("succeeded", 2, staying.nodename), done
    finally:
        staying.stop(grace_s=5)
        leaving.stop(grace_s=0)


# About 0.3 s of core time a run; with a batch target of 10 s, batches of about 30 of them
# (at least 5 even if a loaded machine made each run take 2 s).
BATCHED_SWEEP = {
    "preset": "paper000-fig2a",
    "overrides": {"duration_s": 600},
    "axes": [{"path": "flows[*].loss.m", "values": [10]}],
    "replications": 40,
    "seed": 74,
}


def test_a_worker_killed_mid_batch_loses_nothing_and_stores_each_result_once(
    client, start_worker, test_settings, db_session, tmp_path, monkeypatch
):
    """The batch's results are stored at its end: a worker killed half-way through stored none
    of them. Its runs are handed on by their silent heartbeat and simulated again; every run
    ends succeeded, each with one result."""
    from services.settings import get_settings

    settings = {"broker_visibility_timeout_s": 3600, "batch_target_s": 10}
    monkeypatch.setenv("TCPLAB_BATCH_TARGET_S", "10")  # this process's dispatcher too
    get_settings.cache_clear()
    control = start_worker("batch-control", control=True, beat_schedule=tmp_path / "beat", **settings)
    first = start_worker("doomed-mid-batch", **settings)
    second = None
    try:
        sweep = client.post("/v1/sweeps", json=BATCHED_SWEEP)
        assert sweep.status_code == 201, sweep.text
        sweep_id = sweep.json()["id"]

        def a_batch_half_done() -> Any:
            db_session.expire_all()
            return db_session.execute(
                text(
                    "SELECT batch_id, count(*) FROM runs WHERE sweep_id = :sweep AND status = 'running' "
                    "AND started_at < clock_timestamp() - interval '1.5 s' GROUP BY batch_id HAVING count(*) >= 5"
                ),
                {"sweep": sweep_id},
            ).first()

        batch_id, size = wait_for(a_batch_half_done, timeout_s=90, interval_s=0.1)
        os.kill(first.pid, signal.SIGKILL)  # several of the batch's runs simulated, none stored
        second = start_worker("survivor-of-a-batch", **settings)

        def all_done() -> bool:
            progress = client.get(f"/v1/sweeps/{sweep_id}").json()["progress"]
            return progress["succeeded"] == 40

        wait_for(all_done, timeout_s=180, interval_s=0.5)
    finally:
        if second is not None:
            second.stop(grace_s=5)
        control.stop(grace_s=5)
        first.stop(grace_s=0)
        monkeypatch.undo()
        get_settings.cache_clear()
    db_session.expire_all()
    runs = db_session.execute(select(Run).where(Run.sweep_id == sweep_id)).scalars().all()
    keys = [r.cache_key for r in runs]
    results = db_session.execute(select(Result.cache_key).where(Result.cache_key.in_(keys))).scalars().all()
    assert sorted(results) == sorted(set(keys)) and len(set(keys)) == 40  # one result per run
    assert all(r.result_id is not None for r in runs)
    killed = [r for r in runs if r.batch_id == batch_id or r.attempts > 1]
    print(f"killed a batch of {size} runs mid-way; {len(killed)} runs were simulated again, each stored once")
    assert len(killed) >= size and all(r.attempts == 2 for r in killed)
