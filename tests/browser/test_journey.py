"""Issue 15's researcher's day, replayed in a real headless Chromium: sign in on the login page,
run a small sweep of paper 000's Fig. 2 preset, open each page, switch a plot to a log scale,
export figures as PNG and SVG and the sweep's summary as Parquet, run a sweep's run again with
traces, and find another user's private sweep a 404 that says it may be private. Each step
leaves a screenshot in artifacts/screenshots/journey-*.png. (Fixtures: conftest.py.)"""

from __future__ import annotations

import io
import os
import uuid
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from tests.browser.conftest import signed_in_cookie, watched
from tests.browser.harness import READY_MS, SCREENSHOTS, Server, Tab
from tests.conftest import ADMIN_TOKEN, truncate_all
from tests.support import wait_for

M_VALUES = [1, 4, 8, 30]
REPLICATIONS = 2
# Paper 000's Fig. 2(a), shrunk: 60 s simulated instead of 1,000 (each run well under a second
# of the core's time), four values of m, two seeds.
FIG2 = {
    "preset": "paper000-fig2a",
    "name": "fig2 journey",
    "overrides": {"duration_s": 60, "warmup_s": 15},
    "axes": [{"path": "flows[*].loss.m", "values": M_VALUES}],
    "replications": REPLICATIONS,
}
SWEEP_DEADLINE_S = 240
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
SVG = "{http://www.w3.org/2000/svg}svg"


@pytest.fixture(scope="module")
def worker(server: Server, db_engine: Any, start_worker: Any) -> Iterator[Any]:
    """On an emptied database, a real worker consuming for the whole journey."""
    from worker.app import app as celery_app

    truncate_all(db_engine)
    celery_app.control.purge()
    w = start_worker(f"journey-{os.getpid()}")
    try:
        yield w
    finally:
        w.stop(grace_s=5)


@pytest.fixture(scope="module")
def researcher(browser: Any, server: Server, worker: Any) -> Iterator[Any]:
    """A browser that has signed in on the login page (no cookie given to it)."""
    context = browser.new_context(accept_downloads=True, viewport={"width": 1200, "height": 860})
    page = context.new_page()
    page.set_default_timeout(READY_MS)
    try:
        page.goto(server.base_url + "/dashboard")
        assert page.url.startswith(server.base_url + "/login?next=")
        page.fill("#token", ADMIN_TOKEN)
        page.click("#login-form button")
        page.wait_for_url(server.base_url + "/dashboard")
        page.wait_for_selector("body[data-ready='1']", timeout=READY_MS)
        yield page
    finally:
        context.close()


@pytest.fixture
def tab(researcher: Any, server: Server) -> Iterator[Tab]:
    with watched(researcher, server) as tab:
        yield tab


@pytest.fixture(scope="module")
def sweep(researcher: Any, server: Server) -> dict[str, Any]:
    """The Fig. 2 sweep, created from the signed-in page (its cookie, a same-origin POST) and
    finished by the worker."""
    created = researcher.evaluate(
        """async (body) => {
            const r = await fetch('/v1/sweeps', {method: 'POST', body: JSON.stringify(body),
              headers: {'Content-Type': 'application/json', Accept: 'application/json'}});
            return {status: r.status, body: await r.json()};
        }""",
        FIG2,
    )
    assert created["status"] == 201, created
    sweep_id = created["body"]["id"]
    done = wait_for(
        lambda: (s := server.get(f"/v1/sweeps/{sweep_id}"))["status"] == "done" and s,
        timeout_s=SWEEP_DEADLINE_S,
        interval_s=0.5,
    )
    total = len(M_VALUES) * REPLICATIONS
    assert done["progress"]["succeeded"] == done["progress"]["total"] == total, done["progress"]
    return done


def shot(tab: Tab, name: str) -> Path:
    """A screenshot of the page as drawn (the viewport's width, the page's height)."""
    return tab.screenshot(f"journey-{name}")


def export(tab: Tab, plot_id: str, title: str) -> tuple[str, bytes]:
    """Clicks a plot's mode-bar button (shown on hover); the downloaded file's name and bytes."""
    tab.page.hover(f"#{plot_id}")
    with tab.page.expect_download(timeout=READY_MS) as info:
        tab.page.click(f"#{plot_id} .modebar-btn[data-title='{title}']")
    download = info.value
    return download.suggested_filename, Path(download.path()).read_bytes()


