"""Named traces: upload, list, show, delete, the per-user quotas, and the name -> content hash
resolution a scenario needs (docs/traces.md). Services never commit: the request does.

A user sees their own uploads and the lab's built-in traces (`builtin`); names are per user,
and a built-in name is taken for everyone.
"""

from __future__ import annotations

import datetime as dt
import re
import zlib
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy.orm import Session

from services import admission
from services.db.models import LinkTrace
from services.errors import ConflictError, InvalidInputError, NotFoundError, QuotaExceededError
from services.scenarios.schema import TRACE_NAME_PATTERN
from services.settings import Settings, get_settings
from services.traces import repository as repo
from services.traces.builtin import BUILTIN_NAMES, builtin_by_hash, builtin_trace, builtin_trace_file
from services.traces.files import materialise
from services.traces.format import TraceFormatError, TraceText, parse_trace
from services.traces.refs import TraceFiles
from services.users import Identity

__all__ = [
    "TraceInfo",
    "delete_trace",
    "get_trace",
    "list_traces",
    "trace_content",
    "trace_files",
    "upload_trace",
]

_NAME = re.compile(TRACE_NAME_PATTERN)


@dataclass(frozen=True)
class TraceInfo:
    """What a list or a page shows of a trace (never its content)."""

    name: str
    builtin: bool
    sha256: str
    lines: int
    span_ms: int
    mean_mbps: float
    text_bytes: int
    created_at: dt.datetime | None

    @classmethod
    def of_row(cls, row: LinkTrace) -> TraceInfo:
        return cls(row.name, False, row.sha256, row.lines, row.span_ms, row.mean_mbps, row.text_bytes, row.created_at)

    @classmethod
    def of_builtin(cls, name: str, text: TraceText) -> TraceInfo:
        return cls(name, True, text.sha256, text.lines, text.span_ms, text.mean_mbps, len(text.text), None)


def _builtin_info(name: str) -> TraceInfo | None:
    text = builtin_trace(name)
    return None if text is None else TraceInfo.of_builtin(name, text)


def upload_trace(session: Session, owner: Identity, name: str, data: bytes, settings: Settings) -> TraceInfo:
    """Stores `data` as `owner`'s trace `name`, replacing the one of that name if any.

    Raises InvalidInputError (422: a bad name, or not a trace, naming the line), ConflictError
    (409: a built-in trace's name) or QuotaExceededError (429: the owner's count or bytes of
    traces). The caller holds the body to `settings.trace_max_bytes` while it reads it."""
    if not _NAME.match(name):
        raise InvalidInputError(
            "a trace name is 1-100 letters, digits, '_', '.' or '-', starting with a letter or digit",
            path="$.name",
            kind="trace_name",
        )
    if name in BUILTIN_NAMES:
        raise ConflictError(f"{name!r} is a built-in trace's name: upload under another name")
    try:
        text = parse_trace(data)
    except TraceFormatError as e:
        raise InvalidInputError(e.reason, path="$.body", kind="trace_format") from None
    admission.lock(session, owner)  # two uploads of one owner cannot both take the last of the quota
    old = repo.by_name(session, owner.id, name, for_update=True)
    count, total = repo.usage(session, owner.id)
    if old is not None:
        count, total = count - 1, total - old.text_bytes
    if count + 1 > settings.user_max_traces:
        raise QuotaExceededError(
            f"{owner.name} keeps {count} traces, the most one user may (TCPLAB_USER_MAX_TRACES): delete one first",
            retry_after_s=3600,
        )
    if total + len(text.text) > settings.user_max_trace_bytes:
        raise QuotaExceededError(
            f"this trace's {len(text.text)} bytes and {owner.name}'s other traces' {total} pass the "
            f"{settings.user_max_trace_bytes} bytes one user may keep (TCPLAB_USER_MAX_TRACE_BYTES): delete one first",
            retry_after_s=3600,
        )
    if old is not None:
        session.delete(old)
        session.flush()
    row = LinkTrace(
        owner_id=owner.id,
        name=name,
        sha256=text.sha256,
        content=zlib.compress(text.text.encode("ascii"), 6),
        text_bytes=len(text.text),
        lines=text.lines,
        span_ms=text.span_ms,
        mean_mbps=text.mean_mbps,
    )
    session.add(row)
    session.flush()
    return TraceInfo.of_row(row)


def list_traces(session: Session, viewer: Identity) -> list[TraceInfo]:
    """The built-in traces, then the viewer's own, by name."""
    builtin = [info for name in BUILTIN_NAMES if (info := _builtin_info(name)) is not None]
    return builtin + [TraceInfo.of_row(row) for row in repo.owned(session, viewer.id)]


def get_trace(session: Session, viewer: Identity, name: str) -> TraceInfo:
    """The built-in trace `name`, or the viewer's; NotFoundError otherwise."""
    info = _builtin_info(name)
    if info is not None:
        return info
    row = repo.by_name(session, viewer.id, name)
    if row is None:
        raise NotFoundError("trace", name)
    return TraceInfo.of_row(row)


def trace_content(session: Session, sha256: str) -> str | None:
    """The canonical text of the trace with this content hash (built-in or any user's), or None."""
    builtin = builtin_by_hash(sha256)
    if builtin is not None:
        return builtin.text
    content = repo.content_by_hash(session, sha256)
    return None if content is None else zlib.decompress(content).decode("ascii")


def delete_trace(session: Session, viewer: Identity, name: str) -> TraceInfo:
    """Deletes the viewer's trace `name`. Runs already stored keep its content hash; a run
    still queued over it fails when a worker takes it, unless another trace holds the same
    content. A built-in trace is refused (409): it is the lab's."""
    if name in BUILTIN_NAMES:
        raise ConflictError(f"{name!r} is a built-in trace: it cannot be deleted")
    row = repo.by_name(session, viewer.id, name)
    if row is None:
        raise NotFoundError("trace", name)
    session.delete(row)
    session.flush()
    return TraceInfo.of_row(row)


def trace_files(session: Session, viewer: Identity, settings: Settings | None = None) -> TraceFiles:
    """name -> (content hash, local file) over the traces `viewer` may name in a scenario (the
    built-in ones and their own), for `services.scenarios.validate_scenario`; a file is written
    only the first time its content is seen on this machine.

    Lookups go through a connection of their own, one short session per name asked (then
    cached): a sweep plans its points lazily while its runs are being COPYed over the request's
    connection, which can run nothing else until the COPY ends. They see committed traces,
    which every upload is by the time a scenario names it."""
    cache_dir = (settings or get_settings()).effective_trace_cache_dir
    bind = session.get_bind()
    cache: dict[str, tuple[str, Path] | None] = {}

    def resolve(name: str) -> tuple[str, Path] | None:
        if name not in cache:
            found = builtin_trace_file(name)
            if found is None:
                with Session(bind=bind) as lookup:
                    row = repo.by_name(lookup, viewer.id, name)
                    if row is not None:
                        file = cache_dir / f"{row.sha256}.trace"
                        if not file.exists():
                            file = materialise(cache_dir, row.sha256, trace_content(lookup, row.sha256) or "")
                        found = (row.sha256, file)
            cache[name] = found
        return cache[name]

    return resolve
