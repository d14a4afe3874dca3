"""`/v1/schedules` without a worker: create, list, read, change, delete, fire now, the
history's table formats, the 422s with their paths, and who sees and changes what."""

from __future__ import annotations

import datetime as dt
import io
import uuid
from typing import Any

import pyarrow.parquet as pq
import pytest
from sqlalchemy import select, update

from services.db.models import Run, Schedule, Sweep
from tests.e2e.test_runs import count
from tests.support import make_user, user_client

TEMPLATE = {
    "preset": "paper000-fig2a",
    "overrides": {"duration_s": 5, "warmup_s": 1},
    "axes": [{"path": "flows[*].loss.m", "values": [2, 8]}],
    "replications": 2,
}


def body(**changes: Any) -> dict[str, Any]:
    return {"name": "nightly fig2a", "cron": "0 3 * * *", "template": TEMPLATE, **changes}


def create(client: Any, **changes: Any) -> dict[str, Any]:
    r = client.post("/v1/schedules", json=body(**changes))
    assert r.status_code == 201, r.text
    return r.json()


def test_a_schedule_is_stored_with_its_next_firing_and_read_back(client):
    before = dt.datetime.now(dt.UTC)
    r = client.post("/v1/schedules", json=body(cron=" 0  3 * * * "))
    assert r.status_code == 201, r.text
    s = r.json()
    assert r.headers["location"] == f"/v1/schedules/{s['id']}"
    assert (s["name"], s["cron"], s["enabled"], s["shared"], s["owner"], s["builtin"], s["firings"]) == (
        "nightly fig2a",
        "0 3 * * *",
        True,
        False,
        "admin",
        None,
        0,
    )
    assert s["template"]["preset"] == "paper000-fig2a" and "shared" not in s["template"]
    nxt = dt.datetime.fromisoformat(s["next_fire_at"])
    assert nxt > before and (nxt.hour, nxt.minute, nxt.second) == (3, 0, 0) and nxt - before <= dt.timedelta(days=1)
    assert s["links"]["dashboard"] == f"/dashboard/schedules/{s['id']}"
    assert client.get(f"/v1/schedules/{s['id']}").json() == s
    listed = client.get("/v1/schedules").json()
    # The built-in benchmark is there too (made at start-up), disabled.
    assert {x["id"] for x in listed["items"]} >= {s["id"]}
    [bench] = [x for x in listed["items"] if x["builtin"] == "core-benchmark"]
    assert not bench["enabled"] and bench["next_fire_at"] is None and bench["shared"]
    assert bench["template"]["reuse_results"] is False
    mine = client.get("/v1/schedules", params={"mine": "true", "limit": 1}).json()
    assert mine["total"] == 2 and len(mine["items"]) == 1  # the admin owns the benchmark too


@pytest.mark.parametrize(
    ("changes", "path", "fragment"),
    [
        ({"cron": "0 3 * *"}, "$.cron", "5 fields"),
        ({"cron": "99 3 * * *"}, "$.cron", "not a valid cron line"),
        ({"cron": "0 0 31 2 *"}, "$.cron", "never fires"),
        ({"name": ""}, "$.name", ""),
        ({"template": {**TEMPLATE, "replications": 0}}, "$.template.replications", ""),
        ({"template": {**TEMPLATE, "preset": "no-such-preset"}}, "$.template.preset", "no preset named"),
        (
            {"template": {**TEMPLATE, "axes": [{"path": "flows[*].loss.m", "values": [2, -3]}]}},
            "$.template",
            "at the point flows[*].loss.m = -3",
        ),
        (
            {
                "template": {
                    **TEMPLATE,
                    "axes": [
                        {"path": "flows[*].loss.m", "values": [1, 2]},
                        {"path": "flows[*].loss.p", "values": [0.1]},
                    ],
                    "combine": "zip",
                }
            },
            "$.template.axes",
            "as many values",
        ),
        ({"template": {**TEMPLATE, "bogus": 1}}, "$.template.bogus", ""),
        ({"every": "day"}, "$.every", ""),
    ],
)
def test_a_bad_schedule_is_a_422_naming_the_field_and_stores_nothing(client, db_session, changes, path, fragment):
    r = client.post("/v1/schedules", json=body(**changes))
    assert r.status_code == 422, r.text
    detail = r.json()["detail"]
    assert any(d["path"].startswith(path) and fragment in d["msg"] for d in detail), detail
    assert db_session.execute(select(Schedule).where(Schedule.builtin.is_(None))).first() is None


def test_a_scenario_templates_point_errors_are_paths_in_the_request(client):
    scenario = client.get("/v1/presets/paper000-fig2a").json()["scenario"]
    template = {"scenario": scenario, "axes": [{"path": "flows[0].loss.m", "values": [2, 0]}]}
    r = client.post("/v1/schedules", json=body(template=template))
    assert r.status_code == 422
    assert [d["path"] for d in r.json()["detail"]] == ["$.template.scenario.flows[0].loss.m"]


