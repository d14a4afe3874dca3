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

from tests.browser.harness import READY_MS, SWEEP, Lab, Server, Tab


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
    assert hrefs == [
        f"/dashboard/sweeps/{lab.sweep_id}",
        f"/dashboard/comparisons?sweep_id={lab.sweep_id}",
        f"/dashboard/regions?sweep_id={lab.sweep_id}",
    ]
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
        assert_same(
            [as_number(r[column]) for r in rows],
            [r[column] for r in traces["rows"]],
            f"csv {column}",
        )
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


# ------------------------------------------------------------------------------ sweep

M_AXIS = "flows[*].loss.m"


def sim_traces(traces: list[dict[str, Any]], kind: str = "sim") -> list[dict[str, Any]]:
    return [t for t in traces if (t.get("meta") or {}).get("kind") == kind]


def test_sweep_page_plots_the_summary_with_its_cis_and_toggles_the_model(tab: Tab, server: Server, lab: Lab):
    tab.open(f"/dashboard/sweeps/{lab.sweep_id}")
    summary = server.get(f"/v1/sweeps/{lab.sweep_id}/summary", params={"metric": "throughput_pkts_per_rtt"})
    plotted = tab.plot("plot-sweep")
    sims = sim_traces(plotted)
    assert sorted(t["meta"]["flow"] for t in sims) == ["imp", "sbs"]
    for trace in sims:
        rows = sorted(
            (r for r in summary["rows"] if r["flow"] == trace["meta"]["flow"]),
            key=lambda r: r[M_AXIS],
        )
        assert_same(trace["x"], [r[M_AXIS] for r in rows], "x")
        assert trace["x"] == [1, 8, 30]
        assert_same(trace["y"], [r["mean"] for r in rows], "mean")
        assert_same(trace["error_y"]["array"], [r["ci_high"] - r["mean"] for r in rows], "ci high")
        assert_same(trace["error_y"]["arrayminus"], [r["mean"] - r["ci_low"] for r in rows], "ci low")
        assert all(r["count"] == 3 for r in rows)

    # The model overlay: each flow's own model, the comparison endpoint's predictions.
    models = server.get("/v1/comparisons/models", params={"sweep_id": lab.sweep_id})["rows"]
    overlay = sim_traces(plotted, "model")
    assert sorted((t["meta"]["flow"], t["meta"]["model"]) for t in overlay) == [
        ("imp", "newreno-impatient"),
        ("sbs", "newreno-sbs"),
    ]
    for trace in overlay:
        rows = sorted(
            (r for r in models if r["flow"] == trace["meta"]["flow"] and r["model"] == trace["meta"]["model"]),
            key=lambda r: r[M_AXIS],
        )
        assert_same(trace["y"], [r["model_pkts_per_rtt"] for r in rows], "model")
    published = sim_traces(plotted, "published")
    assert {t["meta"]["value"] for t in published} == {
        "equality_region_m_below",
        "imp_superior_m_from",
        "analytic_crossover_m_t",
    }
    tab.screenshot("sweep")

    tab.page.click("#toggle-model")
    tab.page.wait_for_function("document.getElementById('plot-sweep').data.every(t => t.meta.kind !== 'model')")
    assert len(tab.plot("plot-sweep")) == len(plotted) - 2
    tab.page.click("#toggle-published")
    tab.page.wait_for_function("document.getElementById('plot-sweep').data.every(t => t.meta.kind === 'sim')")
    tab.page.click("#toggle-model")
    tab.page.wait_for_function("document.getElementById('plot-sweep').data.some(t => t.meta.kind === 'model')")

    # The per-point table and the download are the plotted summary.
    assert tab.page.locator("#points-table tbody tr").count() == len(summary["rows"]) == 6
    name, data = download(tab, "#summary-downloads a[data-format='parquet']")
    assert name == f"sweep-{lab.sweep_id}-summary.parquet"  # the API names it
    table = pq.read_table(io.BytesIO(data)).to_pylist()
    key = lambda r: (r["point"], r["flow"])  # noqa: E731
    assert_same(
        [r["mean"] for r in sorted(table, key=key)],
        [r["mean"] for r in sorted(summary["rows"], key=key)],
        "parquet",
    )
    assert_same(
        [r["ci_low"] for r in sorted(table, key=key)],
        [r["ci_low"] for r in sorted(summary["rows"], key=key)],
        "parquet",
    )


