"""What every model shares: parameter metadata, input checks, broadcasting, warnings.

A model is a vectorised function of named inputs (SI units: seconds, probabilities, packets)
plus the metadata a client needs to call it: each parameter's unit, its *domain* (values that
are impossible: outside it a :class:`ModelDomainError` names the parameter and the reason) and
its *valid range* (where the model's authors claim it holds: outside it the answer carries a
:class:`ModelWarning`). :meth:`Model.evaluate` does the checks, the broadcasting or gridding
and the unit conversions once, for every model.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

Mode = Literal["broadcast", "grid"]
MODES: tuple[Mode, ...] = ("broadcast", "grid")


# ---- errors and warnings ---------------------------------------------------------------------


@dataclass(frozen=True)
class DomainIssue:
    """One impossible input: the parameter, the position of the first offending element
    (``()`` for a scalar) and why it is impossible."""

    parameter: str
    reason: str
    index: tuple[int, ...] = ()
    value: float | None = None


class ModelDomainError(ValueError):
    """Impossible inputs (p <= 0, R <= 0, m < 1, ...): one issue per offending parameter."""

    def __init__(self, issues: Sequence[DomainIssue]):
        self.issues = list(issues)
        super().__init__("; ".join(f"{i.parameter}{list(i.index) if i.index else ''}: {i.reason}" for i in self.issues))


class UnknownModelError(LookupError):
    def __init__(self, name: str, known: Sequence[str]):
        self.name = name
        self.known = list(known)
        super().__init__(f"unknown model {name!r}; known models: {', '.join(self.known)}")


WarningKind = Literal["range", "boundary", "ignored"]


@dataclass(frozen=True)
class ModelWarning:
    """Something the caller should know about the answer; ``points`` counts the affected
    points of the evaluated shape.

    ``range``: inputs (or a quantity derived from them) outside the range where the model is
    claimed to hold: the answer is computed, but should not be trusted there.
    ``boundary``: inputs within measurement noise of a regime boundary (e.g. Impatient's m*):
    the answer is the model's, but a slightly different input would give the other regime's,
    which may be far away.
    ``ignored``: a parameter this model accepts and does not use (``Model.ignored``)."""

    parameter: str
    reason: str
    points: int
    kind: WarningKind = "range"

    def as_dict(self) -> dict[str, Any]:
        return {"parameter": self.parameter, "reason": self.reason, "points": self.points, "kind": self.kind}


# ---- parameter metadata ----------------------------------------------------------------------


@dataclass(frozen=True)
class Bound:
    """An interval; ``None`` ends are unbounded, ``*_open`` ends exclusive."""

    lo: float | None = None
    hi: float | None = None
    lo_open: bool = False
    hi_open: bool = False

    def contains(self, x: np.ndarray) -> np.ndarray:
        ok = np.ones(np.shape(x), dtype=bool)
        if self.lo is not None:
            ok &= (x > self.lo) if self.lo_open else (x >= self.lo)
        if self.hi is not None:
            ok &= (x < self.hi) if self.hi_open else (x <= self.hi)
        return ok

    def describe(self, symbol: str) -> str:
        def num(v: float) -> str:
            return f"{v:g}"

        if self.lo is not None and self.hi is not None:
            return (
                f"{num(self.lo)} {'<' if self.lo_open else '≤'} {symbol} {'<' if self.hi_open else '≤'} {num(self.hi)}"
            )
        if self.lo is not None:
            return f"{symbol} {'>' if self.lo_open else '≥'} {num(self.lo)}"
        if self.hi is not None:
            return f"{symbol} {'<' if self.hi_open else '≤'} {num(self.hi)}"
        return f"any finite {symbol}"

    def as_dict(self) -> dict[str, Any]:
        """``minimum`` / ``exclusive_minimum`` / ``maximum`` / ``exclusive_maximum``."""
        out: dict[str, Any] = {}
        if self.lo is not None:
            out["exclusive_minimum" if self.lo_open else "minimum"] = self.lo
        if self.hi is not None:
            out["exclusive_maximum" if self.hi_open else "maximum"] = self.hi
        return out

    def json_schema(self) -> dict[str, Any]:
        """The same as JSON Schema keywords (for OpenAPI)."""
        return {k.replace("exclusive_m", "exclusiveM"): v for k, v in self.as_dict().items()}


@dataclass(frozen=True)
class Param:
    """One input of a model.

    ``domain``/``domain_reason``: outside it the value is impossible (an error).
    ``valid``/``valid_reason``: outside it the model is not claimed to hold (a warning).
    ``default``: used when the input is absent; ``required=False`` with no default means the
    input is optional and changes what the model does when given (``m_star``, ``w_max``,
    ``mss_bytes``).
    """

    name: str
    symbol: str
    unit: str
    description: str
    domain: Bound
    domain_reason: str
    valid: Bound | None = None
    valid_reason: str = ""
    default: float | None = None
    required: bool = True
    integer: bool = False

    def metadata(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "symbol": self.symbol,
            "unit": self.unit,
            "description": self.description,
            "required": self.required and self.default is None,
            "default": self.default,
            "integer": self.integer,
            "domain": {
                **self.domain.as_dict(),
                "text": self.domain.describe(self.symbol),
                "reason": self.domain_reason,
            },
            "valid_range": (
                {**self.valid.as_dict(), "text": self.valid.describe(self.symbol), "reason": self.valid_reason}
                if self.valid is not None
                else None
            ),
        }

    def check(self, x: np.ndarray) -> DomainIssue | None:
        """The first impossible element of ``x``, or None."""
        finite = np.isfinite(x)
        if not finite.all():
            return self._issue(~finite, x, "must be a finite number")
        if self.integer:
            frac = x != np.floor(x)
            if frac.any():
                return self._issue(frac, x, f"must be a whole number ({self.description})")
        bad = ~self.domain.contains(x)
        if bad.any():
            return self._issue(bad, x, f"must satisfy {self.domain.describe(self.symbol)}: {self.domain_reason}")
        return None

    def _issue(self, bad: np.ndarray, x: np.ndarray, reason: str) -> DomainIssue:
        idx = tuple(int(i) for i in np.argwhere(bad)[0]) if np.ndim(x) else ()
        value = float(x[idx]) if idx else float(x)
        return DomainIssue(self.name, reason, idx, value if math.isfinite(value) else None)


@dataclass(frozen=True)
class Output:
    name: str
    unit: str
    description: str

    def metadata(self) -> dict[str, str]:
        return {"name": self.name, "unit": self.unit, "description": self.description}


# Shared parameter definitions. Each model narrows the valid range of p to where its authors
# claim it holds (dataclasses.replace).

PROBABILITY = Bound(0.0, 1.0, lo_open=True, hi_open=True)


def loss_event_rate(valid: Bound | None, valid_reason: str, description: str = "loss event rate") -> Param:
    return Param(
        name="p",
        symbol="p",
        unit="1 (probability per packet)",
        description=description,
        domain=PROBABILITY,
        domain_reason="a loss event rate is a probability; at p = 0 no loss ever ends a cycle (infinite throughput)",
        valid=valid,
        valid_reason=valid_reason,
    )


RTT = Param(
    name="rtt_s",
    symbol="R",
    unit="s",
    description="mean round-trip time",
    domain=Bound(0.0, None, lo_open=True),
    domain_reason="a round-trip time is a positive duration",
)


def rto(description: str, valid: Bound | None = None, valid_reason: str = "") -> Param:
    return Param(
        name="rto_s",
        symbol="RTO",
        unit="s",
        description=description,
        domain=Bound(0.0, None, lo_open=True),
        domain_reason="a retransmission timeout is a positive duration",
        valid=valid,
        valid_reason=valid_reason,
    )


MSS = Param(
    name="mss_bytes",
    symbol="MSS",
    unit="bytes",
    description="segment payload size; when given, throughput is also reported in bit/s (payload only, no headers)",
    domain=Bound(1.0, None),
    domain_reason="a segment carries at least one byte",
    required=False,
    integer=True,
)

THROUGHPUT_OUTPUTS = (
    Output("throughput_pkts_per_s", "packets/s", "steady-state throughput"),
    Output("throughput_pkts_per_rtt", "packets/RTT", "steady-state throughput times R"),
    Output("throughput_bits_per_s", "bit/s", "throughput times 8 · mss_bytes (only when mss_bytes is given)"),
)


# ---- inputs: conversion, checks, broadcasting ------------------------------------------------


@dataclass(frozen=True)
class Prepared:
    """Inputs ready for a model function: ``arrays`` broadcast-compatible with ``shape``;
    ``given`` as the caller passed them (defaults filled in), for echoing back."""

    arrays: dict[str, np.ndarray]
    given: dict[str, np.ndarray]
    shape: tuple[int, ...]
    axes: tuple[str, ...]


def as_float_array(name: str, value: Any) -> np.ndarray:
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ModelDomainError([DomainIssue(name, f"must be a number or a list of numbers ({exc})")]) from None
    if arr.dtype == object:  # ragged nested lists
        raise ModelDomainError([DomainIssue(name, "must be a number or a list of numbers")])
    return arr


def prepare(
    params: Sequence[Param],
    inputs: Mapping[str, Any],
    mode: Mode = "broadcast",
    max_points: int | None = None,
) -> Prepared:
    """Check names and domains, fill defaults, and lay the inputs out for ``mode``.

    broadcast: numpy broadcasting of the inputs as given (lists of equal length pair up
    element by element; scalars apply everywhere).
    grid: the outer product: each input given as a list is one axis of the result, in the
    order of ``params``; scalars apply everywhere.
    """
    if mode not in MODES:
        raise ModelDomainError([DomainIssue("mode", f"must be one of {', '.join(MODES)}")])
    by_name = {p.name: p for p in params}
    issues: list[DomainIssue] = []
    for name in inputs:
        if name not in by_name:
            issues.append(DomainIssue(name, f"unknown parameter; this model takes {', '.join(by_name)}"))
    given: dict[str, np.ndarray] = {}
    for p in params:
        if p.name in inputs and inputs[p.name] is not None:
            try:
                arr = as_float_array(p.name, inputs[p.name])
            except ModelDomainError as exc:
                issues += exc.issues
                continue
            if mode == "grid" and arr.ndim > 1:
                issues.append(DomainIssue(p.name, "in grid mode each input must be a number or a flat list"))
                continue
            if arr.size == 0:
                issues.append(DomainIssue(p.name, "must not be an empty list"))
                continue
            issue = p.check(arr)
            if issue is not None:
                issues.append(issue)
                continue
            given[p.name] = arr
        elif p.default is not None:
            given[p.name] = np.asarray(float(p.default))
        elif p.required:
            issues.append(DomainIssue(p.name, "is required"))
    if issues:
        raise ModelDomainError(issues)

    if mode == "grid":
        axes = tuple(n for n, a in given.items() if a.ndim == 1)
        arrays = {}
        for n, a in given.items():
            if a.ndim == 1:
                dims = [1] * len(axes)
                dims[axes.index(n)] = a.size
                arrays[n] = a.reshape(dims)
            else:
                arrays[n] = a
        shape = tuple(given[n].size for n in axes)
    else:
        axes = ()
        arrays = dict(given)
        try:
            shape = np.broadcast_shapes(*(a.shape for a in arrays.values()))
        except ValueError:
            sizes = ", ".join(f"{n}: {list(a.shape)}" for n, a in arrays.items() if a.ndim)
            raise ModelDomainError(
                [
                    DomainIssue(
                        "mode",
                        f"the inputs' shapes do not broadcast ({sizes}); give lists of equal length, or use mode 'grid'",
                    )
                ]
            ) from None
    points = math.prod(shape)
    if max_points is not None and points > max_points:
        raise ModelDomainError([DomainIssue("mode", f"{points} points requested; at most {max_points} per request")])
    return Prepared(arrays=arrays, given=given, shape=tuple(shape), axes=axes)


def range_warnings(
    params: Sequence[Param], arrays: Mapping[str, np.ndarray], shape: tuple[int, ...]
) -> list[ModelWarning]:
    """A warning for each parameter with values outside its valid range."""
    out = []
    for p in params:
        if p.valid is None or p.name not in arrays:
            continue
        outside = ~p.valid.contains(arrays[p.name])
        n = int(np.count_nonzero(np.broadcast_to(outside, shape)))
        if n:
            out.append(ModelWarning(p.name, f"outside {p.valid.describe(p.symbol)}: {p.valid_reason}", n))
    return out


def derived_warning(
    parameter: str, mask: np.ndarray, shape: tuple[int, ...], reason: str, kind: WarningKind = "range"
) -> list[ModelWarning]:
    """A warning for the points where ``mask`` is true (a condition on derived quantities)."""
    n = int(np.count_nonzero(np.broadcast_to(mask, shape)))
    return [ModelWarning(parameter, reason, n, kind)] if n else []


def scalar_or_array(x: np.ndarray) -> np.ndarray | np.float64:
    """numpy scalar for 0-d results (so float formatting works), else the array."""
    return x[()] if np.ndim(x) == 0 else x


RENO_FAMILY: tuple[str, ...] = (
    "tahoe",
    "reno",
    "newreno-sbs",
    "newreno-impatient",
    "sack",
    "fack",
    "rate-halving",
    "ssdr",
    "pseudo-rate",
)
"""tcplab's variants that grow by one segment per RTT and halve on a loss event: what the Reno-family
models (paper 000's NewReno models, PFTK, the square-root law) describe. CUBIC (β = 0.7, cubic
growth), Vegas (delay-based) and BBR (rate-based) are not among them."""


# ---- the model -------------------------------------------------------------------------------

ComputeResult = tuple[dict[str, np.ndarray], list[ModelWarning]]


@dataclass(frozen=True)
class Evaluation:
    model: str
    mode: Mode
    shape: tuple[int, ...]
    axes: tuple[str, ...]
    inputs: dict[str, np.ndarray]
    outputs: dict[str, np.ndarray]
    warnings: list[ModelWarning]


@dataclass(frozen=True)
class Model:
    """A closed-form throughput model.

    ``compute(shape, **arrays)`` gets every parameter (broadcast-compatible numpy arrays;
    absent optional ones are not passed) and returns its outputs — at least
    ``throughput_pkts_per_s`` and ``throughput_pkts_per_rtt`` — and any warnings on derived
    quantities. Range warnings on the inputs themselves and bit/s are added here.
    """

    name: str
    title: str
    reference: str
    equations: str
    params: tuple[Param, ...]
    outputs: tuple[Output, ...]
    compute: Callable[..., ComputeResult] = field(repr=False)
    notes: str = ""
    variants: tuple[str, ...] = ()
    """The congestion-control variants whose flows the model describes: model-vs-simulation
    comparisons fit it to those flows only (a Reno-family model fitted to a CUBIC flow gives
    an "error" that measures the wrong model, not the simulator)."""
    ignored: tuple[tuple[Param, str], ...] = ()
    """A sibling model's parameters this one accepts and does not use, each with why: one
    command line (`--rto`) serves both NewReno models; a value given is reported, not refused."""

    def metadata(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "title": self.title,
            "reference": self.reference,
            "equations": self.equations,
            "notes": self.notes,
            "variants": list(self.variants),
            "parameters": [p.metadata() for p in self.params],
            "outputs": [o.metadata() for o in self.outputs],
            "ignored_parameters": [
                {"name": p.name, "symbol": p.symbol, "unit": p.unit, "reason": why} for p, why in self.ignored
            ],
        }

    def _ignored_warnings(self, inputs: Mapping[str, Any], shape: tuple[int, ...]) -> list[ModelWarning]:
        points = int(np.prod(shape))
        return [
            ModelWarning(p.name, f"not used by {self.name}, the value is ignored: {why}", points, "ignored")
            for p, why in self.ignored
            if inputs.get(p.name) is not None
        ]

    def evaluate(
        self, inputs: Mapping[str, Any], mode: Mode = "broadcast", max_points: int | None = None
    ) -> Evaluation:
        given = inputs
        inputs = {k: v for k, v in inputs.items() if k not in {p.name for p, _ in self.ignored}}
        prep = prepare(self.params, inputs, mode, max_points)
        args = {n: a for n, a in prep.arrays.items() if n != MSS.name}
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            outputs, warnings = self.compute(prep.shape, **args)
            if MSS.name in prep.arrays:
                outputs["throughput_bits_per_s"] = outputs["throughput_pkts_per_s"] * prep.arrays[MSS.name] * 8.0
        outputs = {k: np.broadcast_to(v, prep.shape) for k, v in outputs.items()}
        warnings = (
            self._ignored_warnings(given, prep.shape) + range_warnings(self.params, prep.arrays, prep.shape) + warnings
        )
        for k, v in outputs.items():
            if v.dtype.kind == "f":
                warnings += derived_warning(
                    k,
                    ~np.isfinite(v),
                    prep.shape,
                    "not representable in double precision at these (extreme) inputs: NaN or ±∞, null in JSON",
                )
        return Evaluation(self.name, mode, prep.shape, prep.axes, prep.given, outputs, warnings)
