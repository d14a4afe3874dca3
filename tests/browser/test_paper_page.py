"""A paper's page in a real headless Chromium: the conclusions' ✓/✗ and the tables' cells are
the API's rows; the home page links the paper and its presets; the button starts a
reproduction whose progress the page shows. (A short reproduction of paper 002's experiment 2,
its runs simulated in this process as a worker would.)"""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.test_reproductions_api import SHORT, simulate_queued
from tests.browser.harness import READY_MS, Server, Tab
from tests.browser.test_dashboards import as_number, close

MARK = {"agree": "✓", "partly": "◐", "disagree": "✗", "no_data": "?", "not_run": "…"}


@pytest.fixture(scope="module")
def reproduced(server: Server, db_engine: Any) -> dict[str, Any]:
    """On an emptied database: the admin's finished reproduction of paper 002's experiment 2."""
    from sqlalchemy.orm import Session

    from tests.conftest import truncate_all

    truncate_all(db_engine)  # what the clean_db fixture does, once for the module
    r = server.client.post("/v1/reproductions/002", json=SHORT)
    assert r.status_code == 201, r.text
    with Session(db_engine) as session:
        simulate_queued(session, [s["sweep_id"] for s in r.json()["sweeps"]])
    body = server.get("/v1/reproductions/002")
    assert body["status"] == "done"
    return body


def open_study(
    tab: Tab, server: Server, db_engine: Any, key: str, experiment: str, title: str, **request: Any
) -> tuple[dict[str, Any], int]:
    """A study's `experiment` reproduced as a worker would, and its page opened once that
    experiment's table shows: the page names it a study and lists every claim the API judged.
    Returns the API's reproduction and how many runs were simulated."""
    from sqlalchemy.orm import Session

    r = server.client.post(f"/v1/reproductions/{key}", json={"experiments": [experiment], **request})
    assert r.status_code == 201, r.text
    with Session(db_engine) as session:
        simulated = simulate_queued(session, [s["sweep_id"] for s in r.json()["sweeps"]])
    tab.open(f"/dashboard/papers/{key}")
    tab.page.wait_for_selector(f"#table-{experiment} tbody tr", timeout=READY_MS)
    assert tab.page.locator("#title").inner_text().startswith(f"Study: {title}")
    body = server.get(f"/v1/reproductions/{key}")
    assert tab.page.locator("#conclusions-table tbody tr").count() == len(body["rows"])
    return body, simulated


def shown_mark(tab: Tab, body: dict[str, Any], claim: str) -> str:
    """The mark the page shows for `claim`, checked to be the API's verdict's."""
    cells = tab.page.locator(f"#conclusions-table tbody tr[data-id='{claim}'] td").all_inner_texts()
    assert cells[0] == MARK[next(r["verdict"] for r in body["rows"] if r["id"] == claim)], claim
    return cells[0]


def test_the_conclusions_and_tables_are_the_apis(tab: Tab, server: Server, reproduced: dict[str, Any]) -> None:
    tab.open("/dashboard/papers/002")
    rows = tab.page.locator("#conclusions-table tbody tr")
    assert rows.count() == len(reproduced["rows"])
    for i, want in enumerate(reproduced["rows"]):
        row = rows.nth(i)
        assert row.get_attribute("data-id") == want["id"]
        cells = row.locator("td").all_inner_texts()
        assert cells[0] == MARK[want["verdict"]], (want["id"], cells[0])
        assert cells[1] == want["conclusion"] and cells[4] == want["ours"]
        assert cells[5] == (want["reason"] or "—")
    assert {r["verdict"] for r in reproduced["rows"] if r["experiment"].startswith("exp2")} <= {
        "agree",
        "partly",
        "disagree",
    }

    for meta in reproduced["tables"]:
        api_rows = server.get(f"/v1/reproductions/002/tables/{meta['key']}")["rows"]
        shown = tab.page.locator(f"#table-{meta['key']} tbody tr")
        assert shown.count() == len(api_rows)
        for i, want in enumerate(api_rows):
            cells = shown.nth(i).locator("td").all_inner_texts()
            for cell, column in zip(cells, meta["columns"], strict=True):
                value = want[column["name"]]
                if isinstance(value, int | float):
                    assert close(as_number(cell), value, rel=1e-3), (column["name"], cell, value)
                else:
                    assert cell == (value if value is not None else "—"), (column["name"], cell, value)
        links = tab.page.locator(f"section[data-key='{meta['key']}'] .downloads a")
        assert links.count() == 3
    tab.screenshot("paper-002")


def test_home_links_each_paper_and_its_presets(tab: Tab, reproduced: dict[str, Any]) -> None:
    tab.open("/dashboard")
    link = tab.page.locator("#papers-table a.preset[data-preset='paper002-exp2-fairness-low']")
    assert link.get_attribute("href") == "/dashboard/papers/002"
    assert tab.page.locator("#papers-table a[href='/dashboard/papers/000']").count() >= 1


def test_an_unknown_paper_is_a_404_page(tab: Tab) -> None:
    tab.allowed_errors.append("404")  # Chromium logs the page's own status
    tab.open("/dashboard/papers/999", status=404)


