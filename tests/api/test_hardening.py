"""The small holes of issue 11 (findings 6 and 7), through the real app on the real database:
per-route body limits, bounded 422s, bodies validated off the event loop, metrics labels,
free-text caps, PATCH nulls, strict booleans, case-insensitive user names, the login's `next`
and the Origin check of cookie-authenticated requests."""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from pydantic import BaseModel, field_validator

from api.deps import SessionDep
from api.limits import INLINE_PARSE_BYTES, MAX_ERRORS, JsonBodyRoute, SweepBodyRoute
from services.db.models import Run, Sweep
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

    with TestClient(app) as c:
        # Past INLINE_PARSE_BYTES: in a worker thread, and FastAPI takes the validated model.
        VALIDATED_IN.clear()
        big = b'{"value": 7' + b" " * INLINE_PARSE_BYTES + b"}"
        r = c.post("/echo", content=big, headers={"content-type": "application/json"})
        assert r.status_code == 200 and r.json()["value"] == 7
        assert VALIDATED_IN and r.json()["loop_thread"] not in VALIDATED_IN
        assert len(VALIDATED_IN) == 1
        # A small body on the loop (the hand-over would cost more than the parse), once.
        VALIDATED_IN.clear()
        r = c.post("/echo", json={"value": 8})
        assert r.status_code == 200 and VALIDATED_IN == [r.json()["loop_thread"]]
        for body in (b'{"value": "seven"}', b'{"value": "seven"' + b" " * INLINE_PARSE_BYTES + b"}"):
            bad = c.post("/echo", content=body, headers={"content-type": "application/json"})
            assert bad.status_code == 422 and bad.json()["detail"][0]["loc"] == ["body", "value"]
        for body in (b'{"value": ', b'{"value": ' + b" " * INLINE_PARSE_BYTES):
            broken = c.post("/echo", content=body, headers={"content-type": "application/json"})
            assert broken.status_code == 422 and broken.json()["detail"][0]["type"] == "json_invalid"


def test_a_sweep_body_is_validated_off_the_event_loop_however_small():
    # A few bytes of axis ranges validate into up to MAX_AXES × MAX_AXIS_VALUES values.
    app = FastAPI()
    app.router.route_class = SweepBodyRoute

    @app.post("/echo")
    async def echo(body: _Recorded) -> dict[str, int]:
        return {"value": body.value, "loop_thread": threading.get_ident()}

    VALIDATED_IN.clear()
    with TestClient(app) as c:
        r = c.post("/echo", json={"value": 9})
    assert r.status_code == 200 and VALIDATED_IN and r.json()["loop_thread"] not in VALIDATED_IN


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


# ---- finding 7: free text ---------------------------------------------------------------------

DUMBBELL = {"dumbbell": {"bottleneck": {"rate_mbps": 10, "delay_ms": 10}}}


@pytest.mark.parametrize(
    ("scenario", "path"),
    [
        ({"description": "x" * 10_001}, "$.scenario.description"),
        ({"name": "n" * 201}, "$.scenario.name"),
        ({"flows": [{"rtt_ms": 100, "name": "f" * 201}]}, "$.scenario.flows[0].name"),
        (
            {
                "topology": {
                    "graph": {
                        "nodes": ["a", "b" * 201],
                        "links": [{"from": "a", "to": "b", "rate_mbps": 1, "delay_ms": 1}],
                    }
                },
                "flows": [{"from": "a", "to": "b"}],
            },
            "$.scenario.topology.graph.nodes[1]",
        ),
        ({"outputs": {"trace_interval_s": 1, "trace_flows": ["t" * 201]}}, "$.scenario.outputs.trace_flows[0]"),
    ],
)
def test_free_text_past_its_cap_is_a_422_naming_the_field(client, db_session, scenario, path):
    body = {"duration_s": 5, "topology": DUMBBELL, "flows": [{"rtt_ms": 100}], **scenario}
    r = client.post("/v1/runs", json={"scenario": body})
    assert r.status_code == 422, r.text[:300]
    error = next(e for e in r.json()["detail"] if e["path"] == path)
    assert "at most" in error["msg"], error
    assert count(db_session, Run) == 0


def test_a_trace_file_on_a_link_is_a_422_and_the_server_never_reads_the_path(client, db_session, tmp_path):
    trace = tmp_path / "one-per-ms.down"
    trace.write_text("1\n")  # a trace the core would read and accept
    bottleneck = {"trace": {"file": str(trace)}, "delay_ms": 10}
    body = {"duration_s": 5, "topology": {"dumbbell": {"bottleneck": bottleneck}}, "flows": [{"rtt_ms": 100}]}
    r = client.post("/v1/runs", json={"scenario": body})
    assert r.status_code == 422, r.text[:300]
    error = next(e for e in r.json()["detail"] if e["path"] == "$.scenario.topology.dumbbell.bottleneck.trace")
    assert "not accepted by the service" in error["msg"], error
    assert count(db_session, Run) == 0


