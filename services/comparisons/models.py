"""Model versus simulation: paper 000's Table II, automated for any run or sweep.

Paper 000 §IV-A: "From the simulations, the necessary input parameters for the analytical models
are obtained." For every grid point and TCP flow group this module derives the models' inputs
from what the simulator measured, feeds them to the closed-form models (``services.models``)
and reports each prediction beside the simulated throughput, with the paper's error measure
|simulation − model| / simulation (§IV-B).

The inputs (paper 000 Table I):

- p = the measured loss event rate (``loss_event_rate``: loss events per packet sent);
- m = the measured drops per loss event (``drops_per_loss_event``: losses within one RTT of an
  event's first loss belong to it), by default. ``m_from="ratio"`` takes instead
  m = loss rate / loss event rate, which is what Table II's printed columns allow (§IV-C: "the
  ratio of packet loss rate to loss event rate is about 1.22 …"; docs/models.md shows the
  table's predictions follow from that ratio for 4–32 flows). The two differ: the ratio counts
  every drop, including those of retransmissions and of a timeout's slow start, the direct
  count only drops inside a loss event;
- R = the measured mean RTT (``mean_rtt_s``, queueing included);
- RTO = the measured mean retransmit-timer value (``mean_rto_s``). The paper's RTO is the
  "mean duration of the first timeout"; the timer value is what that timeout waits for.

Replications: each input is averaged over the replications of the point (``services.stats.
summarize``: undefined values — a replication without a loss event has no p — are left out,
and ``inputs_replications`` says how many replications the inputs rest on); the prediction is
made once from the mean inputs, as the paper predicts from its runs' averages; the simulated
throughput is reported as a mean with its 95 % Student-t interval. With ``m_from="ratio"`` m
is the ratio of the mean rates (not the mean of per-run ratios), as the paper's columns give it.

A model that does not apply says why in ``note`` instead of failing: an undefined input (no loss
event, no RTT sample), an input outside the model's domain (``ModelDomainError``: p = 0, m < 1)
— the prediction is then null — or outside the range its authors claim (a model warning: p > 5 %,
m > W − 3) — the prediction is given, ``in_valid_range`` is false.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from services.comparisons.common import ObservationLike, axis_paths, finite_row, metric_of, number
from services.errors import InvalidInputError
from services.models import MODELS, ModelDomainError, evaluate, get_model
from services.stats import Summary, summarize
from services.sweeps.spec import metric_bounds

MFrom = Literal["drops", "ratio"]
M_FROM: tuple[str, ...] = ("drops", "ratio")
DEFAULT_MODELS: tuple[str, ...] = ("newreno-sbs", "newreno-impatient", "pftk-full", "mathis", "cubic")
"""Each flow is compared with those of them that describe its variant (``Model.variants``)."""
DEFAULT_VARIANT = "newreno-sbs"
"""A TCP flow's variant when its scenario names none (services/scenarios/schema.py)."""
THROUGHPUT = "throughput_pkts_per_rtt"

FIRST_COLUMNS = (
    "point",
    "flow",
    "variant",
    "replications",
    "inputs_replications",
    "p",
    "m",
    "rtt_s",
    "rto_s",
    "sim_pkts_per_rtt",
    "sim_ci_low",
    "sim_ci_high",
    "model",
    "model_pkts_per_rtt",
    "error",
    "signed_error",
    "in_valid_range",
    "note",
)


def check_models(names: Sequence[str] | None, path: str = "$.models") -> tuple[str, ...]:
    """The models to compare with (the defaults when none are named); unknown names are a 422."""
    if not names:
        return DEFAULT_MODELS
    out: list[str] = []
    for name in names:
        for part in str(name).split(","):
            part = part.strip()
            if not part:
                continue
            if part not in MODELS:
                raise InvalidInputError(
                    f"unknown model {part!r}; the models are: {', '.join(MODELS)}", path=path, kind="unknown_model"
                )
            if part not in out:
                out.append(part)
    return tuple(out) or DEFAULT_MODELS


def check_m_from(m_from: str, path: str = "$.m_from") -> MFrom:
    if m_from not in M_FROM:
        raise InvalidInputError(
            f"m_from must be one of {', '.join(M_FROM)}: drops (drops per loss event, measured) or ratio "
            "(loss rate / loss event rate, as paper 000's Table II columns give it)",
            path=path,
            kind="invalid",
        )
    return m_from  # type: ignore[return-value]


