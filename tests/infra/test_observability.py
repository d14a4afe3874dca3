"""/metrics, request ids, JSON logs and redaction, against real PostgreSQL, Redis, workers and
the launched service (docs/observability.md)."""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from hypothesis import given, settings
from hypothesis import strategies as st
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import Engine, text

import tcpsim
from api.main import create_app
from infra.logging import _PATTERNS, JsonFormatter, TextFormatter, redact
from services.settings import Settings
from tests.conftest import AUTH
from tests.support import free_port, make_user, user_client, wait_for

SHORT_RUN = {"preset": "paper000-fig2a", "overrides": {"duration_s": 3, "warmup_s": 1}}
SECRET = "secret123"


def scrape(client: Any) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """/metrics parsed by Prometheus' own parser: {(sample name, sorted labels): value}."""
    response = client.get("/metrics")
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/plain")
    samples = {}
    for family in text_string_to_metric_families(response.text):
        for sample in family.samples:
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return samples


def value(samples: dict, name: str, **labels: str) -> float | None:
    return samples.get((name, tuple(sorted(labels.items()))))


def submit(client: Any, seed: int) -> str:
    body = {**SHORT_RUN, "overrides": {**SHORT_RUN["overrides"], "seed": seed}}
    response = client.post("/v1/runs", json=body)
    assert response.status_code == 201, response.text
    return response.json()["id"]


@pytest.fixture
def obs_client(test_settings: Settings, clean_db: Engine) -> Iterator[TestClient]:
    """An app of its own whose figures are read anew at every scrape (no cache)."""
    app = create_app(test_settings)
    app.state.metrics_collector.cache_s = app.state.metrics_collector.settled_cache_s = 0
    with TestClient(app, headers=AUTH) as client:
        yield client


# ------------------------------------------------------------------------------ /metrics


def dispatched_scrape(client: TestClient, window: int, queue: str) -> Any:
    """The metrics once the API's dispatch thread has handed the window's runs to the broker
    (a submission asks for the pass; it runs just after the response): marked dispatched in
    PostgreSQL, then sent to Redis."""

    def sent() -> Any:
        samples = scrape(client)
        dispatched = value(samples, "tcplab_queued_runs", state="dispatched") == window
        return dispatched and (value(samples, "tcplab_queue_depth", queue=queue) or 0) >= window and samples

    return wait_for(sent, timeout_s=30)


def test_metrics_count_the_queued_runs_of_the_database_and_the_queue(
    obs_client: TestClient, test_settings: Settings, clean_db: Engine
) -> None:
    for seed in (1, 2, 3):
        submit(obs_client, seed)  # no worker consumes: they stay queued
    samples = dispatched_scrape(obs_client, test_settings.effective_dispatch_window, test_settings.queue)
    assert value(samples, "tcplab_dependency_up", dependency="database") == 1
    assert value(samples, "tcplab_dependency_up", dependency="broker") == 1
    with clean_db.connect() as conn:
        stored = dict(conn.execute(text("SELECT status, count(*) FROM runs GROUP BY status")).all())
    assert stored == {"queued": 3}
    assert value(samples, "tcplab_runs", status="queued") == 3
    for status in ("running", "succeeded", "failed", "cancelled"):
        assert value(samples, "tcplab_runs", status=status) == 0
    # A window of one (one worker process): one run was handed to the broker, two wait in
    # PostgreSQL for their turn.
    window = test_settings.effective_dispatch_window
    assert window == 1
    assert value(samples, "tcplab_queued_runs", state="dispatched") == window
    assert value(samples, "tcplab_queued_runs", state="waiting") == 3 - window
    admin = obs_client.get("/v1/me").json()["id"]
    assert value(samples, "tcplab_user_queue_depth", user_id=admin, state="dispatched") == window
    assert value(samples, "tcplab_user_queue_depth", user_id=admin, state="waiting") == 3 - window
    assert value(samples, "tcplab_user_running_runs", user_id=admin) == 0
    assert value(samples, "tcplab_dispatch_window") == window
    assert value(samples, "tcplab_queue_depth", queue=test_settings.queue) >= window
    assert value(samples, "tcplab_oldest_queued_run_age_seconds") >= 0
    assert value(samples, "tcplab_recent_runs_finished", status="succeeded") == 0
    versions = {"version": obs_client.app.version, "core_version": tcpsim.__version__}
    assert value(samples, "tcplab_build_info", **versions) == 1


