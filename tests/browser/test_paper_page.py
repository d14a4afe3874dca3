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
