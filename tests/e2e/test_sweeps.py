"""Sweeps end to end: the API, PostgreSQL, Redis and a real Celery worker process."""

from __future__ import annotations

import io
import math
import statistics
from typing import Any

import pyarrow.parquet as pq
from scipy import stats as scipy_stats
from sqlalchemy import func, select

from services.db.models import Result, Run
from tests.e2e.test_runs import count
from tests.support import wait_for

SMALL = {
    "preset": "paper000-fig2a",
    "overrides": {"duration_s": 20},
    "axes": [{"path": "flows[*].loss.m", "values": [1, 8, 30]}],
    "replications": 3,
    "seed": 7,
}


def done(client: Any, sweep_id: str, timeout_s: float = 120.0) -> dict[str, Any]:
    def poll() -> dict[str, Any] | None:
        sweep = client.get(f"/v1/sweeps/{sweep_id}").json()
        return sweep if sweep["status"] == "done" else None

    return wait_for(poll, timeout_s=timeout_s, interval_s=0.2)


def test_a_sweep_runs_through_the_worker_and_its_summary_is_the_runs_statistics(client, celery_worker_process):
    sweep = client.post("/v1/sweeps", json=SMALL).json()
    finished = done(client, sweep["id"])
    assert finished["progress"]["succeeded"] == 9 and finished["progress"]["failed"] == 0

    summary = client.get(f"/v1/sweeps/{sweep['id']}/summary", params={"metric": "throughput_pkts_per_rtt"}).json()
    rows = {(r["flows[*].loss.m"], r["flow"]): r for r in summary["rows"]}
    assert set(rows) == {(m, f) for m in (1, 8, 30) for f in ("sbs", "imp")}
    assert summary["confidence"] == 0.95

    # Recompute each cell from the runs' own results, fetched one by one.
    runs = client.get(f"/v1/sweeps/{sweep['id']}/runs").json()
    for m_index, m in enumerate((1, 8, 30)):
        ids = [r["run_id"] for r in runs if r["point"] == m_index]
        for position, flow in enumerate(("sbs", "imp")):
            values = [
                client.get(f"/v1/runs/{i}/result").json()["flows"][position]["throughput_pkts_per_rtt"] for i in ids
            ]
            row = rows[(m, flow)]
            assert row["count"] == 3 and row["replications"] == 3
            assert math.isclose(row["mean"], statistics.mean(values), rel_tol=1e-12)
            assert math.isclose(row["std"], statistics.stdev(values), rel_tol=1e-9)
            # A throughput's interval is Student-t on the log scale (delta method), mapped back.
            k = scipy_stats.t.ppf(0.975, 2) * statistics.stdev(values) / math.sqrt(3) / statistics.mean(values)
            low, high = statistics.mean(values) / math.exp(k), statistics.mean(values) * math.exp(k)
            assert row["interval"] == "log" and 0 < row["ci_low"] < row["mean"] < row["ci_high"]
            assert math.isclose(row["ci_low"], low, rel_tol=1e-9) and math.isclose(row["ci_high"], high, rel_tol=1e-9)
            assert math.isclose(row["half_width"], (high - low) / 2, rel_tol=1e-9)


def test_resubmitting_simulates_nothing_and_extending_simulates_only_the_new_runs(
    client, celery_worker_process, db_session
):
    first = client.post("/v1/sweeps", json=SMALL).json()
    assert first["created"] == {"runs": 9, "cached": 0, "enqueued": 9}
    done(client, first["id"])
    results_before = count(db_session, Result)
    assert results_before == 9

    again = client.post("/v1/sweeps", json=SMALL)
    body = again.json()
    assert body["created"] == {"runs": 9, "cached": 9, "enqueued": 0}
    assert body["status"] == "done" and body["progress"]["succeeded"] == 9
    assert count(db_session, Result) == results_before

    more = client.post(f"/v1/sweeps/{first['id']}/extend", json={"replications": 5}).json()
    assert more["created"] == {"runs": 6, "cached": 0, "enqueued": 6}
    done(client, first["id"])
    assert count(db_session, Result) == 15
    db_session.expire_all()
    attempts = db_session.execute(select(func.sum(Run.attempts)).where(Run.sweep_id == first["id"])).scalar_one()
    assert attempts == 15  # every run of the first sweep simulated exactly once
    summary = client.get(f"/v1/sweeps/{first['id']}/summary", params={"metric": "goodput_bps", "flow": "sbs"}).json()
    assert {r["count"] for r in summary["rows"]} == {5} and {r["flow"] for r in summary["rows"]} == {"sbs"}