def test_metrics_after_a_worker_ran_them_have_durations_and_the_cores_speed(
    obs_client: TestClient, celery_worker_process: Any, clean_db: Engine
) -> None:
    run_ids = [submit(obs_client, seed) for seed in (11, 12, 13)]

    def all_done() -> bool:
        statuses = [obs_client.get(f"/v1/runs/{r}").json()["status"] for r in run_ids]
        return statuses == ["succeeded"] * 3

    wait_for(all_done, timeout_s=120, interval_s=0.3)
    samples = scrape(obs_client)
    assert value(samples, "tcplab_runs", status="succeeded") == 3
    assert value(samples, "tcplab_runs", status="queued") == 0
    assert value(samples, "tcplab_recent_runs_finished", status="succeeded") == 3
    with clean_db.connect() as conn:
        durations, events, core_s = conn.execute(
            text(
                "SELECT array_agg(extract(epoch FROM finished_at - started_at)), sum(events), "
                "sum(core_wall_s) FROM runs"
            )
        ).one()
    duration = "tcplab_recent_run_duration_seconds"
    longest = value(samples, duration, status="succeeded", quantile="1")
    assert longest == pytest.approx(max(float(d) for d in durations))
    median = value(samples, duration, status="succeeded", quantile="0.5")
    assert 0 < median <= longest
    mean = value(samples, "tcplab_recent_run_mean_duration_seconds", status="succeeded")
    assert mean == pytest.approx(sum(float(d) for d in durations) / 3)
    assert value(samples, "tcplab_recent_core_events") == events
    assert value(samples, "tcplab_core_events_per_second") == pytest.approx(int(events) / core_s)
    assert value(samples, "tcplab_core_events_per_second") > 1e5  # a compiled core

    # The worker's log: JSON lines, and every line about these runs' tasks carries its run id.
    lines = [json.loads(line) for line in _json_lines(celery_worker_process.log_path)]
    for run_id in run_ids:
        # A run simulated in a batch is named by the batch's line (`run_ids`), its first by `run_id`.
        tasks = {e["task_id"] for e in lines if e.get("run_id") == run_id or run_id in e.get("run_ids", ())}
        assert len(tasks) == 1, (run_id, tasks)
        about = [e for e in lines if e.get("task_id") in tasks or run_id in e["message"]]
        assert any(e["message"].endswith("received") for e in about), run_id
        assert any(" succeeded in " in e["message"] for e in about), run_id
        for entry in about:  # every line of the task, in the main process and the pool's
            # ... carries its task's run id: this run's, or its batch's first run's.
            assert entry["run_id"] in run_ids and entry["task_id"] in tasks, entry
            assert {"time", "level", "logger", "message"} <= set(entry)


def test_metrics_show_each_users_queue_by_id_never_by_name_and_runs_without_an_owner_as_none(
    obs_client: TestClient, test_settings: Settings, clean_db: Engine
) -> None:
    """Queue depth per user: every user is there (zeros included), by id — /metrics is open,
    and it names nobody; the runs from before users under `none`."""
    alice, bob = make_user(obs_client, "alice"), make_user(obs_client, "bob")
    make_user(obs_client, "carol")  # nothing submitted
    with user_client(obs_client.app, alice) as as_alice, user_client(obs_client.app, bob) as as_bob:
        for seed in (21, 22, 23, 24):
            submit(as_alice, seed)
        submit(as_bob, 25)
    legacy = submit(obs_client, 26)
    with clean_db.begin() as conn:  # a run from before users, as migration 0003 leaves them
        conn.execute(text("UPDATE runs SET owner_id = NULL WHERE id = :id"), {"id": legacy})
        owners = dict(
            conn.execute(
                text(
                    "SELECT coalesce(u.name, 'none'), count(*) FROM runs r "
                    "LEFT JOIN users u ON u.id = r.owner_id GROUP BY 1"
                )
            ).all()
        )
    assert owners == {"alice": 4, "bob": 1, "none": 1}, "the submissions must carry their owner"
    samples = dispatched_scrape(obs_client, 1, test_settings.queue)
    assert not any(name in obs_client.get("/metrics").text for name in ("alice", "bob", "carol"))
    ids = {u["name"]: u["id"] for u in obs_client.get("/v1/users").json()} | {"none": "none"}
    depth = "tcplab_user_queue_depth"
    queued = {
        user: sum(value(samples, depth, user_id=ids[user], state=s) or 0 for s in ("waiting", "dispatched"))
        for user in ("alice", "bob", "carol", "none", "admin")
    }
    assert queued == {"alice": 4, "bob": 1, "carol": 0, "none": 1, "admin": 0}
    dispatched = sum(value(samples, depth, user_id=ids[user], state="dispatched") or 0 for user in queued)
    assert dispatched == value(samples, "tcplab_queued_runs", state="dispatched") == 1
    assert value(samples, "tcplab_queued_runs", state="waiting") == 5
    assert value(samples, "tcplab_user_running_runs", user_id=ids["carol"]) == 0