def export_png_and_svg(tab: Tab, plot_id: str, name_part: str) -> None:
    name, data = export(tab, plot_id, "Download plot as a PNG")
    assert name.endswith(".png") and name_part in name, name
    assert data.startswith(PNG_MAGIC) and len(data) > 10_000
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert (width, height) == (2000, 1200)  # 1000 × 600 at twice the scale, for print
    name, data = export(tab, plot_id, "Download plot as an SVG")
    assert name.endswith(".svg") and name_part in name, name
    root = ET.fromstring(data)
    assert root.tag == SVG and root.get("width") == "1000" and root.get("height") == "600"
    assert b"<text" in data  # the axis titles and ticks are text an editor can change


def layout(tab: Tab, plot_id: str) -> dict[str, Any]:
    return tab.page.evaluate(f"document.getElementById('{plot_id}').layout")


def toggle_log_y(tab: Tab, plot_id: str) -> None:
    tab.page.check(f"#{plot_id}-logy")
    tab.page.wait_for_selector(f"#{plot_id}[data-logy='1'][data-state='ready']", timeout=READY_MS)
    axes = {k: v for k, v in layout(tab, plot_id).items() if k.startswith("yaxis")}
    assert axes and all(v["type"] == "log" for v in axes.values()), axes


def test_home_after_signing_in_lists_the_sweep_with_its_time_in_utc(tab: Tab, sweep: dict[str, Any]) -> None:
    tab.open("/dashboard")
    link = tab.page.locator(f"#sweeps-table a[href='/dashboard/sweeps/{sweep['id']}']")
    assert link.inner_text() == "fig2 journey"
    created = tab.page.locator("#sweeps-table tbody tr").first.locator("td").nth(7).inner_text()
    assert created.endswith(" UTC") and created.startswith(sweep["created_at"][:10]), created
    shot(tab, "home")


def test_the_sweep_page_toggles_log_and_exports_png_svg_and_parquet(
    tab: Tab, server: Server, sweep: dict[str, Any]
) -> None:
    tab.open(f"/dashboard/sweeps/{sweep['id']}")
    traces = [t for t in tab.plot("plot-sweep") if t["meta"]["kind"] == "sim"]
    assert sorted(t["meta"]["flow"] for t in traces) == ["imp", "sbs"]
    assert all(t["x"] == M_VALUES for t in traces)
    drawn = layout(tab, "plot-sweep")
    assert drawn["xaxis"]["title"]["text"] == "losses per loss event m (pkts)"
    assert drawn["yaxis"]["title"]["text"].startswith("throughput (pkts/RTT)")
    assert not tab.page.is_checked("#plot-sweep-logy")
    toggle_log_y(tab, "plot-sweep")
    shot(tab, "sweep-log")
    export_png_and_svg(tab, "plot-sweep", f"sweep-{sweep['id'][:8]}-throughput_pkts_per_rtt")

    # The log scale holds when another metric is drawn.
    tab.page.select_option("#metric", "loss_event_rate")
    tab.page.wait_for_function(
        "document.getElementById('plot-sweep').layout.yaxis.title.text.startsWith('loss event rate p')",
        timeout=READY_MS,
    )
    assert layout(tab, "plot-sweep")["yaxis"]["type"] == "log"

    with tab.page.expect_download(timeout=READY_MS) as info:
        tab.page.click("#summary-downloads a[data-format='parquet']")
    table = pq.read_table(io.BytesIO(Path(info.value.path()).read_bytes()))
    assert table.num_rows == 2 * len(M_VALUES)  # a row per point and flow
    assert set(table.column("metric").to_pylist()) == {"loss_event_rate"}
    assert sorted(set(table.column("flows[*].loss.m").to_pylist())) == M_VALUES


