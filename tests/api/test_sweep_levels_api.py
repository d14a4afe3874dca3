"""Link- and run-level metrics of a real sweep (API, PostgreSQL, Redis, a Celery worker):
summaries of Jain's index and of the bottleneck's utilization and queueing delay, their
comparisons, and the sweep as one tidy table in JSON, CSV and Parquet."""

from __future__ import annotations

import csv
import io
from typing import Any

import pyarrow.parquet as pq
import pytest
from sqlalchemy import delete

from services.db.models import SweepAggregate
from services.sweeps import LINK_METRICS, NUMERIC_METRICS, RUN_METRICS
from tests.e2e.test_sweeps import done

# Two flows of different RTTs through a 10 Mb/s, 40-packet bottleneck; the
# variant of both swept: 2 points × 2 replications.
VARIANT_SWEEP = {
    "scenario": {
        "duration_s": 6,
        "warmup_s": 1,
        "topology": {
            "dumbbell": {
                "bottleneck": {"rate_mbps": 10, "delay_ms": 5, "queue": {"type": "droptail", "limit_pkts": 40}}
            }
        },
        "flows": [
            {"name": "near", "variant": "newreno-sbs", "rtt_ms": 20},
            {"name": "far", "variant": "newreno-sbs", "rtt_ms": 80},
        ],
    },
    "axes": [{"path": "flows[*].variant", "values": ["newreno-sbs", "cubic"]}],
    "replications": 2,
    "seed": 3,
}


@pytest.fixture
def variant_sweep(client: Any, celery_worker_process: Any) -> dict[str, Any]:
    sweep = client.post("/v1/sweeps", json=VARIANT_SWEEP).json()
    assert done(client, sweep["id"], timeout_s=240)["progress"]["succeeded"] == 4
    return sweep


def summary(client: Any, sweep_id: str, *metrics: str, **params: Any) -> list[dict[str, Any]]:
    r = client.get(f"/v1/sweeps/{sweep_id}/summary", params={"metric": list(metrics), **params})
    assert r.status_code == 200, r.text
    return r.json()["rows"]


def test_a_sweep_summarises_jain_uf_and_the_shared_links_queueing_delay_beside_its_flows(
    client, db_session, variant_sweep
):
    sweep_id = variant_sweep["id"]
    run_rows = summary(client, sweep_id, "jain", "uf_percent")
    assert {(r["level"], r["flow"], r["metric"]) for r in run_rows} == {("run", "run", m) for m in RUN_METRICS}
    jain = {r["flows[*].variant"]: r for r in run_rows if r["metric"] == "jain"}
    assert set(jain) == {"newreno-sbs", "cubic"}
    assert all(r["replications"] == 2 and r["count"] == 2 and 0.5 <= r["mean"] <= 1 for r in jain.values())
    assert [jain[v]["variant"] for v in ("newreno-sbs", "cubic")] == ["newreno-sbs", "cubic"]  # the run's variant
    assert all(r["count"] == 2 and r["mean"] > 0 for r in run_rows if r["metric"] == "uf_percent")  # RTTs differ

    link_rows = summary(client, sweep_id, "utilization", "p95_queue_delay_s", "mean_queue_delay_s", "link_drops")
    # The shared links only: a flow's own access links are left out.
    assert {r["flow"] for r in link_rows} == {"bottleneck", "bottleneck-rev"}
    assert all(r["level"] == "link" for r in link_rows)
    at = {(r["flows[*].variant"], r["flow"], r["metric"]): r["mean"] for r in link_rows}
    for variant in ("newreno-sbs", "cubic"):
        assert at[(variant, "bottleneck", "utilization")] > 0.8
        # 40 packets of 1,040 bytes at 10 Mb/s: a full queue waits 33 ms.
        assert (
            0
            < at[(variant, "bottleneck", "mean_queue_delay_s")]
            <= at[(variant, "bottleneck", "p95_queue_delay_s")]
            <= 0.034
        )
        assert at[(variant, "bottleneck-rev", "p95_queue_delay_s")] < at[(variant, "bottleneck", "p95_queue_delay_s")]

    # A flow metric still names the flow groups only; one call can mix the levels.
    assert {r["flow"] for r in summary(client, sweep_id, "drops")} == {"near", "far"}
    mixed = summary(client, sweep_id, "goodput_bps", "utilization", "jain", flow="bottleneck")
    assert {(r["level"], r["metric"]) for r in mixed} == {("link", "utilization")}

    # A sweep whose runs were counted before these metrics were aggregated reads them from
    # the results: the same numbers.
    before = {(r["point"], r["flow"], r["metric"]): (r["count"], r["mean"]) for r in run_rows + link_rows}
    db_session.execute(
        delete(SweepAggregate).where(
            SweepAggregate.sweep_id == variant_sweep["id"], SweepAggregate.metric.in_([*LINK_METRICS, *RUN_METRICS])
        )
    )
    db_session.commit()
    again = summary(
        client, sweep_id, "jain", "uf_percent", "utilization", "p95_queue_delay_s", "mean_queue_delay_s", "link_drops"
    )
    after = {(r["point"], r["flow"], r["metric"]): (r["count"], r["mean"]) for r in again}
    assert after.keys() == before.keys()
    assert all(after[k][0] == before[k][0] and after[k][1] == pytest.approx(before[k][1], rel=1e-12) for k in before)

    csv_rows = list(
        csv.DictReader(
            io.StringIO(client.get(f"/v1/sweeps/{sweep_id}/summary", params={"metric": "jain", "format": "csv"}).text)
        )
    )
    assert csv_rows and {r["level"] for r in csv_rows} == {"run"}


