"""Typed errors: every failed request raises a subclass of `TcplabError` carrying the server's
own message — never a bare httpx exception.

| status | error |
|---|---|
| 404 | `NotFound` |
| 409 | `Conflict` |
| 422 | `InvalidInput` (`.errors`: each problem's `path` and `msg`) |
| 401, 403 | `Unauthorized` |
| other 4xx | `TcplabError` |
| 503, connection refused, network failure | `Unavailable` |
| other 5xx | `ServerError` |
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import httpx


class TcplabError(Exception):
    """A request tcplab refused or could not answer. `status` is the HTTP status (None when
    no answer came), `message` the server's message, `body` its decoded body."""

    def __init__(self, message: str, *, status: int | None = None, body: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.body = body


class NotFound(TcplabError):
    """404: no such run, sweep, preset or model."""


class Conflict(TcplabError):
    """409: the request is valid but the resource's state forbids it (the result of a run
    that has not succeeded, cancelling a finished run, …)."""


class Unauthorized(TcplabError):
    """401 or 403: the token is missing, wrong or not allowed to do this."""


class ServerError(TcplabError):
    """A 5xx other than 503: a fault of the server."""


class Unavailable(TcplabError):
    """The server cannot be reached (connection refused, DNS, network) or answers 503."""


class WaitTimeout(TcplabError, TimeoutError):
    """`wait_run` / `wait_sweep` gave up before the run or sweep finished."""


@dataclass(frozen=True)
class FieldError:
    """One problem of a 422: where (`path`: a JSON path such as `$.scenario.flows[0].rtt_ms`,
    or `query.metric` for a query parameter) and why (`msg`)."""

    path: str
    msg: str
    type: str | None = None
    loc: tuple[Any, ...] = ()

    def __str__(self) -> str:
        return f"{self.path}: {self.msg}"


class InvalidInput(TcplabError):
    """422: the request was refused as invalid. `errors` lists each problem (`path`, `msg`);
    `detail` is the server's list as it came; `str()` gives one "path: msg" line each."""

    def __init__(self, errors: list[FieldError], *, status: int | None = 422, body: Any = None) -> None:
        self.errors = errors
        self.detail: list[Any] = body.get("detail", []) if isinstance(body, dict) else []
        if isinstance(self.detail, str):
            self.detail = [{"loc": [], "msg": self.detail, "path": "$"}]
        lines = [str(e) for e in errors] or ["the request was refused as invalid"]
        super().__init__("\n".join(lines), status=status, body=body)


def _path_of(item: dict[str, Any]) -> str:
    """The server gives a JSON `path` for body errors; query errors have only `loc`."""
    if isinstance(item.get("path"), str):
        return item["path"]
    loc = [str(x) for x in item.get("loc") or []]
    return ".".join(loc) if loc else "$"


def field_errors(body: Any) -> list[FieldError]:
    detail = body.get("detail") if isinstance(body, dict) else body
    if isinstance(detail, str):
        return [FieldError(path="$", msg=detail)]
    if not isinstance(detail, list):
        return []
    out = []
    for item in detail:
        if isinstance(item, dict):
            out.append(
                FieldError(
                    path=_path_of(item),
                    msg=str(item.get("msg", item)),
                    type=item.get("type"),
                    loc=tuple(item.get("loc") or ()),
                )
            )
        else:
            out.append(FieldError(path="$", msg=str(item)))
    return out


def _decode(response: httpx.Response) -> Any:
    try:
        return response.json()
    except (json.JSONDecodeError, UnicodeDecodeError, ValueError):
        return response.text


def _message(body: Any, response: httpx.Response) -> str:
    if isinstance(body, dict):
        detail = body.get("detail")
        if isinstance(detail, str):
            return detail
        if detail is not None:
            return json.dumps(detail)
        if "checks" in body:  # /readyz's 503
            return "; ".join(f"{k}: {v}" for k, v in body["checks"].items() if v != "ok") or str(body)
        return json.dumps(body)
    text = str(body).strip()
    return text[:500] if text else f"{response.status_code} {response.reason_phrase}"


def error_for(response: httpx.Response) -> TcplabError:
    """The typed error for a response whose status is 4xx or 5xx."""
    status = response.status_code
    body = _decode(response)
    where = f"{response.request.method} {response.request.url.path}"
    if status == 422:
        return InvalidInput(field_errors(body), status=status, body=body)
    message = _message(body, response)
    if status == 404:
        return NotFound(message, status=status, body=body)
    if status == 409:
        return Conflict(message, status=status, body=body)
    if status in (401, 403):
        return Unauthorized(message, status=status, body=body)
    if status == 503:
        return Unavailable(f"the server is unavailable ({where}): {message}", status=status, body=body)
    if status >= 500:
        return ServerError(f"server error {status} on {where}: {message}", status=status, body=body)
    return TcplabError(f"{status} {response.reason_phrase} on {where}: {message}", status=status, body=body)
