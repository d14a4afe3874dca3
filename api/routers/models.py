"""/v1/models: closed-form throughput models, answered inline (services.models).

GET  /v1/models                      every model with its parameters, units, ranges, reference
GET  /v1/models/{name}               one model
POST /v1/models/{name}/evaluate      a model on numbers or lists (broadcast or grid)
POST /v1/models/newreno/crossover    paper 000's m_t per p
POST /v1/models/newreno/regions      paper 000's Fig. 4 region map over p × m
GET  /v1/regions                     the same map as a table of cells (JSON, CSV, Parquet)

Impossible inputs are 422s in FastAPI's usual shape, ``{"detail": [{"loc": ["body", "p", 2],
"msg": ..., "type": "value_error", "input": ...}]}``, with the reason from the model's metadata.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

import numpy as np
from fastapi import APIRouter, Body, HTTPException, Query, Response
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel

from api.limits import ModelBodyRoute
from api.schemas.models import (
    MAX_POINTS,
    CrossoverRequest,
    CrossoverResponse,
    EvaluateResponse,
    ModelOut,
    RegionsRequest,
    RegionsResponse,
    ValueRange,
    WarningOut,
    evaluate_request_schema,
)
from api.tabular import FORMAT_QUERY, TableFormat, finite, table_response
from services.models import MODELS, ModelDomainError, UnknownModelError, crossover, get_model, regions
from services.models.common import ModelWarning
from services.models.newreno import REGION_LABELS, REGION_MEANING

router = APIRouter(prefix="/v1/models", tags=["models"], route_class=ModelBodyRoute)
# GET /v1/regions: paper 000's region map as a table of cells, for the dashboards and downloads.
regions_router = APIRouter(prefix="/v1/regions", tags=["models"], route_class=ModelBodyRoute)


# ---- helpers ---------------------------------------------------------------------------------


def _jsonable(a: Any) -> Any:
    """numpy → JSON: nested lists, NaN/inf → null, 0-d → a bare number."""
    a = np.asarray(a)
    if a.dtype.kind == "f":
        a = np.where(np.isfinite(a), a, None)
    return a.tolist()


def _ints(a: np.ndarray) -> list[int | None]:
    return [None if not np.isfinite(x) else int(x) for x in np.ravel(a)]


def _warnings(ws: list[ModelWarning]) -> list[WarningOut]:
    return [WarningOut(**w.as_dict()) for w in ws]


def _unrange(body: BaseModel, names: tuple[str, ...]) -> tuple[dict[str, Any], set[str]]:
    """The body's inputs, with ValueRanges expanded; and which fields were ranges."""
    values: dict[str, Any] = {}
    ranged: set[str] = set()
    for n in names:
        v = getattr(body, n)
        if isinstance(v, ValueRange):
            values[n] = v.values()
            ranged.add(n)
        else:
            values[n] = v
    return values, ranged


def _unprocessable(
    exc: ModelDomainError, body: BaseModel, ranged: set[str] | frozenset[str] = frozenset()
) -> RequestValidationError:
    """A domain error as the 422 FastAPI gives for a failed body validation. An issue about no
    field in particular (too many points, lists that do not broadcast) points at the body, or
    at ``mode`` where the body has one."""
    errors = []
    for issue in exc.issues:
        loc: tuple[Any, ...] = ("body", issue.parameter) if issue.parameter in type(body).model_fields else ("body",)
        if issue.index and issue.parameter not in ranged:
            loc += issue.index
        errors.append({"type": "value_error", "loc": loc, "msg": issue.reason, "input": issue.value})
    return RequestValidationError(errors)


def _model_out(name: str) -> ModelOut:
    meta = get_model(name).metadata()
    return ModelOut(**meta, evaluate=f"{router.prefix}/{name}/evaluate")


# ---- routes ----------------------------------------------------------------------------------


@router.get("", response_model=list[ModelOut], summary="List the models")
def list_models() -> list[ModelOut]:
    return [_model_out(name) for name in MODELS]


@router.post("/newreno/crossover", response_model=CrossoverResponse, summary="Paper 000: crossover m_t of SBS and IMP")
def newreno_crossover(body: CrossoverRequest) -> CrossoverResponse:
    """For each p (R, RTO and m* broadcast with it), the real m_t where the Slow-but-Steady
    model (eq. 4) equals the Impatient model (eq. 8), and the first whole m ≥ m_t. "No
    crossover" (status beyond_model, m_t null) where m_t > W_SBS − 3 (paper 000 §V)."""
    inputs, ranged = _unrange(body, ("p", "rtt_s", "rto_s", "m_star"))
    try:
        c = crossover(**inputs, max_points=MAX_POINTS)
    except ModelDomainError as exc:
        raise _unprocessable(exc, body, ranged) from None
    flat = lambda a: _jsonable(np.ravel(a))  # noqa: E731
    return CrossoverResponse(
        p=flat(c.p),
        rtt_s=flat(c.rtt_s),
        rto_s=flat(c.rto_s),
        m_star=flat(c.m_star),
        m_t=flat(c.m_t),
        m_t_int=_ints(c.m_t_int),
        status=list(np.ravel(c.status)),
        w_sbs_at_m_t=flat(c.w_sbs_at_m_t),
        w_imp=flat(c.w_imp),
        warnings=_warnings(c.warnings),
    )