def test_patch_changes_the_timing_template_and_sharing_and_refuses_nulls(client):
    s = create(client)
    r = client.patch(f"/v1/schedules/{s['id']}", json={"cron": "*/5 * * * *"})
    assert r.status_code == 200, r.text
    nxt = dt.datetime.fromisoformat(r.json()["next_fire_at"])
    assert nxt.minute % 5 == 0 and nxt - dt.datetime.now(dt.UTC) <= dt.timedelta(minutes=5)
    off = client.patch(f"/v1/schedules/{s['id']}", json={"enabled": False}).json()
    assert off["enabled"] is False and off["next_fire_at"] is None
    on = client.patch(f"/v1/schedules/{s['id']}", json={"enabled": True, "name": "every 5"}).json()
    assert on["next_fire_at"] is not None and on["name"] == "every 5"
    new_template = {**TEMPLATE, "replications": 3}
    assert (
        client.patch(f"/v1/schedules/{s['id']}", json={"template": new_template}).json()["template"]["replications"]
        == 3
    )
    for bad, path in [
        ({"cron": None}, "$.cron"),
        ({"cron": "soon"}, "$.cron"),
        ({"template": {**TEMPLATE, "preset": "gone"}}, "$.template.preset"),
        ({"owner": "bob"}, "$.owner"),
        ({}, "$"),
    ]:
        r = client.patch(f"/v1/schedules/{s['id']}", json=bad)
        assert r.status_code == 422, (bad, r.text)
        assert r.json()["detail"][0]["path"] == path, (bad, r.json())
    assert client.get(f"/v1/schedules/{s['id']}").json()["template"]["replications"] == 3


def test_fire_now_creates_a_sweep_linked_to_the_schedule(client, db_session):
    s = create(client, enabled=False)
    r = client.post(f"/v1/schedules/{s['id']}/fire")
    assert r.status_code == 201, r.text
    sweep = r.json()
    assert r.headers["location"] == f"/v1/sweeps/{sweep['id']}"
    assert sweep["schedule_id"] == s["id"] and sweep["created"] == {"runs": 4, "cached": 0, "enqueued": 4}
    assert sweep["name"].startswith("nightly fig2a · ") and sweep["owner"] == "admin"
    stored = db_session.get(Sweep, uuid.UUID(sweep["id"]))
    assert stored.schedule_id == uuid.UUID(s["id"]) and stored.fired_for is not None
    after = client.get(f"/v1/schedules/{s['id']}").json()
    assert after["firings"] == 1 and after["last_fired_at"] is not None and after["next_fire_at"] is None
    listed = client.get(f"/v1/schedules/{s['id']}/sweeps").json()
    assert listed["total"] == 1 and [x["id"] for x in listed["items"]] == [sweep["id"]]
    assert client.get(f"/v1/sweeps/{sweep['id']}").json()["schedule_id"] == s["id"]


def test_a_template_broken_since_is_a_422_when_fired_by_hand(client, db_session):
    s = create(client)
    db_session.execute(
        update(Schedule).where(Schedule.id == uuid.UUID(s["id"])).values(template={**TEMPLATE, "preset": "gone"})
    )
    db_session.commit()
    r = client.post(f"/v1/schedules/{s['id']}/fire")
    assert r.status_code == 422 and r.json()["detail"][0]["path"] == "$.preset", r.text
    assert count(db_session, Sweep) == 0


def test_deleting_keeps_the_fired_sweeps_and_the_builtin_cannot_be_deleted(client, db_session):
    s = create(client)
    sweep = client.post(f"/v1/schedules/{s['id']}/fire").json()
    r = client.delete(f"/v1/schedules/{s['id']}")
    assert r.status_code == 204 and r.content == b""
    assert client.get(f"/v1/schedules/{s['id']}").status_code == 404
    kept = client.get(f"/v1/sweeps/{sweep['id']}").json()
    assert kept["schedule_id"] is None and kept["progress"]["total"] == 4
    bench = db_session.execute(select(Schedule.id).where(Schedule.builtin == "core-benchmark")).scalar_one()
    r = client.delete(f"/v1/schedules/{bench}")
    assert r.status_code == 409 and "disable it instead" in r.json()["detail"]
    assert client.patch(f"/v1/schedules/{bench}", json={"enabled": True}).json()["next_fire_at"] is not None


