"""Scheduled sweeps end to end: a real control worker embedding beat (as the launcher's does),
ticking every second, fires a schedule made through the API once its time has come; the
sweep's runs complete on the simulation worker; a change made through the API is seen at the
next tick, without a restart."""

from __future__ import annotations

import datetime as dt
import time
import uuid
from typing import Any

from sqlalchemy import update

from services.db.models import Schedule
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
TICK_S = 1.0  # the control_worker fixture's


def make_due(db_session: Any, schedule_id: str) -> None:
    """Its time has come (rather than waiting for the cron's minute)."""
    past = dt.datetime.now(dt.UTC) - dt.timedelta(seconds=1)
    db_session.execute(update(Schedule).where(Schedule.id == uuid.UUID(schedule_id)).values(next_fire_at=past))
    db_session.commit()


def firings(client: Any, schedule_id: str) -> list[dict[str, Any]]:
    return client.get(f"/v1/schedules/{schedule_id}/sweeps").json()["items"]


def test_beat_fires_a_schedule_made_through_the_api_and_sees_changes_without_restart(
    client, db_session, celery_worker_process, control_worker
):
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


def test_a_firing_completes_while_the_only_simulation_worker_runs_a_long_simulation(
    client, db_session, celery_worker_process, control_worker
):
    """The schedules' tick goes to the control queue, which the control worker consumes: a
    firing made while the only simulation worker is busy (a run that lasts until the server's
    wall-clock cap, 20 s in the tests) is made at once, not after that run. On one shared queue
    it waited behind it (50 s late behind a 100-s run, measured on the launched service)."""
    heavy = {
        "duration_s": 3600,
        "topology": {"dumbbell": {"bottleneck": {"rate_mbps": 1000, "delay_ms": 5}}},
        "flows": [{"name": "bulk", "variant": "newreno-sbs", "rtt_ms": 40, "count": 50}],
    }
    long = client.post("/v1/runs", json={"scenario": heavy}).json()
    wait_for(lambda: client.get(f"/v1/runs/{long['id']}").json()["status"] == "running", timeout_s=60, interval_s=0.2)
    s = client.post("/v1/schedules", json={"name": "while busy", "cron": "* * * * *", "template": TEMPLATE}).json()
    make_due(db_session, s["id"])
    [sweep] = wait_for(lambda: firings(client, s["id"]), timeout_s=60, interval_s=0.2)
    ended = wait_for(
        lambda: (r := client.get(f"/v1/runs/{long['id']}").json())["finished_at"] and r, timeout_s=120, interval_s=0.5
    )
    assert dt.datetime.fromisoformat(sweep["created_at"]) < dt.datetime.fromisoformat(ended["finished_at"]), (
        sweep,
        ended,
    )
    # Its runs waited for the simulation worker, then ran.
    done = wait_for(
        lambda: (x := client.get(f"/v1/sweeps/{sweep['id']}").json())["status"] == "done" and x, timeout_s=60
    )
    assert done["progress"]["succeeded"] == 2
