"""`/v1/comparisons` over real runs and sweeps: the API, PostgreSQL, Redis and a Celery worker."""

from __future__ import annotations

import csv
import io
import uuid
from typing import Any

import pyarrow.parquet as pq
import pytest

from services.models import sbs_pkts_per_rtt
from tests.e2e.test_runs import finished
from tests.e2e.test_sweeps import done

FIG2_RUN = {"preset": "paper000-fig2a", "overrides": {"duration_s": 20, "flows[*].loss.m": 8}}
FIG2_SWEEP = {
    "preset": "paper000-fig2a",
    "overrides": {"duration_s": 20},
    "axes": [{"path": "flows[*].loss.m", "values": [1, 8, 30]}],
    "replications": 3,
    "seed": 1,
}
TABLE2_SWEEP = {
    "preset": "paper000-table2-droptail",
    "overrides": {"duration_s": 20},
    "axes": [{"path": "background_flows", "values": [4, 8]}],
    "replications": 2,
    "seed": 1,
}


def query_error(response: Any) -> str:
    assert response.status_code == 422, response.text
    (detail,) = response.json()["detail"]
    assert detail["loc"][0] == "query"
    return detail["loc"][1]


def test_a_runs_model_comparison_uses_its_measured_inputs(client, celery_worker_process):
    run = client.post("/v1/runs", json=FIG2_RUN).json()
    assert finished(client, run["id"])["status"] == "succeeded"
    result = client.get(f"/v1/runs/{run['id']}/result").json()

    r = client.get("/v1/comparisons/models", params={"run_id": run["id"]})
    assert r.status_code == 200, r.text
    body = r.json()
    assert (body["run_id"], body["sweep_id"], body["preset"], body["axes"]) == (run["id"], None, "paper000-fig2a", [])
    assert (
        body["models"] == ["newreno-sbs", "newreno-impatient", "pftk-full", "mathis", "cubic"]
        and body["m_from"] == "drops"
    )
    rows = body["rows"]
    # NewReno flows: the four Reno-family models; cubic describes CUBIC flows only.
    assert [(x["flow"], x["model"]) for x in rows] == [(f, m) for f in ("sbs", "imp") for m in body["models"][:4]]
    sbs = result["flows"][0]
    first = rows[0]
    assert (first["p"], first["m"], first["rtt_s"], first["rto_s"]) == (
        sbs["loss_event_rate"],
        sbs["drops_per_loss_event"],
        sbs["mean_rtt_s"],
        sbs["mean_rto_s"],
    )
    assert (
        first["sim_pkts_per_rtt"] == sbs["throughput_pkts_per_rtt"] and first["sim_ci_low"] is None
    )  # one replication
    assert first["model_pkts_per_rtt"] == pytest.approx(
        float(sbs_pkts_per_rtt(sbs["loss_event_rate"], sbs["drops_per_loss_event"]))
    )
    assert first["error"] == pytest.approx(
        abs(first["sim_pkts_per_rtt"] - first["model_pkts_per_rtt"]) / first["sim_pkts_per_rtt"]
    )

    # A chosen model, m from the ratio of the rates, as CSV.
    r = client.get(
        "/v1/comparisons/models",
        params={"run_id": run["id"], "models": "newreno-sbs", "m_from": "ratio", "format": "csv"},
    )
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/csv")
    table = list(csv.DictReader(io.StringIO(r.text)))
    assert [x["model"] for x in table] == ["newreno-sbs", "newreno-sbs"]
    assert float(table[0]["m"]) == pytest.approx(sbs["loss_rate"] / sbs["loss_event_rate"])

    # The two flows of one run, compared: one pair, no interval, no verdict.
    r = client.get("/v1/comparisons/ratios", params={"run_id": run["id"], "flow_a": "sbs", "flow_b": "imp"})
    (row,) = r.json()["rows"]
    assert row["pairs"] == 1 and row["verdict"] == "insufficient_data"

    # Bad input names the parameter.
    bad = [
        ({"run_id": run["id"], "models": "newreno-sbs,nope"}, "models", "models"),
        ({"run_id": run["id"], "m_from": "guess"}, "m_from", "models"),
        ({"run_id": run["id"], "sweep_id": str(uuid.uuid4())}, "sweep_id", "models"),
        ({}, "run_id", "models"),
        ({"run_id": run["id"], "metric": "speed", "flow_a": "sbs", "flow_b": "imp"}, "metric", "ratios"),
        ({"run_id": run["id"], "flow_a": "sbs", "flow_b": "bg"}, "flow_b", "ratios"),
        ({"run_id": run["id"], "flow_a": "sbs"}, "flow_b", "ratios"),
        ({"run_id": run["id"]}, "flow_a", "ratios"),
        ({"run_id": run["id"], "axis": "flows[*].loss.m", "baseline": "1", "other": "8"}, "axis", "ratios"),
    ]
    for params, field, endpoint in bad:
        assert query_error(client.get(f"/v1/comparisons/{endpoint}", params=params)) == field, params


