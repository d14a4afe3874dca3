"""Links that change over time (issue 18) through the real app: a scenario with a rate and delay
schedule and a loss schedule runs end to end through a worker and the binding, and a bad
schedule is a 422 naming the point, with nothing stored."""

from __future__ import annotations

from typing import Any

from services.db.models import Run
from tests.e2e.test_runs import count, finished

# 10 Mb/s, a 1 s blackout from 2 s, 5 Mb/s from 3 s; the route 20 ms longer from 2 s.
SCHEDULE: dict[str, Any] = {
    "rate_mbps": {"points": [[0, 10], [2, 0], [3, 5]]},
    "extra_delay_ms": {"points": [[0, 0], [2, 20]]},
}


def scenario(schedule: dict[str, Any], loss: dict[str, Any] | None = None) -> dict[str, Any]:
    bottleneck: dict[str, Any] = {"delay_ms": 5, "schedule": schedule}
    flow: dict[str, Any] = {"name": "f", "variant": "cubic", "rtt_ms": 40}
    if loss is not None:
        flow["loss"] = loss
    return {"duration_s": 6, "warmup_s": 4, "topology": {"dumbbell": {"bottleneck": bottleneck}}, "flows": [flow]}


def test_a_scheduled_link_runs_through_a_worker_and_its_result_shows_the_schedule(client, celery_worker_process):
    loss = {"type": "schedule", "rate": {"points": [[0, 0], [5, 0.001]]}}
    r = client.post("/v1/runs", json={"scenario": scenario(SCHEDULE, loss)})
    assert r.status_code == 201, r.text
    done = finished(client, r.json()["id"])
    assert done["status"] == "succeeded", done
    result = client.get(f"/v1/runs/{done['id']}/result").json()
    bottleneck = next(link for link in result["links"] if link["name"] == "bottleneck")
    # Measured over [4, 6] s: the rate in force then, filled by the flow.
    assert bottleneck["rate_bps"] == 5_000_000
    assert 0.8 < bottleneck["utilization"] <= 1.0, bottleneck
    (flow,) = result["flows"]
    assert 0.8 * 5e6 < flow["goodput_bps"] < 5e6, flow
    # The RTT: 40 ms of propagation, 40 ms more on the longer route, and the queue.
    assert flow["mean_rtt_s"] > 0.080, flow


def test_a_bad_schedule_is_a_422_naming_the_point_and_stores_nothing(client, db_session):
    link = "$.topology.dumbbell.bottleneck.schedule"
    cases = [
        (scenario({"rate_mbps": {"points": [[0, 10], [2, 0]]}}), f"{link}.rate_mbps.points[1][1]"),
        (scenario({"rate_mbps": {"points": [[0, 10], [2, -1], [3, 5]]}}), f"{link}.rate_mbps.points[1][1]"),
        (scenario({"extra_delay_ms": {"points": [[0, 1]]}}), "$.topology.dumbbell.bottleneck.rate_mbps"),
        (
            scenario(SCHEDULE, {"type": "schedule", "rate": {"points": [[0, 2]]}}),
            "$.flows[0].loss.rate.points[0][1]",
        ),
        (scenario({"rate_mbps": {"points": [[0, 10]], "shape": "cubic"}}), f"{link}.rate_mbps.shape"),
    ]
    for body, path in cases:
        r = client.post("/v1/runs", json={"scenario": body})
        assert r.status_code == 422, (body, r.text[:300])
        # The models' errors are under the body's `scenario`, the core's at the scenario's root.
        paths = [d["path"].replace("$.scenario.", "$.") for d in r.json()["detail"]]
        assert path in paths, r.text[:500]
    assert count(db_session, Run) == 0