def test_another_metric_redraws_from_its_own_summary(tab: Tab, server: Server, lab: Lab):
    tab.open(f"/dashboard/sweeps/{lab.sweep_id}")
    tab.plot("plot-sweep")
    tab.page.select_option("#metric", "loss_event_rate")
    tab.page.wait_for_function(
        "document.getElementById('plot-sweep').layout.yaxis.title.text.startsWith('loss event rate p')"
    )
    summary = server.get(f"/v1/sweeps/{lab.sweep_id}/summary", params={"metric": "loss_event_rate"})
    for trace in sim_traces(tab.plot("plot-sweep")):
        rows = sorted(
            (r for r in summary["rows"] if r["flow"] == trace["meta"]["flow"]),
            key=lambda r: r[M_AXIS],
        )
        assert_same(trace["y"], [r["mean"] for r in rows], "loss event rate")
    assert not sim_traces(tab.plot("plot-sweep"), "model")  # the models predict packets/RTT only
    assert "metric=loss_event_rate" in tab.page.url
    name, data = download(tab, "#summary-downloads a[data-format='csv']")
    rows = csv_rows(data)
    assert {r["metric"] for r in rows} == {"loss_event_rate"} and len(rows) == 6


def test_a_sweep_still_running_shows_its_progress_and_refreshes(tab: Tab, server: Server, lab: Lab):
    # No worker consumes now (the lab's has stopped): the runs stay queued.
    body = {**SWEEP_FOR_PROGRESS}
    r = server.client.post("/v1/sweeps", json=body)
    assert r.status_code == 201, r.text
    sweep = r.json()
    try:
        assert sweep["status"] == "queued"
        tab.open(f"/dashboard/sweeps/{sweep['id']}")
        assert tab.page.is_visible("[role=progressbar]")
        assert "0 of 2 runs finished" in tab.page.inner_text("#progress")
        assert "queued" in tab.page.inner_text("#message")
        assert not tab.page.is_visible("#plot-card")
        tab.screenshot("sweep-running")
        # It asks again (every 2 s; waited for with a deadline, not a fixed pause).
        tab.page.wait_for_event(
            "request", predicate=lambda r: r.url.endswith(f"/v1/sweeps/{sweep['id']}"), timeout=READY_MS
        )
    finally:
        server.client.post(f"/v1/sweeps/{sweep['id']}/cancel")


def test_a_sweep_half_done_plots_what_has_finished_while_it_waits(tab: Tab, server: Server, lab: Lab):
    # m = 1 repeats the lab sweep's runs (answered from the stored results at once); m = 2 is
    # new and stays queued, as no worker consumes now.
    body = {**SWEEP, "axes": [{"path": M_AXIS, "values": [1, 2]}]}
    r = server.client.post("/v1/sweeps", json=body)
    assert r.status_code == 201, r.text
    sweep = r.json()
    try:
        assert sweep["progress"]["succeeded"] == 3 and sweep["progress"]["queued"] == 3, sweep["progress"]
        tab.open(f"/dashboard/sweeps/{sweep['id']}")
        assert "3 of 6 runs finished" in tab.page.inner_text("#progress")
        assert "so far" in tab.page.inner_text("#message")
        summary = server.get(f"/v1/sweeps/{sweep['id']}/summary", params={"metric": "throughput_pkts_per_rtt"})
        for trace in sim_traces(tab.plot("plot-sweep")):
            (row,) = [r for r in summary["rows"] if r["flow"] == trace["meta"]["flow"]]
            assert trace["x"] == [1] and close(trace["y"][0], row["mean"])
        tab.screenshot("sweep-partial")
    finally:
        server.client.post(f"/v1/sweeps/{sweep['id']}/cancel")


SWEEP_FOR_PROGRESS = {
    "preset": "paper000-fig2a",
    "overrides": {"duration_s": 30},
    "axes": [{"path": "flows[*].loss.m", "values": [2, 3]}],
    "replications": 1,
    "seed": 99,
}


# ------------------------------------------------------------------------------ comparison