def _json_lines(path: Path) -> list[str]:
    return [line for line in path.read_text().splitlines() if line.startswith("{")]


def test_the_latency_histogram_counts_requests_by_route_template(obs_client: TestClient) -> None:
    missing = [str(uuid.uuid4()) for _ in range(3)]
    for run_id in missing:
        assert obs_client.get(f"/v1/runs/{run_id}").status_code == 404
    for _ in range(5):
        assert obs_client.get("/healthz").status_code == 200
    obs_client.get("/no/such/page")
    samples = scrape(obs_client)
    count = "tcplab_http_request_duration_seconds_count"
    assert value(samples, count, method="GET", route="/v1/runs/{run_id}", status="4xx") == 3
    assert value(samples, count, method="GET", route="/healthz", status="2xx") == 5
    assert value(samples, count, method="GET", route="<unmatched>", status="4xx") == 1
    bucket = "tcplab_http_request_duration_seconds_bucket"
    assert value(samples, bucket, method="GET", route="/healthz", status="2xx", le="+Inf") == 5
    labels = {dict(k[1]).get("route") for k in samples if k[0].startswith("tcplab_http")}
    assert not any(run_id in str(labels) for run_id in missing)  # no raw paths


def test_the_figures_are_cached_for_a_few_seconds(obs_client: TestClient) -> None:
    obs_client.app.state.metrics_collector.cache_s = 60
    before = value(scrape(obs_client), "tcplab_runs", status="queued")
    submit(obs_client, 99)
    assert value(scrape(obs_client), "tcplab_runs", status="queued") == before
    obs_client.app.state.metrics_collector.cache_s = 0
    assert value(scrape(obs_client), "tcplab_runs", status="queued") == before + 1


def test_broker_down_readyz_names_it_and_metrics_still_answer(test_settings: Settings, clean_db: Engine) -> None:
    closed = f"redis://127.0.0.1:{free_port()}/0"  # nothing listens there
    app = create_app(test_settings.model_copy(update={"redis_url": closed}))
    with TestClient(app) as client:
        ready = client.get("/readyz")
        assert ready.status_code == 503
        checks = ready.json()["checks"]
        assert checks["database"] == "ok" and "ConnectionError" in checks["broker"]
        samples = scrape(client)
    assert value(samples, "tcplab_dependency_up", dependency="broker") == 0
    assert value(samples, "tcplab_dependency_up", dependency="database") == 1
    assert value(samples, "tcplab_runs", status="queued") == 0  # what it has, it reports
    assert not any(name == "tcplab_queue_depth" for name, _ in samples)


def test_database_down_readyz_names_it_and_metrics_still_answer(test_settings: Settings, tmp_path: Path) -> None:
    settings = test_settings.model_copy(update={"database_url": f"postgresql://postgres@/tcplab?host={tmp_path}"})
    app = create_app(settings)
    with TestClient(app) as client:
        ready = client.get("/readyz")
        assert ready.status_code == 503 and "OperationalError" in ready.json()["checks"]["database"]
        samples = scrape(client)
    assert value(samples, "tcplab_dependency_up", dependency="database") == 0
    assert value(samples, "tcplab_dependency_up", dependency="broker") == 1
    assert not any(name == "tcplab_runs" for name, _ in samples)
    assert value(samples, "tcplab_queue_depth", queue=test_settings.queue) is not None


# -------------------------------------------------------------------------------- logs


def test_request_ids_are_echoed_and_logged(obs_client: TestClient, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="tcplab.access")
    given = obs_client.get("/v1/presets", headers={"X-Request-ID": "lab-42"})
    assert given.headers["x-request-id"] == "lab-42"
    made = obs_client.get("/v1/presets")
    assert len(made.headers["x-request-id"]) == 32
    forged = obs_client.get("/v1/presets", headers={"X-Request-ID": 'a"} injected'})
    assert forged.headers["x-request-id"] != 'a"} injected'

    access = [r for r in caplog.records if r.name == "tcplab.access"]
    entries = [json.loads(JsonFormatter().format(r)) for r in access]
    by_id = {e["request_id"]: e for e in entries}
    assert set(by_id) == {"lab-42", made.headers["x-request-id"], forged.headers["x-request-id"]}
    entry = by_id["lab-42"]
    assert (entry["method"], entry["route"], entry["status"]) == ("GET", "/v1/presets", 200)
    assert entry["path"] == "/v1/presets" and entry["duration_ms"] > 0
    assert (entry["level"], entry["logger"]) == ("INFO", "tcplab.access")
    assert entry["time"].endswith("+00:00")


