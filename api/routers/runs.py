"""`/v1/runs`: submit a scenario or a preset, follow it, read its result, cancel it; and the run
as tables (`/{id}/flows`, `/{id}/traces`, JSON, CSV or Parquet) and the scenario it ran
(`/{id}/scenario`), which the run page plots and submits again."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Iterator
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request, Response, status
from fastapi.exceptions import RequestValidationError
from fastapi.responses import StreamingResponse
from sqlalchemy.orm import Session

from api.auth import CurrentUser, Submitter
from api.body_cache import BodyCache
from api.deps import EnqueueDep, SessionDep, SettingsDep
from api.experiments import SearchDep
from api.limits import ScenarioBodyRoute
from api.schemas.experiments import Changes, DeletedOut
from api.schemas.runs import RunList, RunOut, RunSubmission
from api.tabular import FORMAT_QUERY, TableFormat, finite, finite_list, json_text, stream_table, table_response
from services import runs
from services.db.models import RunStatus
from services.db.session import run_after_commit
from services.experiments import service as experiments
from services.runs import traces as trace_store

router = APIRouter(prefix="/v1/runs", tags=["runs"], route_class=ScenarioBodyRoute)


@router.post("", status_code=status.HTTP_201_CREATED, response_model=RunOut)
def submit_run(
    body: RunSubmission,
    viewer: Submitter,
    session: SessionDep,
    settings: SettingsDep,
    response: Response,
    enqueue: EnqueueDep,
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
def get_result(
    run_id: uuid.UUID, request: Request, viewer: CurrentUser, session: SessionDep, traces: bool = False
) -> Any:
    """The stored result of a succeeded run: the summary (measurement window, links,
    fairness, the core's stats), one row per flow, and the traces when `traces=true` (as the
    core returned them, streamed: any size of trace costs the API the same memory; pages and
    downsampled series: `GET /v1/runs/{id}/traces`). 409 while the run is not succeeded."""
    if not traces:
        run = runs.succeeded_run(session, run_id, viewer)
        head = '{"run_id":' + json_text(str(run.id)) + ',"cache_key":' + json_text(run.cache_key) + ","
        return Response(head.encode() + _stored_result_text(session, run.result_id), media_type="application/json")
    body = runs.result_of(session, run_id, viewer)
    layout = trace_store.layout_of(session, run_id, viewer)
    values = None if layout is None else trace_store.series_values(request.app.state.session_factory, layout)
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


def _with_traces(
    body: dict[str, Any], layout: trace_store.Layout | None, values: Iterator[tuple[int, Any]] | None
) -> Iterator[bytes]:
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
def cancel_run(run_id: uuid.UUID, viewer: CurrentUser, session: SessionDep, enqueue: EnqueueDep) -> Any:
    """Cancels a queued or running run (a running simulation finishes, its result is kept
    for the cache, the run stays cancelled). 409 when the run has already finished; 403 for
    another user's shared run (only the owner or an admin cancels)."""
    run = runs.cancel(session, run_id, viewer)
    run_after_commit(session, enqueue)  # its slot in the dispatch window is free: fill it
    return RunOut.of(run)


# The run as tables (JSON, CSV or Parquet, `?format=`): what the run page plots is what a
# researcher downloads.


@router.get("/{run_id}/flows", summary="A run's per-flow results as a table")
def run_flows(run_id: uuid.UUID, session: SessionDep, viewer: CurrentUser, fmt: TableFormat = FORMAT_QUERY) -> Response:
    """The `flows` of `GET /v1/runs/{id}/result`, one row per flow. 409 while the run has no
    result."""
    result = runs.result_of(session, run_id, viewer)
    return table_response(
        result["flows"],
        fmt,
        f"run-{run_id}-flows",
        body={"run_id": str(run_id)},
        first_columns=("name", "variant"),
    )


