"""The FastAPI application: ``create_app()``; ``uvicorn --factory api.main:create_app``."""

from __future__ import annotations

import gc
import logging
import math
import tomllib
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

from fastapi import Depends, FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from sqlalchemy.exc import DataError, DBAPIError, IntegrityError, InterfaceError, OperationalError

from api import dashboard, docs_page, observability
from api.auth import IdentityCache, current_user
from api.limits import MAX_ERRORS, MAX_MESSAGE_CHARS, BodyLimit, bounded_errors, echo
from api.routers import (
    comparisons,
    health,
    models,
    presets,
    reproductions,
    runs,
    schedules,
    sign_in,
    sweeps,
    traces,
    users,
)
from infra.embedded import effective_database_url, effective_redis_url
from services.db.session import create_db_engine, create_session_factory
from services.errors import (
    ConflictError,
    InvalidInputError,
    NotAuthenticatedError,
    NotFoundError,
    PermissionDeniedError,
    QuotaExceededError,
    json_path_parts,
)
from services.scenarios import CoreScenarioError, ScenarioInvalid
from services.scenarios.errors import json_path
from services.schedules import install_builtin_schedules
from services.settings import REPO_ROOT, Settings, get_settings

log = logging.getLogger("tcplab.api")

# Python's are (700, 10, 10): a full pass every 100 young ones, once the old grew by a quarter.
GC_THRESHOLDS = (50_000, 20, 100)

VERSION = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]["version"]

# One router per resource, each an APIRouter carrying its own prefix and tag. Every /v1
# router answers only with a valid token; the probes and the dashboard pages (which send
# a browser without one to /login) are open.
V1_ROUTERS = (
    models.router,
    presets.router,
    runs.router,
    sweeps.router,
    schedules.router,
    comparisons.router,
    reproductions.router,
    users.router,
    traces.router,
    sign_in.router,
    models.regions_router,
)
OPEN_ROUTERS = (health.router, dashboard.pages.router, docs_page.router, sign_in.open_router)


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or get_settings()
    database_url = effective_database_url(settings)
    engine = create_db_engine(database_url) if database_url else None

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        install_builtin_schedules(app.state.session_factory)  # the core benchmark, disabled
        app.state.identities.clear()  # an app served again may face another database's users
        with _long_lived_heap():
            yield
        if engine is not None:
            engine.dispose()

    app = FastAPI(
        title="tcplab",
        version=VERSION,
        summary="A lab service for TCP congestion-control research: closed-form models and packet-level simulations.",
        docs_url=None,  # api/docs_page.py: Swagger UI from the package, not a CDN
        redoc_url=None,
        openapi_url="/openapi.json",
        lifespan=lifespan,
    )
    app.state.settings = settings
    app.state.engine = engine
    app.state.session_factory = create_session_factory(engine) if engine else None
    app.state.redis_url = effective_redis_url(settings)
    app.state.identities = IdentityCache(settings.auth_cache_s)

    for router in V1_ROUTERS:
        app.include_router(router, dependencies=[Depends(current_user)])
    for router in OPEN_ROUTERS:
        app.include_router(router)
    _add_exception_handlers(app)
    observability.install(app, settings)  # /metrics, request ids, access log, JSON logs
    app.add_middleware(BodyLimit, max_bytes=settings.max_body_bytes)
    return app


@contextmanager
def _long_lived_heap() -> Iterator[None]:
    """While the app serves: the objects made at start-up (modules, schemas, routes) kept out
    of the garbage collector's full passes, and those passes rarer. A request of megabytes
    makes a million objects; each full pass over them and the start-up heap holds the GIL, and
    so the event loop, for up to 300 ms (issue 11, finding 6). Parsed JSON and models hold no
    reference cycles, so collecting less often costs little memory."""
    thresholds = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
        gc.unfreeze()


