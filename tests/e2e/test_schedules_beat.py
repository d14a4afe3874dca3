"""Scheduled sweeps end to end: a real Celery worker embedding beat (as the launcher's does),
ticking every second, fires a schedule made through the API once its time has come; the
sweep's runs complete; a change made through the API is seen at the next tick, without a
restart."""

from __future__ import annotations

import datetime as dt
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import update

from services.db.models import Schedule
from services.settings import Settings
from tests.support import wait_for

TEMPLATE = {
    "scenario": {
        "duration_s": 3.0,
        "warmup_s": 0.5,
        "topology": {"dumbbell": {"bottleneck": {"rate_mbps": 10, "delay_ms": 5}}},
        "flows": [
            {
                "name": "a",
                "variant": "newreno-sbs",
                "rtt_ms": 40,
                "loss": {"type": "bernoulli_events", "p": 0.01, "m": 2},
            }
        ],
    },
    "axes": [{"path": "flows[0].loss.m", "values": [2]}],
    "replications": 2,
    "reuse_results": False,
}
TICK_S = 1.0


@pytest.fixture
def beat_worker(test_settings: Settings, tmp_path: Path) -> Iterator[Any]:
    """A worker with beat embedded, ticking the schedules every second."""
    from worker.app import app as celery_app
    from worker.process import WorkerProcess

    celery_app.control.purge()
    worker = WorkerProcess(
        test_settings.model_copy(update={"schedule_tick_s": TICK_S}),
        name=f"beat-{uuid.uuid4().hex[:8]}",
        log_path=tmp_path / "worker.log",
        extra_args=("--without-gossip", "--without-mingle", "--without-heartbeat"),
        beat_schedule=tmp_path / "celerybeat-schedule",
    )
    worker.start()
    try:
        worker.wait_ready(celery_app, timeout_s=60)
        yield worker
    finally:
        worker.stop(grace_s=5)


def make_due(db_session: Any, schedule_id: str) -> None:
    """Its time has come (rather than waiting for the cron's minute)."""
    past = dt.datetime.now(dt.UTC) - dt.timedelta(seconds=1)
    db_session.execute(update(Schedule).where(Schedule.id == uuid.UUID(schedule_id)).values(next_fire_at=past))
    db_session.commit()


def firings(client: Any, schedule_id: str) -> list[dict[str, Any]]:
    return client.get(f"/v1/schedules/{schedule_id}/sweeps").json()["items"]


def test_beat_fires_a_schedule_made_through_the_api_and_sees_changes_without_restart(client, db_session, beat_worker):
    s = client.post("/v1/schedules", json={"name": "every minute", "cron": "* * * * *", "template": TEMPLATE}).json()
    make_due(db_session, s["id"])
    started = time.monotonic()
    [sweep] = wait_for(lambda: firings(client, s["id"]), timeout_s=15, interval_s=0.2)
    done = wait_for(
        lambda: (x := client.get(f"/v1/sweeps/{sweep['id']}").json())["status"] == "done" and x,
        timeout_s=30,
        interval_s=0.2,
    )
    assert done["progress"]["succeeded"] == 2 and done["progress"]["total"] == 2, done["progress"]
    assert done["schedule_id"] == s["id"] and done["owner"] == "admin"
    schedule = client.get(f"/v1/schedules/{s['id']}").json()
    assert schedule["last_error"] is None and schedule["firings"] == 1
    assert dt.datetime.fromisoformat(schedule["next_fire_at"]) > dt.datetime.fromisoformat(sweep["created_at"])

    # Disabled through the API: the running beat sees it at its next tick, even with a time
    # forced into the row.
    assert client.patch(f"/v1/schedules/{s['id']}", json={"enabled": False}).status_code == 200
    make_due(db_session, s["id"])
    time.sleep(4 * TICK_S)
    assert len(firings(client, s["id"])) == 1

    # Enabled again (and due): it fires again, simulating anew (reuse_results false), and the
    # history shows the two firings, the second with the first as its baseline.
    assert client.patch(f"/v1/schedules/{s['id']}", json={"enabled": True}).status_code == 200
    make_due(db_session, s["id"])
    both = wait_for(lambda: len(f := firings(client, s["id"])) == 2 and f, timeout_s=15, interval_s=0.2)
    wait_for(lambda: client.get(f"/v1/sweeps/{both[0]['id']}").json()["status"] == "done", timeout_s=30, interval_s=0.2)
    history = client.get(
        f"/v1/schedules/{s['id']}/history", params={"metric": ["throughput_pkts_per_rtt", "core_events_per_s"]}
    ).json()
    rows = history["rows"]
    assert [r["sweep_id"] for r in rows if r["metric"] == "throughput_pkts_per_rtt"] == [both[1]["id"], both[0]["id"]]
    second = {r["metric"]: r for r in rows if r["sweep_id"] == both[0]["id"]}
    assert second["throughput_pkts_per_rtt"]["shift"] is None and second["throughput_pkts_per_rtt"]["test"] == "exact"
    assert second["core_events_per_s"]["n"] == 2 and second["core_events_per_s"]["baseline_n"] == 2
    assert time.monotonic() - started < 40
