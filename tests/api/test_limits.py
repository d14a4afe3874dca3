"""The server's limits for a shared lab: request body size (413), queued runs (429), and the
events one run may simulate (a limit_exceeded failure)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from services.db.models import Run, Sweep
from tests.conftest import AUTH
from tests.e2e.test_runs import FIG2_SHORT, count, finished


@pytest.fixture
def limited_client(test_settings, clean_db) -> Iterator[TestClient]:
    from api.main import create_app

    settings = test_settings.model_copy(update={"max_body_bytes": 4096, "max_queued_runs": 3})
    with TestClient(create_app(settings), headers=AUTH) as c:
        yield c


def run_body(seed: int) -> dict[str, Any]:
    return {**FIG2_SHORT, "overrides": {**FIG2_SHORT["overrides"], "seed": seed}}


def test_a_body_over_the_limit_is_refused_with_413_before_it_is_parsed(limited_client, db_session):
    big = {**run_body(1), "overrides": {**run_body(1)["overrides"], "name": "x" * 5000}}
    r = limited_client.post("/v1/runs", json=big)
    assert r.status_code == 413 and "4096 bytes" in r.json()["detail"]

    def chunks() -> Iterator[bytes]:  # no Content-Length: counted as it arrives
        yield b'{"preset": "paper000-fig2a", "overrides": {"name": "'
        for _ in range(10):
            yield b"y" * 1000
        yield b'"}}'

    chunked = limited_client.post("/v1/runs", content=chunks(), headers={"content-type": "application/json"})
    assert chunked.status_code == 413
    assert count(db_session, Run) == 0
    assert limited_client.post("/v1/runs", json=run_body(1)).status_code == 201  # under the limit


def test_submissions_past_the_queue_limit_are_429_and_store_nothing(limited_client, db_session):
    for seed in (1, 2, 3):
        assert limited_client.post("/v1/runs", json=run_body(seed)).status_code == 201
    refused = limited_client.post("/v1/runs", json=run_body(4))
    assert refused.status_code == 429 and refused.headers["retry-after"].isdigit()
    assert "at most 3" in refused.json()["detail"]
    sweep = {**FIG2_SHORT, "axes": [{"path": "flows[*].loss.m", "values": [2, 9]}], "replications": 1}
    assert limited_client.post("/v1/sweeps", json=sweep).status_code == 429
    assert count(db_session, Run) == 3 and count(db_session, Sweep) == 0


def test_a_run_past_the_servers_event_cap_fails_as_limit_exceeded(client, start_worker):
    worker = start_worker(run_max_events=10_000)
    try:
        run = client.post("/v1/runs", json=run_body(99)).json()
        done = finished(client, run["id"])
        assert (done["status"], done["error_kind"]) == ("failed", "limit_exceeded"), done
        assert "10000" in done["error"]
    finally:
        worker.stop()
