"""The schedule page in a real headless Chromium: the plotted means, intervals, baseline band
and flagged firings are the history endpoint's rows; the selectors redraw from the API; the
firings table links to their sweeps; the download is the plotted table. (Fixtures:
tests/browser/conftest.py; a schedule fired three times by hand, the third with a longer
scenario, so its simulated metrics move.)"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from services.settings import Settings
from tests.browser.harness import Server, Tab
from tests.browser.test_dashboards import as_number, assert_same, csv_rows, download
from tests.support import wait_for

TEMPLATE = {
    "preset": "paper000-fig2a",
    "overrides": {"duration_s": 10, "warmup_s": 2},
    "axes": [{"path": "flows[*].loss.m", "values": [2, 8]}],
    "replications": 2,
    "reuse_results": False,
}
M_AXIS = "flows[*].loss.m"


@dataclass
class Fired:
    schedule_id: str
    sweep_ids: list[str]  # oldest first


def _fire_and_finish(server: Server, schedule_id: str) -> str:
    r = server.client.post(f"/v1/schedules/{schedule_id}/fire")
    assert r.status_code == 201, r.text
    sweep_id = r.json()["id"]
    done = wait_for(
        lambda: (s := server.get(f"/v1/sweeps/{sweep_id}"))["status"] == "done" and s, timeout_s=120, interval_s=0.3
    )
    assert done["progress"]["succeeded"] == 4, done["progress"]
    return sweep_id


@pytest.fixture(scope="module")
def fired(server: Server, db_engine: Any, start_worker: Any, test_settings: Settings) -> Iterator[Fired]:
    """On an emptied database: a schedule fired twice alike, then once with 12 s runs."""
    from tests.conftest import truncate_all
    from worker.app import app as celery_app

    truncate_all(db_engine)  # what the clean_db fixture does, once for the module
    celery_app.control.purge()
    worker = start_worker(f"browser-schedules-{os.getpid()}")
    try:
        r = server.client.post(
            "/v1/schedules", json={"name": "fig2a nightly", "cron": "0 3 * * *", "template": TEMPLATE}
        )
        assert r.status_code == 201, r.text
        sid = r.json()["id"]
        sweeps = [_fire_and_finish(server, sid), _fire_and_finish(server, sid)]
        longer = {**TEMPLATE, "overrides": {"duration_s": 12, "warmup_s": 2}}
        assert server.client.patch(f"/v1/schedules/{sid}", json={"template": longer}).status_code == 200
        sweeps.append(_fire_and_finish(server, sid))
    finally:
        worker.stop(grace_s=5)
    yield Fired(sid, sweeps)


def traces_of(plotted: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    [trace] = [t for t in plotted if (t.get("meta") or {}).get("kind") == kind]
    return trace


def check_plot(plotted: list[dict[str, Any]], rows: list[dict[str, Any]]) -> None:
    """The plot is `rows` (one point and flow group, oldest firing first)."""
    mean = traces_of(plotted, "mean")
    assert mean["x"] == [r["fired_for"] for r in rows]
    assert mean["meta"]["sweeps"] == [r["sweep_id"] for r in rows]
    assert_same(mean["y"], [r["mean"] for r in rows], "mean")
    assert_same(mean["error_y"]["array"], [r["ci_high"] - r["mean"] for r in rows], "ci high")
    assert_same(mean["error_y"]["arrayminus"], [r["mean"] - r["ci_low"] for r in rows], "ci low")
    based = [r for r in rows if r["baseline_ci_low"] is not None]
    assert traces_of(plotted, "baseline-low")["x"] == [r["fired_for"] for r in based]
    assert_same(traces_of(plotted, "baseline-low")["y"], [r["baseline_ci_low"] for r in based], "band low")
    assert_same(traces_of(plotted, "baseline-high")["y"], [r["baseline_ci_high"] for r in based], "band high")
    flagged = [r for r in rows if r["shift"]]
    shifts = traces_of(plotted, "shift")
    assert shifts["x"] == [r["fired_for"] for r in flagged]
    assert_same(shifts["y"], [r["mean"] for r in flagged], "flagged")
    symbols = {"up": "triangle-up", "down": "triangle-down"}
    assert shifts["marker"]["symbol"] == [symbols[r["shift"]] for r in flagged]
    assert shifts["meta"]["shifts"] == [r["shift"] for r in flagged]


def history(server: Server, fired: Fired, metric: str) -> list[dict[str, Any]]:
    return server.get(f"/v1/schedules/{fired.schedule_id}/history", params={"metric": metric})["rows"]


def pick(rows: list[dict[str, Any]], m: int, flow: str) -> list[dict[str, Any]]:
    return sorted((r for r in rows if r[M_AXIS] == m and r["flow"] == flow), key=lambda r: r["fired_for"])


def test_the_page_plots_the_history_its_baseline_and_the_flagged_firing(tab: Tab, server: Server, fired: Fired):
    tab.open(f"/dashboard/schedules/{fired.schedule_id}?metric=throughput_pkts_per_rtt")
    rows = history(server, fired, "throughput_pkts_per_rtt")
    shown = pick(rows, 2, "sbs")  # the first point and group
    assert len(shown) == 3
    # The two alike firings agree exactly; the longer third one moved.
    assert [r["shift"] for r in shown[:2]] == [None, None] and shown[2]["shift"] in ("up", "down")
    assert shown[1]["mean"] == shown[0]["mean"] and shown[2]["test"] == "exact"
    plotted = tab.plot("plot-history")
    check_plot(plotted, shown)
    assert len(traces_of(plotted, "shift")["x"]) == 1

    # The firings table: every firing, newest first, linked to its sweep, the shift marked.
    hrefs = tab.page.eval_on_selector_all("#firings-table a", "as => as.map(a => a.getAttribute('href'))")
    assert hrefs == [f"/dashboard/sweeps/{s}" for s in reversed(fired.sweep_ids)]
    classes = tab.page.eval_on_selector_all("#firings-table tbody tr", "trs => trs.map(tr => tr.className)")
    assert classes == [f"shift {shown[2]['shift']}", "", ""]
    assert "fig2a nightly" in tab.page.inner_text("#title")
    tab.screenshot("schedule")


def test_another_point_group_and_metric_redraw_from_the_api(tab: Tab, server: Server, fired: Fired):
    tab.open(f"/dashboard/schedules/{fired.schedule_id}?metric=throughput_pkts_per_rtt")
    tab.plot("plot-history")
    keys = tab.page.eval_on_selector_all("#point option", "os => os.map(o => o.value)")
    assert len(keys) == 2
    tab.page.select_option("#point", keys[1])
    tab.page.select_option("#flow", "imp")
    tab.page.wait_for_function("document.getElementById('plot-history').data[3].meta.sweeps.length === 3")
    tab.page.wait_for_function("new URLSearchParams(location.search).get('flow') === 'imp'")
    check_plot(tab.plot("plot-history"), pick(history(server, fired, "throughput_pkts_per_rtt"), 8, "imp"))

    # The core's own speed: flow "core", Welch's test, a value for every firing (nothing
    # was answered from the cache: reuse_results false).
    tab.page.select_option("#metric", "core_events_per_s")
    tab.page.wait_for_function("new URLSearchParams(location.search).get('metric') === 'core_events_per_s'")
    tab.page.wait_for_function("new URLSearchParams(location.search).get('flow') === 'core'")
    rows = pick(history(server, fired, "core_events_per_s"), 8, "core")
    assert len(rows) == 3 and all(r["n"] == 2 and r["mean"] > 0 for r in rows)
    assert [r["test"] for r in rows] == [None, "welch", "welch"]
    check_plot(tab.plot("plot-history"), rows)
    tab.screenshot("schedule-core-speed")


def test_the_download_is_the_plotted_history(tab: Tab, server: Server, fired: Fired):
    tab.open(f"/dashboard/schedules/{fired.schedule_id}?metric=mean_rtt_s")
    tab.plot("plot-history")
    url = tab.page.get_attribute("#history-downloads", "data-url")
    assert url == f"/v1/schedules/{fired.schedule_id}/history?metric=mean_rtt_s"
    name, data = download(tab, "#history-downloads a[data-format='csv']")
    assert name == f"schedule-{fired.schedule_id}-history.csv"
    table = csv_rows(data)
    rows = history(server, fired, "mean_rtt_s")
    assert len(table) == len(rows) == 3 * 2 * 2  # firings × points × groups
    assert [t["sweep_id"] for t in table] == [r["sweep_id"] for r in rows]
    assert_same([as_number(t["mean"]) for t in table], [r["mean"] for r in rows], "csv mean")
    assert [t["shift"] or None for t in table] == [r["shift"] for r in rows]


def test_home_links_the_schedule_and_a_missing_one_is_a_404_page(tab: Tab, server: Server, fired: Fired):
    tab.open("/dashboard")
    hrefs = tab.page.eval_on_selector_all("#schedules-table a", "as => as.map(a => a.getAttribute('href'))")
    assert hrefs == [f"/dashboard/schedules/{fired.schedule_id}"]
    tab.allowed_errors.append("404")
    tab.open(f"/dashboard/schedules/{uuid.UUID(int=5)}", status=404)
    assert "There is no schedule" in tab.page.inner_text("#not-found")
