"""Migration 0005: traces stored as JSONB before it become compressed chunks, and go back."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import psycopg
import pytest
from alembic import command

from services.db.migrate import alembic_config, downgrade, upgrade_to_head
from services.runs import trace_codec
from tests.infra.test_migrations import scratch_database  # noqa: F401  (the fixture)

TRACES = {
    "time_s": [i * 0.25 for i in range(41)],
    "flows": [
        {"name": "a", "cwnd": [1.0 + i / 3 for i in range(41)], "ssthresh": [None] * 10 + [8.5] * 31},
        {"name": "quiet"},  # traced for nothing but the queue: no series of its own
        {"name": "b", "cwnd": [2.0] * 41, "ssthresh": [None] * 41},
    ],
    "links": [{"name": "bottleneck", "queue": [i % 7 for i in range(41)]}],
}


def test_jsonb_traces_become_chunks_and_come_back_on_downgrade(scratch_database, monkeypatch) -> None:  # noqa: F811
    monkeypatch.setattr(trace_codec, "CHUNK_POINTS", 30)  # several chunks per series
    command.upgrade(alembic_config(scratch_database), "0004")
    key = hashlib.sha256(b"trace migration").hexdigest()
    with psycopg.connect(scratch_database, autocommit=True) as conn:
        result_id = conn.execute(
            "INSERT INTO results (cache_key, core_version, summary) VALUES (%s, 'x', '{}') RETURNING id", (key,)
        ).fetchone()[0]
        conn.execute("INSERT INTO traces (result_id, data) VALUES (%s, %s)", (result_id, json.dumps(TRACES)))

    upgrade_to_head(scratch_database)
    with psycopg.connect(scratch_database) as conn:
        samples, chunk_samples, series, items = conn.execute(
            "SELECT samples, chunk_samples, series, items FROM traces WHERE result_id = %s", (result_id,)
        ).fetchone()
        chunks = conn.execute(
            "SELECT series, chunk, data FROM trace_chunks WHERE result_id = %s ORDER BY series, chunk", (result_id,)
        ).fetchall()
    assert (samples, chunk_samples) == (41, 30 // 6)
    assert [s["kind"] + ":" + (s["name"] or "") + "." + s["quantity"] + ":" + s["dtype"] for s in series] == [
        "time:.time_s:f8",
        "flow:a.cwnd:f8",
        "flow:a.ssthresh:f8",
        "flow:b.cwnd:f8",
        "flow:b.ssthresh:f8",
        "link:bottleneck.queue:i8",
    ]
    assert items == {"flows": ["a", "quiet", "b"], "links": ["bottleneck"]}
    assert [c for n, c, _ in chunks if n == 0] == list(range(9))
    values = [
        np.concatenate([trace_codec.decode(bytes(d), s["dtype"]) for n, _, d in chunks if n == i])
        for i, s in enumerate(series)
    ]
    assert trace_codec.assemble(series, items, values) == TRACES

    downgrade(scratch_database, "0004")
    with psycopg.connect(scratch_database) as conn:
        assert conn.execute("SELECT data FROM traces WHERE result_id = %s", (result_id,)).fetchone()[0] == TRACES
        assert conn.execute("SELECT to_regclass('trace_chunks')").fetchone()[0] is None


@pytest.mark.parametrize(
    "empty", [{"time_s": [], "flows": [], "links": []}, {"time_s": [0.0], "flows": [{"name": "x"}], "links": []}]
)
def test_a_trace_with_no_samples_or_no_series_migrates(scratch_database, empty) -> None:  # noqa: F811
    command.upgrade(alembic_config(scratch_database), "0004")
    key = hashlib.sha256(json.dumps(empty).encode()).hexdigest()
    with psycopg.connect(scratch_database, autocommit=True) as conn:
        result_id = conn.execute(
            "INSERT INTO results (cache_key, core_version, summary) VALUES (%s, 'x', '{}') RETURNING id", (key,)
        ).fetchone()[0]
        conn.execute("INSERT INTO traces (result_id, data) VALUES (%s, %s)", (result_id, json.dumps(empty)))
    upgrade_to_head(scratch_database)
    downgrade(scratch_database, "0004")
    with psycopg.connect(scratch_database) as conn:
        assert conn.execute("SELECT data FROM traces WHERE result_id = %s", (result_id,)).fetchone()[0] == empty