@dataclass(frozen=True)
class Inputs:
    """The models' inputs for one (point, flow) group, averaged over its replications; an
    input is None when undefined, with the reason in ``missing``."""

    p: float | None
    m: float | None
    rtt_s: float | None
    rto_s: float | None
    count: int
    """Replications behind the inputs: the fewest any one input rests on."""
    missing: Mapping[str, str]

    def as_model_inputs(self) -> dict[str, float | None]:
        return {"p": self.p, "m": self.m, "rtt_s": self.rtt_s, "rto_s": self.rto_s}


INPUT_METRICS: tuple[str, ...] = (
    "loss_event_rate",
    "drops_per_loss_event",
    "loss_rate",
    "mean_rtt_s",
    "mean_rto_s",
    THROUGHPUT,
)
"""The metrics a model comparison reads."""


def derive_inputs(group: Sequence[ObservationLike], m_from: MFrom = "drops") -> Inputs:
    """Paper 000 §IV-A/§IV-C: p, m, R, RTO from the simulation, averaged over replications."""
    return inputs_of(
        {m: summarize((metric_of(o, m) for o in group), bounds=metric_bounds(m)) for m in INPUT_METRICS}, m_from
    )


def inputs_of(summaries: Mapping[str, Summary], m_from: MFrom = "drops") -> Inputs:
    """`derive_inputs` from the summaries of the input metrics over the replications (from
    observations, or from a sweep's aggregates)."""
    p = summaries["loss_event_rate"]
    rtt = summaries["mean_rtt_s"]
    rto = summaries["mean_rto_s"]
    missing: dict[str, str] = {}
    if p.mean is None:
        missing["p"] = "no loss event in any replication: the loss event rate is undefined"
    if m_from == "drops":
        m_sum = summaries["drops_per_loss_event"]
        m, m_count = m_sum.mean, m_sum.count
        if m is None:
            missing["m"] = "no loss event in any replication: drops per loss event is undefined"
    else:
        loss = summaries["loss_rate"]
        m_count = min(loss.count, p.count)
        m = None
        if loss.mean is None or p.mean is None or p.mean == 0:
            missing["m"] = "loss rate / loss event rate is undefined (no loss event in any replication)"
        else:
            m = loss.mean / p.mean
    if rtt.mean is None:
        missing["rtt_s"] = "no RTT sample in any replication: the mean RTT is undefined"
    if rto.mean is None:
        missing["rto_s"] = "no retransmit-timer sample in any replication: the mean RTO is undefined"
    counts = [p.count, m_count, rtt.count, rto.count]
    return Inputs(number(p.mean), number(m), number(rtt.mean), number(rto.mean), min(counts), missing)


@dataclass(frozen=True)
class Prediction:
    value: float | None
    in_valid_range: bool | None
    note: str | None


def predict(model: str, inputs: Inputs) -> Prediction:
    """One model's throughput in packets per RTT for these inputs, or why there is none.

    Uses the model's own checks (``services.models``): impossible inputs give no value and the
    model's reason; inputs outside its valid range give the value and the model's warnings."""
    spec = get_model(model)
    wanted = {p.name for p in spec.params if p.required and p.default is None}
    given = inputs.as_model_inputs()
    absent = [name for name in ("p", "m", "rtt_s", "rto_s") if name in wanted and given[name] is None]
    if absent:
        return Prediction(None, None, "; ".join(f"{n}: {inputs.missing.get(n, 'undefined')}" for n in absent))
    args = {n: v for n, v in given.items() if n in {p.name for p in spec.params} and v is not None}
    try:
        ev = evaluate(model, args)
    except ModelDomainError as e:
        return Prediction(None, False, f"outside the model's domain: {e}")
    value = number(np.asarray(ev.outputs["throughput_pkts_per_rtt"]).item())
    notes = [f"{w.parameter}: {w.reason}" for w in ev.warnings]
    valid = not any(w.kind == "range" for w in ev.warnings)
    if (
        model == "newreno-impatient"
        and "timeout_regime" in ev.outputs
        and not bool(np.asarray(ev.outputs["timeout_regime"]).item())
    ):
        m_star = float(np.asarray(ev.outputs["m_star"]).item())
        # Paper 000 §IV-C: "the number of drops is below m* = 4. Since the Impatient throughput
        # model does not apply in this regime …" — the model answers eq. (4) there.
        notes.append(f"m < m* = {m_star:g}: Impatient never times out and behaves as Slow-but-Steady; this is eq. (4)")
    if value is None:
        valid = False
    return Prediction(value, valid, "; ".join(notes) or None)