def test_others_see_a_shared_schedule_but_cannot_change_it_and_never_see_a_private_one(app, client):
    private = create(client, name="private")
    shared = create(client, name="shared", shared=True)
    fired = client.post(f"/v1/schedules/{shared['id']}/fire").json()
    with user_client(app, make_user(client, "bob")) as bob:
        assert {x["name"] for x in bob.get("/v1/schedules").json()["items"]} == {"shared", "core benchmark"}
        for path in ("", "/sweeps", "/history"):
            assert bob.get(f"/v1/schedules/{private['id']}{path}").status_code == 404, path
            assert bob.get(f"/v1/schedules/{shared['id']}{path}").status_code == 200, path
        assert bob.post(f"/v1/schedules/{private['id']}/fire").status_code == 404
        assert bob.patch(f"/v1/schedules/{private['id']}", json={"enabled": False}).status_code == 404
        assert bob.delete(f"/v1/schedules/{private['id']}").status_code == 404
        assert bob.post(f"/v1/schedules/{shared['id']}/fire").status_code == 403
        assert bob.patch(f"/v1/schedules/{shared['id']}", json={"enabled": False}).status_code == 403
        assert bob.delete(f"/v1/schedules/{shared['id']}").status_code == 403
        # The shared schedule's firings are shared with it, so its links lead somewhere.
        assert bob.get(f"/v1/sweeps/{fired['id']}").status_code == 200
        own = bob.post("/v1/schedules", json=body(name="bob's"))
        assert own.status_code == 201 and own.json()["owner"] == "bob"
    assert client.get(f"/v1/schedules/{own.json()['id']}").status_code == 200  # an admin sees all
    assert client.patch(f"/v1/schedules/{own.json()['id']}", json={"enabled": False}).status_code == 200
    # Making the schedule private makes its sweeps private again.
    client.patch(f"/v1/schedules/{shared['id']}", json={"shared": False})
    with user_client(app, make_user(client, "carl")) as carl:
        assert carl.get(f"/v1/sweeps/{fired['id']}").status_code == 404
    assert client.get("/v1/schedules/not-a-uuid").status_code == 422


def test_the_history_checks_its_metric_and_comes_in_three_formats(client, db_session):
    s = create(client)
    r = client.get(f"/v1/schedules/{s['id']}/history", params={"metric": ["throughput_pkts_per_rtt", "speed"]})
    assert r.status_code == 422 and r.json()["detail"][0]["path"] == "$.metric[1]"
    client.post(f"/v1/schedules/{s['id']}/fire")  # queued: no worker, so no rows yet
    empty = client.get(f"/v1/schedules/{s['id']}/history").json()
    assert empty["rows"] == [] and empty["axes"] == ["flows[*].loss.m"] and empty["baseline_firings"] == 5
    assert empty["measured_metrics"] == ["core_events_per_s", "core_wall_s"]
    csv = client.get(f"/v1/schedules/{s['id']}/history", params={"format": "csv"})
    assert csv.status_code == 200 and csv.headers["content-type"].startswith("text/csv")
    assert f"schedule-{s['id']}-history.csv" in csv.headers["content-disposition"]
    parquet = client.get(f"/v1/schedules/{s['id']}/history", params={"format": "parquet"})
    assert parquet.status_code == 200 and pq.read_table(io.BytesIO(parquet.content)).num_rows == 0
    assert client.get(f"/v1/schedules/{uuid.uuid4()}/history").status_code == 404
    assert count(db_session, Run) == 4


def test_a_template_that_could_never_fire_is_refused_at_create_and_patch(app, client, db_session):
    """A firing needs room for every run of its template: one with more runs than its owner's
    quota of queued runs (or than a sweep may have) could never fire, so it is a 422 now rather
    than a refused firing every minute. Enabling a schedule whose owner's quota was lowered
    below its template since is refused the same way."""
    with user_client(app, make_user(client, "small", max_queued_runs=3)) as small:
        r = small.post("/v1/schedules", json=body(cron="* * * * *"))  # 2 points x 2 replications
        assert r.status_code == 422, r.text
        [detail] = r.json()["detail"]
        assert detail["path"] == "$.template.axes" and "room for 4 queued runs" in detail["msg"]
        assert "small's quota of 3" in detail["msg"]
        fits = small.post("/v1/schedules", json=body(template={**TEMPLATE, "replications": 1}))
        assert fits.status_code == 201, fits.text
        r = small.patch(f"/v1/schedules/{fits.json()['id']}", json={"template": TEMPLATE})
        assert r.status_code == 422 and r.json()["detail"][0]["path"] == "$.template.axes", r.text
        assert small.patch(f"/v1/schedules/{fits.json()['id']}", json={"enabled": False}).status_code == 200
        me = small.get("/v1/me").json()["id"]
        assert client.patch(f"/v1/users/{me}", json={"max_queued_runs": 1}).status_code == 200
        r = small.patch(f"/v1/schedules/{fits.json()['id']}", json={"enabled": True})
        assert r.status_code == 422 and r.json()["detail"][0]["path"] == "$.enabled", r.text
        assert "small's quota of 1" in r.json()["detail"][0]["msg"]
    huge = {**TEMPLATE, "axes": [{"path": "flows[*].loss.m", "range": {"start": 1, "stop": 60}}], "replications": 1000}
    r = client.post("/v1/schedules", json=body(template=huge))
    assert r.status_code == 422 and r.json()["detail"][0]["path"] == "$.template.axes"
    assert "60000 runs; at most 50000" in r.json()["detail"][0]["msg"]
    assert db_session.execute(select(Schedule).where(Schedule.builtin.is_(None))).scalars().all() == [
        db_session.get(Schedule, uuid.UUID(fits.json()["id"]))
    ]