def test_a_run_of_the_sweep_shows_its_scenario_and_runs_again_with_traces(
    tab: Tab, server: Server, sweep: dict[str, Any]
) -> None:
    runs = server.get(f"/v1/sweeps/{sweep['id']}/runs")
    run = next(r for r in runs if r["point"] == len(M_VALUES) - 1)  # m = 30: timeouts, spikes
    tab.open(f"/dashboard/runs/{run['run_id']}")
    assert tab.page.get_attribute("#sweep-href", "href") == f"/dashboard/sweeps/{sweep['id']}"
    assert tab.page.is_visible("#no-traces")
    tab.page.click("#scenario summary")
    scenario = tab.page.inner_text("#scenario-json")
    assert '"m": 30' in scenario and f'"seed": {run["seed"]}' in scenario
    shot(tab, "run-of-sweep")

    tab.page.click("#rerun-traces")
    tab.page.wait_for_url(lambda url: run["run_id"] not in url and "/dashboard/runs/" in url, timeout=READY_MS)
    again = tab.page.url.rsplit("/", 1)[1]
    wait_for(lambda: server.get(f"/v1/runs/{again}")["status"] == "succeeded", timeout_s=120, interval_s=0.3)
    tab.page.wait_for_selector("#traces-card:not([hidden]) #plot-cwnd[data-state='ready']", timeout=READY_MS)
    assert server.get(f"/v1/runs/{again}/traces", params={"limit": 1})["recorded"]
    # One panel per flow, each with its own y axis.
    cwnd = tab.plot("plot-cwnd")
    assert {t["meta"]["flow"]: t["yaxis"] for t in cwnd} == {"sbs": "y", "imp": "y2"}
    toggle_log_y(tab, "plot-cwnd")
    shot(tab, "run-traces-log")
    export_png_and_svg(tab, "plot-cwnd", f"run-{again[:8]}-cwnd")


def test_the_comparison_regions_and_paper_pages_draw_the_sweep(tab: Tab, sweep: dict[str, Any]) -> None:
    tab.open(f"/dashboard/comparisons?sweep_id={sweep['id']}")
    assert tab.plot("plot-model-error") and tab.plot("plot-ratios")
    assert layout(tab, "plot-ratios")["xaxis"]["title"]["text"] == "losses per loss event m (pkts)"
    shot(tab, "comparison")
    export_png_and_svg(tab, "plot-ratios", "ratio")

    tab.open(f"/dashboard/regions?sweep_id={sweep['id']}")
    points = [t for t in tab.plot("plot-regions") if t["meta"]["kind"] == "sweep"]
    assert len(points) == 2 and all(t["y"] == M_VALUES for t in points)
    shot(tab, "regions")


# Paper 000's reproduction of Fig. 2(a) alone, shrunk as the sweep (its 40 m × 5 seeds stay).
REPRODUCTION = {"experiments": ["fig2a"], "overrides": {"duration_s": 40, "warmup_s": 10}}


def test_the_paper_page_plots_our_fig2a_with_its_95_intervals(tab: Tab, server: Server, sweep: dict[str, Any]) -> None:
    started = tab.page.evaluate(
        """async (body) => {
            const r = await fetch('/v1/reproductions/000', {method: 'POST', body: JSON.stringify(body),
              headers: {'Content-Type': 'application/json', Accept: 'application/json'}});
            return r.status;
        }""",
        REPRODUCTION,
    )
    assert started == 201
    wait_for(lambda: server.get("/v1/reproductions/000")["status"] == "done", timeout_s=SWEEP_DEADLINE_S, interval_s=1)
    tab.open("/dashboard/papers/000")
    key = server.get("/v1/reproductions/000")["tables"][0]["key"]
    rows = server.get(f"/v1/reproductions/000/tables/{key}")["rows"]
    curves = tab.plot(f"plot-{key}")
    assert [c["name"] for c in curves] == ["ours SBS", "ours IMP"]
    for curve, flow in zip(curves, ("sbs", "imp"), strict=True):
        assert curve["x"] == [r["m"] for r in rows]
        bars = curve["error_y"]
        assert bars["visible"] and curve["meta"]["errors"] == f"{flow}_ci_low, {flow}_ci_high"
        for r, up, down in zip(rows, bars["array"], bars["arrayminus"], strict=True):
            assert up == pytest.approx(r[f"{flow}_ci_high"] - r[f"{flow}_mean"])
            assert down == pytest.approx(r[f"{flow}_mean"] - r[f"{flow}_ci_low"])
    assert layout(tab, f"plot-{key}")["yaxis"]["title"]["text"].endswith("95 % CI")
    tab.page.locator(f"#plot-{key}").scroll_into_view_if_needed()
    shot(tab, "paper")
    export_png_and_svg(tab, f"plot-{key}", f"paper000-{key}")


def test_another_users_browser_is_told_the_sweep_may_be_private(
    browser: Any, server: Server, sweep: dict[str, Any]
) -> None:
    made = server.client.post("/v1/users", json={"name": f"guest-{uuid.uuid4().hex[:6]}"})
    assert made.status_code == 201, made.text
    context = browser.new_context(viewport={"width": 1200, "height": 600})
    context.add_cookies([signed_in_cookie(server.base_url, made.json()["token"]["token"])])
    try:
        page = context.new_page()
        response = page.goto(server.base_url + f"/dashboard/sweeps/{sweep['id']}")
        assert response is not None and response.status == 404
        assert "another user's private sweep" in page.inner_text("#maybe-private")
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / "journey-not-found-private.png"))
    finally:
        context.close()


