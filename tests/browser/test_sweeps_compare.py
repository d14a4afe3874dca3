"""The two-sweeps page (/dashboard/compare) in headless Chromium: both sweeps' means with their
CIs along the shared axis, the aligned table, the downloads, a metric change that redraws,
and the choices kept in the address. Sweeps simulated in-process by the worker's own steps."""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.test_experiments_api import simulate
from tests.browser.harness import Server, Tab
from tests.conftest import truncate_all

FIG2 = {"preset": "paper000-fig2a", "overrides": {"duration_s": 20, "warmup_s": 2}, "replications": 2}


@pytest.fixture(scope="module")
def pair(server: Server, db_engine: Any) -> tuple[str, str]:
    truncate_all(db_engine)
    ids = []
    for name, values, seed in (("m low", [1, 4, 8], 1), ("m high", [4, 8, 30], 9)):
        body = {**FIG2, "name": name, "seed": seed, "axes": [{"path": "flows[*].loss.m", "values": values}]}
        r = server.client.post("/v1/sweeps", json=body)
        assert r.status_code == 201, r.text
        ids.append(r.json()["id"])
        simulate(db_engine, [x["run_id"] for x in server.get(f"/v1/sweeps/{ids[-1]}/runs")])
        assert server.get(f"/v1/sweeps/{ids[-1]}")["status"] == "done"
    return ids[0], ids[1]


def test_the_page_plots_both_sweeps_with_cis_on_their_common_axis_and_lists_the_aligned_rows(
    tab: Tab, server: Server, pair: tuple[str, str]
):
    a, b = pair
    tab.open(f"/dashboard/compare?a={a}&b={b}")
    assert tab.page.inner_text("#title") == "m low vs m high"
    traces = tab.plot("plot-compare")
    sides = {(t["meta"]["side"], t["meta"]["flow"]): t for t in traces}
    assert set(sides) == {(s, f) for s in "ab" for f in ("sbs", "imp")}
    assert sides[("a", "sbs")]["x"] == [1, 4, 8] and sides[("b", "sbs")]["x"] == [4, 8, 30]
    api = server.get("/v1/sweeps/compare", params={"a": a, "b": b, "metric": "throughput_pkts_per_rtt"})
    by_m = {(r["flows[*].loss.m"], r["flow"]): r for r in api["rows"]}
    assert sides[("b", "imp")]["y"] == [by_m[(m, "imp")]["b_mean"] for m in (4, 8, 30)]
    # The interval is asymmetric (a throughput's is on the log scale): the bars reach its ends.
    eight = by_m[(8, "sbs")]
    assert sides[("a", "sbs")]["error_y"]["array"][2] == pytest.approx(eight["a_ci_high"] - eight["a_mean"])
    assert sides[("a", "sbs")]["error_y"]["arrayminus"][2] == pytest.approx(eight["a_mean"] - eight["a_ci_low"])
    assert eight["a_ci_low"] > 0
    rows = tab.page.locator("#compare-table-el tbody tr")
    assert rows.count() == len(api["rows"]) == 8  # m = 1, 4, 8, 30 × two groups
    tab.screenshot("sweeps-compare")

    tab.page.select_option("#flow", "sbs")
    tab.page.select_option("#metric", "loss_event_rate")
    tab.page.wait_for_function("() => location.search.includes('metric=loss_event_rate')")
    # The page settles when its last refresh has drawn the plot and then written the downloads.
    tab.page.wait_for_function(
        "() => document.getElementById('plot-compare').data.every(t => t.meta.flow === 'sbs') "
        "&& document.getElementById('plot-compare').layout.yaxis.title.text === 'loss_event_rate' "
        "&& (document.querySelector(\"#compare-downloads a[data-format='csv']\") || {}).href"
        "?.includes('metric=loss_event_rate')"
    )
    assert tab.page.locator("#compare-table-el tbody tr").count() == 4
    href = tab.page.get_attribute("#compare-downloads a[data-format='csv']", "href")
    assert href is not None and "metric=loss_event_rate" in href and "flow=sbs" in href
    csv = server.client.get(href)
    assert csv.status_code == 200 and len(csv.text.strip().splitlines()) == 1 + 4


def test_a_sweep_the_viewer_cannot_see_is_a_404_page(tab: Tab, pair: tuple[str, str]):
    tab.allowed_errors.append("404")  # Chromium logs the page's own status
    tab.open(f"/dashboard/compare?a={pair[0]}&b=00000000-0000-0000-0000-000000000000", status=404)
    assert "There is no" in tab.page.inner_text("#not-found")


def test_an_archived_sweep_leaves_the_home_page_until_it_is_restored(tab: Tab, server: Server, pair: tuple[str, str]):
    a, b = pair

    def listed() -> set[str]:
        tab.open("/dashboard")
        hrefs = tab.page.eval_on_selector_all("#sweeps-table a", "as => as.map(a => a.getAttribute('href'))")
        return {h.rsplit("/", 1)[-1] for h in hrefs if h.startswith("/dashboard/sweeps/")}

    assert server.client.patch(f"/v1/sweeps/{b}", json={"archived": True}).status_code == 200
    try:
        assert listed() == {a}
        tab.open(f"/dashboard/compare?a={a}&b={b}")  # still compared by its id
        assert tab.page.locator("#compare-table-el tbody tr").count() == 8
    finally:
        assert server.client.patch(f"/v1/sweeps/{b}", json={"archived": False}).status_code == 200
    assert listed() == {a, b}