def test_errors_and_endpoint_code_are_seen_with_the_request_id(
    test_settings: Settings, clean_db: Engine, caplog: pytest.LogCaptureFixture
) -> None:
    """An exception escaping an endpoint is logged and counted as a 5xx; code inside a sync
    endpoint (run in a thread) sees the request's id, so its log lines carry it."""
    from fastapi import APIRouter

    from infra.logging import request_id_var

    app = create_app(test_settings)
    probe = APIRouter(prefix="/probe")

    @probe.get("/boom/{n}")
    def boom(n: int) -> None:
        raise RuntimeError(f"boom {n}")

    @probe.get("/whoami")
    def whoami() -> dict[str, str | None]:
        return {"request_id": request_id_var.get()}

    app.include_router(probe)
    caplog.set_level(logging.INFO, logger="tcplab.access")
    with TestClient(app, raise_server_exceptions=False) as client:
        assert client.get("/probe/boom/1").status_code == 500
        answer = client.get("/probe/whoami", headers={"X-Request-ID": "who-1"})
        assert answer.json() == {"request_id": "who-1"}
        samples = scrape(client)
    count = "tcplab_http_request_duration_seconds_count"
    assert value(samples, count, method="GET", route="/probe/boom/{n}", status="5xx") == 1
    (failed,) = [r for r in caplog.records if r.name == "tcplab.access" and r.status == 500]
    assert failed.route == "/probe/boom/{n}" and failed.path == "/probe/boom/1"
    assert request_id_var.get() is None  # nothing leaks out of a request


def test_a_token_never_reaches_a_log_line(obs_client: TestClient, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    bearer = {"Authorization": f"Bearer {SECRET}"}
    obs_client.get(f"/v1/runs?token={SECRET}&limit=2", headers=bearer)
    obs_client.post("/v1/runs", json={"token": SECRET}, headers=bearer)
    log = logging.getLogger("tcplab.test")
    log.info("a client sent %s", {**bearer, "token": SECRET})
    log.info("url postgresql://u:%s@host/db", SECRET, extra={"token": SECRET})
    assert caplog.records
    for formatter in (JsonFormatter(), TextFormatter()):
        for record in caplog.records:
            assert SECRET not in formatter.format(record), record.__dict__
    access = [r for r in caplog.records if r.name == "tcplab.access"]
    assert any("token=[redacted]" in JsonFormatter().format(r) for r in access)


@pytest.mark.parametrize(
    "line",
    [
        f"GET /v1/runs?token={SECRET} HTTP/1.1",
        f"Authorization: Bearer {SECRET}",
        f"{{'authorization': 'Bearer {SECRET}'}}",
        f'{{"token": "{SECRET}", "run": 1}}',
        f"redis://:{SECRET}@redis:6379/0",
        f"api_key={SECRET}",
    ],
)
def test_redact(line: str) -> None:
    assert SECRET not in redact(line) and "[redacted]" in redact(line)
    assert redact(redact(line)) == redact(line)  # fields redacted twice stay readable


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("abert:=/@ ?&'\"{}tokenBEARpsswrd_-.0")), max_size=40))
def test_redact_skips_only_strings_no_pattern_could_change(text: str) -> None:
    """The quick test in front of the patterns (no ':', '=' or 'bearer': nothing to do)
    changes no result: the patterns applied to every string give the same."""
    every_pattern = text
    for pattern, replacement in _PATTERNS:
        every_pattern = pattern.sub(replacement, every_pattern)
    assert redact(text) == every_pattern


def test_the_launched_service_logs_json_lines_with_request_ids_and_no_tokens(
    launched_service: Any,
) -> None:
    base = launched_service.base_url
    request_id = f"obs-{uuid.uuid4().hex[:8]}"
    response = httpx.get(
        f"{base}/v1/runs",
        params={"token": SECRET, "limit": 1},
        headers={**launched_service.headers, "X-Request-ID": request_id},
    )
    assert response.status_code == 200 and response.headers["x-request-id"] == request_id
    samples = scrape(httpx.Client(base_url=base))
    assert value(samples, "tcplab_dependency_up", dependency="database") == 1
    assert value(samples, "tcplab_dependency_up", dependency="broker") == 1

    def logged() -> dict | None:
        for line in launched_service.log().splitlines():
            if request_id in line:
                return json.loads(line)
        return None

    entry = wait_for(logged, timeout_s=10)
    assert (entry["route"], entry["status"], entry["request_id"]) == ("/v1/runs", 200, request_id)
    assert entry["query"] == "token=[redacted]&limit=1"
    assert entry["user"] == "admin"  # who asked is logged, never with what
    assert SECRET not in launched_service.log()
    assert launched_service.token not in launched_service.log()