# A buffer study of three variants: one flow, the variant and the buffer swept.
VARIANTS = ["newreno-sbs", "cubic", "bbr"]  # not alphabetical: the page keeps this order
VARIANT_SWEEP = {
    "name": "variants journey",
    "scenario": {
        "duration_s": 10,
        "warmup_s": 2,
        "seed": 1,
        "topology": {
            "dumbbell": {
                "bottleneck": {"rate_mbps": 10, "delay_ms": 5, "queue": {"type": "droptail", "limit_pkts": 50}},
                "access": {"rate_mbps": 1000},
            }
        },
        "flows": [{"name": "f", "variant": "newreno-sbs", "rtt_ms": 40}],
    },
    "axes": [
        {"path": "flows[0].variant", "values": VARIANTS},
        {"path": "topology.dumbbell.bottleneck.queue.limit_pkts", "values": [20, 100]},
    ],
    "replications": 1,
}


def test_a_variant_axis_draws_its_variants_in_its_order_and_names_them_right(
    tab: Tab, server: Server, worker: Any
) -> None:
    r = server.client.post("/v1/sweeps", json=VARIANT_SWEEP)
    assert r.status_code == 201, r.text
    sweep_id = r.json()["id"]
    wait_for(
        lambda: server.get(f"/v1/sweeps/{sweep_id}")["status"] == "done", timeout_s=SWEEP_DEADLINE_S, interval_s=0.5
    )
    tab.open(f"/dashboard/sweeps/{sweep_id}?axis=flows[0].variant")
    lines = [t for t in tab.plot("plot-sweep") if t["meta"]["kind"] == "sim"]
    # One line per buffer, across the variants: in the axis's order, and named by no variant.
    assert [t["name"] for t in lines] == ["f · buffer = 20", "f · buffer = 100"]
    assert all(t["x"] == VARIANTS for t in lines)
    drawn = layout(tab, "plot-sweep")
    assert drawn["xaxis"]["title"]["text"] == "TCP variant, flow 0"
    assert drawn["xaxis"]["categoryarray"] == VARIANTS
    # Against the buffer: a line per variant, each named by its own.
    tab.page.select_option("#axis", "topology.dumbbell.bottleneck.queue.limit_pkts")
    tab.page.wait_for_function(
        "document.getElementById('plot-sweep').layout.xaxis.title.text === 'buffer (pkts)'", timeout=READY_MS
    )
    lines = [t for t in tab.plot("plot-sweep") if t["meta"]["kind"] == "sim"]
    assert [t["name"] for t in lines] == [f"f ({v})" for v in VARIANTS]
    shot(tab, "sweep-variants")

    # Pantheon's view: per variant and buffer, goodput per flow against the bottleneck's p95
    # queueing delay, a small marker per run and a large one at the means (issue 15).
    table = server.get(f"/v1/sweeps/{sweep_id}/table")["rows"]
    delay = {
        r["run_id"]: r["p95_queue_delay_s"] * 1000 for r in table if r["level"] == "link" and r["name"] == "bottleneck"
    }
    pantheon = tab.plot("plot-pantheon")
    means = [t for t in pantheon if t["meta"]["kind"] == "mean"]
    assert sorted(t["name"] for t in means) == sorted(f"{v} · buffer = {b}" for v in VARIANTS for b in (20, 100))
    for trace in (t for t in pantheon if t["meta"]["kind"] == "run"):
        [run] = trace["meta"]["runs"]
        flow = next(r for r in table if r["run_id"] == run and r["level"] == "flow")
        assert trace["x"] == [pytest.approx(delay[run])] and trace["y"] == [pytest.approx(flow["goodput_bps"] / 1e6)]
    reversed_x = (
        "(() => { const r = document.getElementById('plot-pantheon')._fullLayout.xaxis.range; return r[0] > r[1]; })()"
    )
    assert tab.page.evaluate(reversed_x)  # delay grows to the left, as in Pantheon's plots
    tab.page.check("#plot-pantheon-logx")
    tab.page.wait_for_selector("#plot-pantheon[data-logx='1'][data-state='ready']", timeout=READY_MS)
    assert tab.page.evaluate(reversed_x) and layout(tab, "plot-pantheon")["xaxis"]["type"] == "log"
    shot(tab, "sweep-pantheon")

    # Jain's index and the bottleneck's queueing delay are metrics like any other.
    tab.page.select_option("#metric", "p99_queue_delay_s")
    tab.page.wait_for_function(
        "document.getElementById('plot-sweep').layout.yaxis.title.text.startsWith('queueing delay p99')",
        timeout=READY_MS,
    )
    drawn = {t["meta"]["flow"] for t in tab.plot("plot-sweep") if t["meta"]["kind"] == "sim"}
    assert drawn == {"bottleneck", "bottleneck-rev"}


