"""/v1/reproductions through the real app and database: tokens, the caller's sweeps, the
verdicts before and after the runs finish (simulated here, in process, as a worker would),
and that another user's reproduction never answers for mine."""

from __future__ import annotations

import csv
import io
import uuid
from typing import Any

from sqlalchemy import select

import tcpsim
from services.db.models import Run, RunStatus
from services.reproductions import PAPERS
from services.runs.service import claim, complete
from services.settings import get_settings
from tests.support import make_user, user_client

SHORT = {"experiments": ["exp2-low", "exp2-high"], "overrides": {"duration_s": 4}}
EXP2_IDS = {
    "exp2-same-variant-fair",
    "exp2-newreno-reno-equal-low",
    "exp2-newreno-beats-reno-high",
    "exp2-vegas-loses-to-newreno",
}


def simulate_queued(db_session: Any, sweep_ids: list[str]) -> int:
    """What a worker does, in this process, for every queued run of the sweeps."""
    ids = (
        db_session.execute(
            select(Run.id).where(Run.sweep_id.in_([uuid.UUID(s) for s in sweep_ids]), Run.status == RunStatus.queued)
        )
        .scalars()
        .all()
    )
    for run_id in ids:
        scenario = claim(db_session, run_id, "test", get_settings())
        db_session.commit()
        complete(db_session, run_id, tcpsim.run(scenario))
        db_session.commit()
    return len(ids)


def test_every_reproduction_endpoint_needs_a_token(anonymous_client) -> None:
    for path in ("/v1/reproductions", "/v1/reproductions/002", "/v1/reproductions/002/tables/exp2-low"):
        assert anonymous_client.get(path).status_code == 401, path
    assert anonymous_client.post("/v1/reproductions/002", json=SHORT).status_code == 401


def test_before_any_run_every_conclusion_is_not_yet_run(client) -> None:
    papers = client.get("/v1/reproductions").json()
    assert [p["paper"] for p in papers] == sorted(PAPERS)  # every paper, in the papers' order
    assert all(p["reproduction"] == {"status": "none"} for p in papers)
    body = client.get("/v1/reproductions/002").json()
    assert (body["status"], body["reproduction"], body["tables"], body["sources"]) == ("none", None, [], [])
    assert body["rows"] and {r["verdict"] for r in body["rows"]} == {"not_run"}
    assert body["verdicts"]["not_run"] == len(body["rows"])
    text = client.get("/v1/reproductions/002?format=csv").text
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [r["id"] for r in rows] == [r["id"] for r in body["rows"]]
    assert client.get("/v1/reproductions/002/tables/exp2-low").status_code == 404


def test_unknown_papers_experiments_and_overrides_are_refused(client) -> None:
    assert client.get("/v1/reproductions/999").status_code == 404
    assert client.post("/v1/reproductions/999").status_code == 404
    r = client.post("/v1/reproductions/002", json={"experiments": ["nope"]})
    assert r.status_code == 422 and "exp1" in r.text
    assert client.post("/v1/reproductions/002", json={"overrides": {"duration_s": -1}}).status_code == 422
    assert client.get("/v1/sweeps").json()["total"] == 0


def test_reproduce_creates_the_callers_sweeps(app, client) -> None:
    with user_client(app, make_user(client, "ada")) as ada:
        r = ada.post("/v1/reproductions/paper002", json=SHORT)
        assert r.status_code == 201, r.text
        started = r.json()
        assert [s["experiment"] for s in started["sweeps"]] == ["exp2-low", "exp2-high"]
        assert started["created"]["runs"] == 12
        for s in started["sweeps"]:
            sweep = ada.get(f"/v1/sweeps/{s['sweep_id']}").json()
            assert sweep["owner"] == "ada" and not sweep["shared"]
            assert sweep["name"] == f"paper002 reproduction {started['batch']}: {s['experiment']}"
        body = ada.get("/v1/reproductions/002").json()
        assert body["status"] == "running" and body["reproduction"]["batch"] == started["batch"]
        assert body["reproduction"]["runs"] == 12 and body["sources"] == []


