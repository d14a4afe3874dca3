"""What the pages stand on, without a browser: Plotly served from the installed package, the
redirect, and the table endpoints the dashboards added (api/routers/runs.py, models.py)."""

from __future__ import annotations

import gzip
import io
import uuid

import pyarrow.parquet as pq

from api.dashboard.pages import PLOTLY_JS
from tests.api.test_big_reads import run_with


def test_plotly_is_the_installed_packages_file_gzipped_and_cached(client):
    page = client.get("/dashboard")
    assert page.status_code == 200
    link = next(part.split('"')[1] for part in page.text.split("<script src=")[1:] if "plotly" in part)
    assert link.startswith("/static/plotly.min.js?v=")
    r = client.get(link, headers={"Accept-Encoding": "gzip"})
    assert r.status_code == 200 and r.headers["content-encoding"] == "gzip"
    assert r.content == PLOTLY_JS.read_bytes()  # httpx undoes the gzip
    assert "max-age" in r.headers["cache-control"] and r.headers["content-type"].startswith("text/javascript")
    raw = client.get(link, headers={"Accept-Encoding": "identity"})
    assert "content-encoding" not in raw.headers and raw.content == PLOTLY_JS.read_bytes()
    assert client.get("/static/../pages.py").status_code == 404
    assert client.get("/static/nothing.js").status_code == 404
    assert len(gzip.compress(PLOTLY_JS.read_bytes())) < PLOTLY_JS.stat().st_size / 2


def test_no_page_names_another_host(client):
    for path in ("/dashboard", "/dashboard/regions"):
        html = client.get(path).text
        assert "http://" not in html and "https://" not in html and "//cdn" not in html


def test_root_redirects_to_the_dashboard(client):
    r = client.get("/", follow_redirects=False)
    assert r.status_code == 307 and r.headers["location"] == "/dashboard"


def test_the_region_cells_are_the_models_map(client):
    body = client.get("/v1/regions", params={"p_num": 5, "m_max": 30}).json()
    model = client.post(
        "/v1/models/newreno/regions",
        json={"p": body["p"], "m": body["m"], "rtt_s": 0.07, "rto_s": 0.2},
    ).json()
    assert [r["region"] for r in body["rows"]] == [label for row in model["labels"] for label in row]
    assert body["m_t"] == model["m_t"] and body["counts"] == model["counts"]
    parquet = pq.read_table(
        io.BytesIO(client.get("/v1/regions", params={"p_num": 5, "m_max": 30, "format": "parquet"}).content)
    )
    assert parquet.to_pylist() == body["rows"]


def test_region_inputs_out_of_range_are_422s_naming_the_parameter(client):
    for params, name in [
        ({"p_min": 0.5, "p_max": 0.1}, "p_max"),
        ({"rtt_s": 0}, "rtt_s"),
        ({"rtt_s": "nan"}, "rtt_s"),
        ({"p_num": 400, "m_max": 400}, "m_max"),
    ]:
        r = client.get("/v1/regions", params=params)
        assert r.status_code == 422, (params, r.text)
        assert r.json()["detail"][0]["loc"] == ["query", name], r.text


def test_a_run_that_is_missing_has_no_tables(client):
    missing = uuid.uuid4()
    assert client.get(f"/v1/runs/{missing}/traces").status_code == 404
    assert client.get(f"/v1/runs/{missing}/flows").status_code == 404


def test_traces_become_one_row_per_sample_time(client, db_session):
    traces = {
        "time_s": [0.0, 0.5],
        "flows": [{"name": "a", "cwnd": [2.0, 10.0], "ssthresh": [None, 5.0]}],
        "links": [{"name": "bottleneck", "queue": [0, 3]}],
    }
    body = client.get(f"/v1/runs/{run_with(client, db_session, traces)}/traces").json()
    rows, series = body["rows"], body["series"]
    assert rows == [
        {"time_s": 0.0, "a.cwnd": 2.0, "a.ssthresh": None, "bottleneck.queue": 0},
        {"time_s": 0.5, "a.cwnd": 10.0, "a.ssthresh": 5.0, "bottleneck.queue": 3},
    ]
    assert [s["column"] for s in series] == ["a.cwnd", "a.ssthresh", "bottleneck.queue"]
    assert series[2] == {
        "column": "bottleneck.queue",
        "kind": "link",
        "name": "bottleneck",
        "quantity": "queue",
    }