# The pages' one number format (as d3's ".4~g" in the plots' hover labels), their times in UTC
# and their names with units, as common.js gives them to every page.
FORMATTED = [
    (52.7712, "52.77"),
    (0.0005034, "0.0005034"),
    (1.5e-7, "1.5e-7"),
    (2.0, "2"),
    (5120000, "5.12e+6"),
    (417514, "417514"),
    (0.2, "0.2"),
    (None, "—"),
    ([1, 0.25], "[1, 0.25]"),
]
WHEN = [
    ("2026-11-26T10:17:00+00:00", "2026-11-26 10:17 UTC"),
    ("2026-11-26T12:17:05.5+02:00", "2026-11-26 10:17:05 UTC"),
]
LABELS = [
    ("throughput_pkts_per_rtt", "throughput (pkts/RTT)"),
    ("loss_event_rate", "loss event rate p (per packet)"),
    ("flows[*].loss.m", "losses per loss event m (pkts)"),
    ("flows[1].app.rate_mbps", "CBR rate, flow 1 (Mb/s)"),
    ("topology.graph.links[2].queue.limit_pkts", "buffer, link 2 (pkts)"),
    ("flows[0].variant", "TCP variant, flow 0"),
    ("some_new_delay_ms", "some new delay (ms)"),
]


def test_every_page_formats_numbers_times_and_names_with_the_same_helpers(tab: Tab) -> None:
    tab.open("/dashboard/regions")
    got = tab.page.evaluate(
        "([xs, ws, ls]) => [xs.map(x => tcplab.fmt(x)), ws.map(w => tcplab.when(w)), ls.map(l => tcplab.label(l))]",
        [[x for x, _ in FORMATTED], [w for w, _ in WHEN], [n for n, _ in LABELS]],
    )
    assert got == [[f for _, f in FORMATTED], [w for _, w in WHEN], [label for _, label in LABELS]]
    # Plotly's hover labels print what fmt prints; its ticks use powers of ten, not SI prefixes.
    tab.plot("plot-regions")
    drawn = layout(tab, "plot-regions")
    assert {(drawn[a]["hoverformat"], drawn[a]["exponentformat"]) for a in ("xaxis", "yaxis")} == {(".4~g", "power")}


def test_a_nightly_schedule_of_the_sweep_plots_its_firings(tab: Tab, server: Server, sweep: dict[str, Any]) -> None:
    template = {k: v for k, v in FIG2.items() if k != "name"}
    r = server.client.post("/v1/schedules", json={"name": "fig2 nightly", "cron": "0 3 * * *", "template": template})
    assert r.status_code == 201, r.text
    schedule_id = r.json()["id"]
    for _ in range(2):  # fired by hand; the sweep's stored results answer its runs
        fired = server.client.post(f"/v1/schedules/{schedule_id}/fire")
        assert fired.status_code == 201, fired.text
        wait_for(
            lambda: server.get(f"/v1/sweeps/{fired.json()['id']}")["status"] == "done",
            timeout_s=SWEEP_DEADLINE_S,
            interval_s=0.5,
        )
    tab.open(f"/dashboard/schedules/{schedule_id}")
    (mean,) = [t for t in tab.plot("plot-history") if t["meta"]["kind"] == "mean"]
    assert len(mean["x"]) == 2
    assert layout(tab, "plot-history")["yaxis"]["title"]["text"] == "throughput (pkts/RTT), mean and 95 % CI"
    firings = tab.page.locator("#firings-table tbody tr td:first-child").all_inner_texts()
    assert len(firings) == 2 and all(f.endswith(" UTC") for f in firings), firings
    toggle_log_y(tab, "plot-history")
    shot(tab, "schedule")
    export_png_and_svg(tab, "plot-history", f"schedule-{schedule_id[:8]}")
