"""Tables the dashboards plot that no resource router serves: a run's per-flow rows and its
traces, and paper 000's Fig. 4 region map as cells. Each as JSON, CSV or Parquet (`?format=`),
so what a page draws is what a researcher downloads.

GET /v1/runs/{id}/flows     one row per flow of a succeeded run (the result's `flows`)
GET /v1/runs/{id}/scenario  the scenario the run ran, and its sweep, point and replication
GET /v1/runs/{id}/traces    one row per sample time: `time_s`, `<flow>.cwnd`, `<flow>.ssthresh`,
                            `<link>.queue` (no rows when the run recorded no traces), streamed;
                            paged (`offset`, `limit`, `from_s`, `to_s`, `series`) and downsampled
                            for plots (`points`)
GET /v1/regions             one row per (p, m) cell of the map, with the crossover m_t and the
                            IMP bound W_IMP − 3 of its p
"""

from __future__ import annotations

import uuid
from typing import Annotated, Any

import numpy as np
from fastapi import APIRouter, Query, Request, Response
from fastapi.exceptions import RequestValidationError

from api.auth import CurrentUser
from api.deps import SessionDep, UnitOfWorkRoute
from api.tabular import FORMAT_QUERY, TableFormat, stream_table, table_response
from services import runs
from services.runs import traces
from services.models import ModelDomainError, regions
from services.models.newreno import REGION_LABELS, REGION_MEANING

router = APIRouter(tags=["dashboard data"], route_class=UnitOfWorkRoute)

MAX_CELLS = 40_000


@router.get("/v1/runs/{run_id}/flows", summary="A run's per-flow results as a table")
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


@router.get("/v1/runs/{run_id}/scenario", summary="The scenario a run ran, and its sweep")
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


@router.get(
    "/v1/runs/{run_id}/traces", summary="A run's cwnd, ssthresh and queue traces as a table"
)
def run_traces(
    run_id: uuid.UUID,
    request: Request,
    session: SessionDep,
    viewer: CurrentUser,
    fmt: TableFormat = FORMAT_QUERY,
    series: Annotated[
        list[str] | None,
        Query(description="only these columns besides `time_s` (repeat for several: `series=f1.cwnd&series=f1.ssthresh`); all when absent"),
    ] = None,
    offset: Annotated[int, Query(ge=0, description="the first sample (row) index")] = 0,
    limit: Annotated[int | None, Query(ge=1, description="at most this many samples from the first one; all when absent")] = None,
    from_s: Annotated[float | None, Query(allow_inf_nan=False, description="only samples at or after this time [s]")] = None,
    to_s: Annotated[float | None, Query(allow_inf_nan=False, description="only samples at or before this time [s]")] = None,
    points: Annotated[
        int | None,
        Query(ge=2, le=MAX_POINTS, description="at most this many rows: min and max of every series per bucket of samples (for plots)"),
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
        raise RequestValidationError([{"type": "value_error", "loc": ("query", "to_s"), "msg": "must not be below from_s", "input": to_s}])
    layout = traces.layout_of(session, run_id, viewer)
    name = f"run-{run_id}-traces"
    if layout is None:
        body = {"run_id": str(run_id), "recorded": False, "series": [], "samples": 0, "offset": 0, "count": 0, "next_offset": None, "downsampled": None}
        return table_response([], fmt, name, body=body, first_columns=("time_s",))
    chosen = layout.columns(series)
    selection = traces.window(session, layout, offset=offset, from_s=from_s, to_s=to_s)
    rows = selection if limit is None else selection[:limit]
    buckets = 0 if points is None else traces.buckets_of(len(rows), points)
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
    pieces = traces.blocks(request.app.state.session_factory, layout, chosen, rows)
    if buckets:
        assert points is not None  # buckets is 0 without points
        pieces = traces.downsample(pieces, len(rows), points, [layout.series[i].dtype for i in chosen])
    return stream_table([layout.series[i].column for i in chosen], pieces, fmt, name, body=body)


_POSITIVE = {"gt": 0, "allow_inf_nan": False}


@router.get("/v1/regions", summary="Paper 000 Fig. 4: the region map as a table of cells")
def region_cells(
    rtt_s: Annotated[
        float, Query(description="mean round-trip time R [s]", le=100, **_POSITIVE)
    ] = 0.07,
    rto_s: Annotated[
        float, Query(description="mean first timeout RTO [s]", le=1000, **_POSITIVE)
    ] = 0.2,
    m_star: Annotated[
        float | None,
        Query(description="Impatient's timeout threshold; default floor(RTO/R) + 2", **_POSITIVE),
    ] = None,
    p_min: Annotated[
        float, Query(description="smallest loss event rate", lt=1, **_POSITIVE)
    ] = 1e-4,
    p_max: Annotated[float, Query(description="largest loss event rate", le=1, **_POSITIVE)] = 0.1,
    p_num: Annotated[int, Query(description="loss event rates, log-spaced", ge=2, le=400)] = 60,
    m_max: Annotated[int, Query(description="m = 1, 2, …, m_max", ge=1, le=400)] = 70,
    fmt: TableFormat = FORMAT_QUERY,
) -> Response:
    """`POST /v1/models/newreno/regions` over p (log-spaced from p_min to p_max) × m = 1…m_max,
    one row per cell: `p`, `m`, `region`, and the `m_t` and `w_imp_minus_3` of its p. The JSON
    body also has the grid, the legend and the region counts."""
    errors = []
    if p_max <= p_min:
        errors.append(
            {
                "type": "value_error",
                "loc": ("query", "p_max"),
                "msg": "must be above p_min",
                "input": p_max,
            }
        )
    if p_num * m_max > MAX_CELLS:
        errors.append(
            {
                "type": "value_error",
                "loc": ("query", "m_max"),
                "msg": f"p_num × m_max must be at most {MAX_CELLS}",
                "input": m_max,
            }
        )
    if errors:
        raise RequestValidationError(errors)
    p = np.geomspace(p_min, p_max, p_num)
    m = np.arange(1, m_max + 1, dtype=float)
    try:
        r = regions(p, m, rtt_s, rto_s, m_star, max_points=MAX_CELLS)
    except ModelDomainError as exc:
        raise RequestValidationError(
            [
                {
                    "type": "value_error",
                    "loc": ("query", i.parameter),
                    "msg": i.reason,
                    "input": i.value,
                }
                for i in exc.issues
            ]
        ) from None
    m_t = [_finite(x) for x in np.ravel(r.crossover.m_t)]
    w_imp = [_finite(x) for x in np.ravel(r.w_imp_minus_3)]
    rows = [
        {
            "p": float(pi),
            "m": int(mj),
            "region": str(r.labels[i, j]),
            "m_t": m_t[i],
            "w_imp_minus_3": w_imp[i],
        }
        for i, pi in enumerate(r.p)
        for j, mj in enumerate(r.m)
    ]
    body = {
        "rtt_s": r.rtt_s,
        "rto_s": r.rto_s,
        "m_star": r.m_star,
        "p": [float(x) for x in r.p],
        "m": [int(x) for x in r.m],
        "m_t": m_t,
        "w_imp_minus_3": w_imp,
        "legend": dict(REGION_MEANING),
        "regions": list(REGION_LABELS),
        "counts": {k: int(np.count_nonzero(r.labels == k)) for k in REGION_LABELS},
    }
    return table_response(rows, fmt, "regions", body=body, first_columns=("p", "m", "region"))


def _finite(x: Any) -> float | None:
    x = float(x)
    return x if np.isfinite(x) else None
