"""The sweep page says why the stopping rule stopped at each point: the API's `stop_reason`
as a column of the per-point table and a note above it, in a real headless Chromium.
(Fixtures: tests/browser/conftest.py.)"""

from __future__ import annotations

import os
from typing import Any

from tests.browser.harness import Server, Tab
from tests.conftest import truncate_all
from tests.services.test_schedules import tiny_template
from tests.support import wait_for

STOPPED = {
    "name": "stopped at its maximum",
    "scenario": tiny_template()["scenario"],
    "axes": [{"path": "flows[0].loss.p", "values": [0.01, 0.02]}],
    "replications": 2,
    "seed": 3,
    # A target no replication count meets, and a maximum already reached: each point stops
    # once its two runs have finished, saying the target was not met.
    "stopping": {"target_relative_half_width": 1e-6, "max_replications": 2},
}
REASON = "max_replications reached, target not met"


def test_the_sweep_page_says_why_the_stopping_rule_stopped_at_each_point(
    tab: Tab, server: Server, db_engine: Any, start_worker: Any
) -> None:
    from worker.app import app as celery_app

    truncate_all(db_engine)
    celery_app.control.purge()
    worker = start_worker(f"browser-stop-{os.getpid()}")
    try:
        r = server.client.post("/v1/sweeps", json=STOPPED)
        assert r.status_code == 201, r.text
        sweep_id = r.json()["id"]

        def stopped() -> list[dict[str, Any]] | None:
            items = server.get(f"/v1/sweeps/{sweep_id}/points")["items"]
            return items if all(p["stop_reason"] for p in items) else None

        points = wait_for(stopped, timeout_s=120, interval_s=0.3)
    finally:
        worker.stop(grace_s=5)
    assert [p["stop_reason"] for p in points] == [REASON, REASON]

    tab.open(f"/dashboard/sweeps/{sweep_id}")
    tab.plot("plot-sweep")
    table = tab.page.locator("#points-table")
    header = table.locator("thead th").all_inner_texts()
    assert header[-1] == "stop_reason", header
    cells = table.locator("tbody tr td:last-child").all_inner_texts()
    assert cells == [REASON, REASON], cells
    outcome = server.get(f"/v1/sweeps/{sweep_id}")["stopping"]["message"]
    assert outcome.startswith("target ±") and "NOT met at 2 of 2 points" in outcome
    assert tab.page.locator("#stop-note").inner_text() == f"{outcome}. Stopping rule: 2 points: {REASON}."
    tab.screenshot("sweep-stopping-rule")
