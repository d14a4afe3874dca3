"""Request and response bodies of /v1/models.

Each model's evaluate body is generated from its parameter metadata (services.models), so the
OpenAPI document shows every parameter with its unit, its domain and its valid range. The
schemas check types only (finite numbers, flat lists); the domain checks — and their reasons —
live in services.models and come back as 422s through the router.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, create_model, model_validator

from services.models.common import Model, Param

MAX_LIST = 100_000
MAX_POINTS = 100_000

Number = float  # NaN and ±Infinity included: see the module docstring
NumberList = Annotated[list[Number], Field(min_length=1, max_length=MAX_LIST)]
NumberOrList = Number | NumberList


class ValueRange(BaseModel):
    """An inclusive range of values: ``step`` (linear) or ``num`` points (linear or log)."""

    model_config = ConfigDict(extra="forbid")

    start: Number
    stop: Number
    step: Number | None = Field(None, description="spacing (> 0); give step or num")
    num: int | None = Field(None, ge=1, le=MAX_LIST, description="number of points; give step or num")
    scale: Literal["linear", "log"] = Field("linear", description="log: geometric spacing (needs num, start > 0)")

    def _finite(self) -> bool:
        return all(math.isfinite(x) for x in (self.start, self.stop, self.step or 1.0))

    @model_validator(mode="after")
    def _one_of(self) -> ValueRange:
        if (self.step is None) == (self.num is None):
            raise ValueError("give exactly one of step and num")
        if not self._finite():
            return self  # values() gives NaN, which the service refuses (see the module docstring)
        if self.step is not None and self.step <= 0:
            raise ValueError("step must be > 0")
        if self.stop < self.start:
            raise ValueError("stop must not be below start")
        if self.scale == "log":
            if self.num is None:
                raise ValueError("a log range needs num, not step")
            if self.start <= 0:
                raise ValueError("a log range needs start > 0")
        if self.step is not None and (self.stop - self.start) / self.step + 1 > MAX_LIST:
            raise ValueError(f"more than {MAX_LIST} values")
        return self

    def values(self) -> np.ndarray:
        if not self._finite():
            return np.array([math.nan])
        if self.num is not None:
            if self.scale == "log":
                return np.geomspace(self.start, self.stop, self.num)
            return np.linspace(self.start, self.stop, self.num)
        assert self.step is not None
        n = math.floor((self.stop - self.start) / self.step * (1 + 1e-12) + 1e-9) + 1
        return self.start + self.step * np.arange(n)


class WarningOut(BaseModel):
    parameter: str = Field(description="the input (or the input a derived quantity comes from)")
    reason: str
    points: int = Field(description="how many evaluated points it concerns")
    kind: Literal["range", "boundary", "ignored"] = Field(
        "range",
        description="range: outside where the model is claimed to hold; boundary: within measurement noise "
        "of a regime boundary, where a slightly different input gives the other regime's answer; ignored: a "
        "parameter this model accepts and does not use",
    )


class BoundOut(BaseModel):
    minimum: float | None = None
    exclusive_minimum: float | None = None
    maximum: float | None = None
    exclusive_maximum: float | None = None
    text: str
    reason: str


class ParamOut(BaseModel):
    name: str
    symbol: str
    unit: str
    description: str
    required: bool
    default: float | None
    integer: bool
    domain: BoundOut = Field(description="outside it a value is impossible: 422")
    valid_range: BoundOut | None = Field(description="outside it the model is not claimed to hold: a warning")


class OutputOut(BaseModel):
    name: str
    unit: str
    description: str


class IgnoredParamOut(BaseModel):
    name: str
    symbol: str
    unit: str
    reason: str = Field(description="why the model does not use it")


class ModelOut(BaseModel):
    name: str
    title: str
    reference: str
    equations: str
    notes: str
    variants: list[str] = Field(
        description="the congestion-control variants whose flows the model describes (model-vs-simulation "
        "comparisons fit it to those flows only)"
    )
    parameters: list[ParamOut]
    outputs: list[OutputOut]
    ignored_parameters: list[IgnoredParamOut] = Field(
        default_factory=list,
        description="accepted and not used (another model's, so one call serves both); a value given is "
        "named in the answer's warnings",
    )
    evaluate: str = Field(description="the path that evaluates this model")


class EvaluateResponse(BaseModel):
    model: str
    mode: Literal["broadcast", "grid"]
    shape: list[int] = Field(description="shape of every output ([] when every input is a number)")
    axes: list[str] = Field(description="grid mode: the input behind each axis of the outputs")
    inputs: dict[str, float | list[float]] = Field(description="the inputs as evaluated, defaults filled in")
    outputs: dict[str, Any] = Field(description="each output as a number or nested lists of the shape above")
    warnings: list[WarningOut]


def _field_for(p: Param) -> tuple[Any, Any]:
    extra: dict[str, Any] = {"x-unit": p.unit, "x-domain": p.domain.describe(p.symbol)}
    if p.valid is not None:
        extra["x-valid-range"] = p.valid.describe(p.symbol)
    description = f"{p.description} [{p.unit}]; {p.domain.describe(p.symbol)}"
    if p.required and p.default is None:
        return NumberOrList, Field(..., description=description, json_schema_extra=extra)
    return NumberOrList | None, Field(p.default, description=description, json_schema_extra=extra)


def evaluate_request_schema(model: Model) -> type[BaseModel]:
    """The body of POST /v1/models/{model.name}/evaluate."""
    fields: dict[str, Any] = {p.name: _field_for(p) for p in model.params}
    for p, why in model.ignored:
        fields[p.name] = (NumberOrList | None, Field(None, description=f"{p.description} [{p.unit}]: not used ({why})"))
    fields["mode"] = (
        Literal["broadcast", "grid"],
        Field(
            "broadcast",
            description="broadcast: lists pair up element by element (numpy broadcasting); "
            "grid: the outer product, one axis per list input",
        ),
    )
    name = "Evaluate" + "".join(part.capitalize() for part in model.name.replace("-", " ").split())
    return create_model(name, __config__=ConfigDict(extra="forbid", title=f"Evaluate {model.name}"), **fields)


class CrossoverRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    p: NumberOrList | ValueRange = Field(description="loss event rate(s), 0 < p < 1")
    rtt_s: NumberOrList = Field(description="mean round-trip time R [s], > 0")
    rto_s: NumberOrList = Field(description="mean duration of the first timeout [s], > 0")
    m_star: NumberOrList | None = Field(None, description="Impatient's timeout threshold; default floor(RTO/R) + 2")


class CrossoverResponse(BaseModel):
    p: list[float]
    rtt_s: list[float]
    rto_s: list[float]
    m_star: list[float]
    m_t: list[float | None] = Field(description="the real m where eq. (4) = eq. (8); null where there is none")
    m_t_int: list[int | None] = Field(description="the first whole m ≥ m_t: IMP superior from there")
    status: list[Literal["crossover", "beyond_model", "below_one", "overflow"]] = Field(
        description="beyond_model: m_t > W_SBS − 3 (no crossover inside the model); below_one: m_t < 1; "
        "overflow: inputs too extreme for double precision"
    )
    w_sbs_at_m_t: list[float | None] = Field(
        description="W_SBS at m_t (at 1 below one); null where double precision overflows (status overflow)"
    )
    w_imp: list[float | None] = Field(description="W_IMP; null where double precision overflows")
    warnings: list[WarningOut]


class RegionsRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    p: NumberList | ValueRange = Field(description="loss event rates: the rows of the map")
    m: NumberList | ValueRange = Field(description="losses per loss event: the columns of the map")
    rtt_s: Number = Field(description="mean round-trip time R [s], > 0")
    rto_s: Number = Field(description="mean duration of the first timeout [s], > 0")
    m_star: Number | None = Field(None, description="Impatient's timeout threshold; default floor(RTO/R) + 2")


class RegionsResponse(BaseModel):
    p: list[float]
    m: list[float]
    rtt_s: float
    rto_s: float
    m_star: float
    labels: list[list[str]] = Field(description="labels[i][j]: the region at p[i], m[j]")
    legend: dict[str, str]
    counts: dict[str, int]
    m_t: list[float | None] = Field(description="per p: the crossover (the upper bound of the SBS-superior region)")
    m_t_int: list[int | None]
    status: list[str]
    w_imp_minus_3: list[float | None] = Field(
        description="per p: the upper bound of the IMP-superior region; null where double precision overflows"
    )
    warnings: list[WarningOut]
