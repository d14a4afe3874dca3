"""A big result's reads hold bounded memory, page exactly and downsample faithfully.

Runs are submitted through the API and completed in this process as a worker would, with a
trace made to measure (the core's result, its traces replaced); the reads go through the real
app and PostgreSQL. Issue 11, finding 2: a 9 M-point trace took 1.3 GB of API memory per read.
"""

from __future__ import annotations

import csv
import io
import math
import tracemalloc
from typing import Any

import numpy as np
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tcpsim
from services.runs import trace_codec
from services.runs.service import claim, complete
from services.runs.traces import downsample
from services.settings import get_settings
from tests.support import wait_for

SCENARIO = {
    "duration_s": 1,
    "topology": {"dumbbell": {"bottleneck": {"rate_mbps": 10, "delay_ms": 5}}},
    "flows": [{"name": "a", "variant": "reno", "rtt_ms": 40}, {"name": "b", "variant": "reno", "rtt_ms": 40}],
    "outputs": {"trace_interval_s": 0.5},
}


def make_traces(samples: int, flows: int = 2, seed: int = 1) -> dict[str, Any]:
    """A trace as the core writes it: cwnd and ssthresh (null until the first loss) per flow,
    an integer queue."""
    rng = np.random.default_rng(seed)
    ssthresh_from = samples // 3
    return {
        "time_s": (np.arange(samples) * 0.01).tolist(),
        "flows": [
            {
                "name": f"f{i}",
                "cwnd": np.round(rng.uniform(1, 100, samples), 3).tolist(),
                "ssthresh": [None] * ssthresh_from + np.round(rng.uniform(2, 50, samples - ssthresh_from), 3).tolist(),
            }
            for i in range(flows)
        ],
        "links": [{"name": "bottleneck", "queue": rng.integers(0, 200, samples).tolist()}],
    }


def run_with(client: Any, db_session: Any, traces: dict[str, Any] | None, seed: int = 1) -> str:
    """A succeeded run whose result carries `traces`."""
    r = client.post("/v1/runs", json={"scenario": {**SCENARIO, "seed": seed}})
    assert r.status_code == 201, r.text
    run_id = r.json()["id"]
    scenario = claim(db_session, run_id, "test", get_settings())
    db_session.commit()
    result = tcpsim.run(scenario)
    result["traces"] = traces
    complete(db_session, run_id, result)
    db_session.commit()
    return run_id


def table_of(traces: dict[str, Any]) -> list[dict[str, Any]]:
    """The trace table the API serves, computed from the core's traces."""
    columns = {"time_s": traces["time_s"]}
    for key in ("flows", "links"):
        for item in traces[key]:
            columns.update({f"{item['name']}.{q}": v for q, v in item.items() if q != "name"})
    return [dict(zip(columns, values, strict=True)) for values in zip(*columns.values(), strict=True)]


# ------------------------------------------------------------------------------ memory

# The JSON table of this trace is 64 MB; reading it as one document took several times that.
BIG = {"samples": 80_000, "flows": 20}
MEMORY_BOUND = 20_000_000

READS = {
    "json": "/v1/runs/{id}/traces",
    "csv": "/v1/runs/{id}/traces?format=csv",
    "parquet": "/v1/runs/{id}/traces?format=parquet",
    "result": "/v1/runs/{id}/result?traces=true",
    "downsampled": "/v1/runs/{id}/traces?points=4000",
}


@pytest.fixture
def big_run(client: Any, db_session: Any) -> str:
    return run_with(client, db_session, make_traces(**BIG))


@pytest.mark.parametrize("read", list(READS))
def test_reading_a_large_trace_holds_a_small_fraction_of_its_size_in_memory(client, big_run, read) -> None:
    url = READS[read].format(id=big_run)
    # A small read first: what the first use of a format imports is not what a read costs.
    assert client.get(url + ("&" if "?" in url else "?") + "limit=10").status_code == 200
    tracemalloc.start()
    try:
        size = 0
        with client.stream("GET", url) as response:
            assert response.status_code == 200
            for chunk in response.iter_bytes():
                size += len(chunk)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    if read == "json":
        assert size > 3 * MEMORY_BOUND, "the trace is not big enough to show anything"
    assert peak < MEMORY_BOUND, f"{read}: {size / 1e6:.1f} MB read with a peak of {peak / 1e6:.1f} MB"


def test_a_client_slow_to_read_holds_no_database_connection(app, client, big_run) -> None:
    """A reader that stops taking the body (a slow or stalled client) must not keep one of
    the API's few pooled connections, nor a transaction open in PostgreSQL."""
    pool = app.state.session_factory.kw["bind"].pool
    for path in ("/v1/runs/{id}/traces", "/v1/runs/{id}/result?traces=true"):
        with client.stream("GET", path.format(id=big_run)) as response:
            chunks = response.iter_bytes()
            for _ in range(3):
                next(chunks)
            wait_for(lambda: pool.checkedout() == 0, timeout_s=10)