def test_a_finished_reproduction_is_judged_for_its_owner_only(app, client, db_session) -> None:
    with user_client(app, make_user(client, "ada")) as ada, user_client(app, make_user(client, "bob")) as bob:
        started = ada.post("/v1/reproductions/002", json={**SHORT, "shared": True}).json()
        assert simulate_queued(db_session, [s["sweep_id"] for s in started["sweeps"]]) == 12

        body = ada.get("/v1/reproductions/002").json()
        assert body["status"] == "done" and len(body["sources"]) == 2
        verdicts = {r["id"]: r["verdict"] for r in body["rows"]}
        assert all(verdicts[i] in ("agree", "partly", "disagree") for i in EXP2_IDS)
        assert all(v == "not_run" for i, v in verdicts.items() if i not in EXP2_IDS)
        assert [t["key"] for t in body["tables"]] == ["exp2-low", "exp2-high"]
        table = ada.get("/v1/reproductions/002/tables/exp2-low").json()
        assert [r["pair"] for r in table["rows"]] == ["Reno/Reno", "NewReno/Reno", "Vegas/Vegas", "NewReno/Vegas"]
        assert table["rows"][3]["paper_first"] == 0.98 and table["rows"][3]["ours_first_mbps"] > 0
        parquet = ada.get("/v1/reproductions/002/tables/exp2-low?format=parquet")
        assert parquet.status_code == 200 and parquet.content[:4] == b"PAR1"

        # Shared or not, ada's sweeps never answer for bob (nor for the admin).
        for other in (bob, client):
            mine = other.get("/v1/reproductions/002").json()
            assert mine["status"] == "none" and {r["verdict"] for r in mine["rows"]} == {"not_run"}
            assert other.get("/v1/reproductions/002/tables/exp2-low").status_code == 404


def test_a_finished_sweep_of_the_experiments_preset_answers_when_no_reproduction_has(app, client, db_session) -> None:
    """Issue 15: a researcher who ran an experiment's preset by hand sees it judged, not 'not run';
    a sweep along other axes, or someone else's, is not taken for it."""
    axes = [
        {"path": "flows[0].variant", "values": ["reno", "newreno-sbs", "vegas"]},
        {"path": "flows[1].variant", "values": ["reno", "vegas"]},
    ]
    with user_client(app, make_user(client, "cy")) as cy, user_client(app, make_user(client, "di")) as di:
        mine = cy.post(
            "/v1/sweeps",
            json={
                "name": "my exp2",
                "preset": "paper002-exp2-fairness-low",
                "axes": axes,
                "replications": 1,
                "overrides": {"duration_s": 4},
            },
        ).json()
        other_axes = cy.post(
            "/v1/sweeps",
            json={
                "preset": "paper002-exp2-fairness-high",
                "axes": axes[:1],
                "replications": 1,
                "overrides": {"duration_s": 4},
            },
        ).json()
        assert simulate_queued(db_session, [mine["id"], other_axes["id"]]) == 9

        body = cy.get("/v1/reproductions/002").json()
        assert body["status"] == "none"  # no reproduction of cy's: the report says so, and judges what there is
        [source] = body["sources"]
        assert (source["experiment"], source["sweep_id"], source["reused"], source["name"]) == (
            "exp2-low",
            mine["id"],
            True,
            "my exp2",
        )
        assert source["overrides"] == {"duration_s": 4}
        verdicts = {r["id"]: r["verdict"] for r in body["rows"]}
        assert verdicts["exp2-newreno-reno-equal-low"] in ("agree", "partly", "disagree")
        assert verdicts["exp2-newreno-beats-reno-high"] == "not_run"  # exp2-high's sweep had other axes
        assert [t["key"] for t in body["tables"]] == ["exp2-low"]
        assert {r["verdict"] for r in di.get("/v1/reproductions/002").json()["rows"]} == {"not_run"}


def test_a_study_is_reproduced_through_the_database_and_judged_from_its_link_and_run_levels(
    app, client, db_session
) -> None:
    """The bufferbloat study's claims rest on the bottleneck's queueing delay and Jain's index:
    the report reads them from the stored runs' link and run levels, not only the flow groups."""
    with user_client(app, make_user(client, "ada")) as ada:
        r = ada.post("/v1/reproductions/bufferbloat", json={"experiments": ["mixed"], "overrides": {"duration_s": 12}})
        assert r.status_code == 201, r.text
        started = r.json()
        (sweep,) = started["sweeps"]
        assert ada.get(f"/v1/sweeps/{sweep['sweep_id']}").json()["name"] == (
            f"bufferbloat reproduction {started['batch']}: mixed"
        )
        assert simulate_queued(db_session, [sweep["sweep_id"]]) == 16 * 3

        body = ada.get("/v1/reproductions/bufferbloat").json()
        assert body["status"] == "done" and body["kind"] == "study" and body["label"] == "bufferbloat"
        verdicts = {r["id"]: r["verdict"] for r in body["rows"]}
        assert verdicts["fq-codel-isolates-flows"] == "agree"  # Jain, a run-level metric
        assert verdicts["bbr-cubic-share-depends-on-buffer"] in ("agree", "partly", "disagree")
        assert verdicts["droptail-delay-grows-with-buffer"] == "not_run"  # same-variant was not asked for
        table = ada.get("/v1/reproductions/bufferbloat/tables/mixed").json()
        assert len(table["rows"]) == 16
        assert all(row["p99_delay_ms"] is not None and row["p99_delay_ms"] > 0 for row in table["rows"])
        droptail = {row["buffer_bdp"]: row for row in table["rows"] if row["queue"] == "Drop-Tail"}
        assert droptail[8]["p99_delay_ms"] > droptail[1]["p99_delay_ms"]
        csv_text = ada.get("/v1/reproductions/bufferbloat/tables/mixed?format=csv")
        assert "reproduction-bufferbloat-mixed" in csv_text.headers.get("content-disposition", "")