def test_the_summary_downloads_as_csv_and_parquet_with_the_json_rows(client, celery_worker_process):
    sweep = client.post("/v1/sweeps", json={**SMALL, "replications": 2}).json()
    done(client, sweep["id"])
    url = f"/v1/sweeps/{sweep['id']}/summary"
    rows = client.get(url, params={"metric": ["throughput_pkts_per_rtt", "timeouts"]}).json()["rows"]
    csv_response = client.get(url, params={"metric": ["throughput_pkts_per_rtt", "timeouts"], "format": "csv"})
    assert csv_response.headers["content-type"].startswith("text/csv")
    assert "attachment" in csv_response.headers["content-disposition"]
    lines = csv_response.text.strip().splitlines()
    assert lines[0].split(",")[:5] == ["point", "flows[*].loss.m", "flow", "variant", "metric"]
    assert len(lines) == len(rows) + 1
    parquet = client.get(url, params={"metric": ["throughput_pkts_per_rtt", "timeouts"], "format": "parquet"})
    table = pq.read_table(io.BytesIO(parquet.content)).to_pylist()
    assert [(r["point"], r["flow"], r["metric"], r["mean"]) for r in table] == [
        (r["point"], r["flow"], r["metric"], r["mean"]) for r in rows
    ]


def test_the_stopping_rule_adds_replications_until_the_interval_is_tight_or_the_cap(client, celery_worker_process):
    body = {
        **SMALL,
        "axes": [{"path": "flows[*].loss.m", "values": [2, 20]}],
        "replications": 2,
        "stopping": {"metric": "throughput_pkts_per_rtt", "target_relative_half_width": 0.03, "max_replications": 6},
    }
    sweep = client.post("/v1/sweeps", json=body).json()

    def settled() -> bool:
        s = client.get(f"/v1/sweeps/{sweep['id']}").json()
        return s["status"] == "done"

    wait_for(settled, timeout_s=180, interval_s=0.5)
    # The worker may add a point's next batch just after the status read: read until stable.
    wait_for(settled, timeout_s=60, interval_s=0.5)
    summary = client.get(f"/v1/sweeps/{sweep['id']}/summary", params={"metric": "throughput_pkts_per_rtt"}).json()[
        "rows"
    ]
    grew = False
    for row in summary:
        assert 2 <= row["count"] <= 6
        tight = row["half_width"] / abs(row["mean"]) <= 0.03
        assert tight or row["count"] == 6, row
        grew |= row["count"] > 2
    assert grew, "a 20-s run's throughput varies by more than 3 %: some point must have grown"
    # The sweep says whether its target was met, and where not, why (issue 15).
    stopping = client.get(f"/v1/sweeps/{sweep['id']}").json()["stopping"]
    capped = [r for r in summary if r["half_width"] / abs(r["mean"]) > 0.03]
    assert stopping["points"] == 2 and stopping["growing"] == 0 and stopping["target_met"] == (not capped)
    if capped:
        assert "NOT met" in stopping["message"] and stopping["by_reason"].get(
            "max_replications reached, target not met"
        )
    else:
        assert stopping["message"] == "target ±3 % on throughput_pkts_per_rtt met at all 2 points"

    # Submitted again, every run (the rule's extra replications too) comes from the cache and
    # each point ends with as many replications as the first sweep's.
    again = client.post("/v1/sweeps", json=body).json()
    assert again["created"]["enqueued"] == 0 and again["created"]["cached"] == again["created"]["runs"]
    assert again["status"] == "done"
    replay = client.get(f"/v1/sweeps/{again['id']}/summary", params={"metric": "throughput_pkts_per_rtt"}).json()[
        "rows"
    ]
    assert [(r["point"], r["flow"], r["count"], r["mean"]) for r in replay] == [
        (r["point"], r["flow"], r["count"], r["mean"]) for r in summary
    ]