def test_unknown_ids_are_404_and_an_unfinished_run_is_409(client):
    for endpoint, params in (
        ("models", {"run_id": str(uuid.uuid4())}),
        ("models", {"sweep_id": str(uuid.uuid4())}),
        ("ratios", {"sweep_id": str(uuid.uuid4()), "flow_a": "sbs", "flow_b": "imp"}),
        ("paper", {"sweep_id": str(uuid.uuid4())}),
    ):
        r = client.get(f"/v1/comparisons/{endpoint}", params=params)
        assert r.status_code == 404, (endpoint, r.text)
    queued = client.post("/v1/runs", json=FIG2_RUN).json()  # no worker here: it stays queued
    r = client.get("/v1/comparisons/models", params={"run_id": queued["id"]})
    assert r.status_code == 409 and "queued" in r.json()["detail"]
    assert query_error(client.get("/v1/comparisons/paper")) == "sweep_id"

    # A sweep whose runs are all still queued: empty comparisons, and the paper's rows with nulls.
    sweep = client.post("/v1/sweeps", json=TABLE2_SWEEP).json()
    params = {"sweep_id": sweep["id"]}
    assert client.get("/v1/comparisons/models", params=params).json()["rows"] == []
    assert (
        client.get("/v1/comparisons/ratios", params={**params, "flow_a": "sbs", "flow_b": "imp"}).json()["rows"] == []
    )
    paper = client.get("/v1/comparisons/paper", params=params).json()
    assert len(paper["rows"]) == 15 and paper["summary"]["rows_matched"] == 0
    assert (
        query_error(
            client.get(
                "/v1/comparisons/ratios", params={**params, "axis": "background_flows", "baseline": "4", "other": "7"}
            )
        )
        == "other"
    )


