"""`/v1/schedules`: sweep templates fired on a cron line, their firings, and the history of
every metric across firings with a flag when one moved (docs/schedules.md)."""

from __future__ import annotations

import uuid
from typing import Annotated, Any

from fastapi import APIRouter, Query, Response, status

from api.auth import CurrentUser, Submitter
from api.deps import EnqueueDep, SessionDep, SettingsDep
from api.limits import SweepBodyRoute
from api.schemas.schedules import ScheduleList, ScheduleOut
from api.schemas.sweeps import SweepList, SweepOut
from api.tabular import FORMAT_QUERY, TableFormat, table_response
from services import schedules, sweeps
from services.db.models import Schedule
from services.db.session import run_after_commit
from services.errors import InvalidInputError
from services.schedules import BASELINE_FIRINGS, HISTORY_METRICS, MEASURED_METRICS, ScheduleSpec, ScheduleUpdate
from services.stats import DEFAULT_CONFIDENCE

router = APIRouter(prefix="/v1/schedules", tags=["schedules"], route_class=SweepBodyRoute)


def _out(session: SessionDep, schedule: Schedule) -> ScheduleOut:
    return ScheduleOut.of(schedule, schedules.firing_counts(session, [schedule]).get(schedule.id, 0))


@router.post("", status_code=status.HTTP_201_CREATED, response_model=ScheduleOut)
def create_schedule(
    body: ScheduleSpec, viewer: CurrentUser, session: SessionDep, settings: SettingsDep, response: Response
) -> Any:
    """Stores the caller's schedule: a sweep template (the body of POST /v1/sweeps, every
    point built and validated now: a refusal is a 422 under `$.template`) and a five-field
    cron line in UTC (`$.cron`). Enabled, it first fires at the cron's next time. A firing
    needs room for every run of its template, so a template with more runs than the caller's
    quota of queued runs (or the per-sweep cap, or the server's limit) is a 422 at
    `$.template.axes`: it could never fire."""
    schedule = schedules.create(session, body, owner=viewer, max_queued=settings.max_queued_runs)
    response.headers["Location"] = f"/v1/schedules/{schedule.id}"
    return _out(session, schedule)


@router.get("", response_model=ScheduleList)
def list_schedules(
    session: SessionDep,
    viewer: CurrentUser,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
    offset: Annotated[int, Query(ge=0, le=1_000_000_000)] = 0,
    mine: Annotated[bool, Query(description="Only the caller's own schedules.")] = False,
) -> Any:
    """The schedules the caller sees (their own and the lab's shared ones; all for an admin),
    newest first."""
    items, total = schedules.list_schedules(session, viewer, mine_only=mine, limit=limit, offset=offset)
    counts = schedules.firing_counts(session, items)
    return ScheduleList(
        items=[ScheduleOut.of(s, counts.get(s.id, 0)) for s in items], total=total, limit=limit, offset=offset
    )


@router.get("/{schedule_id}", response_model=ScheduleOut)
def get_schedule(schedule_id: uuid.UUID, viewer: CurrentUser, session: SessionDep) -> Any:
    return _out(session, schedules.get_schedule(session, schedule_id, viewer))


@router.patch("/{schedule_id}", response_model=ScheduleOut)
def update_schedule(
    schedule_id: uuid.UUID, body: ScheduleUpdate, viewer: CurrentUser, session: SessionDep, settings: SettingsDep
) -> Any:
    """Changes `name`, `cron`, `template`, `enabled` or `shared` (owner or admin). A new cron
    line or enabling sets the next firing from now; disabling clears it. The beat tick reads
    the change at its next pass: nothing restarts. A template that could never fire is a 422,
    as at create (and enabling one that has outgrown its owner's quota, at `$.enabled`)."""
    return _out(session, schedules.update(session, schedule_id, body, viewer, settings))


