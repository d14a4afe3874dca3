"""The small holes of issue 11 (findings 6 and 7), through the real app on the real database:
per-route body limits, bounded 422s, bodies validated off the event loop, metrics labels,
free-text caps, PATCH nulls, strict booleans, case-insensitive user names, the login's `next`
and the Origin check of cookie-authenticated requests."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from pydantic import BaseModel, field_validator

from api.limits import MAX_ERRORS, JsonBodyRoute
from services.db.models import Run
from tests.conftest import AUTH
from tests.e2e.test_runs import FIG2_SHORT, count

# ---- finding 6: heavy bodies ------------------------------------------------------------------


@pytest.fixture
def small_limits_client(test_settings, clean_db) -> Iterator[TestClient]:
    from api.main import create_app

    settings = test_settings.model_copy(
        update={"max_model_body_bytes": 50_000, "max_scenario_body_bytes": 60_000, "max_sweep_body_bytes": 70_000}
    )
    with TestClient(create_app(settings), headers=AUTH) as c:
        yield c


def test_each_resource_refuses_a_body_past_its_own_limit_with_413_naming_it(small_limits_client, db_session):
    c = small_limits_client
    numbers = {"p": [0.01] * 20_000, "rtt_s": 0.1}  # ~120 kB: under the server's 10 MB
    r = c.post("/v1/models/mathis/evaluate", json=numbers)
    assert r.status_code == 413
    assert r.json()["detail"] == (
        "the request body is larger than a model query accepts (50000 bytes; TCPLAB_MAX_MODEL_BODY_BYTES)"
    )
    padded = {**FIG2_SHORT, "overrides": {**FIG2_SHORT["overrides"], "name": "x" * 65_000}}
    r = c.post("/v1/runs", json=padded)
    assert r.status_code == 413 and "60000 bytes; TCPLAB_MAX_SCENARIO_BODY_BYTES" in r.json()["detail"]

    def chunks() -> Iterator[bytes]:  # no Content-Length: measured once read
        yield json.dumps(padded).encode()

    r = c.post("/v1/runs", content=chunks(), headers={"content-type": "application/json"})
    assert r.status_code == 413 and "TCPLAB_MAX_SCENARIO_BODY_BYTES" in r.json()["detail"]
    sweep = {**FIG2_SHORT, "axes": [{"path": "flows[*].loss.m", "values": list(range(1, 20_000))}]}
    r = c.post("/v1/sweeps", json=sweep)
    assert r.status_code == 413 and "70000 bytes; TCPLAB_MAX_SWEEP_BODY_BYTES" in r.json()["detail"]
    r = c.post("/v1/schedules", json={"name": "s", "cron": "0 3 * * *", "template": sweep})
    assert r.status_code == 413 and "TCPLAB_MAX_SWEEP_BODY_BYTES" in r.json()["detail"]
    assert count(db_session, Run) == 0
    assert c.post("/v1/models/mathis/evaluate", json={"p": [0.01] * 100, "rtt_s": 0.1}).status_code == 200


def test_a_422_echoes_a_short_excerpt_of_a_huge_input(client):
    r = client.post("/v1/models/mathis/evaluate", json={"p": [0.01] * 300_000, "rtt_s": "x" * 100_000})
    assert r.status_code == 422
    assert len(r.content) < 10_000, len(r.content)
    detail = r.json()["detail"]
    too_long = next(e for e in detail if e["type"] == "too_long")
    assert too_long["input"][:10] == [0.01] * 10 and too_long["input"][10] == "… 299990 more items"
    assert too_long["ctx"]["actual_length"] == 300_000
    rtt = next(e for e in detail if e["loc"][:2] == ["body", "rtt_s"])
    assert rtt["input"].startswith("x" * 200) and rtt["input"].endswith("… (100000 characters)")


def test_a_422_lists_at_most_fifty_errors_and_says_how_many_it_left_out(client):
    flows = [{"rtt_ms": 100, "variant": "no-such-variant"} for _ in range(300)]
    scenario = {
        "duration_s": 5,
        "topology": {"dumbbell": {"bottleneck": {"rate_mbps": 10, "delay_ms": 10}}},
        "flows": flows,
    }
    r = client.post("/v1/runs", json={"scenario": scenario})
    assert r.status_code == 422
    body = r.json()
    assert len(body["detail"]) == MAX_ERRORS == 50
    assert body["omitted_errors"] == 250
    assert body["detail"][0]["path"] == "$.scenario.flows[0].variant"


VALIDATED_IN: list[int] = []  # the threads _Recorded was validated in


class _Recorded(BaseModel):
    value: int

    @field_validator("value")
    @classmethod
    def record_thread(cls, value: int) -> int:
        VALIDATED_IN.append(threading.get_ident())
        return value


def test_a_json_body_is_parsed_and_validated_off_the_event_loop_and_validated_once():
    app = FastAPI()
    app.router.route_class = JsonBodyRoute

    @app.post("/echo")
    async def echo(body: _Recorded) -> dict[str, int]:
        return {"value": body.value, "loop_thread": threading.get_ident()}

    VALIDATED_IN.clear()
    with TestClient(app) as c:
        r = c.post("/echo", json={"value": 7})
        assert r.status_code == 200 and r.json()["value"] == 7
        assert VALIDATED_IN and r.json()["loop_thread"] not in VALIDATED_IN
        assert len(VALIDATED_IN) == 1  # FastAPI took the validated model as it was
        bad = c.post("/echo", json={"value": "seven"})
        assert bad.status_code == 422 and bad.json()["detail"][0]["loc"] == ["body", "value"]
        broken = c.post("/echo", content=b'{"value": ', headers={"content-type": "application/json"})
        assert broken.status_code == 422 and broken.json()["detail"][0]["type"] == "json_invalid"


def test_an_anonymous_caller_is_told_401_before_anything_about_its_body(anonymous_client):
    r = anonymous_client.post("/v1/runs", json={"scenario": {"duration_s": "soon"}})
    assert r.status_code == 401
    r = anonymous_client.post("/v1/models/mathis/evaluate", json={"p": "x"})
    assert r.status_code == 401


# ---- finding 7: /metrics ----------------------------------------------------------------------


def test_made_up_http_methods_and_paths_do_not_grow_the_metrics(client):
    for i in range(200):
        client.request(f"M{i:03d}X", "/healthz")
        client.request(f"Q{i:03d}", f"/no/such/path/{i}")
    families = client.get("/metrics").text
    series = [line for line in families.splitlines() if line.startswith("tcplab_http_request_duration_seconds_count")]
    methods = {line.split('method="')[1].split('"')[0] for line in series}
    assert methods <= {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "other"}, methods
    assert "other" in methods
    assert not any("/no/such/path" in line for line in series)
    assert len(families) < 200_000
