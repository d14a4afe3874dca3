"""The dashboards in a real headless Chromium: each page's plotted points are the API's data,
a toggle changes the plot, a download is the same table as the JSON, and every page leaves a
screenshot in artifacts/screenshots/. (Fixtures: tests/browser/conftest.py.)"""

from __future__ import annotations

import csv
import io
import json
import math
import uuid
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from tests.browser.harness import Lab, Server, Tab


def close(a: Any, b: Any, rel: float = 1e-9) -> bool:
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, int | float) and isinstance(b, int | float):
        return math.isclose(a, b, rel_tol=rel, abs_tol=1e-12)
    return a == b


def assert_same(xs: list[Any], ys: list[Any], what: str) -> None:
    assert len(xs) == len(ys), (what, len(xs), len(ys))
    bad = [(i, x, y) for i, (x, y) in enumerate(zip(xs, ys, strict=True)) if not close(x, y)]
    assert not bad, (what, bad[:5])


def download(tab: Tab, selector: str) -> tuple[str, bytes]:
    """Clicks a download link; returns the suggested file name and the file's bytes."""
    with tab.page.expect_download() as info:
        tab.page.click(selector)
    d = info.value
    path = d.path()
    return d.suggested_filename, Path(path).read_bytes()


def csv_rows(data: bytes) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(data.decode())))


def as_number(text: str) -> float | None:
    return None if text == "" else float(text)


# ------------------------------------------------------------------------------ home


def test_home_lists_the_sweeps_and_runs_and_counts_the_queue(tab: Tab, server: Server, lab: Lab):
    response = tab.open("/")
    assert response.url.endswith("/dashboard")
    for status in ("queued", "running", "succeeded", "failed", "cancelled"):
        total = server.get("/v1/runs", params={"status": status, "limit": 1})["total"]
        assert tab.page.get_attribute(f".tile[data-status='{status}']", "data-total") == str(total)
    assert tab.page.get_attribute(".tile[data-status='succeeded']", "data-total") == str(9 + 2)
    hrefs = tab.page.eval_on_selector_all("#runs-table a", "as => as.map(a => a.getAttribute('href'))")
    assert f"/dashboard/runs/{lab.run_id}" in hrefs and f"/dashboard/runs/{lab.plain_run_id}" in hrefs
    hrefs = tab.page.eval_on_selector_all("#sweeps-table a", "as => as.map(a => a.getAttribute('href'))")
    assert hrefs == [f"/dashboard/sweeps/{lab.sweep_id}"]
    tab.screenshot("home")


# ------------------------------------------------------------------------------ run


def test_run_page_plots_the_traces_of_the_api_and_downloads_them(tab: Tab, server: Server, lab: Lab):
    tab.open(f"/dashboard/runs/{lab.run_id}")
    traces = server.get(f"/v1/runs/{lab.run_id}/traces")
    assert traces["recorded"] and len(traces["rows"]) > 50
    time_s = [r["time_s"] for r in traces["rows"]]

    window = tab.plot("plot-cwnd")
    queue = tab.plot("plot-queue")
    columns = {s["column"] for s in traces["series"]}
    assert {t["meta"]["column"] for t in window + queue} == columns
    assert {"sbs.cwnd", "sbs.ssthresh", "imp.cwnd", "imp.ssthresh", "bottleneck.queue"} <= columns
    for trace in window + queue:
        column = trace["meta"]["column"]
        assert_same(trace["x"], time_s, column)
        assert_same(trace["y"], [r[column] for r in traces["rows"]], column)
    # Against the raw result too: the table endpoint reshapes, it does not change a number.
    raw = server.get(f"/v1/runs/{lab.run_id}/result", params={"traces": "true"})["traces"]
    sbs = next(f for f in raw["flows"] if f["name"] == "sbs")
    assert_same(next(t for t in window if t["meta"]["column"] == "sbs.cwnd")["y"], sbs["cwnd"], "raw cwnd")

    # The per-flow table is the API's.
    flows = server.get(f"/v1/runs/{lab.run_id}/flows")["rows"]
    names = tab.page.eval_on_selector_all("#flows-table tbody tr td:first-child", "tds => tds.map(t => t.textContent)")
    assert names == [f["name"] for f in flows]

    name, data = download(tab, "#traces-downloads a[data-format='csv']")
    assert name == f"run-{lab.run_id}-traces.csv"
    rows = csv_rows(data)
    assert len(rows) == len(traces["rows"])
    for column in columns | {"time_s"}:
        assert_same([as_number(r[column]) for r in rows], [r[column] for r in traces["rows"]], f"csv {column}")
    name, data = download(tab, "#flows-downloads a[data-format='parquet']")
    table = pq.read_table(io.BytesIO(data)).to_pylist()
    assert [r["throughput_pkts_per_rtt"] for r in table] == [f["throughput_pkts_per_rtt"] for f in flows]
    tab.screenshot("run")


def test_a_run_without_traces_says_so(tab: Tab, lab: Lab):
    tab.open(f"/dashboard/runs/{lab.plain_run_id}")
    assert tab.page.is_visible("#no-traces") and not tab.page.is_visible("#traces-card")
    assert tab.page.locator("#flows-table tbody tr").count() == 2


# ------------------------------------------------------------------------------ missing ids


@pytest.mark.parametrize(
    "path",
    [
        f"/dashboard/runs/{uuid.UUID(int=1)}",
        "/dashboard/runs/not-a-uuid",
        f"/dashboard/sweeps/{uuid.UUID(int=2)}",
        f"/dashboard/comparisons?sweep_id={uuid.UUID(int=3)}",
        f"/dashboard/regions?sweep_id={uuid.UUID(int=4)}",
    ],
)
def test_a_missing_id_is_a_404_page_that_says_what_is_missing(tab: Tab, lab: Lab, path: str):
    tab.allowed_errors.append("404")  # Chromium logs the page's own status
    tab.open(path, status=404)
    text = tab.page.inner_text("#not-found")
    assert "There is no" in text and tab.page.get_attribute("#not-found a", "href") == "/dashboard"
    if "runs/" + str(uuid.UUID(int=1)) in path:
        tab.screenshot("not-found")
