"""Errors a service raises about its caller's request; the API maps each to a status code
(api/main.py): NotFoundError → 404, InvalidInputError → 422, ConflictError → 409,
QuotaExceededError → 429, NotAuthenticatedError → 401, PermissionDeniedError → 403."""

from __future__ import annotations

import re


class DomainError(Exception):
    """Base of the errors about the caller's request (not about tcplab itself)."""


class NotFoundError(DomainError):
    def __init__(self, what: str, key: object) -> None:
        super().__init__(f"{what} {key} not found")
        self.what = what
        self.key = key


class NotAuthenticatedError(DomainError):
    """No token, or one that is unknown, revoked or belongs to a disabled user."""


class PermissionDeniedError(DomainError):
    """The caller may see the resource but not do this to it (cancel another's run), or the
    action needs an admin."""


class ConflictError(DomainError):
    """The request is valid but the resource's state forbids it (e.g. cancel a finished run)."""


class QuotaExceededError(DomainError):
    """The request is valid but the server's limits refuse it now (too much queued work);
    `retry_after_s` says when trying again makes sense."""

    def __init__(self, reason: str, *, retry_after_s: int = 30) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry_after_s = retry_after_s


class InvalidInputError(DomainError):
    """Bad input, with the JSON path of the offending field (``$.flows[0].rtt_ms``)."""

    def __init__(self, reason: str, *, path: str = "$", kind: str = "invalid") -> None:
        super().__init__(reason)
        self.reason = reason
        self.path = path
        self.kind = kind


_SEGMENT = re.compile(r"\.([^.\[\]]+)|\[(\d+)\]|\[['\"]([^'\"]*)['\"]\]")


def json_path_parts(path: str) -> list[str | int]:
    """``$.flows[1].rtt_ms`` → ``["flows", 1, "rtt_ms"]`` (what FastAPI calls a ``loc``)."""
    parts: list[str | int] = []
    for name, index, quoted in _SEGMENT.findall(path.removeprefix("$")):
        if index:
            parts.append(int(index))
        else:
            parts.append(name or quoted)
    return parts