def _add_exception_handlers(app: FastAPI) -> None:
    @app.exception_handler(ScenarioInvalid)
    async def scenario_invalid(request: Request, exc: ScenarioInvalid) -> JSONResponse:
        # Every problem the schema or the core found (the first MAX_ERRORS), each with its JSON path.
        errors, omitted = exc.errors[:MAX_ERRORS], max(0, len(exc.errors) - MAX_ERRORS)
        detail = [
            {
                "loc": json_path_parts(e.path),
                "msg": echo(e.reason, chars=MAX_MESSAGE_CHARS),
                "type": f"{e.source}.{e.kind}",
                "path": e.path,
            }
            for e in errors
        ]
        return _invalid(detail, omitted)

    @app.exception_handler(RequestValidationError)
    async def request_invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        # FastAPI's own 422, plus the JSON path inside the body (`$.scenario.flows[0].rtt_ms`);
        # bounded: a huge input is never echoed whole.
        errors, omitted = bounded_errors(list(exc.errors()))
        detail = [
            {**e, "path": json_path(e["loc"][1:])} if tuple(e.get("loc", ()))[:1] == ("body",) else e
            for e in _finite(jsonable_encoder(errors))
        ]
        return _invalid(detail, omitted)

    @app.exception_handler(NotFoundError)
    async def not_found(request: Request, exc: NotFoundError) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=404)

    @app.exception_handler(NotAuthenticatedError)
    async def not_authenticated(request: Request, exc: NotAuthenticatedError) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=401, headers={"WWW-Authenticate": "Bearer"})

    @app.exception_handler(PermissionDeniedError)
    async def permission_denied(request: Request, exc: PermissionDeniedError) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=403)

    @app.exception_handler(ConflictError)
    async def conflict(request: Request, exc: ConflictError) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=409)

    @app.exception_handler(QuotaExceededError)
    async def quota_exceeded(request: Request, exc: QuotaExceededError) -> JSONResponse:
        return JSONResponse({"detail": exc.reason}, status_code=429, headers={"Retry-After": str(exc.retry_after_s)})

    @app.exception_handler(InvalidInputError)
    async def invalid_input(request: Request, exc: InvalidInputError) -> JSONResponse:
        return _unprocessable(exc.path, exc.reason, exc.kind)

    @app.exception_handler(DataError)
    async def data_refused(request: Request, exc: DataError) -> JSONResponse:
        # PostgreSQL refused a value the request carried (a NUL character in a text field or
        # a query parameter): the client's input, not a server fault.
        reason = str(exc.orig).splitlines()[0] if exc.orig is not None else "a value was refused"
        return _unprocessable("$", f"the database refused a value of this request: {reason}", "invalid_value")

    @app.exception_handler(IntegrityError)
    async def raced(request: Request, exc: IntegrityError) -> JSONResponse:
        # A key the request's checks had seen hold was broken by the time it wrote: a
        # concurrent change (a run answered from a stored result as that result's last run is
        # deleted; two requests creating one name). Nothing of the request is committed; the
        # same request again sees the new state. Any other violation (a NOT NULL, a CHECK) is
        # our bug: a 500, as before.
        if getattr(exc.orig, "sqlstate", None) not in RACE_SQLSTATES:
            raise exc
        constraint = getattr(getattr(exc.orig, "diag", None), "constraint_name", None)
        return JSONResponse(
            {
                "detail": "the request conflicted with a concurrent change"
                + (f" (constraint {constraint})" if constraint else "")
                + "; nothing was changed, try again"
            },
            status_code=409,
        )

    @app.exception_handler(OperationalError)
    @app.exception_handler(InterfaceError)
    async def database_unavailable(request: Request, exc: DBAPIError) -> JSONResponse:
        # PostgreSQL does not answer (restarting, unreachable): the request may succeed in a
        # moment, and nothing it wrote is committed. 503 with a hint, as /readyz says.
        reason = " ".join(str(exc.orig).split())[:200] if exc.orig is not None else type(exc).__name__
        return JSONResponse(
            {"detail": f"the database is unavailable, try again shortly ({reason})"},
            status_code=503,
            headers={"Retry-After": "5"},
        )

    @app.exception_handler(CoreScenarioError)
    async def invalid_scenario(request: Request, exc: CoreScenarioError) -> JSONResponse:
        # The core's verdict on a scenario that passed the schema: same shape as above.
        # An error about no one field has no path: it is the whole scenario's ("$").
        return _unprocessable(exc.path or "$", str(exc), f"scenario.{exc.kind}")


RACE_SQLSTATES = frozenset({"23503", "23505"})
"""PostgreSQL's foreign_key_violation and unique_violation: what a concurrent change causes."""


def _finite(value: Any) -> Any:
    """Python's JSON reader accepts NaN and Infinity, JSON does not: echoing such an input in
    a 422 must not turn it into a 500."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def _invalid(detail: list[Any], omitted: int) -> JSONResponse:
    """422 with `detail`, and how many more errors there were beyond it (`omitted_errors`)."""
    body: dict[str, Any] = {"detail": detail}
    if omitted:
        body["omitted_errors"] = omitted
    return JSONResponse(body, status_code=422)


def _unprocessable(path: str, reason: str, kind: str) -> JSONResponse:
    """422 in FastAPI's own shape (``detail[].loc/msg/type``), plus the JSON ``path``."""
    detail = {"loc": json_path_parts(path), "msg": echo(reason, chars=MAX_MESSAGE_CHARS), "type": kind, "path": path}
    return JSONResponse({"detail": [detail]}, status_code=422)
