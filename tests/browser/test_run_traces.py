"""The run page of a long trace: the plots draw the API's downsampled series (every bucket's
minimum and maximum, two rows per pixel), a zoom fetches the range's samples, and the
downloads hold every sample (issue 11, finding 2)."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

import tcpsim
from services.db.session import create_session_factory, session_scope
from services.runs.service import claim, complete
from services.settings import get_settings
from tests.browser.harness import READY_MS, Server, Tab
from tests.browser.test_dashboards import csv_rows, download

SAMPLES = 20_001  # 20 s every millisecond


@pytest.fixture(scope="module")
def long_run(server: Server, db_engine: Any) -> str:
    """One flow traced every millisecond for 20 s, simulated in this process as a worker would."""
    scenario = {
        "duration_s": 20,
        "seed": uuid.uuid4().int % 2**32,
        "topology": {
            "dumbbell": {
                "bottleneck": {"rate_mbps": 5, "delay_ms": 10, "queue": {"type": "droptail", "limit_pkts": 30}}
            }
        },
        "flows": [{"name": "long", "variant": "reno", "rtt_ms": 40}],
        "outputs": {"trace_interval_s": 0.001, "trace": ["cwnd", "ssthresh", "queue"], "max_trace_points": 3 * SAMPLES},
    }
    r = server.client.post("/v1/runs", json={"scenario": scenario})
    assert r.status_code == 201, r.text
    run_id = r.json()["id"]
    with session_scope(create_session_factory(db_engine)) as session:
        scenario = claim(session, run_id, "browser-test", get_settings())
    with session_scope(create_session_factory(db_engine)) as session:
        complete(session, run_id, tcpsim.run(scenario))
    return run_id


def test_a_long_trace_is_drawn_downsampled_zooms_to_every_sample_and_downloads_whole(
    tab: Tab, server: Server, long_run: str
) -> None:
    full = server.get(f"/v1/runs/{long_run}/traces")["rows"]
    assert len(full) == SAMPLES
    tab.open(f"/dashboard/runs/{long_run}")
    window = tab.plot("plot-cwnd")
    note = tab.page.locator("#traces-note")
    assert note.get_attribute("data-downsampled") == "1", note.inner_text()
    for trace in window + tab.plot("plot-queue"):
        column = trace["meta"]["column"]
        assert 1000 <= len(trace["x"]) <= 2 * 1280 < SAMPLES, column
        values = [r[column] for r in full if r[column] is not None]
        drawn = [v for v in trace["y"] if v is not None]
        # The line reaches every extreme the samples reach.
        assert (min(drawn), max(drawn)) == (min(values), max(values)), column
    tab.screenshot("run-long-trace")

    # Zoom to 200 ms: the page asks for that range, which fits, and draws every sample of it.
    tab.page.evaluate("Plotly.relayout('plot-cwnd', {'xaxis.range': [5.0, 5.2]})")
    tab.page.wait_for_function(
        "document.getElementById('traces-note').dataset.downsampled === '0' && "
        "document.getElementById('plot-cwnd').dataset.state === 'ready'",
        timeout=READY_MS,
    )
    zoomed = tab.plot("plot-cwnd")
    expected = [r for r in full if 5.0 <= r["time_s"] <= 5.2]
    for trace in zoomed:
        assert trace["x"] == [r["time_s"] for r in expected]
        assert trace["y"] == [r[trace["meta"]["column"]] for r in expected]

    name, data = download(tab, "#traces-downloads a[data-format='csv']")
    assert name == f"run-{long_run}-traces.csv"
    assert len(csv_rows(data)) == SAMPLES


def test_each_flows_delivery_rate_and_one_way_delay_are_drawn_over_time_beside_the_links_queueing_delay(
    tab: Tab, server: Server, db_engine: Any
) -> None:
    """Paper 004's Figs. 6-8 (issue 15): per-flow throughput and one-way delay over time; the
    links table shows the queueing delay percentiles."""
    scenario = {
        "duration_s": 6,
        "seed": 11,
        "topology": {
            "dumbbell": {
                "bottleneck": {"rate_mbps": 5, "delay_ms": 10, "queue": {"type": "droptail", "limit_pkts": 40}}
            }
        },
        "flows": [{"name": "reno", "variant": "reno", "rtt_ms": 40}, {"name": "bbr", "variant": "bbr", "rtt_ms": 80}],
        "outputs": {"trace_interval_s": 0.05, "trace": ["cwnd", "throughput", "delay"]},
    }
    r = server.client.post("/v1/runs", json={"scenario": scenario})
    assert r.status_code == 201, r.text
    run_id = r.json()["id"]
    with session_scope(create_session_factory(db_engine)) as session:
        claimed = claim(session, run_id, "browser-test", get_settings())
    with session_scope(create_session_factory(db_engine)) as session:
        complete(session, run_id, tcpsim.run(claimed))
    rows = server.get(f"/v1/runs/{run_id}/traces")["rows"]
    tab.open(f"/dashboard/runs/{run_id}")
    assert {t["meta"]["column"] for t in tab.plot("plot-cwnd")} == {"reno.cwnd", "bbr.cwnd"}
    for plot_id, quantity in (("plot-rate", "throughput_bps"), ("plot-delay", "delay_s")):
        drawn = {t["meta"]["column"]: t["y"] for t in tab.plot(plot_id)}
        assert set(drawn) == {f"reno.{quantity}", f"bbr.{quantity}"}
        for column, ys in drawn.items():
            assert ys == [row[column] for row in rows], column
    assert any(v and v > 0 for v in drawn["bbr.delay_s"])
    links = tab.page.inner_text("#links-table")
    result = server.get(f"/v1/runs/{run_id}/result")
    bottleneck = next(link for link in result["links"] if link["name"] == "bottleneck")
    assert "bottleneck" in links and "-access" not in links and bottleneck["p95_queue_delay_s"] > 0
    tab.screenshot("run-rate-delay")
