"""`/v1/runs`: submit a scenario or a preset, follow it, read its result, cancel it."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Annotated, Any

from fastapi import APIRouter, Query, Response, status

from api.auth import CurrentUser, Submitter
from api.deps import SessionDep, SettingsDep
from api.limits import ScenarioBodyRoute
from api.schemas.runs import RunList, RunOut, RunSharing, RunSubmission
from services import runs
from services.db.models import RunStatus
from services.db.session import run_after_commit
from worker.tasks import enqueue

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
    return RunOut.of(run, cached=cached)


@router.get("", response_model=RunList)
def list_runs(
    session: SessionDep,
    viewer: CurrentUser,
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
    newest first, filtered by status, TCP variant, preset and creation time."""
    filters = runs.RunFilters(status_, variant, preset, created_after, created_before, mine)
    items, total = runs.list_runs(session, filters, viewer, limit=limit, offset=offset)
    return RunList(items=[RunOut.of(r) for r in items], total=total, limit=limit, offset=offset)


@router.get("/{run_id}", response_model=RunOut)
def get_run(run_id: uuid.UUID, viewer: CurrentUser, session: SessionDep) -> Any:
    """Status, timings, attempts, worker, core version and error of one run. 404 for a run
    the caller may not see (another user's private run)."""
    return RunOut.of(runs.get_run(session, run_id, viewer))


@router.patch("/{run_id}", response_model=RunOut)
def share_run(run_id: uuid.UUID, body: RunSharing, viewer: CurrentUser, session: SessionDep) -> Any:
    """Shares the run with the lab (`shared: true`) or makes it private (owner or admin; a
    sweep's runs follow their sweep)."""
    return RunOut.of(runs.set_shared(session, run_id, viewer, body.shared))


@router.get("/{run_id}/result")
def get_result(run_id: uuid.UUID, viewer: CurrentUser, session: SessionDep, traces: bool = False) -> dict[str, Any]:
    """The stored result of a succeeded run: the summary (measurement window, links,
    fairness, the core's stats), one row per flow, and the traces when `traces=true`.
    409 while the run is not succeeded."""
    return runs.result_of(session, run_id, viewer, traces=traces)


@router.post("/{run_id}/cancel", response_model=RunOut)
def cancel_run(run_id: uuid.UUID, viewer: CurrentUser, session: SessionDep) -> Any:
    """Cancels a queued or running run (a running simulation finishes, its result is kept
    for the cache, the run stays cancelled). 409 when the run has already finished; 403 for
    another user's shared run (only the owner or an admin cancels)."""
    run = runs.cancel(session, run_id, viewer)
    run_after_commit(session, enqueue)  # its slot in the dispatch window is free: fill it
    return RunOut.of(run)
