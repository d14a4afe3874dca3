"""`/v1/sweeps`: a scenario or preset along axes, with replications; progress, summary,
cancellation and extension."""

from __future__ import annotations

import dataclasses
import uuid
from typing import Annotated, Any

from fastapi import APIRouter, Query, Response, status
from fastapi.encoders import jsonable_encoder

from api.auth import CurrentUser, Submitter
from api.body_cache import BodyCache
from api.deps import EnqueueDep, SessionDep, SettingsDep
from api.experiments import SearchDep
from api.limits import SweepBodyRoute
from api.schemas.experiments import Changes, DeletedOut, SweepComparisonOut
from api.schemas.sweeps import PointList, StoppingOut, SweepList, SweepOut, SweepRunOut
from api.tabular import FORMAT_QUERY, TableFormat, finite, json_text, table_response
from services import sweeps
from services.db.models import Sweep
from services.db.session import run_after_commit
from services.errors import InvalidInputError
from services.experiments import SweepStatus
from services.experiments import service as experiments
from services.stats import DEFAULT_CONFIDENCE
from services.sweeps import NUMERIC_METRICS, SUMMARY_METRICS, Created, SweepExtension, SweepSpec, aggregates
from services.sweeps.observations import points_json
from services.sweeps.spec import unknown_metric_message
from services.sweeps.table import sweep_table

router = APIRouter(prefix="/v1/sweeps", tags=["sweeps"], route_class=SweepBodyRoute)

SUMMARY_BODIES = BodyCache(max_bytes=96 << 20)
"""Sweep summaries as JSON text, under what they are made of (`summary`): one metric of
1,000 points × 2 groups is 0.56 MB, all 22 metrics 11.6 MB."""


def _out(session: SessionDep, sweep: Sweep, created: Created | None = None) -> SweepOut:
    progress, points = sweeps.progress_of(session, [sweep])[sweep.id]
    out = SweepOut.of(sweep, progress, points=points, created=created)
    outcome = sweeps.stopping_outcome(session, sweep)
    if outcome is not None:
        out.stopping = StoppingOut(**dataclasses.asdict(outcome))
    return out


def _enqueue_after_commit(session: SessionDep, created: Created, enqueue: EnqueueDep) -> None:
    if created.to_enqueue:
        ids = list(created.to_enqueue)
        run_after_commit(session, lambda: enqueue(ids))


@router.post("", status_code=status.HTTP_201_CREATED, response_model=SweepOut)
def create_sweep(
    body: SweepSpec,
    viewer: Submitter,
    session: SessionDep,
    settings: SettingsDep,
    response: Response,
    enqueue: EnqueueDep,
) -> Any:
    """Creates the sweep: every point is built and validated (a refused point is a 422 naming
    its axis values), then the sweep, its points and all its runs are stored in one
    transaction and the runs without a stored identical result are enqueued after commit.
    `created` says how many runs were added, answered from the cache, and enqueued: a sweep
    submitted again simulates nothing. The sweep is the caller's, private unless `shared`."""
    sweep, created = sweeps.create(session, body, owner=viewer, max_queued=settings.max_queued_runs)
    _enqueue_after_commit(session, created, enqueue)
    response.headers["Location"] = f"/v1/sweeps/{sweep.id}"
    return _out(session, sweep, created)


@router.get("", response_model=SweepList)
def list_sweeps(
    session: SessionDep,
    viewer: CurrentUser,
    search: SearchDep,
    status_: Annotated[
        SweepStatus | None, Query(alias="status", description="queued, running, done or cancelled")
    ] = None,
    preset: str | None = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
    offset: Annotated[int, Query(ge=0, le=1_000_000_000)] = 0,
    mine: Annotated[bool, Query(description="Only the caller's own sweeps.")] = False,
) -> Any:
    """The sweeps the caller sees (their own and the lab's shared ones; all for an admin),
    newest first, optionally of one status or preset, by name, tags and parameter values (a
    sweep matches when one of its points does), with their progress; archived ones only with
    `archived`."""
    items, total = sweeps.list_sweeps(
        session, viewer, preset=preset, mine_only=mine, search=search, status=status_, limit=limit, offset=offset
    )
    progress = sweeps.progress_of(session, items)
    return SweepList(
        items=[SweepOut.of(s, *progress[s.id][:1], points=progress[s.id][1]) for s in items],
        total=total,
        limit=limit,
        offset=offset,
    )


