"""/healthz, /readyz and the app's wiring."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi import APIRouter, FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import select

import tcpsim
from api.deps import SessionDep
from api.main import VERSION, create_app
from infra.embedded import EmbeddedRedis
from services.db import Run
from services.errors import ConflictError, InvalidInputError, NotFoundError
from services.settings import Settings


def test_healthz(client: TestClient) -> None:
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {
        "status": "ok",
        "version": VERSION,
        "core_version": tcpsim.__version__,
    }


def test_readyz_when_everything_answers(client: TestClient) -> None:
    response = client.get("/readyz")
    assert response.status_code == 200, response.text
    assert response.json() == {"status": "ready", "checks": {"database": "ok", "broker": "ok"}}


def test_openapi_and_docs(client: TestClient) -> None:
    schema = client.get("/openapi.json").json()
    assert schema["info"]["title"] == "tcplab" and schema["info"]["version"] == VERSION
    assert {"/healthz", "/readyz"} <= set(schema["paths"])
    assert client.get("/docs").status_code == 200


def test_readyz_is_503_naming_redis_when_redis_stops(test_settings: Settings, tmp_path: Path) -> None:
    redis = EmbeddedRedis(tmp_path / "redis", persist=False)
    settings = test_settings.model_copy(update={"redis_url": redis.start()})
    try:
        with TestClient(create_app(settings)) as client:
            assert client.get("/readyz").status_code == 200
            redis.stop()
            response = client.get("/readyz")
            assert response.status_code == 503
            body = response.json()
            assert body["status"] == "unavailable"
            assert body["checks"]["database"] == "ok"
            assert body["checks"]["broker"] != "ok" and "Error" in body["checks"]["broker"]
            assert client.get("/healthz").status_code == 200  # alive all the same
    finally:
        redis.stop()


def test_readyz_is_503_naming_the_database_when_it_is_unreachable(test_settings: Settings, tmp_path: Path) -> None:
    settings = test_settings.model_copy(update={"database_url": f"postgresql://postgres@/tcplab?host={tmp_path}"})
    with TestClient(create_app(settings)) as client:
        response = client.get("/readyz")
    assert response.status_code == 503
    checks = response.json()["checks"]
    assert checks["broker"] == "ok" and "OperationalError" in checks["database"]


# ------------------------------------------------------- the session and error handlers


@pytest.fixture
def probe_client(test_settings: Settings, clean_db: Any) -> Iterator[TestClient]:
    """The app plus a few probe endpoints that exercise SessionDep and the handlers."""
    app: FastAPI = create_app(test_settings)
    router = APIRouter(prefix="/probe")
    seed = 7

    def new_run() -> Run:
        return Run(scenario={}, seed=seed, cache_key="a" * 64, core_version="x")

    @router.post("/commit")
    def commit(session: SessionDep) -> dict[str, str]:
        run = new_run()
        session.add(run)
        session.flush()
        return {"id": str(run.id)}

    @router.post("/fail-after-writing")
    def fail(session: SessionDep) -> None:
        session.add(new_run())
        session.flush()
        raise NotFoundError("run", "x")

    @router.post("/commit-fails")
    def commit_fails(session: SessionDep) -> dict[str, str]:
        session.add(Run(scenario={}, seed=seed, cache_key="bad", core_version="x"))
        return {"status": "written?"}

    @router.get("/count")
    def count(session: SessionDep) -> int:
        return len(session.scalars(select(Run)).all())

    @router.get("/invalid")
    def invalid() -> None:
        raise InvalidInputError("must be positive", path="$.flows[2].rtt_ms", kind="range")

    @router.get("/conflict")
    def conflict() -> None:
        raise ConflictError("the run has finished")

    @router.get("/scenario")
    def scenario() -> None:
        tcpsim.validate({"duration_s": 1, "topology": {"dumbbell": {}}, "flows": []})

    app.include_router(router)
    with TestClient(app, raise_server_exceptions=False) as client:
        yield client


def test_the_request_boundary_commits(probe_client: TestClient) -> None:
    assert probe_client.post("/probe/commit").status_code == 200
    assert probe_client.get("/probe/count").json() == 1


def test_an_error_rolls_the_request_back(probe_client: TestClient) -> None:
    response = probe_client.post("/probe/fail-after-writing")
    assert response.status_code == 404 and response.json() == {"detail": "run x not found"}
    assert probe_client.get("/probe/count").json() == 0


def test_a_failed_commit_is_a_500_not_a_success(probe_client: TestClient) -> None:
    assert probe_client.post("/probe/commit-fails").status_code == 500
    assert probe_client.get("/probe/count").json() == 0


def test_invalid_input_is_a_422_with_the_json_path(probe_client: TestClient) -> None:
    response = probe_client.get("/probe/invalid")
    assert response.status_code == 422
    assert response.json() == {
        "detail": [
            {
                "loc": ["flows", 2, "rtt_ms"],
                "msg": "must be positive",
                "type": "range",
                "path": "$.flows[2].rtt_ms",
            }
        ]
    }


def test_conflict_is_a_409(probe_client: TestClient) -> None:
    assert probe_client.get("/probe/conflict").status_code == 409


def test_the_cores_scenario_errors_are_422s(probe_client: TestClient) -> None:
    response = probe_client.get("/probe/scenario")
    assert response.status_code == 422
    (detail,) = response.json()["detail"]
    assert detail["path"].startswith("$") and detail["type"].startswith("scenario.")
