"""`/v1/sweeps` without a worker: creation, validation, extension, cancellation (the runs
stay queued: no worker consumes in these tests)."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy import select

from services.db.models import Run, Sweep, SweepPoint
from services.runs.repository import scenarios_of
from services.sweeps import AxisRange, replication_seed
from tests.e2e.test_runs import count

FIG2 = {"preset": "paper000-fig2a", "overrides": {"duration_s": 20}}


def sweep_body(**changes: Any) -> dict[str, Any]:
    return {**FIG2, "axes": [{"path": "flows[*].loss.m", "values": [1, 8, 30]}], "replications": 2, **changes}


def test_a_sweep_stores_its_points_and_runs_in_one_go_with_common_seeds(client, db_session):
    r = client.post("/v1/sweeps", json=sweep_body(name="fig2 small"))
    assert r.status_code == 201, r.text
    sweep = r.json()
    assert r.headers["location"] == f"/v1/sweeps/{sweep['id']}"
    assert (sweep["name"], sweep["preset"], sweep["status"], sweep["points"]) == (
        "fig2 small",
        "paper000-fig2a",
        "queued",
        3,
    )
    assert sweep["created"] == {"runs": 6, "cached": 0, "enqueued": 6}
    assert sweep["progress"] == {"total": 6, "queued": 6, "running": 0, "succeeded": 0, "failed": 0, "cancelled": 0}
    assert sweep["axes"] == [{"path": "flows[*].loss.m", "values": [1, 8, 30]}]

    runs = db_session.execute(select(Run).order_by(Run.sweep_point, Run.replication)).scalars().all()
    assert [(r.sweep_point, r.replication) for r in runs] == [(p, k) for p in range(3) for k in range(2)]
    # Replication k has the same seed at every point, and the points differ by m only.
    assert {r.seed for r in runs if r.replication == 0} == {replication_seed(1, 0)}
    assert {r.seed for r in runs if r.replication == 1} == {replication_seed(1, 1)}
    assert replication_seed(1, 0) != replication_seed(1, 1)
    scenarios = scenarios_of(db_session, [r.id for r in runs])
    assert [scenarios[r.id]["flows"][1]["loss"]["m"] for r in runs[::2]] == [1, 8, 30]
    assert all(scenarios[r.id]["duration_s"] == 20 and scenarios[r.id]["seed"] == r.seed for r in runs)

    points = client.get(f"/v1/sweeps/{sweep['id']}/points").json()["items"]
    assert [p["values"] for p in points] == [{"flows[*].loss.m": m} for m in (1, 8, 30)]
    assert [g["name"] for g in points[0]["flow_groups"]] == ["sbs", "imp"]
    assert all(p["progress"]["queued"] == 2 for p in points)
    listed = client.get(f"/v1/sweeps/{sweep['id']}/runs").json()
    assert [(x["point"], x["replication"], x["status"]) for x in listed] == [
        (p, k, "queued") for p in range(3) for k in range(2)
    ]


def test_axes_combine_as_a_product_or_zipped(client):
    axes = [
        {"path": "flows[*].loss.m", "values": [2, 6]},
        {"path": "flows[*].loss.p", "range": {"start": 0.001, "stop": 0.003, "step": 0.001}},
    ]
    product = client.post("/v1/sweeps", json=sweep_body(axes=axes, replications=1)).json()
    assert product["points"] == 6 and product["axes"][1]["values"] == [0.001, 0.002, 0.003]
    zipped = client.post(
        "/v1/sweeps",
        json=sweep_body(
            axes=[axes[0], {"path": "flows[*].loss.p", "values": [0.001, 0.002]}], combine="zip", replications=1
        ),
    )
    assert zipped.status_code == 201
    values = [p["values"] for p in client.get(f"/v1/sweeps/{zipped.json()['id']}/points").json()["items"]]
    assert values == [
        {"flows[*].loss.m": 2, "flows[*].loss.p": 0.001},
        {"flows[*].loss.m": 6, "flows[*].loss.p": 0.002},
    ]


def test_a_preset_parameter_and_a_scenario_base_can_be_swept(client):
    table2 = client.post(
        "/v1/sweeps",
        json={
            "preset": "paper000-table2-droptail",
            "overrides": {"duration_s": 10},
            "axes": [{"path": "background_flows", "values": [4, 8]}],
            "replications": 1,
        },
    )
    assert table2.status_code == 201, table2.text
    groups = client.get(f"/v1/sweeps/{table2.json()['id']}/points").json()["items"]
    assert [[g["count"] for g in p["flow_groups"]] for p in groups] == [[1, 1, 1, 3], [1, 1, 2, 6]]

    scenario = client.get("/v1/presets/paper000-fig2a").json()["scenario"]
    own = client.post(
        "/v1/sweeps",
        json={"scenario": scenario, "axes": [{"path": "flows[0].variant", "values": ["newreno-sbs", "sack"]}]},
    )
    assert own.status_code == 201, own.text
    points = client.get(f"/v1/sweeps/{own.json()['id']}/points").json()["items"]
    assert [p["flow_groups"][0]["variant"] for p in points] == ["newreno-sbs", "sack"]


@pytest.mark.parametrize(
    ("changes", "path", "fragment"),
    [
        ({"preset": "no-such-preset"}, "$.preset", "no preset named"),
        (
            {"axes": [{"path": "flows[*].loss.m", "values": [1, -3]}]},
            "$.flows[0].loss.m",
            "at the point flows[*].loss.m = -3",
        ),
        ({"axes": [{"path": "flows[*].nothing.here", "values": [1]}]}, "$.flows[*].nothing.here", ""),
        ({"axes": [{"path": "seed", "values": [1, 2]}]}, "$.axes[0].path", "replications"),
        ({"axes": [{"path": "flows[*].loss.m", "values": [1, 1]}]}, "$.axes[0]", "appears twice"),
        (
            {"axes": [{"path": "flows[*].loss.m", "values": [1], "range": {"start": 1, "stop": 2}}]},
            "$.axes[0]",
            "either",
        ),
        ({"axes": [{"path": "flows[*].loss.m", "range": {"start": 5, "stop": 1}}]}, "$.axes[0].range", "stop"),
        (
            {
                "axes": [{"path": "flows[*].loss.m", "values": [1, 2]}, {"path": "flows[*].loss.p", "values": [0.001]}],
                "combine": "zip",
            },
            "$.axes",
            "as many values",
        ),
        (
            {"axes": [{"path": "flows[*].loss.m", "range": {"start": 1, "stop": 9000}}], "replications": 10},
            "$.axes",
            "at most",
        ),
        ({"axes": []}, "$.axes", ""),
        ({"replications": 0}, "$.replications", ""),
        (
            {"stopping": {"metric": "nonsense", "target_relative_half_width": 0.05, "max_replications": 5}},
            "$.stopping.metric",
            "unknown metric",
        ),
        ({"stopping": {"target_relative_half_width": 0.05, "max_replications": 1}}, "$.stopping.max_replications", ""),
    ],
)
def test_a_bad_sweep_is_a_422_naming_the_field_and_stores_nothing(client, db_session, changes, path, fragment):
    r = client.post("/v1/sweeps", json=sweep_body(**changes))
    assert r.status_code == 422, r.text
    detail = r.json()["detail"]
    assert any(d["path"].startswith(path) and fragment in d["msg"] for d in detail), detail
    assert count(db_session, Sweep) == 0 and count(db_session, Run) == 0 and count(db_session, SweepPoint) == 0


def test_extending_adds_only_the_missing_runs_and_reopens_a_cancelled_sweep(client, db_session):
    sweep = client.post("/v1/sweeps", json=sweep_body()).json()
    sid = sweep["id"]
    cancelled = client.post(f"/v1/sweeps/{sid}/cancel").json()
    assert cancelled["status"] == "cancelled" and cancelled["progress"]["cancelled"] == 6

    more = client.post(f"/v1/sweeps/{sid}/extend", json={"replications": 3})
    assert more.status_code == 200, more.text
    assert more.json()["created"] == {"runs": 3, "cached": 0, "enqueued": 3}
    assert more.json()["status"] == "running" and more.json()["replications"] == 3

    wider = client.post(
        f"/v1/sweeps/{sid}/extend", json={"axes": [{"path": "flows[*].loss.m", "values": [8, 12]}]}
    ).json()
    assert wider["created"]["runs"] == 3  # one new point (12) × 3 replications; 8 exists
    assert wider["axes"][0]["values"] == [1, 8, 30, 12] and wider["points"] == 4
    again = client.post(f"/v1/sweeps/{sid}/extend", json={"replications": 3}).json()
    assert again["created"]["runs"] == 0
    assert count(db_session, Run) == 12

    assert client.post(f"/v1/sweeps/{sid}/extend", json={"replications": 2}).status_code == 422
    bad_axis = client.post(f"/v1/sweeps/{sid}/extend", json={"axes": [{"path": "flows[*].loss.p", "values": [0.01]}]})
    assert bad_axis.status_code == 422 and bad_axis.json()["detail"][0]["path"] == "$.axes[0].path"
    assert client.post(f"/v1/sweeps/{sid}/extend", json={}).status_code == 422


def test_unknown_sweeps_are_404_and_summaries_check_their_metric(client):
    missing = uuid.uuid4()
    for path in ("", "/points", "/runs", "/summary"):
        assert client.get(f"/v1/sweeps/{missing}{path}").status_code == 404
    assert client.post(f"/v1/sweeps/{missing}/cancel").status_code == 404
    sweep = client.post("/v1/sweeps", json=sweep_body()).json()
    bad = client.get(f"/v1/sweeps/{sweep['id']}/summary", params={"metric": ["throughput_pkts_per_rtt", "speed"]})
    assert bad.status_code == 422 and bad.json()["detail"][0]["path"] == "$.metric[1]"
    empty = client.get(f"/v1/sweeps/{sweep['id']}/summary").json()
    assert empty["rows"] == [] and empty["axes"] == [{"path": "flows[*].loss.m", "values": [1, 8, 30]}]


def test_the_list_is_newest_first_with_progress(client):
    first = client.post("/v1/sweeps", json=sweep_body(name="a")).json()
    second = client.post("/v1/sweeps", json=sweep_body(name="b", replications=1)).json()
    listed = client.get("/v1/sweeps", params={"limit": 1}).json()
    assert listed["total"] == 2 and [s["id"] for s in listed["items"]] == [second["id"]]
    assert listed["items"][0]["progress"]["total"] == 3 and listed["items"][0]["points"] == 3
    assert client.get("/v1/sweeps", params={"offset": 1}).json()["items"][0]["id"] == first["id"]


@given(start=st.integers(-50, 50), length=st.integers(0, 40), step=st.sampled_from([1, 2, 0.5, 0.1, 0.25]))
def test_a_range_includes_both_ends_and_steps_evenly(start, length, step):
    stop = start + length * step
    values = AxisRange(start=start, stop=stop, step=step).values()
    assert len(values) == length + 1
    assert values[0] == pytest.approx(start) and values[-1] == pytest.approx(stop)
    assert all(b - a == pytest.approx(step) for a, b in zip(values, values[1:], strict=False))


def test_a_nul_character_postgresql_refuses_is_a_422_not_a_500(client):
    r = client.get("/v1/sweeps", params={"preset": "a\x00b"})
    assert r.status_code == 422 and "NUL" in r.json()["detail"][0]["msg"]
    assert client.post("/v1/sweeps", json=sweep_body(name="x\x00y")).status_code == 422
    assert client.get("/v1/runs", params={"variant": "\x00"}).status_code == 422