@router.delete("/{schedule_id}", status_code=status.HTTP_204_NO_CONTENT, response_class=Response)
def delete_schedule(schedule_id: uuid.UUID, viewer: CurrentUser, session: SessionDep) -> Response:
    """Deletes the schedule (owner or admin); the sweeps it fired stay, unlinked. A built-in
    schedule is disabled rather than deleted (409)."""
    schedules.delete(session, schedule_id, viewer)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.post("/{schedule_id}/fire", status_code=status.HTTP_201_CREATED, response_model=SweepOut)
def fire_schedule(
    schedule_id: uuid.UUID,
    viewer: Submitter,
    session: SessionDep,
    settings: SettingsDep,
    response: Response,
    enqueue: EnqueueDep,
) -> Any:
    """Fires the schedule now (owner or admin; enabled or not): a sweep of its template,
    linked to it, for the firing time now. The cron's own firings are unchanged."""
    _, sweep, created = schedules.fire_now(session, schedule_id, viewer, settings)
    if created.to_enqueue:
        ids = list(created.to_enqueue)
        run_after_commit(session, lambda: enqueue(ids))
    response.headers["Location"] = f"/v1/sweeps/{sweep.id}"
    progress, points = sweeps.progress_of(session, [sweep])[sweep.id]
    return SweepOut.of(sweep, progress, points=points, created=created)


@router.get("/{schedule_id}/sweeps", response_model=SweepList)
def list_firings(
    schedule_id: uuid.UUID,
    viewer: CurrentUser,
    session: SessionDep,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
    offset: Annotated[int, Query(ge=0, le=1_000_000_000)] = 0,
) -> Any:
    """The sweeps the schedule fired, latest firing first, with their progress."""
    items, total = schedules.firings(session, schedule_id, viewer, limit=limit, offset=offset)
    progress = sweeps.progress_of(session, items)
    return SweepList(
        items=[SweepOut.of(s, progress[s.id][0], points=progress[s.id][1]) for s in items],
        total=total,
        limit=limit,
        offset=offset,
    )


@router.get("/{schedule_id}/history", response_class=Response)
def history(
    schedule_id: uuid.UUID,
    session: SessionDep,
    viewer: CurrentUser,
    metric: Annotated[
        list[str] | None,
        Query(description="per-flow metrics, core_events_per_s, core_wall_s (all when absent)"),
    ] = None,
    flow: Annotated[str | None, Query(description='one flow group, or "core" for the run-level metrics')] = None,
    limit: Annotated[int, Query(ge=1, le=1000, description="the latest firings shown")] = 100,
    fmt: TableFormat = FORMAT_QUERY,
) -> Response:
    """One row per (firing, grid point, flow group, metric): this firing's `n`, `mean`,
    `std` and 95 % interval (`ci_low`, `ci_high`); the baseline — up to the 5 previous
    firings' values pooled — with its interval; and `shift` ("up", "down" or null) with the
    `test` that decided it: "exact" (simulated metrics are deterministic: any change of a
    seed's value flags) or "welch" (the core's wall-clock metrics, flow "core"). JSON, CSV or
    Parquet (`format`)."""
    metrics = metric or list(HISTORY_METRICS)
    for i, name in enumerate(metrics):
        if name not in HISTORY_METRICS:
            raise InvalidInputError(
                f"unknown metric {name!r}; one of {', '.join(HISTORY_METRICS)}",
                path=f"$.metric[{i}]",
                kind="unknown_metric",
            )
    schedule, axes, rows = schedules.history(session, schedule_id, viewer, metrics=metrics, flow=flow, limit=limit)
    body = {
        "schedule_id": str(schedule_id),
        "name": schedule.name,
        "axes": axes,
        "confidence": DEFAULT_CONFIDENCE,
        "baseline_firings": BASELINE_FIRINGS,
        "measured_metrics": list(MEASURED_METRICS),
    }
    first = ["fired_for", "sweep_id", "point", "point_key", *axes, "flow", "variant", "metric"]
    return table_response(rows, fmt, f"schedule-{schedule_id}-history", body=body, first_columns=first)
