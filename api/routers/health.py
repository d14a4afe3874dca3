"""Liveness and readiness, for load balancers, compose healthchecks and the launcher."""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from sqlalchemy import text

from infra import broker
from services.scenarios import CORE_VERSION

router = APIRouter(tags=["health"])


class Health(BaseModel):
    status: Literal["ok"] = "ok"
    version: str
    core_version: str


class Readiness(BaseModel):
    status: Literal["ready", "unavailable"]
    checks: dict[str, str]


@router.get("/healthz", response_model=Health, summary="The process is alive")
def healthz(request: Request) -> Health:
    return Health(version=request.app.version, core_version=CORE_VERSION)


@router.get(
    "/readyz",
    response_model=Readiness,
    summary="The database and the broker answer",
    responses={503: {"model": Readiness, "description": "a dependency does not answer"}},
)
def readyz(request: Request) -> JSONResponse:
    checks = {"database": _check_database(request), "broker": _check_broker(request)}
    ready = all(v == "ok" for v in checks.values())
    body = Readiness(status="ready" if ready else "unavailable", checks=checks)
    return JSONResponse(body.model_dump(), status_code=200 if ready else 503)


def _check_database(request: Request) -> str:
    engine = request.app.state.engine
    if engine is None:
        return "not configured"
    try:
        with engine.connect() as conn:
            conn.execute(text("SELECT 1"))
    except Exception as exc:  # noqa: BLE001 - report any failure, do not raise
        return _describe(exc)
    return "ok"


def _check_broker(request: Request) -> str:
    try:
        broker.ping(request.app.state.redis_url, timeout_s=2.0)
    except Exception as exc:  # noqa: BLE001
        return _describe(exc)
    return "ok"


def _describe(exc: BaseException) -> str:
    message = " ".join(str(exc).split())[:200]
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__