# ------------------------------------------------------------------------- what is read


def test_every_format_and_the_result_give_back_the_cores_trace(client, db_session) -> None:
    traces = make_traces(300)
    traces["flows"].append({"name": "untraced"})  # a flow with no series (trace: ["queue"])
    run_id = run_with(client, db_session, traces)
    expected = table_of(traces)

    body = client.get(f"/v1/runs/{run_id}/traces").json()
    assert body["rows"] == expected
    assert (body["recorded"], body["samples"], body["offset"], body["count"]) == (True, 300, 0, 300)
    assert body["next_offset"] is None and body["downsampled"] is None
    assert [s["column"] for s in body["series"]] == list(expected[0])[1:]
    assert body["series"][0] == {"column": "f0.cwnd", "kind": "flow", "name": "f0", "quantity": "cwnd"}

    rows = list(csv.DictReader(io.StringIO(client.get(f"/v1/runs/{run_id}/traces?format=csv").text)))
    assert [{k: float(v) if v else None for k, v in r.items()} for r in rows] == expected
    table = pq.read_table(io.BytesIO(client.get(f"/v1/runs/{run_id}/traces?format=parquet").content))
    assert table.to_pylist() == expected
    assert str(table.schema.field("bottleneck.queue").type) == "int64"

    result = client.get(f"/v1/runs/{run_id}/result?traces=true")
    assert result.json()["traces"] == traces
    assert result.json()["flows"] == client.get(f"/v1/runs/{run_id}/result").json()["flows"]


def test_a_run_without_traces_reads_as_before(client, db_session) -> None:
    run_id = run_with(client, db_session, None)
    assert client.get(f"/v1/runs/{run_id}/result?traces=true").json()["traces"] is None
    body = client.get(f"/v1/runs/{run_id}/traces").json()
    assert (body["recorded"], body["rows"], body["series"]) == (False, [], [])
    assert client.get(f"/v1/runs/{run_id}/traces?format=csv").text == "time_s\r\n"


@pytest.fixture
def paged_run(client: Any, db_session: Any, monkeypatch: pytest.MonkeyPatch) -> tuple[str, dict[str, Any]]:
    """A trace stored in small chunks (a chunk of every series holds ~60 values), so that
    pages and buckets cross chunk boundaries."""
    monkeypatch.setattr(trace_codec, "CHUNK_POINTS", 60)
    traces = make_traces(233, flows=2, seed=7)
    return run_with(client, db_session, traces), traces


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    limit=st.integers(1, 250),
    columns=st.sets(st.sampled_from(["f0.cwnd", "f0.ssthresh", "f1.cwnd", "bottleneck.queue"])),
)
def test_pages_put_together_are_the_whole_table(client, paged_run, limit, columns) -> None:
    run_id, traces = paged_run
    wanted = ["time_s", *sorted(columns)] if columns else list(table_of(traces)[0])
    expected = [{c: row[c] for c in wanted} for row in table_of(traces)]
    rows, offset = [], 0
    while offset is not None:
        params = {"offset": offset, "limit": limit, "series": sorted(columns)}
        page = client.get(f"/v1/runs/{run_id}/traces", params=params).json()
        assert page["offset"] == offset and page["count"] == len(page["rows"]) <= limit
        rows += page["rows"]
        offset = page["next_offset"]
    assert rows == expected


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(start=st.integers(-5, 240), length=st.integers(0, 240))
def test_a_time_range_is_the_samples_within_it(client, paged_run, start, length) -> None:
    run_id, traces = paged_run
    from_s, to_s = start * 0.01 + 0.003, (start + length) * 0.01 + 0.003
    body = client.get(f"/v1/runs/{run_id}/traces", params={"from_s": from_s, "to_s": to_s}).json()
    assert body["rows"] == [r for r in table_of(traces) if from_s <= r["time_s"] <= to_s]