@router.get("/{run_id}/scenario", summary="The scenario a run ran, and its sweep")
def run_scenario(run_id: uuid.UUID, session: SessionDep, viewer: CurrentUser) -> dict[str, Any]:
    """The canonical scenario of the run (a sweep run's: its point's, with its own seed), and
    the sweep, point and replication it belongs to (null outside a sweep): the run page shows
    it, links the sweep, and submits it again with traces (`POST /v1/runs`)."""
    run, scenario = runs.scenario_of(session, run_id, viewer)
    return {
        "run_id": str(run.id),
        "sweep_id": None if run.sweep_id is None else str(run.sweep_id),
        "sweep_point": run.sweep_point,
        "replication": run.replication,
        "preset": run.preset,
        "scenario": scenario,
    }


MAX_POINTS = 100_000


@router.get("/{run_id}/traces", summary="A run's cwnd, ssthresh and queue traces as a table")
def run_traces(
    run_id: uuid.UUID,
    request: Request,
    session: SessionDep,
    viewer: CurrentUser,
    fmt: TableFormat = FORMAT_QUERY,
    series: Annotated[
        list[str] | None,
        Query(
            description="only these columns besides `time_s` (repeat for several: `series=f1.cwnd&series=f1.ssthresh`); all when absent"
        ),
    ] = None,
    offset: Annotated[int, Query(ge=0, description="the first sample (row) index")] = 0,
    limit: Annotated[
        int | None, Query(ge=1, description="at most this many samples from the first one; all when absent")
    ] = None,
    from_s: Annotated[
        float | None, Query(allow_inf_nan=False, description="only samples at or after this time [s]")
    ] = None,
    to_s: Annotated[
        float | None, Query(allow_inf_nan=False, description="only samples at or before this time [s]")
    ] = None,
    points: Annotated[
        int | None,
        Query(
            ge=2,
            le=MAX_POINTS,
            description="at most this many rows: min and max of every series per bucket of samples (for plots)",
        ),
    ] = None,
) -> Response:
    """The traces of `GET /v1/runs/{id}/result?traces=true`, one row per sample time, streamed
    (any size of trace costs the API the same memory). The JSON body also lists the `series`
    (column, flow or link, name, quantity), whether any were `recorded` (a scenario without
    `outputs.trace` records none: no rows), the trace's `samples`, and the selection: its first
    sample `offset`, its `count` of samples, `next_offset` (the next page's offset, null on
    the last) and `downsampled` (null, or the `points` and `buckets`). 409 while the run has
    no result.

    Pages: `offset` and `limit` (sample indices); a time range: `from_s`, `to_s`; some
    columns: `series`. `points` cuts the selection into points / 2 buckets of consecutive
    samples, each two rows at the bucket's first and last sample times holding every series'
    minimum and maximum in the order they occur: a plot of it shows what a plot of every
    sample shows, at that many pixels; a selection of at most `points` samples is whole."""
    if from_s is not None and to_s is not None and to_s < from_s:
        raise RequestValidationError(
            [{"type": "value_error", "loc": ("query", "to_s"), "msg": "must not be below from_s", "input": to_s}]
        )
    layout = trace_store.layout_of(session, run_id, viewer)
    name = f"run-{run_id}-traces"
    if layout is None:
        body = {
            "run_id": str(run_id),
            "recorded": False,
            "series": [],
            "samples": 0,
            "offset": 0,
            "count": 0,
            "next_offset": None,
            "downsampled": None,
        }
        return table_response([], fmt, name, body=body, first_columns=("time_s",))
    chosen = layout.columns(series)
    selection = trace_store.window(session, layout, offset=offset, from_s=from_s, to_s=to_s)
    rows = selection if limit is None else selection[:limit]
    buckets = 0 if points is None else trace_store.buckets_of(len(rows), points)
    body = {
        "run_id": str(run_id),
        "recorded": True,
        "series": [layout.series[i].public() for i in chosen[1:]],
        "samples": layout.samples,
        "offset": rows.start,
        "count": len(rows),
        "next_offset": rows.stop if rows.stop < selection.stop else None,
        "downsampled": {"points": points, "buckets": buckets} if buckets else None,
    }
    pieces = trace_store.blocks(request.app.state.session_factory, layout, chosen, rows)
    if buckets:
        assert points is not None  # buckets is 0 without points
        pieces = trace_store.downsample(pieces, len(rows), points, [layout.series[i].dtype for i in chosen])
    return stream_table([layout.series[i].column for i in chosen], pieces, fmt, name, body=body)
