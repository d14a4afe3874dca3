"""Experiment management through the real app on the real database: tags and notes, search by
name, tag, preset and parameter, archive and restore, delete with results, two sweeps side by
side (docs/experiments.md). Runs are simulated in-process by the worker's own steps (claim,
the core, complete), so a test needs no worker process."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.engine import Engine

import tcpsim
from services.db.models import FlowResult, PendingCancel, Result, Run, Sweep, SweepAggregate, SweepPoint, Trace
from services.db.session import create_session_factory, session_scope
from services.runs import claim_batch, complete
from services.runs.repository import queued_count
from services.settings import get_settings
from tests.support import make_user, user_client

FIG2 = {"preset": "paper000-fig2a", "overrides": {"duration_s": 5, "warmup_s": 1}}


def sweep_body(values: list[Any], **changes: Any) -> dict[str, Any]:
    return {**FIG2, "axes": [{"path": "flows[*].loss.m", "values": values}], "replications": 2, **changes}


def simulate(engine: Engine, run_ids: list[str]) -> None:
    """What a worker does with each run: claim it, run the core, store the result."""
    factory = create_session_factory(engine)
    for rid in map(uuid.UUID, run_ids):
        with session_scope(factory) as session:
            scenario = claim_batch(session, [rid], "test", get_settings()).get(rid)
        if scenario is None:
            continue
        with session_scope(factory) as session:
            complete(session, rid, tcpsim.run(scenario))


def queued_ids(client: Any, sweep_id: str) -> list[str]:
    return [r["run_id"] for r in client.get(f"/v1/sweeps/{sweep_id}/runs").json() if r["status"] == "queued"]


def detail(response: Any) -> Any:
    return response.json()["detail"]


def test_tags_and_a_note_are_set_added_and_removed_by_the_owner_and_a_bad_one_is_named(app, client):
    run = client.post("/v1/runs", json={**FIG2, "shared": True}).json()
    url = f"/v1/runs/{run['id']}"
    assert run["tags"] == [] and run["note"] is None and run["archived_at"] is None

    r = client.patch(url, json={"tags": ["baseline", "buffer=2bdp", "baseline"], "note": "first try"})
    assert r.status_code == 200, r.text
    assert (r.json()["tags"], r.json()["note"]) == (["baseline", "buffer=2bdp"], "first try")
    r = client.patch(url, json={"add_tags": ["paper:000"], "remove_tags": ["baseline"]})
    assert r.json()["tags"] == ["buffer=2bdp", "paper:000"] and r.json()["note"] == "first try"  # the note stays
    assert client.patch(url, json={"note": None}).json()["note"] is None
    assert client.get(url).json()["tags"] == ["buffer=2bdp", "paper:000"]

    bad = client.patch(url, json={"tags": ["ok", "no spaces"]})
    assert bad.status_code == 422
    assert detail(bad)[0]["path"] == "$.tags[1]" and "letters, digits" in detail(bad)[0]["msg"]
    long = client.patch(url, json={"add_tags": ["x" * 65]})
    assert long.status_code == 422 and detail(long)[0]["path"] == "$.add_tags[0]" and "64" in detail(long)[0]["msg"]
    many = client.patch(url, json={"add_tags": [f"t{i}" for i in range(40)]})
    assert many.status_code == 422 and "at most 32 tags" in detail(many)[0]["msg"]
    note = client.patch(url, json={"note": "n" * 10_001})
    assert note.status_code == 422 and detail(note)[0]["loc"][-1] == "note"
    empty = client.patch(url, json={})
    assert empty.status_code == 422 and "nothing to change" in detail(empty)[0]["msg"]
    assert client.get(url).json()["tags"] == ["buffer=2bdp", "paper:000"]  # nothing of a refused PATCH applied

    with user_client(app, make_user(client, "eve")) as eve:
        refused = eve.patch(url, json={"add_tags": ["mine"]})
        assert refused.status_code == 403 and "only the owner" in detail(refused)
        private = eve.post("/v1/runs", json=FIG2).json()
    assert client.patch(f"/v1/runs/{private['id']}", json={"tags": ["admin-may"]}).json()["tags"] == ["admin-may"]

    sweep = client.post("/v1/sweeps", json=sweep_body([1, 8], name="fig2 m")).json()
    s = client.patch(f"/v1/sweeps/{sweep['id']}", json={"tags": ["fig2"], "note": "why: the m axis", "shared": True})
    assert s.status_code == 200, s.text
    assert (s.json()["tags"], s.json()["note"], s.json()["shared"]) == (["fig2"], "why: the m axis", True)


def test_lists_find_runs_and_sweeps_by_name_tags_preset_and_parameter(client):
    short = client.post("/v1/runs", json=FIG2).json()
    longer = client.post("/v1/runs", json={**FIG2, "overrides": {"duration_s": 7, "warmup_s": 1}}).json()
    client.patch(f"/v1/runs/{short['id']}", json={"tags": ["a", "b"]})
    client.patch(f"/v1/runs/{longer['id']}", json={"tags": ["a"]})
    client.post("/v1/sweeps", json=sweep_body([1, 8], name="Fig2 small"))
    big = client.post("/v1/sweeps", json=sweep_body([30, 60], name="fig2 BIG m")).json()
    client.patch(f"/v1/sweeps/{big['id']}", json={"tags": ["big"]})

    def run_ids(query: str) -> set[str]:
        r = client.get(f"/v1/runs?limit=500&{query}")
        assert r.status_code == 200, r.text
        return {x["id"] for x in r.json()["items"]}

    def sweep_names(query: str) -> list[str]:
        r = client.get(f"/v1/sweeps?{query}")
        assert r.status_code == 200, r.text
        return sorted(x["name"] for x in r.json()["items"])

    assert run_ids("tag=a") == {short["id"], longer["id"]}
    assert run_ids("tag=a&tag=b") == {short["id"]}  # all of them
    assert run_ids("param=duration_s=7") == {longer["id"]}
    assert run_ids("param=duration_s=7.0&tag=a") == {longer["id"]}  # 7 and 7.0 are one value
    big_runs = {x["run_id"] for x in client.get(f"/v1/sweeps/{big['id']}/runs").json()}
    assert run_ids("param=flows[1].loss.m=30") == {
        x["run_id"] for x in client.get(f"/v1/sweeps/{big['id']}/runs").json()[:2]
    }
    assert run_ids("name=big") == big_runs  # a sweep's run goes by its sweep's name
    assert client.get("/v1/runs?tag=a&param=duration_s=7").json()["total"] == 1

    assert sweep_names("name=fig2") == ["Fig2 small", "fig2 BIG m"]
    assert sweep_names("name=SMALL") == ["Fig2 small"]
    assert sweep_names("tag=big") == ["fig2 BIG m"]
    assert sweep_names("param=flows[*].loss.m=8") == ["Fig2 small"]  # one of its points
    assert sweep_names("param=flows[0].variant=newreno-sbs&preset=paper000-fig2a") == ["Fig2 small", "fig2 BIG m"]
    assert sweep_names("param=flows[0].variant=cubic") == []
    assert sweep_names("name=100%25") == []  # % is a character, not a wildcard

    bad = client.get("/v1/runs?param=duration_s")
    assert bad.status_code == 422 and detail(bad)[0]["path"] == "$.param[0]" and "PATH=VALUE" in detail(bad)[0]["msg"]
    bad = client.get("/v1/sweeps?param=duration_s=1&param=flows[x=2")
    assert bad.status_code == 422 and detail(bad)[0]["path"] == "$.param[1]"
    bad = client.get("/v1/sweeps?tag=ok&tag=a%20b")
    assert bad.status_code == 422 and detail(bad)[0]["path"] == "$.tag[1]"


def test_archived_runs_and_sweeps_leave_the_default_lists_until_restored(client, clean_db):
    run = client.post("/v1/runs", json=FIG2).json()
    url = f"/v1/runs/{run['id']}"
    refused = client.patch(url, json={"archived": True})
    assert refused.status_code == 409 and "cancel it first" in detail(refused)
    simulate(clean_db, [run["id"]])
    archived = client.patch(url, json={"archived": True}).json()
    assert archived["archived_at"] is not None
    assert run["id"] not in {x["id"] for x in client.get("/v1/runs").json()["items"]}
    assert [x["id"] for x in client.get("/v1/runs?archived=true").json()["items"]] == [run["id"]]
    assert client.get(url).json()["id"] == run["id"]  # still readable by id
    assert client.patch(url, json={"archived": False}).json()["archived_at"] is None
    assert run["id"] in {x["id"] for x in client.get("/v1/runs").json()["items"]}

    sweep = client.post("/v1/sweeps", json=sweep_body([1, 8], name="to archive")).json()
    surl = f"/v1/sweeps/{sweep['id']}"
    refused = client.patch(surl, json={"archived": True})
    assert refused.status_code == 409 and "4 runs queued or running: cancel it first" in detail(refused)
    simulate(clean_db, queued_ids(client, sweep["id"]))
    assert client.patch(surl, json={"archived": True}).json()["archived_at"] is not None
    assert client.get("/v1/sweeps").json()["total"] == 0
    assert client.get("/v1/runs").json()["total"] == 1  # its runs are archived with it
    assert client.get("/v1/runs?archived=true").json()["total"] == 4
    assert client.get("/v1/runs?archived=all").json()["total"] == 5
    sweep_run = client.get(f"{surl}/runs").json()[0]["run_id"]
    one = client.patch(f"/v1/runs/{sweep_run}", json={"archived": False})
    assert one.status_code == 409 and "archive the sweep" in detail(one)
    assert [x["name"] for x in client.get("/v1/sweeps?archived=true").json()["items"]] == ["to archive"]
    client.patch(surl, json={"archived": False})
    assert client.get("/v1/sweeps").json()["total"] == 1 and client.get("/v1/runs").json()["total"] == 5


def test_deleting_a_sweep_takes_its_runs_points_aggregates_and_unshared_results_and_frees_its_queue(
    app, client, clean_db, db_session
):
    token = make_user(client, "ada")
    with user_client(app, token) as ada:
        sweep = ada.post("/v1/sweeps", json=sweep_body([1, 8], name="doomed")).json()
        surl = f"/v1/sweeps/{sweep['id']}"
        owner = db_session.execute(select(Sweep.owner_id)).scalar_one()
        assert queued_count(db_session, owner_id=owner) == 4

        refused = ada.delete(surl)
        assert refused.status_code == 409
        assert (
            detail(refused) == f"sweep {sweep['id']} has 4 runs queued or running: cancel it first (POST {surl}/cancel)"
        )
        ids = queued_ids(ada, sweep["id"])
        simulate(clean_db, ids[:2])  # point 0 done, point 1 waiting
        # Its waiting runs are marked by the dispatcher's pass just after the response, or not
        # yet: either way the sweep deletes at once (the pending case: tests/services/test_experiments.py).
        assert ada.post(f"{surl}/cancel").status_code == 200

        with user_client(app, make_user(client, "eve")) as eve:
            assert eve.delete(surl).status_code == 404  # private: as if it did not exist
        client.patch(surl, json={"shared": True})
        with user_client(app, make_user(client, "mallory")) as mallory:
            assert mallory.delete(surl).status_code == 403

        deleted = ada.delete(surl)
        assert deleted.status_code == 200, deleted.text
        assert deleted.json() == {"runs": 4, "results": 2}
        assert ada.get(surl).status_code == 404
        assert ada.get(f"/v1/runs/{ids[0]}").status_code == 404
    db_session.commit()
    for model in (Sweep, SweepPoint, SweepAggregate, Run, Result, FlowResult, PendingCancel):
        assert db_session.execute(select(func.count()).select_from(model)).scalar_one() == 0, model
    assert queued_count(db_session, owner_id=owner) == 0 and queued_count(db_session) == 0


def test_deleting_a_run_keeps_a_result_another_run_shares_and_refuses_unfinished_and_sweep_runs(
    client, clean_db, db_session
):
    first = client.post("/v1/runs", json=FIG2).json()
    refused = client.delete(f"/v1/runs/{first['id']}")
    assert refused.status_code == 409 and "is queued: cancel it first" in detail(refused)
    simulate(clean_db, [first["id"]])
    twin = client.post("/v1/runs", json=FIG2).json()
    assert twin["cached"] is True  # the same result row answers it

    assert client.delete(f"/v1/runs/{first['id']}").json() == {"runs": 1, "results": 0}
    assert client.get(f"/v1/runs/{twin['id']}/result").status_code == 200
    assert client.delete(f"/v1/runs/{twin['id']}").json() == {"runs": 1, "results": 1}
    assert client.get(f"/v1/runs/{twin['id']}").status_code == 404
    db_session.commit()
    for model in (Run, Result, FlowResult, Trace):
        assert db_session.execute(select(func.count()).select_from(model)).scalar_one() == 0, model

    sweep = client.post("/v1/sweeps", json=sweep_body([1])).json()
    one = client.get(f"/v1/sweeps/{sweep['id']}/runs").json()[0]["run_id"]
    client.post(f"/v1/sweeps/{sweep['id']}/cancel")
    refused = client.delete(f"/v1/runs/{one}")
    assert refused.status_code == 409 and "delete the sweep" in detail(refused)


def test_two_sweeps_side_by_side_align_on_their_common_axis_values(client, clean_db):
    a = client.post("/v1/sweeps", json=sweep_body([1, 8], name="A")).json()
    b = client.post("/v1/sweeps", json={**sweep_body([8, 30], name="B"), "seed": 5}).json()
    for sweep in (a, b):
        simulate(clean_db, queued_ids(client, sweep["id"]))

    r = client.get(f"/v1/sweeps/compare?a={a['id']}&b={b['id']}&metric=throughput_pkts_per_rtt&flow=sbs")
    assert r.status_code == 200, r.text
    body = r.json()
    assert (body["a"]["name"], body["b"]["name"], body["axes"], body["only_a"], body["only_b"]) == (
        "A",
        "B",
        ["flows[*].loss.m"],
        [],
        [],
    )
    rows = {row["flows[*].loss.m"]: row for row in body["rows"]}
    assert set(rows) == {1, 8, 30} and {row["flow"] for row in body["rows"]} == {"sbs"}
    assert rows[1]["b_mean"] is None and rows[30]["a_mean"] is None  # one side only
    both = rows[8]
    assert both["a_count"] == both["b_count"] == 2 and both["a_point"] == 1 and both["b_point"] == 0
    a_summary = client.get(f"/v1/sweeps/{a['id']}/summary?metric=throughput_pkts_per_rtt&flow=sbs").json()["rows"]
    assert both["a_mean"] == a_summary[1]["mean"]
    assert both["difference"] == both["b_mean"] - both["a_mean"]
    assert both["ratio"] == both["b_mean"] / both["a_mean"]

    csv = client.get(f"/v1/sweeps/compare?a={a['id']}&b={b['id']}&metric=throughput_pkts_per_rtt&format=csv")
    assert csv.status_code == 200 and csv.text.splitlines()[0].startswith("flows[*].loss.m,flow,")
    # A link's queueing delay and the run's Jain index line up the same way, under their link / "run".
    delays = client.get(f"/v1/sweeps/compare?a={a['id']}&b={b['id']}&metric=p95_queue_delay_s&flow=bottleneck").json()[
        "rows"
    ]
    assert {(row["flows[*].loss.m"], row["flow"]) for row in delays} == {(m, "bottleneck") for m in (1, 8, 30)}
    jain = client.get(f"/v1/sweeps/compare?a={a['id']}&b={b['id']}&metric=jain").json()["rows"]
    assert {row["flow"] for row in jain} == {"run"} and all(
        0 < row["a_mean"] <= 1 for row in jain if row["a_mean"] is not None
    )
    bad = client.get(f"/v1/sweeps/compare?a={a['id']}&b={b['id']}&metric=nope")
    assert bad.status_code == 422 and detail(bad)[0]["path"] == "$.metric" and "per link" in detail(bad)[0]["msg"]
    assert client.get(f"/v1/sweeps/compare?a={a['id']}&b={uuid.uuid4()}").status_code == 404


def test_sweeps_are_listed_by_the_status_they_show(client, clean_db):
    made = {name: client.post("/v1/sweeps", json=sweep_body([1, 8], name=name)).json() for name in ("q", "r", "d", "c")}
    simulate(clean_db, queued_ids(client, made["r"]["id"])[:1])  # one finished, three waiting: running
    simulate(clean_db, queued_ids(client, made["d"]["id"]))
    client.post(f"/v1/sweeps/{made['c']['id']}/cancel")
    shown = {s["name"]: s["status"] for s in client.get("/v1/sweeps").json()["items"]}
    assert shown == {"q": "queued", "r": "running", "d": "done", "c": "cancelled"}
    for status in ("queued", "running", "done", "cancelled"):
        listed = client.get(f"/v1/sweeps?status={status}").json()
        assert [s["name"] for s in listed["items"]] == [n for n, st in shown.items() if st == status] and listed[
            "total"
        ] == 1
    bad = client.get("/v1/sweeps?status=finished")
    assert bad.status_code == 422 and bad.json()["detail"][0]["loc"][-1] == "status"