def test_the_dctcp_study_is_reproduced_through_the_database_with_one_flow_group_per_incast_sender(
    app, client, db_session
) -> None:
    """The DCTCP study's incast reads the query's completion as its slowest sender, one flow
    group each, from the stored runs; its mixed experiment reads the port's CE marks (a link
    metric) and Jain's index."""
    with user_client(app, make_user(client, "ada")) as ada:
        r = ada.post("/v1/reproductions/dctcp", json={"experiments": ["mixed", "incast"]})
        assert r.status_code == 201, r.text
        started = r.json()
        assert [s["experiment"] for s in started["sweeps"]] == ["mixed", "incast"]
        names = {ada.get(f"/v1/sweeps/{s['sweep_id']}").json()["name"] for s in started["sweeps"]}
        assert names == {f"dctcp reproduction {started['batch']}: {e}" for e in ("mixed", "incast")}
        assert simulate_queued(db_session, [s["sweep_id"] for s in started["sweeps"]]) == 6 * 2 + 12 * 3

        body = ada.get("/v1/reproductions/dctcp").json()
        assert body["status"] == "done" and body["kind"] == "study" and body["label"] == "dctcp"
        verdicts = {r["id"]: r["verdict"] for r in body["rows"]}
        assert verdicts["dctcp-beats-classic-ecn"] == "agree"  # shares from the flow groups
        assert verdicts["incast-stalls-once-first-windows-overflow"] == "agree"  # 48 and 64 senders' groups
        assert verdicts["incast-dctcp-no-worse-than-tcp"] in ("agree", "partly", "disagree")
        assert verdicts["dctcp-full-throughput-above-c-rtt-over-7"] == "not_run"  # queue-vs-k was not asked for
        mixed = ada.get("/v1/reproductions/dctcp/tables/mixed").json()["rows"]
        assert len(mixed) == 6 and all(row["marks"] > 0 and row["jain"] < 0.9 for row in mixed)
        incast = {
            (row["variant"], row["senders"]): row
            for row in ada.get("/v1/reproductions/dctcp/tables/incast").json()["rows"]
        }
        assert len(incast) == 12
        assert incast[("DCTCP", 32)]["slowest_ms"] < 5 <= 200 <= incast[("DCTCP", 64)]["slowest_ms"]
        assert incast[("CUBIC", 32)]["stalled"] >= 1 and incast[("CUBIC", 4)]["stalled"] == 0


def test_the_l4s_study_is_reproduced_through_the_database_with_the_queue_a_preset_parameter_axis(
    app, client, db_session
) -> None:
    """The L4S study sweeps `queue`, a preset parameter that replaces the whole bottleneck queue,
    and reads each flow's queueing delay (mean RTT above the propagation RTT) from the flow
    groups and the marks from the link level of the stored runs."""
    with user_client(app, make_user(client, "ada")) as ada:
        r = ada.post("/v1/reproductions/l4s", json={"experiments": ["queues"]})
        assert r.status_code == 201, r.text
        started = r.json()
        (sweep,) = started["sweeps"]
        assert ada.get(f"/v1/sweeps/{sweep['sweep_id']}").json()["name"] == (
            f"l4s reproduction {started['batch']}: queues"
        )
        assert simulate_queued(db_session, [sweep["sweep_id"]]) == 4 * 2 * 2

        body = ada.get("/v1/reproductions/l4s").json()
        assert body["status"] == "done" and body["kind"] == "study" and body["label"] == "l4s"
        verdicts = {r["id"]: r["verdict"] for r in body["rows"]}
        assert verdicts["l4s-queue-about-a-millisecond"] == "agree"  # from the flow groups' RTTs
        assert verdicts["scalable-starves-classic-in-one-queue"] == "agree"
        assert verdicts["coupling-equal-rates"] == verdicts["dualpi2-keeps-the-link-busy"] == "not_run"
        rows = {
            (row["queue"], row["classic"]): row for row in ada.get("/v1/reproductions/l4s/tables/queues").json()["rows"]
        }
        assert len(rows) == 8
        assert rows[("DualPI2", "Reno")]["scalable_queue_ms"] < 1 < 8 < rows[("DualPI2", "Reno")]["classic_queue_ms"]
        assert rows[("PIE+ECN", "CUBIC")]["marks"] > 0 and rows[("Drop-Tail", "CUBIC")]["marks"] is None
