"""Structured logs for every tcplab process: one JSON object per line, or text for a terminal.

``TCPLAB_LOG_FORMAT`` chooses: ``json``, ``text``, or ``auto`` (the default: text when the
log goes to a terminal, as ``make run`` by hand does; JSON when it goes to a file, a pipe or a
container's log, as on the lab server and in the tests).

A JSON line carries ``time`` (UTC, ISO 8601), ``level``, ``logger``, ``message``, the ids of
what the line is about — ``request_id`` inside an API request, ``task_id`` and ``run_id``
inside a worker's task (context variables set by api/observability.py and worker/logging.py)
— and the record's ``extra`` fields (the access log's method, route, status, duration_ms).

Secrets never reach a log line: every message, field and traceback goes through
:func:`redact`, which blanks bearer credentials, ``Authorization`` values, ``token`` (and
password, secret, api key) fields and query parameters, and passwords in URLs. The access
log never records headers in the first place.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import os
import re
import uuid
from contextvars import ContextVar
from typing import Any

REDACTED = "[redacted]"

request_id_var: ContextVar[str | None] = ContextVar("tcplab_request_id", default=None)
task_id_var: ContextVar[str | None] = ContextVar("tcplab_task_id", default=None)
run_id_var: ContextVar[str | None] = ContextVar("tcplab_run_id", default=None)

_CONTEXT_VARS = (("request_id", request_id_var), ("task_id", task_id_var), ("run_id", run_id_var))

# Names whose values are secrets, wherever they appear: a field, a query parameter, a header.
_SECRET_NAME = r"[\w-]*(?:token|secret|password|passwd|api[_-]?key|authorization|cookie)[\w-]*"
_SECRET_KEY = re.compile(rf"^{_SECRET_NAME}$", re.IGNORECASE)
_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    # "token": "abc", 'password'='abc', token: abc (JSON, reprs of dicts, "key: value" text).
    (
        re.compile(rf"""(["']?\b{_SECRET_NAME}["']?\s*[:=]\s*)(["'])(?:\\.|(?!\2).)*\2""", re.IGNORECASE),
        rf"\1\2{REDACTED}\2",
    ),
    # Authorization: Bearer abc / authorization=Basic abc (a scheme and a credential).
    (
        re.compile(
            r"\b(authorization\s*[:=]\s*)(?>((?:bearer|basic|token)\s+)?)(?!\[redacted\])"
            r"[^\s,;&\"'}\]]+",
            re.IGNORECASE,
        ),
        rf"\1\2{REDACTED}",
    ),
    # ?token=abc&... and key=value in text.
    (
        re.compile(rf"(\b{_SECRET_NAME}=)(?!\[redacted\])[^\s&;,\"'}}\]]+", re.IGNORECASE),
        rf"\1{REDACTED}",
    ),
    # A bearer credential on its own.
    (re.compile(r"\b(bearer)\s+[A-Za-z0-9._~+/=-]+", re.IGNORECASE), rf"\1 {REDACTED}"),
    # scheme://user:password@host
    (
        re.compile(r"(\b[a-z][a-z0-9+.-]*://[^:/@\s]*:)[^@\s/]+(@)", re.IGNORECASE),
        rf"\1{REDACTED}\2",
    ),
)

# Attributes every LogRecord has: anything else on a record came from `extra=`.
_RECORD_ATTRS = frozenset(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {
    "message",
    "asctime",
    "color_message",  # uvicorn's coloured copy of the message
    "data",  # Celery's copy of its message's arguments
    "taskName",
}


# Every pattern above needs a ':' or '=' or the word bearer: most strings (a path, an id, a
# method) have none, and one scan tells (the access log redacts every field of every request).
_MAY_HOLD_A_SECRET = re.compile(r"[:=]|bearer", re.IGNORECASE)


def redact(text: str) -> str:
    """``text`` with every credential it carries replaced by ``[redacted]``."""
    if not _MAY_HOLD_A_SECRET.search(text):
        return text
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(replacement, text)
    return text


def _redact_value(key: str, value: Any) -> Any:
    if _SECRET_KEY.match(key):
        return REDACTED
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: _redact_value(str(k), v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_redact_value("", v) for v in value]
    if value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, uuid.UUID):  # hex digits and dashes: nothing to redact (a batch names hundreds)
        return str(value)
    return redact(str(value))


class ContextFilter(logging.Filter):
    """Puts the current request, task and run ids on each record (unless it has its own)."""

    def filter(self, record: logging.LogRecord) -> bool:
        for name, var in _CONTEXT_VARS:
            if getattr(record, name, None) is None:
                value = var.get()
                if value is not None:
                    setattr(record, name, value)
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message, ids, extra fields, exception."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": dt.datetime.fromtimestamp(record.created, dt.UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": redact(record.getMessage()),
        }
        for key, value in record.__dict__.items():
            if key not in _RECORD_ATTRS and not key.startswith("_") and value is not None:
                entry[key] = _redact_value(key, value)
        if record.exc_info:
            entry["exception"] = redact(self.formatException(record.exc_info))
        if record.stack_info:
            entry["stack"] = redact(self.formatStack(record.stack_info))
        return json.dumps(entry, default=str, ensure_ascii=False)


class TextFormatter(logging.Formatter):
    """``12:00:00 INFO    logger: message [request_id=…]``, redacted."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)-7s %(name)s: %(message)s", "%H:%M:%S")

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        ids = " ".join(
            f"{name}={getattr(record, name)}" for name, _ in _CONTEXT_VARS if getattr(record, name, None) is not None
        )
        if ids:
            first, newline, rest = text.partition("\n")
            text = f"{first} [{ids}]{newline}{rest}"
        return redact(text)


def log_format(stream: Any = None) -> str:
    """``json`` or ``text``, from ``TCPLAB_LOG_FORMAT`` (``auto``: text on a terminal)."""
    chosen = os.environ.get("TCPLAB_LOG_FORMAT", "auto").strip().lower() or "auto"
    if chosen not in ("json", "text", "auto"):
        raise ValueError(f"TCPLAB_LOG_FORMAT must be json, text or auto, not {chosen!r}")
    if chosen == "auto":
        isatty = getattr(stream, "isatty", None)
        try:
            return "text" if isatty is not None and isatty() else "json"
        except ValueError:  # a closed stream
            return "json"
    return chosen


def formatter_for(stream: Any = None, fmt: str | None = None) -> logging.Formatter:
    return JsonFormatter() if (fmt or log_format(stream)) == "json" else TextFormatter()


def adopt_handler(handler: logging.Handler, fmt: str | None = None) -> None:
    """Give ``handler`` tcplab's format, redaction and ids (idempotent)."""
    handler.setFormatter(formatter_for(getattr(handler, "stream", None), fmt))
    if not any(isinstance(f, ContextFilter) for f in handler.filters):
        handler.addFilter(ContextFilter())


def configure_logging(level: str | None = None, fmt: str | None = None) -> None:
    """The API process's logging: the root logger's console handlers (the launcher's, or one
    added here when there is none) get tcplab's format. Handlers of other kinds (pytest's,
    files of a host application) are left alone. uvicorn's own access log is silenced: it
    would print raw query strings, and the access log of api/observability.py replaces it."""
    root = logging.getLogger()
    consoles = [h for h in root.handlers if type(h) is logging.StreamHandler]
    if not root.handlers:
        handler = logging.StreamHandler()
        root.addHandler(handler)
        consoles = [handler]
        if level:
            root.setLevel(level.upper())
    for handler in consoles:
        adopt_handler(handler, fmt)
    logging.getLogger("uvicorn.access").disabled = True