def test_a_fig2_sweep_compared_with_the_models_between_its_flows_and_with_the_paper(client, celery_worker_process):
    sweep = client.post("/v1/sweeps", json=FIG2_SWEEP).json()
    assert done(client, sweep["id"], timeout_s=240)["progress"]["succeeded"] == 9
    params = {"sweep_id": sweep["id"]}

    models = client.get(
        "/v1/comparisons/models", params={**params, "models": ["newreno-sbs", "newreno-impatient"]}
    ).json()
    assert models["axes"] == [{"path": "flows[*].loss.m", "values": [1, 8, 30]}] and models["replications"] == 3
    assert len(models["rows"]) == 3 * 2 * 2
    assert all(
        r["replications"] == 3 and r["sim_ci_low"] < r["sim_pkts_per_rtt"] < r["sim_ci_high"] for r in models["rows"]
    )
    at_30 = {(r["flow"], r["model"]): r for r in models["rows"] if r["flows[*].loss.m"] == 30}
    assert at_30[("imp", "newreno-impatient")]["m"] > 20  # drops per loss event measured near the configured m

    ratios = client.get("/v1/comparisons/ratios", params={**params, "flow_a": "sbs", "flow_b": "imp"}).json()
    assert ratios["metric"] == "throughput_pkts_per_rtt" and ratios["regions_along"] == "flows[*].loss.m"
    rows = {r["flows[*].loss.m"]: r for r in ratios["rows"]}
    assert set(rows) == {1, 8, 30} and all(r["pairs"] == 3 for r in rows.values())
    # 20 simulated seconds hold only a few loss events at p = 0.05 %: three replications rarely
    # separate the variants, so check that each verdict is what its interval says.
    for r in rows.values():
        assert r["mean_b"] / r["mean_a"] == pytest.approx(r["ratio"])
        significant = r["diff_ci_low"] > 0 or r["diff_ci_high"] < 0
        expected = ("b_better" if r["diff"] > 0 else "a_better") if significant else "no_significant_difference"
        assert r["verdict"] == expected
        if r["ratio_ci_low"] is not None:
            assert r["ratio_ci_low"] <= r["ratio"] <= r["ratio_ci_high"]
            assert (r["ratio_ci_low"] <= 1 <= r["ratio_ci_high"]) == (not significant)
    assert sum(g["points"] for g in ratios["regions"]) == 3
    # The same as an axis comparison: m = 8 against m = 1 for each flow.
    by_axis = client.get(
        "/v1/comparisons/ratios", params={**params, "axis": "flows[*].loss.m", "baseline": "1", "other": "8"}
    ).json()
    assert [r["flow"] for r in by_axis["rows"]] == ["sbs", "imp"]
    assert all(r["pairs"] == 3 and r["point_a"] == 0 and r["point_b"] == 1 for r in by_axis["rows"])
    header = client.get(
        "/v1/comparisons/ratios",
        params={**params, "axis": "flows[*].loss.m", "baseline": "1", "other": "8", "format": "csv"},
    ).text.splitlines()[0]
    assert header.startswith("point_a,point_b,flow,") and "flows[*].loss.m" not in header
    assert (
        query_error(
            client.get(
                "/v1/comparisons/ratios", params={**params, "axis": "flows[*].loss.p", "baseline": "1", "other": "8"}
            )
        )
        == "axis"
    )
    assert (
        query_error(
            client.get(
                "/v1/comparisons/ratios", params={**params, "axis": "flows[*].loss.m", "baseline": "2", "other": "8"}
            )
        )
        == "baseline"
    )
    assert (
        query_error(
            client.get("/v1/comparisons/ratios", params={**params, "flow_a": "sbs", "flow_b": "imp", "along": "seed"})
        )
        == "along"
    )
    # Odd but well-formed input is a clean answer, never a server error.
    for odd in (
        {"baseline": "NaN", "other": "8"},
        {"baseline": "1e999", "other": "8"},
        {"baseline": "[1]", "other": "8"},
    ):
        r = client.get("/v1/comparisons/ratios", params={**params, "axis": "flows[*].loss.m", **odd})
        assert r.status_code == 422, r.text
    r = client.get(
        "/v1/comparisons/ratios",
        params={**params, "axis": "flows[*].loss.m", "baseline": "1.0", "other": "30", "metric": "timeouts"},
    )
    assert r.status_code == 200 and r.json()["higher_is_better"] is False

    paper = client.get("/v1/comparisons/paper", params=params).json()
    assert paper["preset"] == "paper000-fig2a" and paper["summary"]["kind"] == "fig2"
    assert paper["summary"]["paper"]["imp_superior_m_from"] == 26
    assert [r["m"] for r in paper["rows"]] == [1, 8, 30]
    assert [r["paper_region"] for r in paper["rows"]] == ["equality", "sbs_superior", "imp_superior"]
    assert all(r["region"] in ("equality", "sbs_superior", "imp_superior", "undetermined") for r in paper["rows"])
    crossing = paper["summary"]["model_crossover"]["nominal_p"]
    assert crossing["status"] == "crossover" and 20 < crossing["m_t"] < 30
    parquet = client.get("/v1/comparisons/paper", params={**params, "format": "parquet"})
    assert pq.read_table(io.BytesIO(parquet.content)).column("m").to_pylist() == [1, 8, 30]


def test_a_table_ii_sweep_lists_every_row_of_the_paper_beside_ours(client, celery_worker_process):
    sweep = client.post("/v1/sweeps", json=TABLE2_SWEEP).json()
    assert done(client, sweep["id"], timeout_s=240)["progress"]["succeeded"] == 4
    body = client.get("/v1/comparisons/paper", params={"sweep_id": sweep["id"]}).json()
    assert body["summary"]["kind"] == "table2" and body["summary"]["rows_matched"] == 2
    rows = body["rows"]
    assert len(rows) == 15
    for row in rows[:2]:
        assert row["point"] is not None and row["replications"] == 2
        assert row["sim_pkts_per_rtt"] > 0 and row["loss_event_rate"] > 0
        assert row["model_pkts_per_rtt"] == pytest.approx(float(sbs_pkts_per_rtt(row["loss_event_rate"], row["m"])))
        assert row["m"] == pytest.approx(row["loss_rate"] / row["loss_event_rate"])
    assert all(r["point"] is None and r["sim_pkts_per_rtt"] is None for r in rows[2:])
    # A Fig. 3 (RED) sweep has no published numbers: 409 listing the presets that have them.
    red = client.post("/v1/sweeps", json={**TABLE2_SWEEP, "preset": "paper000-fig3-red"}).json()
    r = client.get("/v1/comparisons/paper", params={"sweep_id": red["id"]})
    assert r.status_code == 409 and "paper000-table2-droptail" in r.json()["detail"]