def test_comparison_page_plots_model_errors_and_ratios_with_verdicts(tab: Tab, server: Server, lab: Lab):
    tab.open(f"/dashboard/comparisons?sweep_id={lab.sweep_id}")
    models = server.get("/v1/comparisons/models", params={"sweep_id": lab.sweep_id})["rows"]
    own = sim_traces(tab.plot("plot-model-error"), "model_error")
    assert sorted((t["meta"]["flow"], t["meta"]["model"]) for t in own) == [
        ("imp", "newreno-impatient"),
        ("sbs", "newreno-sbs"),
    ]  # each flow's own model, until asked for all
    tab.page.select_option("#model-filter", "all")
    tab.page.wait_for_function("document.getElementById('plot-model-error').data.length === 8")
    errors = sim_traces(tab.plot("plot-model-error"), "model_error")
    assert len(errors) == len({(r["flow"], r["model"]) for r in models}) == 8
    for trace in errors:
        rows = sorted(
            (r for r in models if r["flow"] == trace["meta"]["flow"] and r["model"] == trace["meta"]["model"]),
            key=lambda r: r[M_AXIS],
        )
        assert_same(trace["x"], [r[M_AXIS] for r in rows], "x")
        assert_same(trace["y"], [None if r["error"] is None else 100 * r["error"] for r in rows], "error %")

    ratios = server.get(
        "/v1/comparisons/ratios",
        params={"sweep_id": lab.sweep_id, "flow_a": "sbs", "flow_b": "imp"},
    )["rows"]
    (trace,) = sim_traces(tab.plot("plot-ratios"), "ratio")
    rows = sorted(ratios, key=lambda r: r[M_AXIS])
    assert_same(trace["y"], [r["ratio"] for r in rows], "ratio")
    assert_same(
        trace["error_y"]["array"],
        [None if r["ratio_ci_high"] is None else r["ratio_ci_high"] - r["ratio"] for r in rows],
        "ratio ci",
    )
    assert trace["meta"]["verdicts"] == [r["verdict"] for r in rows]
    colors = dict(zip(trace["meta"]["verdicts"], trace["marker"]["color"], strict=True))
    assert len(set(colors.values())) == len(colors)  # one color per verdict
    classes = tab.page.eval_on_selector_all("#ratios-table-el tbody tr", "trs => trs.map(t => t.className)")
    assert classes == [r["verdict"] for r in sorted(ratios, key=lambda r: r["point"])]

    # Against the paper: Fig. 2's regions and crossover, ours beside theirs.
    paper = server.get("/v1/comparisons/paper", params={"sweep_id": lab.sweep_id})
    assert tab.page.locator("#paper-table-el tbody tr").count() == len(paper["rows"]) == 3
    assert "analytic_crossover_m_t" in tab.page.inner_text("#paper-summary")
    tab.screenshot("comparison")

    name, data = download(tab, "#ratios-downloads a[data-format='csv']")
    got = sorted(csv_rows(data), key=lambda r: int(r["point"]))
    assert [g["verdict"] for g in got] == [r["verdict"] for r in sorted(ratios, key=lambda r: r["point"])]
    assert_same(
        [as_number(g["ratio"]) for g in got],
        [r["ratio"] for r in sorted(ratios, key=lambda r: r["point"])],
        "csv ratio",
    )
    name, data = download(tab, "#models-downloads a[data-format='json']")
    assert json.loads(data)["rows"] == models


def test_comparison_of_a_single_run_shows_the_model_errors_per_flow(tab: Tab, server: Server, lab: Lab):
    tab.open(f"/dashboard/comparisons?run_id={lab.run_id}")
    models = server.get("/v1/comparisons/models", params={"run_id": lab.run_id})["rows"]
    bars = sim_traces(tab.plot("plot-model-error"), "model_error")
    for bar in bars:
        rows = [r for r in models if r["model"] == bar["meta"]["model"]]
        assert bar["x"] == [r["flow"] for r in rows]
        assert_same(bar["y"], [None if r["error"] is None else 100 * r["error"] for r in rows], "error %")
    assert not tab.page.is_visible("#ratios-card") and not tab.page.is_visible("#paper-card")
    tab.screenshot("comparison-run")


