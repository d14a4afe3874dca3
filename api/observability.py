"""Observability of the API: ``install(app)`` adds ``/metrics`` (api/metrics.py), request ids,
the access log and the request-latency histogram (one ASGI middleware), and gives the
process's console log tcplab's format (infra/logging.py).

Every request gets an id: the client's ``X-Request-ID`` when it is a sane token (letters,
digits, ``._:-``, at most 128 characters), else a new one. It is echoed in the response's
``X-Request-ID`` header and carried by every log line written while the request is handled.

The access log (logger ``tcplab.access``) writes one line per request with method, route
template, path, status, duration_ms and the client's address — never a header, and the query
string only with secret parameters redacted. Probes (``/healthz``, ``/readyz``, ``/metrics``)
that succeed are logged at DEBUG, so a load balancer's polling does not flood the log.

The latency histogram's labels are bounded whatever clients send: a method HTTP does not
define is ``other``, a path no route matches is ``<unmatched>``.
"""

from __future__ import annotations

import logging
import re
import time
import uuid
from typing import Any

from fastapi import FastAPI
from starlette.datastructures import MutableHeaders
from starlette.routing import Mount
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from api import metrics
from infra.logging import configure_logging, redact, request_id_var
from services.scenarios import CORE_VERSION
from services.settings import Settings

access_log = logging.getLogger("tcplab.access")

REQUEST_ID_HEADER = "X-Request-ID"
_SANE_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")
PROBES = frozenset({"/healthz", "/readyz", "/metrics"})
UNMATCHED_ROUTE = "<unmatched>"
# The methods a metric names; any other (HTTP lets a client make up its own) counts as "other",
# so a client cannot grow the label set: one series per method it invents.
KNOWN_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
OTHER_METHOD = "other"


def install(app: FastAPI, settings: Settings) -> None:
    """Metrics endpoint, middleware and log format for ``app``."""
    configure_logging(settings.log_level)
    collector = metrics.ServiceCollector(
        engine=lambda: app.state.engine,
        redis_url=lambda: app.state.redis_url,
        queues=lambda: [settings.queue],
        dispatch_window=lambda: settings.effective_dispatch_window,
    )
    registry, http = metrics.build_registry(collector, info={"version": app.version, "core_version": CORE_VERSION})
    app.state.metrics_collector = collector
    app.state.metrics_registry = registry
    app.include_router(metrics.router)
    app.add_middleware(RequestObservability, http=http)


class RequestObservability:
    """Pure ASGI middleware (no BaseHTTPMiddleware: streaming responses and context variables
    pass through untouched): request id, access log, latency histogram."""

    def __init__(self, app: ASGIApp, http: metrics.HttpMetrics) -> None:
        self.app = app
        self.http = http

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = _request_id(scope)
        token = request_id_var.set(request_id)
        start = time.perf_counter()
        status = 500  # unless the app answers: an exception escapes to the server as a 500

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                MutableHeaders(scope=message)[REQUEST_ID_HEADER] = request_id
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        finally:
            seconds = time.perf_counter() - start
            route = route_template(scope)
            method = scope.get("method", "")
            self.http.observe(method_label(method), route or UNMATCHED_ROUTE, status, seconds)
            _log_access(scope, request_id, method, route, status, seconds)
            request_id_var.reset(token)


def _request_id(scope: Scope) -> str:
    for name, value in scope.get("headers", ()):
        if name == b"x-request-id":
            candidate = value.decode("latin-1").strip()
            if _SANE_REQUEST_ID.match(candidate):
                return candidate
            break
    return uuid.uuid4().hex


def method_label(method: str) -> str:
    return method if method in KNOWN_METHODS else OTHER_METHOD


def route_template(scope: Scope) -> str | None:
    """The matched route's path template (``/v1/runs/{run_id}``), None when nothing matched."""
    route = scope.get("route")
    path = getattr(route, "path", None)
    if path is None:
        return None
    if isinstance(route, Mount):
        return f"{path}/{{path:path}}"
    return path


def _log_access(scope: Scope, request_id: str, method: str, route: str | None, status: int, seconds: float) -> None:
    path = scope.get("path", "")
    level = logging.DEBUG if path in PROBES and status < 400 else logging.INFO
    if not access_log.isEnabledFor(level):
        return
    query = scope.get("query_string", b"").decode("latin-1")
    client = scope.get("client")
    fields: dict[str, Any] = {
        "request_id": request_id,
        "method": method,
        "route": route,
        "path": path,
        "status": status,
        "duration_ms": round(seconds * 1000, 3),
    }
    if query:
        fields["query"] = redact(query)
    if client:
        fields["client"] = client[0]
    user = scope.get("state", {}).get("user")
    if user:
        fields["user"] = user
    access_log.log(level, "%s %s %d %.1f ms", method, path, status, seconds * 1000, extra=fields)
