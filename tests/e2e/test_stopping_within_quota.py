"""Admission end to end: a sweep with a stopping rule, run by a real worker for a user with a
small quota of queued runs, never has more queued than the quota, and each point says, in the
API and its downloads, why the rule stopped there."""

from __future__ import annotations

import csv
import io
import uuid
from typing import Any

from sqlalchemy import select

from services.db.models import Run
from tests.services.test_schedules import tiny_template
from tests.support import make_user, user_client, wait_for

QUOTA = 6
RULE_SWEEP = {
    "scenario": tiny_template()["scenario"],
    "axes": [{"path": "flows[0].loss.p", "values": [0.01, 0.02, 0.03]}],
    "replications": 2,
    "seed": 5,
    # A target no finite number of replications meets: every point grows until a limit stops it.
    "stopping": {"target_relative_half_width": 1e-6, "max_replications": QUOTA},
}


def peak_queued(db_session: Any, sweep_id: str) -> int:
    """The most runs of the sweep that were queued at once, from PostgreSQL's record: a run is
    queued from its creation until a worker claims it (one worker of one process and a window
    of one: each run's growth is decided before the next run starts)."""
    db_session.expire_all()
    rows = db_session.execute(select(Run.created_at, Run.started_at).where(Run.sweep_id == uuid.UUID(sweep_id))).all()
    return max(sum(1 for made, began in rows if made <= t and (began is None or began > t)) for t, _ in rows)


def test_the_stopping_rule_keeps_its_owner_within_quota_and_each_point_says_why_it_stopped(
    app, client, celery_worker_process, db_session
):
    with user_client(app, make_user(client, "modest", max_queued_runs=QUOTA)) as modest:
        sweep = modest.post("/v1/sweeps", json=RULE_SWEEP).json()
        assert sweep["created"]["enqueued"] == 6

        def stopped() -> list[dict[str, Any]] | None:
            if modest.get(f"/v1/sweeps/{sweep['id']}").json()["status"] != "done":
                return None
            items = modest.get(f"/v1/sweeps/{sweep['id']}/points").json()["items"]
            return items if all(p["stop_reason"] for p in items) else None

        points = wait_for(stopped, timeout_s=180, interval_s=0.5)
        reasons = {p["point"]: p["stop_reason"] for p in points}
        assert set(reasons.values()) <= {"max_replications reached, target not met", "capped: quota"}, reasons
        assert all(p["progress"]["total"] <= QUOTA for p in points)

        url = f"/v1/sweeps/{sweep['id']}/summary"
        rows = modest.get(url, params={"metric": "throughput_pkts_per_rtt"}).json()["rows"]
        assert {(r["point"], r["stop_reason"]) for r in rows} == set(reasons.items())
        table = list(csv.DictReader(io.StringIO(modest.get(url, params={"format": "csv"}).text)))
        assert {(int(r["point"]), r["stop_reason"]) for r in table} == set(reasons.items())
        # Ended at its caps, the sweep says its target was not met, and where and why (issue 15).
        stopping = modest.get(f"/v1/sweeps/{sweep['id']}").json()["stopping"]
        assert stopping["target_met"] is False and stopping["growing"] == 0
        assert stopping["message"].startswith("target ±0.0001 % on throughput_pkts_per_rtt NOT met")
        assert f"NOT met at {len(points)} of {len(points)} points" in stopping["message"]
        assert sum(stopping["by_reason"].values()) == len(points)
    assert peak_queued(db_session, sweep["id"]) <= QUOTA

    # Without a stopping rule, nothing says the rule stopped anything.
    plain = client.post("/v1/sweeps", json={**RULE_SWEEP, "stopping": None, "seed": 6}).json()
    assert {p["stop_reason"] for p in client.get(f"/v1/sweeps/{plain['id']}/points").json()["items"]} == {None}
    assert "stop_reason" not in client.get(f"/v1/sweeps/{plain['id']}/summary", params={"format": "csv"}).text
    assert client.get(f"/v1/sweeps/{plain['id']}").json()["stopping"] is None