def test_a_bbr_flow_shows_no_closed_form_model_instead_of_an_error_and_cubic_gets_its_own(
    tab: Tab, server: Server, db_engine: Any
):
    """Issue 15: Reno-family models fitted to CUBIC and BBR flows gave 'errors' up to 220 %."""
    from sqlalchemy.orm import Session

    import tcpsim
    from services.runs.service import claim, complete
    from services.settings import get_settings

    scenario = {
        "name": "mix",
        "duration_s": 8,
        "warmup_s": 2,
        "seed": 3,
        "topology": {
            "dumbbell": {
                "bottleneck": {"rate_mbps": 10, "delay_ms": 5, "queue": {"type": "droptail", "limit_pkts": 40}}
            }
        },
        "flows": [{"name": v, "variant": v, "rtt_ms": 40} for v in ("newreno-sbs", "cubic", "bbr")],
    }
    r = server.client.post("/v1/runs", json={"scenario": scenario})
    assert r.status_code == 201, r.text
    run_id = r.json()["id"]
    with Session(db_engine) as session:  # what a worker does, in this process
        claimed = claim(session, uuid.UUID(run_id), "browser-test", get_settings())
        session.commit()
        complete(session, uuid.UUID(run_id), tcpsim.run(claimed))
        session.commit()
    rows = server.get("/v1/comparisons/models", params={"run_id": run_id})["rows"]
    assert [r["model"] for r in rows if r["flow"] == "cubic"] == ["cubic"]
    [bbr] = [r for r in rows if r["flow"] == "bbr"]
    assert bbr["model"] is None and bbr["error"] is None

    tab.open(f"/dashboard/comparisons?run_id={run_id}")
    bars = sim_traces(tab.plot("plot-model-error"), "model_error")
    assert bars and all(bar["meta"]["model"] for bar in bars)
    assert "bbr" not in [flow for bar in bars for flow in bar["meta"]["flows"]]
    table = tab.page.inner_text("#models-table")
    assert "none (see note)" in table and "no closed-form model for bbr flows" in table
    tab.screenshot("comparison-bbr-cubic")


# ------------------------------------------------------------------------------ region map


def test_region_map_draws_fig4_and_places_the_sweep_on_it(tab: Tab, server: Server, lab: Lab):
    tab.open(f"/dashboard/regions?sweep_id={lab.sweep_id}")
    plotted = tab.plot("plot-regions")
    rtt = float(tab.page.input_value("#rtt_s"))
    rto = float(tab.page.input_value("#rto_s"))
    assert 0.07 < rtt < 0.08 and 0.19 < rto < 0.25  # measured in the sweep
    regions = server.get("/v1/regions", params={"rtt_s": rtt, "rto_s": rto, "p_min": 1e-4, "p_max": 0.1, "m_max": 70})
    (heatmap,) = sim_traces(plotted, "regions")
    codes = ["equality", "sbs_superior", "imp_superior", "outside_model"]
    n_m = len(regions["m"])
    assert_same(heatmap["x"], regions["p"], "p")
    assert heatmap["y"] == regions["m"]
    assert heatmap["z"] == [
        [codes.index(regions["rows"][i * n_m + j]["region"]) for i in range(len(regions["p"]))] for j in range(n_m)
    ]
    (m_t,) = sim_traces(plotted, "m_t")
    assert_same(m_t["y"], regions["m_t"], "m_t")

    # The sweep's points: the measured loss event rate of each flow at m = 1, 8, 30.
    summary = server.get(f"/v1/sweeps/{lab.sweep_id}/summary", params={"metric": "loss_event_rate"})
    ratios = server.get(
        "/v1/comparisons/ratios",
        params={
            "sweep_id": lab.sweep_id,
            "flow_a": "sbs",
            "flow_b": "imp",
            "metric": "throughput_pkts_per_rtt",
        },
    )["rows"]
    verdict = {r["point"]: r["verdict"] for r in ratios}
    points = sim_traces(plotted, "sweep")
    assert sorted(p["meta"]["flow"] for p in points) == ["imp", "sbs"]
    for trace in points:
        rows = sorted(
            (r for r in summary["rows"] if r["flow"] == trace["meta"]["flow"]),
            key=lambda r: r[M_AXIS],
        )
        assert_same(trace["x"], [r["mean"] for r in rows], "measured p")
        assert trace["y"] == [1, 8, 30]
        assert trace["meta"]["verdicts"] == [verdict[r["point"]] for r in rows]
        symbols = {
            "a_better": "triangle-up",
            "b_better": "triangle-down",
            "no_significant_difference": "circle",
        }
        assert trace["marker"]["symbol"] == [symbols.get(v, "circle-open") for v in trace["meta"]["verdicts"]]
    tab.screenshot("regions")

    # Other inputs: the map is redrawn for them.
    tab.page.fill("#rtt_s", "0.2")
    tab.page.fill("#rto_s", "1")
    tab.page.fill("#m_max", "40")
    tab.page.click("#draw")
    tab.page.wait_for_function("document.getElementById('plot-regions').data[0].y.length === 40")
    again = server.get("/v1/regions", params={"rtt_s": 0.2, "rto_s": 1, "m_max": 40})
    (heatmap,) = sim_traces(tab.plot("plot-regions"), "regions")
    assert heatmap["z"][10] == [codes.index(again["rows"][i * 40 + 10]["region"]) for i in range(len(again["p"]))]
    assert "rtt_s=0.2" in tab.page.url
    name, data = download(tab, "#regions-downloads a[data-format='csv']")
    rows = csv_rows(data)
    assert [(float(r["p"]), int(r["m"]), r["region"]) for r in rows] == [
        (r["p"], r["m"], r["region"]) for r in again["rows"]
    ]