def test_a_description_within_its_cap_is_stored_and_a_preset_override_past_it_is_refused(client):
    fine = {"duration_s": 5, "topology": DUMBBELL, "flows": [{"rtt_ms": 100}], "description": "d" * 10_000}
    assert client.post("/v1/runs", json={"scenario": fine}).status_code == 201
    long = {**FIG2_SHORT, "overrides": {**FIG2_SHORT["overrides"], "description": "d" * 20_000}}
    r = client.post("/v1/runs", json=long)
    assert r.status_code == 422 and "description" in r.text


# ---- finding 7: the models answer extreme finite numbers --------------------------------------


def test_a_crossover_whose_default_m_star_overflows_is_a_422_naming_rto_s(client):
    r = client.post("/v1/models/newreno/crossover", json={"p": 0.01, "rtt_s": 1e-300, "rto_s": 1e300})
    assert r.status_code == 422, r.text
    (error,) = r.json()["detail"]
    assert error["loc"] == ["body", "rto_s"] and "give m_star" in error["msg"]
    r = client.post("/v1/models/newreno/regions", json={"p": [0.01], "m": [1, 2], "rtt_s": 1e-300, "rto_s": 1e300})
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["body", "rto_s"]
    given = client.post("/v1/models/newreno/crossover", json={"p": 0.01, "rtt_s": 1e-300, "rto_s": 1e300, "m_star": 4})
    assert given.status_code == 200  # with m* given there is an answer


# ---- finding 7: static files, PATCH nulls, strict booleans, user names ---------------------


def test_a_static_name_with_a_nul_byte_is_not_found(anonymous_client):
    for name in ("%00", "a%00b.js", "x" * 5000):
        r = anonymous_client.get(f"/static/{name}")
        assert r.status_code == 404, (name, r.status_code)


def test_a_null_flag_in_a_patch_is_a_422_naming_it_and_changes_nothing(client):
    user = client.post("/v1/users", json={"name": "dora"}).json()
    assert client.patch(f"/v1/users/{user['id']}", json={"disabled": True}).json()["disabled"] is True
    for field in ("is_admin", "disabled"):
        r = client.patch(f"/v1/users/{user['id']}", json={field: None})
        assert r.status_code == 422, r.text
        (error,) = r.json()["detail"]
        assert error["loc"] == ["body", field] and f"`{field}` cannot be null" in error["msg"]
    after = client.get(f"/v1/users/{user['id']}").json()
    assert (after["disabled"], after["is_admin"]) == (True, False)
    # Every other PATCH: a null flag is a 422 naming it too.
    run_id = client.post("/v1/runs", json=FIG2_SHORT).json()["id"]
    r = client.patch(f"/v1/runs/{run_id}", json={"shared": None})
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["body", "shared"]
    # A quota's null still means "the server's default".
    assert client.patch(f"/v1/users/{user['id']}", json={"max_flows": None}).status_code == 200