def test_the_button_starts_a_reproduction_and_shows_its_progress(
    tab: Tab, server: Server, reproduced: dict[str, Any]
) -> None:
    tab.open("/dashboard/papers/004")
    assert tab.page.locator("#reproduction-status").inner_text() == "Not reproduced yet."
    tab.page.click("#reproduce")
    tab.page.wait_for_selector("body[data-status='running']", timeout=READY_MS)
    assert tab.page.locator("#progress .progress").count() == 1
    body = server.get("/v1/reproductions/004")
    assert body["status"] == "running" and body["reproduction"]["runs"] == sum(e["runs"] for e in body["experiments"])
    for s in body["reproduction"]["sweeps"]:
        server.client.post(f"/v1/sweeps/{s['sweep_id']}/cancel")


def test_a_studys_page_names_it_a_study_and_plots_its_delay_against_the_buffer(
    tab: Tab, server: Server, db_engine: Any, reproduced: dict[str, Any]
) -> None:
    """The bufferbloat study's mixed experiment, shortened, run as a worker would: its page says
    "Study", heads its claims as the sources', and draws one line per queue."""
    body, _ = open_study(tab, server, db_engine, "bufferbloat", "mixed", "Bufferbloat", overrides={"duration_s": 8})
    assert tab.page.locator("#conclusions-heading").inner_text() == "The sources' claims, and whether our results agree"
    shown_mark(tab, body, "fq-codel-isolates-flows")
    assert tab.page.locator("#table-mixed tbody tr").count() == 16
    traces = tab.page.evaluate(
        "() => document.querySelector(\"section[data-key='mixed'] .js-plotly-plot\").data.map((t) => t.name)"
    )
    # A study's page has no paper's curves to tell ours from: the lines are named plainly.
    assert sorted(traces) == ["CoDel", "Drop-Tail", "FQ-CoDel", "PIE"]
    tab.screenshot("study-bufferbloat")


def test_the_dctcp_studys_page_plots_the_slowest_incast_response_one_line_per_variant(
    tab: Tab, server: Server, db_engine: Any, reproduced: dict[str, Any]
) -> None:
    """The DCTCP study's incast, run as a worker would: its page is a study's, its claims carry
    the API's marks, and its incast table (one row per variant and N) plots one line per variant."""
    body, _ = open_study(tab, server, db_engine, "dctcp", "incast", "DCTCP")
    for claim in ("incast-dctcp-no-worse-than-tcp", "incast-stalls-once-first-windows-overflow"):
        shown_mark(tab, body, claim)
    assert tab.page.locator("#table-incast tbody tr").count() == 12
    traces = tab.page.evaluate(
        "() => document.querySelector(\"section[data-key='incast'] .js-plotly-plot\").data.map((t) => t.name)"
    )
    assert sorted(traces) == ["CUBIC", "DCTCP"]
    tab.screenshot("study-dctcp")


def test_the_l4s_studys_page_draws_pragues_share_per_queue_as_bars_one_series_per_classic_sender(
    tab: Tab, server: Server, db_engine: Any, reproduced: dict[str, Any]
) -> None:
    """The L4S study's queues experiment, run as a worker would: its page is a study's, its claims
    carry the API's marks, and its table (one row per queue and classic sender) draws bars."""
    body, _ = open_study(tab, server, db_engine, "l4s", "queues", "L4S")
    for claim in ("l4s-queue-about-a-millisecond", "scalable-starves-classic-in-one-queue"):
        shown_mark(tab, body, claim)
    assert tab.page.locator("#table-queues tbody tr").count() == 8
    traces = tab.page.evaluate(
        "() => document.querySelector(\"section[data-key='queues'] .js-plotly-plot\").data.map((t) => [t.type, t.name])"
    )
    assert sorted(traces) == [["bar", "CUBIC"], ["bar", "Reno"]]  # a study's lines are named plainly
    tab.screenshot("study-l4s")


def test_the_cellular_studys_page_draws_pantheons_view_as_points_one_series_per_scheme(
    tab: Tab, server: Server, db_engine: Any, reproduced: dict[str, Any]
) -> None:
    """The cellular study's `alone` experiment, run as a worker would over the built-in LTE
    traces: its claims carry the API's marks, and its table (one row per trace and scheme) is
    drawn as markers only, throughput against p95 delay, one series per scheme."""
    body, simulated = open_study(tab, server, db_engine, "cellular", "alone", "Cellular")
    assert simulated == 9
    assert shown_mark(tab, body, "delay-based-schemes-keep-the-queue-short") == MARK["agree"]
    assert tab.page.locator("#table-alone tbody tr").count() == 9
    traces = tab.page.evaluate(
        "() => document.querySelector(\"section[data-key='alone'] .js-plotly-plot\").data"
        ".map((t) => [t.mode, t.name, t.x.length])"
    )
    assert sorted(traces) == [["markers", "BBR", 3], ["markers", "CUBIC", 3], ["markers", "Vegas", 3]]
    xaxis = tab.page.evaluate(
        "() => { const a = document.querySelector(\"section[data-key='alone'] .js-plotly-plot\")._fullLayout.xaxis;"
        " return [a.type, a.range[0] > a.range[1]]; }"
    )
    assert xaxis == ["log", True]  # delay on Pantheon's axis: logarithmic, growing to the left
    tab.screenshot("study-cellular")
