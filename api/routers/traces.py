"""`/v1/traces`: link traces uploaded once and named (issue 18), which a scenario's link
follows with `"trace": {"name": ...}`; the lab's built-in traces are listed beside the
caller's own. A trace is uploaded as its text (Mahimahi format), never given as a path.

    curl -X PUT --data-binary @my.down -H 'Content-Type: text/plain' $API/v1/traces/my.down
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException, Path, Request, status
from fastapi.responses import PlainTextResponse
from pydantic import BaseModel, Field

from api.auth import CurrentUser
from api.deps import SessionDep, SettingsDep, UnitOfWorkRoute
from api.limits import too_large
from services.traces import service as traces
from services.traces.service import TraceInfo

router = APIRouter(prefix="/v1/traces", tags=["traces"], route_class=UnitOfWorkRoute)

TraceName = Annotated[str, Path(description="The trace's name: 1-100 letters, digits, '_', '.', '-'.")]


class TraceOut(BaseModel):
    name: str
    builtin: bool = Field(description="One of the lab's traces, visible to every user (read-only).")
    sha256: str = Field(description="sha256 of the canonical text: what a run's canonical scenario holds.")
    lines: int = Field(description="Delivery opportunities (1500 bytes each) in one pass.")
    span_ms: int = Field(description="The loop period: the last line's millisecond.")
    mean_mbps: float = Field(description="The capacity a saturating flow can use, averaged over a pass.")
    text_bytes: int = Field(description="Bytes of the canonical text (what the quota counts).")
    created_at: dt.datetime | None = Field(description="When it was uploaded (null: built in).")

    @classmethod
    def of(cls, info: TraceInfo) -> TraceOut:
        return cls(**info.__dict__)


async def trace_body(request: Request, settings: SettingsDep) -> bytes:
    """The request body, read chunk by chunk and refused (413) as soon as it passes
    TCPLAB_TRACE_MAX_BYTES, whatever Content-Length said."""
    limit = settings.trace_max_bytes
    refused = HTTPException(413, too_large(limit, "trace_max_bytes", "a trace upload")["detail"])
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise refused
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise refused
        chunks.append(chunk)
    return b"".join(chunks)


@router.put(
    "/{name}",
    response_model=TraceOut,
    status_code=status.HTTP_201_CREATED,
    openapi_extra={"requestBody": {"content": {"text/plain": {"schema": {"type": "string"}}}, "required": True}},
)
def upload_trace(
    name: TraceName,
    body: Annotated[bytes, Depends(trace_body)],
    viewer: CurrentUser,
    session: SessionDep,
    settings: SettingsDep,
) -> Any:
    """Stores the body (a Mahimahi trace: one whole millisecond per line, non-decreasing, the
    last after 0) as your trace `name`, replacing yours of that name. 422 names the line at
    fault; 409 for a built-in name; 413 past TCPLAB_TRACE_MAX_BYTES; 429 past your quota."""
    return TraceOut.of(traces.upload_trace(session, viewer, name, body, settings))


@router.get("", response_model=list[TraceOut])
def list_traces(viewer: CurrentUser, session: SessionDep) -> Any:
    """The built-in traces, then yours, by name (without their content)."""
    return [TraceOut.of(info) for info in traces.list_traces(session, viewer)]


@router.get("/{name}", response_model=TraceOut)
def get_trace(name: TraceName, viewer: CurrentUser, session: SessionDep) -> Any:
    """A built-in trace or one of yours (404 otherwise)."""
    return TraceOut.of(traces.get_trace(session, viewer, name))


@router.get("/{name}/content", response_class=PlainTextResponse)
def trace_content(name: TraceName, viewer: CurrentUser, session: SessionDep) -> Any:
    """The trace's canonical text, as the core reads it."""
    info = traces.get_trace(session, viewer, name)
    return PlainTextResponse(traces.trace_content(session, info.sha256) or "")


@router.delete("/{name}", response_model=TraceOut)
def delete_trace(name: TraceName, viewer: CurrentUser, session: SessionDep) -> Any:
    """Deletes your trace `name` (409 for a built-in one). Stored runs keep its content hash."""
    return TraceOut.of(traces.delete_trace(session, viewer, name))