def _boolean_fields(spec: dict[str, Any], schema: dict[str, Any]) -> list[str]:
    """The top-level boolean properties of a request body schema ($ref, anyOf resolved)."""
    if "$ref" in schema:
        schema = spec["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
    found = []
    for name, prop in schema.get("properties", {}).items():
        options = prop.get("anyOf", [prop])
        if any(o.get("type") == "boolean" for o in options):
            found.append(name)
    return found


def test_every_boolean_of_every_request_body_refuses_the_string_yes(app, client):
    spec = app.openapi()
    checked = []
    for path, operations in spec["paths"].items():
        for method, operation in operations.items():
            content = operation.get("requestBody", {}).get("content", {}).get("application/json")
            if content is None:
                continue
            schema = content["schema"]
            for option in schema.get("anyOf", [schema]):
                for field in _boolean_fields(spec, option):
                    url = path.replace("{", "").replace("}", "")
                    url = "/".join(str(uuid.uuid4()) if "id" in part else part for part in url.split("/"))
                    r = client.request(method.upper(), url, json={field: "yes"})
                    assert r.status_code == 422, (method, path, field, r.status_code)
                    errors = [e for e in r.json()["detail"] if e["loc"] == ["body", field]]
                    assert errors and errors[0]["type"] == "bool_type", (method, path, field, r.json())
                    checked.append(f"{method.upper()} {path} {field}")
    assert len(checked) >= 10, checked  # runs, sweeps, schedules, users, reproductions


def test_user_names_are_unique_regardless_of_case(client):
    assert client.post("/v1/users", json={"name": "alice"}).status_code == 201
    for name in ("ALICE", "Alice", "alice"):
        r = client.post("/v1/users", json={"name": name})
        assert r.status_code == 409, (name, r.status_code)
        assert "regardless of case" in r.json()["detail"]
    assert [u["name"] for u in client.get("/v1/users").json()].count("alice") == 1


# ---- finding 7: the login's `next` and cookie-authenticated changes from other sites ----------


@pytest.mark.parametrize(
    "target",
    [
        "//evil.example/",
        "/\t/evil.example",
        "/\n/evil.example",
        "/\r/evil.example",
        "/\\evil.example",
        "\\\\evil.example",
        "https://evil.example/",
        " //evil.example",
        "/\x00//evil.example",
        "/" + "a" * 3000,
    ],
)
def test_the_login_never_sends_a_browser_to_another_site(anonymous_client, target):
    """`/login?next=/%09/evil.com`: a browser drops the tab and reads `//evil.com`, another host."""
    page = anonymous_client.get("/login", params={"next": target})
    assert page.status_code == 200 and '"next": "/dashboard"' in page.text
    r = anonymous_client.post("/login", json={"token": AUTH["Authorization"].split()[1], "next": target})
    assert r.status_code == 200 and r.json()["next"] == "/dashboard"


def test_the_login_keeps_a_path_of_this_server(anonymous_client):
    target = "/dashboard/sweeps/123?metric=cwnd"
    assert f'"next": "{target}"' in anonymous_client.get("/login", params={"next": target}).text


@pytest.fixture
def cookie_client(app, clean_db) -> Iterator[TestClient]:
    """A browser signed in with the dashboard's cookie (the bootstrap admin), no bearer header."""
    with TestClient(app, cookies={"tcplab_token": AUTH["Authorization"].split()[1]}) as c:
        yield c


FOREIGN = [
    {"Origin": "http://evil.example"},
    {"Origin": "http://testserver:8001"},
    {"Origin": "null"},
    {"Sec-Fetch-Site": "cross-site"},
    {"Sec-Fetch-Site": "same-site", "Origin": "http://testserver"},
]


def test_a_cookie_signed_change_from_another_origin_is_403_and_changes_nothing(client, cookie_client, db_session):
    run_id = client.post("/v1/runs", json=FIG2_SHORT).json()["id"]
    schedule = client.post(
        "/v1/schedules",
        json={
            "name": "s",
            "cron": "0 3 * * *",
            "template": {**FIG2_SHORT, "axes": [{"path": "flows[*].loss.m", "values": [2]}], "replications": 1},
        },
    ).json()
    for headers in FOREIGN:
        for url in (f"/v1/runs/{run_id}/cancel", f"/v1/schedules/{schedule['id']}/fire"):
            r = cookie_client.post(url, headers=headers)
            assert r.status_code == 403, (url, headers, r.status_code)
            assert "must come from this server's own pages" in r.json()["detail"]
        r = cookie_client.patch(f"/v1/runs/{run_id}", json={"shared": True}, headers=headers)
        assert r.status_code == 403
    assert client.get(f"/v1/runs/{run_id}").json()["status"] == "queued"
    assert count(db_session, Sweep) == 0
    assert cookie_client.get(f"/v1/runs/{run_id}", headers=FOREIGN[0]).status_code == 200  # reading is fine
    # From its own pages (what Chromium sends), or from a client that says nothing: allowed.
    same = cookie_client.post(f"/v1/schedules/{schedule['id']}/fire", headers={"Sec-Fetch-Site": "same-origin"})
    assert same.status_code == 201, same.text
    r = cookie_client.post(f"/v1/runs/{run_id}/cancel", headers={"Origin": "http://testserver"})
    assert r.status_code == 200 and r.json()["status"] == "cancelled"


def test_a_bearer_token_from_any_origin_is_not_a_forgery(client):
    run_id = client.post("/v1/runs", json=FIG2_SHORT).json()["id"]
    r = client.post(
        f"/v1/runs/{run_id}/cancel", headers={"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"}
    )
    assert r.status_code == 200 and r.json()["status"] == "cancelled"


def test_a_write_that_loses_a_race_to_a_constraint_is_a_409_and_commits_nothing(test_settings, clean_db, db_session):
    """A constraint broken between a request's checks and its write (a run answered from a
    stored result as that result's last run is deleted) is the database's real IntegrityError:
    409 naming the constraint, not a 500."""
    from sqlalchemy import text

    from api.main import create_app

    app = create_app(test_settings)
    name = f"racer-{uuid.uuid4().hex[:8]}"

    @app.post("/test-only/race")
    def race(session: SessionDep) -> dict[str, str]:
        # Two rows with one name: what two concurrent requests would write one each.
        for _ in range(2):
            session.execute(text("INSERT INTO users (id, name) VALUES (gen_random_uuid(), :n)"), {"n": name})
        session.flush()
        return {}

    with TestClient(app) as client:
        r = client.post("/test-only/race")
    assert r.status_code == 409, r.text
    assert "conflicted with a concurrent change" in r.json()["detail"] and "constraint" in r.json()["detail"]
    assert db_session.execute(text("SELECT count(*) FROM users WHERE name = :n"), {"n": name}).scalar_one() == 0