MEMO_SIZE = 200_000
_MEMO: dict[tuple[Any, ...], Prediction | None] = {}
"""Predictions already made in this process, by model and exact inputs: a prediction is a pure
function of them, and a sweep read again (a page polling, a finished sweep) has the same
inputs at every point that got no new run. Cleared whole when it outgrows MEMO_SIZE."""


def _memo_key(model: str, inputs: Inputs) -> tuple[Any, ...]:
    return (model, inputs.p, inputs.m, inputs.rtt_s, inputs.rto_s, tuple(sorted(inputs.missing.items())))


def predict_many(model: str, many: Sequence[Inputs]) -> list[Prediction]:
    """`[predict(model, inputs) for inputs in many]`, with one evaluation of the model over
    arrays wherever it can: the inputs are grouped by which of them are given, and a group is
    evaluated at once when the model neither refuses nor warns about any of its elements
    (warnings and domain errors say how many points, not which: such a group is halved until
    the halves are clean, and single inputs go through `predict`, whose notes they need).
    Elementwise the arithmetic is numpy's either way."""
    spec = get_model(model)
    names = {p.name for p in spec.params}
    wanted = {p.name for p in spec.params if p.required and p.default is None}
    out: list[Prediction | None] = [None] * len(many)
    keys = [_memo_key(model, inputs) for inputs in many]
    for i, key in enumerate(keys):
        out[i] = _MEMO.get(key)
    by_given: dict[tuple[str, ...], list[int]] = {}
    for i, inputs in enumerate(many):
        if out[i] is not None:
            continue
        given = inputs.as_model_inputs()
        if any(given[n] is None for n in ("p", "m", "rtt_s", "rto_s") if n in wanted):
            out[i] = predict(model, inputs)  # a missing input: no evaluation at all
            continue
        by_given.setdefault(tuple(n for n, v in given.items() if n in names and v is not None), []).append(i)

    def solve(names_given: tuple[str, ...], indices: list[int]) -> None:
        if len(indices) <= 2:
            for i in indices:
                out[i] = predict(model, many[i])
            return
        args = {n: np.array([many[i].as_model_inputs()[n] for i in indices], dtype=float) for n in names_given}
        try:
            ev = evaluate(model, args)
        except ModelDomainError:
            ev = None
        if ev is None or ev.warnings:
            half = len(indices) // 2
            solve(names_given, indices[:half])
            solve(names_given, indices[half:])
            return
        values = np.asarray(ev.outputs["throughput_pkts_per_rtt"], dtype=float)
        regime = ev.outputs.get("timeout_regime") if model == "newreno-impatient" else None
        m_star = (
            np.broadcast_to(np.asarray(ev.outputs["m_star"], dtype=float), values.shape) if regime is not None else None
        )
        for k, i in enumerate(indices):
            value = number(float(values[k]))
            note = None
            if regime is not None and not bool(np.asarray(regime)[k]):
                assert m_star is not None
                note = f"m < m* = {float(m_star[k]):g}: Impatient never times out and behaves as Slow-but-Steady; this is eq. (4)"
            out[i] = Prediction(value, value is not None, note)

    for names_given, indices in by_given.items():
        solve(names_given, indices)
    if len(_MEMO) > MEMO_SIZE:
        _MEMO.clear()
    for key, prediction in zip(keys, out, strict=True):
        _MEMO[key] = prediction
    assert all(p is not None for p in out)
    return out  # type: ignore[return-value]


@dataclass(frozen=True)
class Group:
    """One point × TCP flow group: what a model comparison row is made of."""

    point: int
    values: Mapping[str, Any]
    flow: str
    variant: str | None
    app: str | None
    replications: int
    summaries: Mapping[str, Summary]
    """The input metrics (and the throughput) summarised over the replications."""


def groups_of(observations: Sequence[ObservationLike]) -> list[Group]:
    """The TCP groups of `observations`, in point order then first appearance."""
    found: dict[tuple[int, str], list[ObservationLike]] = {}
    for obs in sorted(observations, key=lambda o: o.point):
        if obs.type != "tcp":
            continue
        found.setdefault((obs.point, obs.flow), []).append(obs)
    out = []
    for (point, flow), group in found.items():
        with np.errstate(over="ignore", invalid="ignore"):  # absurd inputs overflow to None, not a warning
            summaries = {m: summarize((metric_of(o, m) for o in group), bounds=metric_bounds(m)) for m in INPUT_METRICS}
        out.append(
            Group(
                point,
                group[0].values,
                flow,
                group[0].variant,
                group[0].app,
                len({o.replication for o in group}),
                summaries,
            )
        )
    return out