@router.get("/compare", response_model=SweepComparisonOut)
def compare_sweeps(
    session: SessionDep,
    viewer: CurrentUser,
    a: Annotated[uuid.UUID, Query(description="the first sweep")],
    b: Annotated[uuid.UUID, Query(description="the second sweep")],
    metric: Annotated[
        str, Query(description="a metric of the summaries: per flow, per link or per run (GET /v1/sweeps/{id}/summary)")
    ] = "throughput_pkts_per_rtt",
    flow: Annotated[str | None, Query(description="one flow group (all when absent)")] = None,
    fmt: TableFormat = FORMAT_QUERY,
) -> Any:
    """Two sweeps side by side: their summaries of `metric` aligned on the axes they share
    and the flow group, with the difference and ratio of the means (docs/experiments.md).
    JSON, CSV or Parquet (`format`)."""
    c = experiments.compare_sweeps(session, a, b, viewer, metric=metric, flow=flow)
    sides = {k: {"id": s.id, "name": s.name, "preset": s.preset} for k, s in (("a", c.a), ("b", c.b))}
    body = {**sides, "metric": metric, "axes": c.axes, "only_a": c.only_a, "only_b": c.only_b}
    return table_response(
        c.rows, fmt, f"sweeps-{a}-{b}-{metric}", body=jsonable_encoder(body), first_columns=[*c.axes, "flow"]
    )


@router.get("/{sweep_id}", response_model=SweepOut)
def get_sweep(sweep_id: uuid.UUID, viewer: CurrentUser, session: SessionDep) -> Any:
    """The sweep with its progress (runs queued, running, succeeded, failed, cancelled)."""
    return _out(session, sweeps.get_sweep(session, sweep_id, viewer))


@router.patch("/{sweep_id}", response_model=SweepOut)
def change_sweep(sweep_id: uuid.UUID, body: Changes, viewer: CurrentUser, session: SessionDep) -> Any:
    """Shares the sweep and its runs (`shared`), sets, adds or removes its tags (`tags`,
    `add_tags`, `remove_tags`), sets its `note`, archives or restores it with its runs
    (`archived`; 409 while runs are queued or running: cancel it first). Owner or admin (403)."""
    return _out(session, experiments.update_sweep(session, sweep_id, viewer, body.edit()))


@router.delete("/{sweep_id}", response_model=DeletedOut)
def delete_sweep(sweep_id: uuid.UUID, viewer: CurrentUser, session: SessionDep) -> Any:
    """Deletes the sweep with its points, runs, aggregates, and the results (with their
    traces) no other run shares. Owner or admin (403). 409 while runs are queued or running:
    cancel it first (`POST /v1/sweeps/{id}/cancel`), then delete."""
    return DeletedOut.of(experiments.delete_sweep(session, sweep_id, viewer))


@router.get("/{sweep_id}/points", response_model=PointList)
def list_points(sweep_id: uuid.UUID, viewer: CurrentUser, session: SessionDep) -> Any:
    """Every grid point: its axis values, its flow groups, its runs' progress and, with a
    stopping rule, why the rule stopped there (`stop_reason`)."""
    sweeps.get_sweep(session, sweep_id, viewer)
    # PointList's shape, written from the stored JSON texts (10,000 points in tens of ms).
    return Response(points_json(session, sweep_id), media_type="application/json")


@router.get("/{sweep_id}/runs", response_model=list[SweepRunOut])
def list_sweep_runs(sweep_id: uuid.UUID, viewer: CurrentUser, session: SessionDep) -> Any:
    """Every run of the sweep by point and replication (its id leads to `/v1/runs/{id}`)."""
    return [SweepRunOut.of(r) for r in sweeps.runs_of(session, sweep_id, viewer)]


