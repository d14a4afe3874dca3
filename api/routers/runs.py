"""`/v1/runs`: submit a scenario or a preset, follow it, read its result, cancel it."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Iterator
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request, Response, status
from fastapi.responses import StreamingResponse
from sqlalchemy.orm import Session

from api.auth import CurrentUser, Submitter
from api.body_cache import BodyCache
from api.deps import SessionDep, SettingsDep
from api.limits import ScenarioBodyRoute
from api.experiments import SearchDep
from api.schemas.experiments import Changes, DeletedOut
from api.schemas.runs import RunList, RunOut, RunSubmission
from api.tabular import finite, finite_list, json_text
from services import runs
from services.experiments import service as experiments
from services.runs import traces as run_traces
from services.db.models import RunStatus
from services.db.session import run_after_commit
from worker.enqueue import enqueue

router = APIRouter(prefix="/v1/runs", tags=["runs"], route_class=ScenarioBodyRoute)


@router.post("", status_code=status.HTTP_201_CREATED, response_model=RunOut)
def submit_run(
    body: RunSubmission, viewer: Submitter, session: SessionDep, settings: SettingsDep, response: Response
) -> Any:
    """Validates the scenario (or builds the preset with its overrides), stores the run as
    queued and enqueues it once the row is committed. An identical earlier run (same canonical
    scenario, seed and core version) answers at once: the run is stored as succeeded with the
    stored result, and nothing is simulated (`cached: true`).

    The run is the caller's, private unless `shared`. 429 past the caller's submissions per
    minute or queued-runs quota; 422 past their flows per scenario."""
    run, cached = runs.submit(
        session,
        owner=viewer,
        scenario=body.scenario,
        preset=body.preset,
        overrides=body.overrides,
        shared=body.shared,
        max_queued=settings.max_queued_runs,
    )
    if not cached:
        run_after_commit(session, lambda: enqueue([run.id]))
    response.headers["Location"] = f"/v1/runs/{run.id}"
    return RunOut.of(run, cached=cached, owner=viewer.name)


@router.get("", response_model=RunList)
def list_runs(
    session: SessionDep,
    viewer: CurrentUser,
    search: SearchDep,
    status_: Annotated[RunStatus | None, Query(alias="status")] = None,
    variant: str | None = None,
    preset: str | None = None,
    created_after: dt.datetime | None = None,
    created_before: dt.datetime | None = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
    offset: Annotated[int, Query(ge=0, le=1_000_000_000)] = 0,
    mine: Annotated[bool, Query(description="Only the caller's own runs.")] = False,
) -> Any:
    """The runs the caller sees (their own and the lab's shared ones; all for an admin),
    newest first, filtered by status, TCP variant, preset, creation time, name, tags and
    parameter values; archived runs (and those of archived sweeps) only with `archived`."""
    filters = runs.RunFilters(status_, variant, preset, created_after, created_before, mine, search)
    items, total = runs.list_runs(session, filters, viewer, limit=limit, offset=offset)
    return RunList(items=[RunOut.of(r) for r in items], total=total, limit=limit, offset=offset)


@router.get("/{run_id}", response_model=RunOut)
def get_run(run_id: uuid.UUID, viewer: CurrentUser, session: SessionDep) -> Any:
    """Status, timings, attempts, worker, core version and error of one run. 404 for a run
    the caller may not see (another user's private run)."""
    return RunOut.of(runs.get_run(session, run_id, viewer))


@router.patch("/{run_id}", response_model=RunOut)
def change_run(run_id: uuid.UUID, body: Changes, viewer: CurrentUser, session: SessionDep) -> Any:
    """Shares the run (`shared`), sets, adds or removes its tags (`tags`, `add_tags`,
    `remove_tags`), sets its `note`, archives or restores it (`archived`). Owner or admin
    (403); a sweep's run follows its sweep for sharing and archiving (409); an unfinished run
    is archived once cancelled (409)."""
    return RunOut.of(experiments.update_run(session, run_id, viewer, body.edit()))


@router.delete("/{run_id}", response_model=DeletedOut)
def delete_run(run_id: uuid.UUID, viewer: CurrentUser, session: SessionDep) -> Any:
    """Deletes a finished run, and its result with its traces unless another run shares it
    (the cache answers identical runs with one result). Owner or admin (403). 409 for a run
    queued or running (cancel it first) or one of a sweep (delete the sweep)."""
    return DeletedOut.of(experiments.delete_run(session, run_id, viewer))


@router.get("/{run_id}/result")
def get_result(run_id: uuid.UUID, request: Request, viewer: CurrentUser, session: SessionDep, traces: bool = False) -> Any:
    """The stored result of a succeeded run: the summary (measurement window, links,
    fairness, the core's stats), one row per flow, and the traces when `traces=true` (as the
    core returned them, streamed: any size of trace costs the API the same memory; pages and
    downsampled series: `GET /v1/runs/{id}/traces`). 409 while the run is not succeeded."""
    if not traces:
        run = runs.succeeded_run(session, run_id, viewer)
        head = '{"run_id":' + json_text(str(run.id)) + ',"cache_key":' + json_text(run.cache_key) + ","
        return Response(head.encode() + _stored_result_text(session, run.result_id), media_type="application/json")
    body = runs.result_of(session, run_id, viewer)
    layout = run_traces.layout_of(session, run_id, viewer)
    values = None if layout is None else run_traces.series_values(request.app.state.session_factory, layout)
    return StreamingResponse(_with_traces(body, layout, values), media_type="application/json")


_STORED_RESULTS = BodyCache(max_bytes=32 * 1024 * 1024)
"""Stored results as JSON text less the opening brace, by result id: a stored result never
changes (the runs that share it differ only by their own fields), so the latest read are kept —
a result read again (a dashboard, a script polling its runs) costs the visibility check alone,
not two queries and a serialisation."""


def _stored_result_text(session: Session, result_id: uuid.UUID | None) -> bytes:
    assert result_id is not None
    text = _STORED_RESULTS.get(result_id)
    if text is None:
        text = json_text(finite(runs.stored_result(session, result_id)))[1:].encode()
        _STORED_RESULTS.put(result_id, text)
    return text


def _with_traces(body: dict[str, Any], layout: run_traces.Layout | None, values: Iterator[tuple[int, Any]] | None) -> Iterator[bytes]:
    """`body` with `"traces"` in the core's shape (`time_s`, `flows[]`, `links[]`; null when
    none were recorded), written one chunk of one series at a time."""
    yield (json_text(finite(body))[:-1] + ',"traces":').encode()
    if layout is None or values is None:
        yield b"null}"
        return
    # The text before each series' values: the structure around them, closed by the next.
    before: list[str] = []
    text = '{"time_s":['
    before.append(text)
    text = "]"
    by_item: dict[tuple[str, str | None], list[int]] = {}
    for i, s in enumerate(layout.series[1:], 1):
        by_item.setdefault((s.kind, s.name), []).append(i)
    for kind, key, names in (("flow", "flows", layout.flows), ("link", "links", layout.links)):
        text += f',"{key}":['
        for k, name in enumerate(names):
            text += ("," if k else "") + '{"name":' + json_text(name)
            for i in by_item.get((kind, name), []):
                before.append(text + "," + json_text(layout.series[i].quantity) + ":[")
                text = "]"
            text += "}"
        text += "]"
    after = text + "}}"
    current, separator = -1, ""
    for number, chunk in values:
        while current < number:  # the structure up to this series (and any empty ones before)
            current += 1
            yield before[current].encode()
            separator = ""
        if len(chunk):
            yield (separator + json_text(finite_list(chunk))[1:-1]).encode()
            separator = ","
    while current < len(before) - 1:
        current += 1
        yield before[current].encode()
    yield after.encode()


@router.post("/{run_id}/cancel", response_model=RunOut)
def cancel_run(run_id: uuid.UUID, viewer: CurrentUser, session: SessionDep) -> Any:
    """Cancels a queued or running run (a running simulation finishes, its result is kept
    for the cache, the run stays cancelled). 409 when the run has already finished; 403 for
    another user's shared run (only the owner or an admin cancels)."""
    run = runs.cancel(session, run_id, viewer)
    run_after_commit(session, enqueue)  # its slot in the dispatch window is free: fill it
    return RunOut.of(run)