def errors(sim: float | None, model: float | None) -> tuple[float | None, float | None]:
    """Paper 000 §IV-B's prediction error |sim − model| / sim, and the signed (model − sim) / sim."""
    if sim is None or model is None or sim == 0:
        return None, None
    return abs(sim - model) / sim, (model - sim) / sim


def model_vs_sim(
    observations: Sequence[ObservationLike],
    *,
    models: Sequence[str] = DEFAULT_MODELS,
    m_from: MFrom = "drops",
    axes: Sequence[Mapping[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    """One row per point × TCP flow group × model that describes the group's variant (long
    format), in point order, then the scenario's flow order, then ``models``' order; a group
    none of ``models`` describes (BBR, Vegas; CUBIC without ``cubic``) has one row with a null
    model and the reason in ``note`` instead of an error figure. The axis values of the point
    are columns named by their axis path."""
    return model_rows(groups_of(observations), models=models, m_from=m_from, paths=axis_paths(observations, axes))


def model_rows(
    groups: Sequence[Group], *, models: Sequence[str] = DEFAULT_MODELS, m_from: MFrom = "drops", paths: Sequence[str]
) -> list[dict[str, Any]]:
    """`model_vs_sim` from the groups' summaries (a sweep's come from its aggregates)."""
    rows: list[dict[str, Any]] = []
    with np.errstate(over="ignore", invalid="ignore"):  # absurd inputs overflow to None, not a warning
        all_inputs = [inputs_of(group.summaries, m_from) for group in groups]
    fitted = [models_for(group.variant, models) for group in groups]
    predictions: dict[str, dict[int, Prediction]] = {}
    for model in models:
        indices = [g for g, names in enumerate(fitted) if model in names]
        predictions[model] = dict(zip(indices, predict_many(model, [all_inputs[g] for g in indices]), strict=True))
    for g, group in enumerate(groups):
        inputs = all_inputs[g]
        sim: Summary = group.summaries[THROUGHPUT]
        base: dict[str, Any] = {"point": group.point}
        base.update({path: group.values.get(path) for path in paths})
        base.update(
            flow=group.flow,
            variant=group.variant,
            replications=group.replications,
            inputs_replications=inputs.count,
            p=inputs.p,
            m=inputs.m,
            rtt_s=inputs.rtt_s,
            rto_s=inputs.rto_s,
            sim_pkts_per_rtt=sim.mean,
            sim_ci_low=sim.ci_low,
            sim_ci_high=sim.ci_high,
        )
        base = finite_row(base)  # once per group; each model's own three numbers below
        if not fitted[g]:
            rows.append(
                {
                    **base,
                    "model": None,
                    "model_pkts_per_rtt": None,
                    "error": None,
                    "signed_error": None,
                    "in_valid_range": None,
                    "note": no_model_note(group.variant, models),
                }
            )
        for model in fitted[g]:
            pred = predictions[model][g]
            error, signed = errors(sim.mean, pred.value)
            note = pred.note
            if sim.mean is None:
                note = "; ".join(filter(None, ["the simulated throughput is undefined", note]))
            if group.app not in (None, "ftp"):
                note = "; ".join(
                    filter(None, [f"{group.app} traffic: the models describe long-lived bulk transfers", note])
                )
            rows.append(
                {
                    **base,
                    "model": model,
                    "model_pkts_per_rtt": _finite(pred.value),
                    "error": _finite(error),
                    "signed_error": _finite(signed),
                    "in_valid_range": pred.in_valid_range,
                    "note": note,
                }
            )
    return rows


def models_for(variant: str | None, models: Sequence[str]) -> tuple[str, ...]:
    """Those of `models` that describe flows of `variant`, in `models`' order."""
    variant = variant or DEFAULT_VARIANT
    return tuple(name for name in models if variant in get_model(name).variants)


def no_model_note(variant: str | None, models: Sequence[str]) -> str:
    """Why a flow group has no prediction: no closed-form model for its variant (BBR, Vegas), or
    none among the models asked for."""
    variant = variant or DEFAULT_VARIANT
    describing = [m.name for m in MODELS.values() if variant in m.variants]
    if not describing:
        return (
            f"no closed-form model for {variant} flows in tcplab: the Reno-family models (paper 000, PFTK, the "
            "square-root law) and CUBIC's (RFC 9438 §5.1) describe other window dynamics, so no error is given"
        )
    return f"none of the models asked for ({', '.join(models)}) describes {variant} flows; {', '.join(describing)} does"


def _finite(value: float | None) -> float | None:
    """As `finite_row` leaves a number: None when not finite."""
    return None if value is None or not math.isfinite(value) else value