@router.get("/{sweep_id}/summary", response_class=Response)
def summary(
    sweep_id: uuid.UUID,
    session: SessionDep,
    viewer: CurrentUser,
    metric: Annotated[
        list[str] | None,
        Query(
            description="metrics per flow group, per link (utilization, p95_queue_delay_s, …) or per run "
            "(jain, uf_percent); every per-flow metric when absent"
        ),
    ] = None,
    flow: Annotated[str | None, Query(description="one flow group, link, or `run` (all when absent)")] = None,
    fmt: TableFormat = FORMAT_QUERY,
) -> Response:
    """Per grid point, flow group (or link, or the run: `level`) and metric over the succeeded
    replications: count, mean, sample standard deviation and the 95 % confidence interval
    (`ci_low`, `ci_high`, `half_width` = half their distance), Student-t on the scale where the
    metric is unbounded (`interval`: `log` for metrics never negative, `logit` for fractions),
    so it never leaves the metric's range; the axis values are columns named by their paths. With a
    stopping rule, `stop_reason` says why it stopped at the point (null: not stopped), e.g.
    "target met" or "capped: quota". JSON, CSV or Parquet (`format`)."""
    metrics = metric or list(NUMERIC_METRICS)
    for i, name in enumerate(metrics):
        if name not in SUMMARY_METRICS:
            raise InvalidInputError(unknown_metric_message(name), path=f"$.metric[{i}]", kind="unknown_metric")
    sweep = sweeps.get_sweep(session, sweep_id, viewer)
    reasons = sweeps.stop_reasons(session, sweep)
    axes = [{"path": a["path"], "values": a["values"]} for a in sweep.spec["axes"]]
    key = None
    if fmt == TableFormat.json:
        # Everything the body is made of: kept, it is the same text until a run is added (the
        # aggregates' version), the axes are extended or the stopping rule decides.
        stops = None if reasons is None else tuple(sorted(reasons.items()))
        spec = json_text([sweep.preset, axes])
        key = ("summary", sweep_id, tuple(metrics), flow, spec, stops, aggregates.version(session, sweep_id))
        cached = SUMMARY_BODIES.get(key)
        if cached is not None:
            return Response(cached, media_type="application/json")
    rows = sweeps.sweep_summary_rows(session, sweep_id, metrics=metrics, flow=flow)
    if reasons is not None:
        for row in rows:
            row["stop_reason"] = reasons.get(row["point"])
    body = {"sweep_id": str(sweep_id), "preset": sweep.preset, "axes": axes, "confidence": DEFAULT_CONFIDENCE}
    if fmt == TableFormat.json:  # the rows are finite already: one dump, not a pass over every value
        text = json_text({**finite(body), "rows": rows}).encode()
        if key is not None:
            SUMMARY_BODIES.put(key, text)
        return Response(text, media_type="application/json")
    first = ["point", *(a["path"] for a in axes), "flow", "variant", "metric", "level"]
    return table_response(rows, fmt, f"sweep-{sweep_id}-summary", body=body, first_columns=first)


@router.post("/{sweep_id}/cancel", response_model=SweepOut)
def cancel_sweep(sweep_id: uuid.UUID, viewer: CurrentUser, session: SessionDep, enqueue: EnqueueDep) -> Any:
    """Cancels every queued and running run of the sweep (finished runs and their results
    stay). An extension reopens it. Owner or admin only (403 otherwise)."""
    sweep, _ = sweeps.cancel(session, sweep_id, viewer)
    run_after_commit(session, enqueue)  # the cancelled runs' slots in the dispatch window are free
    return _out(session, sweep)


@router.post("/{sweep_id}/extend", response_model=SweepOut)
def extend_sweep(
    sweep_id: uuid.UUID,
    body: SweepExtension,
    viewer: Submitter,
    session: SessionDep,
    settings: SettingsDep,
    enqueue: EnqueueDep,
) -> Any:
    """More replications (`replications`: the new total per point) and/or more values on
    existing axes (`axes`: [{path, values}]). Only the new (point, replication) pairs become
    runs; everything already computed is reused. `created` gives the counts."""
    sweep, created = sweeps.extend(session, sweep_id, body, viewer, settings, max_queued=settings.max_queued_runs)
    _enqueue_after_commit(session, created, enqueue)
    return _out(session, sweep, created)


# ---- the tidy table (issue 15) ------------------------------------------------------------------


@router.get("/{sweep_id}/table", response_class=Response)
def table(sweep_id: uuid.UUID, session: SessionDep, viewer: CurrentUser, fmt: TableFormat = FORMAT_QUERY) -> Response:
    """The sweep as one tidy table: a row per succeeded run × (flow group | shared link | the
    run), with `run_id`, `point`, `replication`, `seed`, `level` (flow, link, run), `name`,
    `type`, `variant`, `app`, the axis values under plain names (`loss_m` for
    `flows[*].loss.m`; the JSON body's `axes` maps them) and every metric (null where it is
    another level's). JSON, CSV or Parquet (`format`)."""
    sweep = sweeps.get_sweep(session, sweep_id, viewer)
    axes = [{"path": a["path"], "values": a["values"]} for a in sweep.spec["axes"]]
    rows, meta = sweep_table(session, sweep_id, axes)
    body = {"sweep_id": str(sweep_id), "preset": sweep.preset, "combine": sweep.spec.get("combine", "product"), **meta}
    if fmt == TableFormat.json:
        return table_response(rows, fmt, f"sweep-{sweep_id}-table", body=body)
    # Every column, even one no row has (an empty sweep still names its columns).
    return table_response(rows, fmt, f"sweep-{sweep_id}-table", first_columns=meta["columns"])