def test_region_map_alone_draws_the_defaults_and_refuses_bad_inputs_on_the_page(tab: Tab, server: Server):
    tab.open("/dashboard/regions")
    regions = server.get("/v1/regions")
    (heatmap,) = sim_traces(tab.plot("plot-regions"), "regions")
    assert heatmap["y"] == regions["m"] and len(heatmap["z"][0]) == len(regions["p"])
    assert not sim_traces(tab.plot("plot-regions"), "sweep")
    tab.page.fill("#p_min", "0.5")
    tab.page.click("#draw")
    tab.page.wait_for_selector("#message.error")
    assert "p_max" in tab.page.inner_text("#message")
    tab.allowed_errors.append("422")  # Chromium logs the refused request


# ------------------------------------------------------------------------------ signing in


def _fresh_page(browser: Any) -> Any:
    """A page of a new browser context: no cookie, nobody signed in."""
    return browser.new_context(viewport={"width": 1280, "height": 900}).new_page()


def test_a_browser_without_a_token_signs_in_on_the_login_page_and_comes_back(
    browser: Any, server: Server, lab: Lab
) -> None:
    from tests.conftest import ADMIN_TOKEN

    page = _fresh_page(browser)
    try:
        target = f"/dashboard/sweeps/{lab.sweep_id}"
        page.goto(server.base_url + target)
        assert page.url.startswith(server.base_url + "/login?next=")
        page.fill("#token", "not-a-token")
        page.click("#login-form button")
        page.wait_for_selector("#message.error")
        assert "unknown, revoked or disabled" in page.inner_text("#message")
        page.fill("#token", ADMIN_TOKEN)
        page.click("#login-form button")
        page.wait_for_url(server.base_url + target)
        page.wait_for_selector("body[data-ready='1']", timeout=READY_MS)
        assert page.inner_text("#viewer") == "admin (admin)"
        cookie = next(c for c in page.context.cookies() if c["name"] == "tcplab_token")
        assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
        assert page.evaluate("document.cookie") == ""  # the pages' scripts never see the token
        page.click("#logout")
        page.wait_for_url(server.base_url + "/login")
    finally:
        page.context.close()


def test_a_second_users_browser_finds_no_private_run_of_another(browser: Any, server: Server, lab: Lab) -> None:
    from tests.browser.conftest import signed_in_cookie

    made = server.client.post("/v1/users", json={"name": f"viewer-{uuid.uuid4().hex[:6]}"})
    assert made.status_code == 201, made.text
    page = _fresh_page(browser)
    page.context.add_cookies([signed_in_cookie(server.base_url, made.json()["token"]["token"])])
    try:
        response = page.goto(server.base_url + f"/dashboard/runs/{lab.run_id}")
        assert response is not None and response.status == 404
        assert "There is no run" in page.inner_text("#not-found")
        page.goto(server.base_url + "/dashboard")
        page.wait_for_selector("body[data-ready='1']", timeout=READY_MS)
        hrefs = page.eval_on_selector_all("a", "as => as.map(a => a.getAttribute('href'))")
        assert not any(lab.run_id in h or lab.sweep_id in h for h in hrefs if h)
        status = page.evaluate(f"fetch('/v1/runs/{lab.run_id}/cancel', {{method: 'POST'}}).then(r => r.status)")
        assert status == 404
        assert server.get(f"/v1/runs/{lab.run_id}")["status"] == "succeeded"
    finally:
        page.context.close()
