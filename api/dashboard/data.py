"""Tables the dashboards plot that no resource router serves: a run's per-flow rows and its
traces, and paper 000's Fig. 4 region map as cells. Each as JSON, CSV or Parquet (`?format=`),
so what a page draws is what a researcher downloads.

GET /v1/runs/{id}/flows     one row per flow of a succeeded run (the result's `flows`)
GET /v1/runs/{id}/traces    one row per sample time: `time_s`, `<flow>.cwnd`, `<flow>.ssthresh`,
                            `<link>.queue` (no rows when the run recorded no traces)
GET /v1/regions             one row per (p, m) cell of the map, with the crossover m_t and the
                            IMP bound W_IMP − 3 of its p
"""

from __future__ import annotations

import uuid
from typing import Annotated, Any

import numpy as np
from fastapi import APIRouter, Query, Response
from fastapi.exceptions import RequestValidationError

from api.auth import CurrentUser
from api.deps import SessionDep
from api.tabular import FORMAT_QUERY, TableFormat, table_response
from services import runs
from services.models import ModelDomainError, regions
from services.models.newreno import REGION_LABELS, REGION_MEANING

router = APIRouter(tags=["dashboard data"])

MAX_CELLS = 40_000


@router.get("/v1/runs/{run_id}/flows", summary="A run's per-flow results as a table")
def run_flows(run_id: uuid.UUID, session: SessionDep, viewer: CurrentUser, fmt: TableFormat = FORMAT_QUERY) -> Response:
    """The `flows` of `GET /v1/runs/{id}/result`, one row per flow. 409 while the run has no
    result."""
    result = runs.result_of(session, run_id, viewer, traces=False)
    return table_response(
        result["flows"],
        fmt,
        f"run-{run_id}-flows",
        body={"run_id": str(run_id)},
        first_columns=("name", "variant"),
    )


def trace_table(traces: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, str]]]:
    """The core's traces (`time_s`, `flows[]`, `links[]`) as one row per sample time; and the
    series, one per column after `time_s`: `{column, kind, name, quantity}`."""
    series: list[tuple[dict[str, str], list[Any]]] = []
    for kind, key in (("flow", "flows"), ("link", "links")):
        for item in traces.get(key) or []:
            for quantity, values in item.items():
                if quantity == "name" or not isinstance(values, list):
                    continue
                column = f"{item['name']}.{quantity}"
                series.append(
                    (
                        {
                            "column": column,
                            "kind": kind,
                            "name": item["name"],
                            "quantity": quantity,
                        },
                        values,
                    )
                )
    rows = []
    for i, t in enumerate(traces.get("time_s") or []):
        row: dict[str, Any] = {"time_s": t}
        for meta, values in series:
            row[meta["column"]] = values[i] if i < len(values) else None
        rows.append(row)
    return rows, [meta for meta, _ in series]


@router.get(
    "/v1/runs/{run_id}/traces", summary="A run's cwnd, ssthresh and queue traces as a table"
)
def run_traces(run_id: uuid.UUID, session: SessionDep, viewer: CurrentUser, fmt: TableFormat = FORMAT_QUERY) -> Response:
    """The traces of `GET /v1/runs/{id}/result?traces=true`, one row per sample time; the
    JSON body also lists the `series` (column, flow or link, name, quantity) and whether any
    were `recorded` (a scenario without `outputs.trace` records none: no rows). 409 while the
    run has no result."""
    result = runs.result_of(session, run_id, viewer, traces=True)
    traces = result.get("traces")
    rows, series = trace_table(traces) if traces else ([], [])
    body = {"run_id": str(run_id), "recorded": bool(traces), "series": series}
    return table_response(rows, fmt, f"run-{run_id}-traces", body=body, first_columns=("time_s",))


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