def test_the_dashboard_gets_at_most_its_points_with_every_bucket_min_and_max(client, paged_run) -> None:
    run_id, traces = paged_run
    body = client.get(f"/v1/runs/{run_id}/traces", params={"points": 40}).json()
    assert body["downsampled"] == {"points": 40, "buckets": 20} and len(body["rows"]) == 40
    full = table_of(traces)
    for b in range(20):
        bucket = full[b * 233 // 20 : (b + 1) * 233 // 20]
        first, last = body["rows"][2 * b : 2 * b + 2]
        assert (first["time_s"], last["time_s"]) == (bucket[0]["time_s"], bucket[-1]["time_s"])
        for column in ("f0.cwnd", "f1.ssthresh", "bottleneck.queue"):
            values = [r[column] for r in bucket if r[column] is not None]
            got = [first[column], last[column]]
            assert sorted(got, key=lambda v: (v is None, v)) == ([min(values), max(values)] if values else [None, None])
    # A selection that fits is whole.
    assert client.get(f"/v1/runs/{run_id}/traces", params={"points": 233}).json()["rows"] == full


def test_bad_paging_parameters_are_refused_naming_the_field(client, paged_run) -> None:
    run_id, _ = paged_run
    cases = {
        "series=nope.cwnd": ["series", 0],
        "to_s=1&from_s=2": ["query", "to_s"],
        "points=1": ["query", "points"],
        "limit=0": ["query", "limit"],
        "offset=-1": ["query", "offset"],
        "from_s=nan": ["query", "from_s"],
    }
    for query, loc in cases.items():
        r = client.get(f"/v1/runs/{run_id}/traces?{query}")
        assert r.status_code == 422, (query, r.text)
        assert r.json()["detail"][0]["loc"] == loc, (query, r.json())


# --------------------------------------------------------------------- the downsampling


@st.composite
def tables(draw: Any) -> tuple[list[np.ndarray], list[str], list[int]]:
    """A table (time first, a float column with nulls, an int column) and cuts into pieces."""
    n = draw(st.integers(1, 400))
    floats = st.one_of(st.none(), st.floats(-1e6, 1e6, allow_nan=False))
    f = np.array([np.nan if v is None else v for v in draw(st.lists(floats, min_size=n, max_size=n))], dtype=float)
    i = np.array(draw(st.lists(st.integers(-(2**40), 2**40), min_size=n, max_size=n)), dtype=np.int64)
    cuts = sorted(set(draw(st.lists(st.integers(1, max(1, n - 1)), max_size=8))) - {n})
    return [np.arange(n) * 0.5, f, i], ["f8", "f8", "i8"], cuts


@settings(max_examples=300, deadline=None)
@given(table=tables(), points=st.integers(2, 500))
def test_a_downsampled_series_keeps_each_buckets_min_and_max_in_order(table, points) -> None:
    columns, dtypes, cuts = table
    n = len(columns[0])
    bounds = [0, *cuts, n]
    pieces = [[c[a:b] for c in columns] for a, b in zip(bounds, bounds[1:], strict=False)]
    out = list(downsample(pieces, n, points, dtypes, batch=3))
    got = [np.concatenate([p[k] for p in out]) for k in range(3)]
    if n <= points:
        for g, c in zip(got, columns, strict=True):
            np.testing.assert_array_equal(g, c)
        return
    buckets = points // 2
    assert len(got[0]) == 2 * buckets <= points
    assert got[2].dtype == np.int64
    for b in range(buckets):
        lo, hi = b * n // buckets, (b + 1) * n // buckets
        assert (got[0][2 * b], got[0][2 * b + 1]) == (columns[0][lo], columns[0][hi - 1])
        for k in (1, 2):
            values = columns[k][lo:hi]
            pair = got[k][2 * b : 2 * b + 2]
            if np.isnan(values.astype(float)).all():
                assert np.isnan(pair).all()
                continue
            low, high = np.nanmin(values), np.nanmax(values)
            assert sorted(pair.tolist()) == [low, high]
            # In the order they occur: the minimum first when it comes first.
            first_low = int(np.nanargmin(values)) < int(np.nanargmax(values)) or low == high
            assert pair[0] == (low if first_low else high)


def test_downsampling_does_not_depend_on_how_the_rows_were_cut() -> None:
    rng = np.random.default_rng(3)
    columns = [np.arange(10_000) * 0.01, rng.normal(size=10_000), rng.integers(0, 9, 10_000)]
    whole = list(downsample([columns], 10_000, 300, ["f8", "f8", "i8"]))
    cut = list(
        downsample([[c[a : a + 77] for c in columns] for a in range(0, 10_000, 77)], 10_000, 300, ["f8", "f8", "i8"])
    )
    for k in range(3):
        np.testing.assert_array_equal(np.concatenate([p[k] for p in whole]), np.concatenate([p[k] for p in cut]))


def test_the_trace_codec_round_trips() -> None:
    traces = make_traces(20_000, flows=10)
    layout, chunks = trace_codec.encode(traces)
    values = [
        np.concatenate([trace_codec.decode(c["data"], s["dtype"]) for c in chunks if c["series"] == i])
        for i, s in enumerate(layout["series"])
    ]
    assert trace_codec.assemble(layout["series"], layout["items"], values) == traces
    assert math.isclose(layout["chunk_samples"] * len(layout["series"]), trace_codec.CHUNK_POINTS, rel_tol=0.1)
