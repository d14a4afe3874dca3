"""/v1/models: closed-form throughput models, answered inline (services.models).

GET  /v1/models                      every model with its parameters, units, ranges, reference
GET  /v1/models/{name}               one model
POST /v1/models/{name}/evaluate      a model on numbers or lists (broadcast or grid)
POST /v1/models/newreno/crossover    paper 000's m_t per p
POST /v1/models/newreno/regions      paper 000's Fig. 4 region map over p × m

Impossible inputs are 422s in FastAPI's usual shape, ``{"detail": [{"loc": ["body", "p", 2],
"msg": ..., "type": "value_error", "input": ...}]}``, with the reason from the model's metadata.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from fastapi import APIRouter, Body, HTTPException
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
from services.models import MODELS, ModelDomainError, UnknownModelError, crossover, get_model, regions
from services.models.common import ModelWarning
from services.models.newreno import REGION_LABELS, REGION_MEANING

router = APIRouter(prefix="/v1/models", tags=["models"], route_class=ModelBodyRoute)


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


@router.post("/newreno/regions", response_model=RegionsResponse, summary="Paper 000 Fig. 4: the fast-recovery region map")
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
