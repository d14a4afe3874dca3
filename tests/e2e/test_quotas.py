"""A user's cap on simulated events per run is applied by the worker, to the user's runs only."""

from __future__ import annotations

from tests.e2e.test_runs import FIG2_SHORT, finished
from tests.support import make_user, user_client


def test_a_run_past_its_owners_event_cap_fails_as_limit_exceeded(app, client, celery_worker_process) -> None:
    with user_client(app, make_user(client, "frugal", max_events_per_run=1000)) as frugal:
        capped = frugal.post("/v1/runs", json=FIG2_SHORT).json()
        run = finished(frugal, capped["id"])
        assert (run["status"], run["error_kind"]) == ("failed", "limit_exceeded"), run
        assert "1000" in run["error"]
    # The same scenario for a user without that cap simulates in full.
    other = finished(client, client.post("/v1/runs", json=FIG2_SHORT).json()["id"])
    assert other["status"] == "succeeded" and other["events"] > 1000