@router.post(
    "/newreno/regions", response_model=RegionsResponse, summary="Paper 000 Fig. 4: the fast-recovery region map"
)
def newreno_regions(body: RegionsRequest) -> RegionsResponse:
    """Labels every (p, m) of the grid: equality (m < m*), sbs_superior, imp_superior, or
    outside_model (m > W_SBS − 3 in the SBS and equality regions, m > W_IMP − 3 in the IMP
    region); with the m_t curve and the IMP bound per p."""
    inputs, ranged = _unrange(body, ("p", "m", "rtt_s", "rto_s", "m_star"))
    try:
        r = regions(**inputs, max_points=MAX_POINTS)
    except ModelDomainError as exc:
        raise _unprocessable(exc, body, ranged) from None
    labels = r.labels.tolist()
    return RegionsResponse(
        p=_jsonable(r.p),
        m=_jsonable(r.m),
        rtt_s=r.rtt_s,
        rto_s=r.rto_s,
        m_star=r.m_star,
        labels=labels,
        legend=dict(REGION_MEANING),
        counts={k: int(np.count_nonzero(r.labels == k)) for k in REGION_LABELS},
        m_t=_jsonable(r.crossover.m_t),
        m_t_int=_ints(r.crossover.m_t_int),
        status=list(r.crossover.status),
        w_imp_minus_3=_jsonable(r.w_imp_minus_3),
        warnings=_warnings(r.warnings + r.crossover.warnings),
    )


def _evaluate(name: str, body: BaseModel) -> EvaluateResponse:
    inputs: Mapping[str, Any] = body.model_dump(exclude={"mode"}, exclude_none=True)
    try:
        e = get_model(name).evaluate(inputs, body.mode, max_points=MAX_POINTS)  # type: ignore[attr-defined]
    except ModelDomainError as exc:
        raise _unprocessable(exc, body) from None
    return EvaluateResponse(
        model=e.model,
        mode=e.mode,
        shape=list(e.shape),
        axes=list(e.axes),
        inputs={k: _jsonable(v) for k, v in e.inputs.items()},
        outputs={k: _jsonable(v) for k, v in e.outputs.items()},
        warnings=_warnings(e.warnings),
    )


def _add_evaluate_route(name: str) -> None:
    schema = evaluate_request_schema(MODELS[name])
    model = MODELS[name]

    def evaluate(body: BaseModel) -> EvaluateResponse:
        return _evaluate(name, body)

    evaluate.__annotations__["body"] = schema  # the generated body model (annotations are strings here)

    evaluate.__doc__ = f"{model.title}. {model.reference}.\n\n{model.equations}"
    router.add_api_route(
        f"/{name}/evaluate",
        evaluate,
        methods=["POST"],
        response_model=EvaluateResponse,
        summary=f"Evaluate {name}",
        operation_id=f"evaluate_{name.replace('-', '_')}",
    )


for _name in MODELS:
    _add_evaluate_route(_name)


@router.post("/{name}/evaluate", include_in_schema=False)
def evaluate_unknown(name: str, body: Any = Body(None)) -> None:
    """Every known model has its own route above; anything else is not a model."""
    raise HTTPException(status_code=404, detail=str(UnknownModelError(name, list(MODELS))))


@router.get("/{name}", response_model=ModelOut, summary="One model")
def show_model(name: str) -> ModelOut:
    try:
        return _model_out(name)
    except UnknownModelError as exc:
        raise HTTPException(status_code=404, detail=str(exc)) from None


MAX_CELLS = 40_000
_POSITIVE = {"gt": 0, "allow_inf_nan": False}


@regions_router.get("", summary="Paper 000 Fig. 4: the region map as a table of cells")
def region_cells(
    rtt_s: Annotated[float, Query(description="mean round-trip time R [s]", le=100, **_POSITIVE)] = 0.07,
    rto_s: Annotated[float, Query(description="mean first timeout RTO [s]", le=1000, **_POSITIVE)] = 0.2,
    m_star: Annotated[
        float | None,
        Query(description="Impatient's timeout threshold; default floor(RTO/R) + 2", **_POSITIVE),
    ] = None,
    p_min: Annotated[float, Query(description="smallest loss event rate", lt=1, **_POSITIVE)] = 1e-4,
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
    m_t = [finite(float(x)) for x in np.ravel(r.crossover.m_t)]
    w_imp = [finite(float(x)) for x in np.ravel(r.w_imp_minus_3)]
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