def test_an_unknown_metric_is_a_422_naming_the_field_and_every_level_s_metrics(client):
    queued = client.post("/v1/sweeps", json=VARIANT_SWEEP).json()  # no worker here: it stays queued
    r = client.get(f"/v1/sweeps/{queued['id']}/summary", params={"metric": ["jain", "jains"]})
    assert r.status_code == 422
    (detail,) = r.json()["detail"]
    assert detail["loc"] == ["metric", 1]
    assert (
        "'jains'" in detail["msg"]
        and "per run: jain, uf_percent" in detail["msg"]
        and "p99_queue_delay_s" in detail["msg"]
    )


def test_link_and_run_metrics_compare_between_axis_values_and_between_links(client, variant_sweep):
    params = {"sweep_id": variant_sweep["id"], "metric": "p95_queue_delay_s"}
    by_axis = client.get(
        "/v1/comparisons/ratios",
        params={
            **params,
            "axis": "flows[*].variant",
            "baseline": "newreno-sbs",
            "other": "cubic",
            "flow": "bottleneck",
        },
    ).json()
    assert by_axis["higher_is_better"] is False
    (row,) = by_axis["rows"]
    assert row["flow"] == "bottleneck" and row["pairs"] == 2
    between = client.get(
        "/v1/comparisons/ratios", params={**params, "flow_a": "bottleneck", "flow_b": "bottleneck-rev"}
    ).json()
    assert len(between["rows"]) == 2 and all(r["pairs"] == 2 for r in between["rows"])
    jain = client.get(
        "/v1/comparisons/ratios",
        params={
            "sweep_id": variant_sweep["id"],
            "metric": "jain",
            "axis": "flows[*].variant",
            "baseline": "newreno-sbs",
            "other": "cubic",
        },
    ).json()
    assert [r["flow"] for r in jain["rows"]] == ["run"] and jain["higher_is_better"] is True


def test_the_tidy_table_has_a_row_per_run_and_flow_group_link_or_run_in_every_format(client, variant_sweep):
    sweep_id = variant_sweep["id"]
    body = client.get(f"/v1/sweeps/{sweep_id}/table").json()
    assert body["axes"] == [{"path": "flows[*].variant", "column": "flows_variant", "values": ["newreno-sbs", "cubic"]}]
    assert body["metrics"] == {"flow": list(NUMERIC_METRICS), "link": list(LINK_METRICS), "run": list(RUN_METRICS)}
    rows = body["rows"]
    # 4 runs × (2 flow groups + 2 shared links + the run).
    assert len(rows) == 4 * 5
    assert [r["level"] for r in rows[:5]] == ["flow", "flow", "link", "link", "run"]
    assert [r["name"] for r in rows[:5]] == ["near", "far", "bottleneck", "bottleneck-rev", "run"]
    assert {(r["point"], r["replication"]) for r in rows} == {(p, k) for p in (0, 1) for k in (0, 1)}
    assert len({r["run_id"] for r in rows}) == 4 and {r["flows_variant"] for r in rows} == {"newreno-sbs", "cubic"}
    assert all(r["variant"] == r["flows_variant"] for r in rows)
    for r in rows:
        assert (r["goodput_bps"] is not None) == (r["level"] == "flow")
        assert (r["utilization"] is not None) == (r["level"] == "link")
        assert (r["jain"] is not None) == (r["level"] == "run")
    assert not any("[" in c or "." in c for c in body["columns"])

    text = client.get(f"/v1/sweeps/{sweep_id}/table", params={"format": "csv"}).text
    header = next(csv.reader(io.StringIO(text)))
    assert header == body["columns"]
    assert len(text.strip().splitlines()) == 1 + len(rows)
    frame = pq.read_table(
        io.BytesIO(client.get(f"/v1/sweeps/{sweep_id}/table", params={"format": "parquet"}).content)
    ).to_pandas()
    assert list(frame.columns) == body["columns"] and len(frame) == len(rows)
    bottleneck = frame[frame["name"] == "bottleneck"]
    # Pantheon's scatter per variant straight from the bottleneck's rows.
    assert set(bottleneck["variant"]) == {"newreno-sbs", "cubic"} and (bottleneck["p95_queue_delay_s"] > 0).all()


def test_a_runs_throughput_and_one_way_delay_traces_come_back_as_trace_table_columns(client, celery_worker_process):
    from tests.e2e.test_runs import finished

    scenario = {
        **VARIANT_SWEEP["scenario"],
        "seed": 5,
        "outputs": {"trace_interval_s": 0.5, "trace": ["cwnd", "throughput", "delay"]},
    }
    run = client.post("/v1/runs", json={"scenario": scenario}).json()
    assert finished(client, run["id"], timeout_s=120)["status"] == "succeeded"
    r = client.get(f"/v1/runs/{run['id']}/traces", params={"series": ["near.throughput_bps", "far.delay_s"]})
    assert r.status_code == 200, r.text
    rows = r.json()["rows"]
    assert len(rows) == 13 and list(rows[0]) == ["time_s", "near.throughput_bps", "far.delay_s"]
    assert rows[0]["near.throughput_bps"] == 0 and rows[0]["far.delay_s"] is None
    # far's one-way propagation is 40 ms; the queue adds at most 33 ms.
    assert all(0.04 <= row["far.delay_s"] <= 0.08 for row in rows[3:])
    assert all(0 < row["near.throughput_bps"] <= 10.1e6 for row in rows[3:])
