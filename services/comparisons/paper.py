"""Against the paper: a sweep of a paper preset beside the numbers the paper published.

Two experiments of paper 000 carry numbers to compare with (``services.presets``, read from
the data files transcribed from the paper):

- **Table II** (§IV-C, preset ``paper000-table2-droptail``), swept over ``background_flows``:
  per row of the table, the Slow-but-Steady flow's loss event rate, loss rate, throughput in
  packets/RTT and the SBS model's prediction, ours (means over the replications with their
  95 % Student-t intervals) beside the paper's, with the relative differences. Our prediction
  is eq. (4) with p = the measured loss event rate and m = loss rate / loss event rate, the
  ratio the table's columns give (docs/models.md reproduces the paper's predictions this way
  for 4–32 flows); ``model_pkts_per_rtt_m_drops`` is the same with m = the measured drops per
  loss event, the m the paper's text quotes ("between 2.11 and 4.16"). Eq. (4) in packets/RTT
  needs no R or RTO; ``rtt_s``/``rto_s`` are reported as measured.
- **Fig. 2** (§IV-B, presets ``paper000-fig2a``/``paper000-fig2b``), swept over
  ``flows[*].loss.m``: per m, the SBS and IMP throughputs with their intervals and the paired
  verdict (``services.comparisons.ratios``, IMP = b against SBS = a); our simulated regions —
  ``equality`` (no significant difference), ``sbs_superior``, ``imp_superior`` — as contiguous
  runs along m, and the crossover (the first m from which IMP is significantly better at every
  larger swept m), beside the paper's equality region (m < 4), SBS-superior range, IMP-superior
  start and analytic m_t; the models' prediction errors (SBS model for the SBS flow, IMP model
  for the IMP flow, from measured p, m, R, RTO) as a range beside the paper's; and the models'
  m_t (``services.models.crossover``) for our measured R and RTO.

Note the difference of method: the paper reads its regions off the curves of Fig. 2 (one run per
m, by eye); ours are statistical verdicts over replications, so near the crossover — where the
two throughputs are within noise — a point is ``equality`` until enough replications separate
them. ``crossover_m_means`` gives the by-eye equivalent (the first m from which IMP's mean is at
least SBS's at every larger m).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import numpy as np

from services.comparisons.common import (
    ObservationLike,
    axis_order,
    axis_paths,
    finite_row,
    flows_of,
    gap_flag,
    metric_of,
    number,
    point_key,
    relative,
    value_key,
)
from services.comparisons.models import Inputs, derive_inputs, errors, predict
from services.comparisons.ratios import A_BETTER, B_BETTER, NO_DIFFERENCE, compare_pairs, regions
from services.errors import ConflictError
from services.models import ModelDomainError, crossover
from services.models import regions as model_regions
from services.presets import Preset
from services.presets.paper000 import BACKGROUND_FLOWS, LOSS_M
from services.stats import summarize
from services.sweeps.spec import metric_bounds

TABLE2 = "paper000-table2-droptail"
FIG2 = ("paper000-fig2a", "paper000-fig2b")
COMPARABLE: tuple[str, ...] = (*FIG2, TABLE2)
"""The presets whose published numbers a sweep can be compared with."""

SBS, IMP = "sbs", "imp"

REGION_OF_VERDICT = {NO_DIFFERENCE: "equality", A_BETTER: "sbs_superior", B_BETTER: "imp_superior"}


def not_comparable(preset: str | None) -> ConflictError:
    what = f"preset {preset!r} has" if preset else "this sweep has no preset, so it has"
    return ConflictError(
        f"{what} no published numbers to compare with; the presets with published numbers are: "
        f"{', '.join(COMPARABLE)} (paper 000's Table II and Fig. 2). paper000-fig3-red publishes "
        "findings only, no numbers."
    )


def against_paper(
    preset: Preset | None,
    observations: Sequence[ObservationLike],
    *,
    axes: Sequence[Mapping[str, Any]] | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(summary, rows) of the comparison for this preset; ConflictError when the preset has no
    published numbers or the sweep does not vary what they are published against."""
    if preset is None or preset.name not in COMPARABLE or preset.published is None:
        raise not_comparable(preset.name if preset else None)
    if preset.name == TABLE2:
        return table2(preset, observations, axes=axes, overrides=overrides)
    return fig2(preset, observations, axes=axes)


def _need_flows(observations: Sequence[ObservationLike], names: Sequence[str], preset: str) -> None:
    known = flows_of(observations)
    absent = [n for n in names if n not in known]
    if observations and absent:
        raise ConflictError(
            f"the comparison with {preset} needs the flow groups {', '.join(names)}; this sweep's are {', '.join(known)}"
        )


# ---- Table II ---------------------------------------------------------------------------------


def _background(obs: ObservationLike, default: Any) -> Any:
    return (obs.values or {}).get(BACKGROUND_FLOWS, default)


def _stat(group: Sequence[ObservationLike], metric: str) -> dict[str, float | None]:
    s = summarize((metric_of(o, metric) for o in group), bounds=metric_bounds(metric))
    return {"mean": s.mean, "ci_low": s.ci_low, "ci_high": s.ci_high}


def table2(
    preset: Preset,
    observations: Sequence[ObservationLike],
    *,
    axes: Sequence[Mapping[str, Any]] | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Paper 000 Table II beside our SBS flow, row by row (see the module docstring)."""
    _need_flows(observations, [SBS], preset.name)
    assert preset.published is not None
    table = next(t for t in preset.published.tables if t.name == "Table II")
    param = preset.parameter(BACKGROUND_FLOWS)
    default = (overrides or {}).get(BACKGROUND_FLOWS, param.default if param else None)
    paths = [p for p in axis_paths(observations, axes) if p != BACKGROUND_FLOWS]
    # Our points: (background flows, the other axes' values) -> the SBS flow's observations.
    ours: dict[Hashable, dict[str, list[ObservationLike]]] = {}
    for obs in observations:
        if obs.flow != SBS:
            continue
        n = _background(obs, default)
        ours.setdefault(value_key(n), {}).setdefault(point_key(obs.values, [BACKGROUND_FLOWS]), []).append(obs)

    rows: list[dict[str, Any]] = []
    in_table = set()
    for published in table.rows:
        n = published["background_flows"]
        in_table.add(value_key(n))
        matched = ours.get(value_key(n), {})
        if not matched:
            rows.append(_table2_row(n, published, None, paths))
        for group in matched.values():
            rows.append(_table2_row(n, published, group, paths))
    extra = [(k, g) for k, groups in ours.items() if k not in in_table for g in groups.values()]
    for _, group in sorted(extra, key=lambda kg: number(_background(kg[1][0], default)) or 0.0):
        rows.append(_table2_row(_background(group[0], default), None, group, paths))

    summary = _table2_summary(table.rows, rows)
    return summary, rows


def _table2_row(
    n: Any, published: Mapping[str, float] | None, group: Sequence[ObservationLike] | None, paths: Sequence[str]
) -> dict[str, Any]:
    paper = dict(published or {})
    row: dict[str, Any] = {
        "background_flows": n,
        "in_paper": published is not None,
        "point": group[0].point if group else None,
    }
    row.update({p: (group[0].values.get(p) if group else None) for p in paths})
    row["replications"] = len({o.replication for o in group}) if group else 0
    stats = {m: _stat(group or [], m) for m in ("loss_event_rate", "loss_rate", "throughput_pkts_per_rtt")}
    inputs = derive_inputs(group, "ratio") if group else None
    inputs_drops = derive_inputs(group, "drops") if group else None
    pred = predict("newreno-sbs", inputs) if inputs else None
    pred_drops = predict("newreno-sbs", inputs_drops) if inputs_drops else None
    sim = stats["throughput_pkts_per_rtt"]["mean"]
    model = pred.value if pred else None
    paper_sim, paper_model = paper.get("sim_pkts_per_rtt"), paper.get("model_pkts_per_rtt")
    for name, ours_key in (("loss_event_rate", "loss_event_rate"), ("loss_rate", "loss_rate")):
        s = stats[ours_key]
        row[f"paper_{name}"] = paper.get(name)
        row[name] = s["mean"]
        row[f"{name}_ci_low"], row[f"{name}_ci_high"] = s["ci_low"], s["ci_high"]
        row[f"{name}_diff"] = relative(s["mean"], paper.get(name))
    row.update(
        paper_sim_pkts_per_rtt=paper_sim,
        sim_pkts_per_rtt=sim,
        sim_ci_low=stats["throughput_pkts_per_rtt"]["ci_low"],
        sim_ci_high=stats["throughput_pkts_per_rtt"]["ci_high"],
        sim_diff=relative(sim, paper_sim),
        sim_gap=gap_flag(
            sim, stats["throughput_pkts_per_rtt"]["ci_low"], stats["throughput_pkts_per_rtt"]["ci_high"], paper_sim
        ),
        paper_model_pkts_per_rtt=paper_model,
        model_pkts_per_rtt=model,
        model_diff=relative(model, paper_model),
        paper_model_error=errors(paper_sim, paper_model)[0],
        model_error=errors(sim, model)[0],
        model_signed_error=errors(sim, model)[1],
        m=inputs.m if inputs else None,
        m_drops=inputs_drops.m if inputs_drops else None,
        model_pkts_per_rtt_m_drops=pred_drops.value if pred_drops else None,
        rtt_s=inputs.rtt_s if inputs else None,
        rto_s=inputs.rto_s if inputs else None,
        note=(
            "no point of this sweep has this number of background flows" if not group else pred.note if pred else None
        ),
    )
    return finite_row(row)


def _table2_summary(published: Sequence[Mapping[str, float]], rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    def mean_pct(values: list[float | None]) -> float | None:
        data = [v for v in values if v is not None]
        return 100.0 * float(np.mean(data)) if data else None

    def in_4_to_200(n: Any) -> bool:
        return 4 <= (number(n) or 0) <= 200

    ours = [r for r in rows if r["in_paper"] and in_4_to_200(r["background_flows"])]
    paper = [errors(t["sim_pkts_per_rtt"], t["model_pkts_per_rtt"]) for t in published]
    paper_in = [e for t, e in zip(published, paper, strict=True) if in_4_to_200(t["background_flows"])]
    paper_max = max(zip(published, paper, strict=True), key=lambda te: te[1][0] or 0.0)
    our_errors = [(r["background_flows"], r["model_error"]) for r in rows if r["model_error"] is not None]
    our_max = max(our_errors, key=lambda ne: ne[1]) if our_errors else (None, None)
    return {
        "kind": "table2",
        "reference": "paper 000 §IV-C, Table II (Drop-Tail, the Slow-but-Steady flow)",
        "rows_in_paper": len(published),
        "rows_matched": sum(1 for r in rows if r["in_paper"] and r["point"] is not None),
        "paper_stated": "for 4 to 200 background flows the model prediction is below the simulation throughput "
        "by 9.78 % on average; the largest prediction error is 20.64 % with 256 background flows",
        # The paper's 9.78 % is the mean of |sim − model| / sim over its rows of 4–192 flows
        # (9.79 % from the printed columns); its signed mean is smaller, as rows 160–192 are above.
        "paper_mean_error_pct_4_to_200": mean_pct([e[0] for e in paper_in]),
        "paper_mean_signed_error_pct_4_to_200": mean_pct([e[1] for e in paper_in]),
        "paper_max_error": {
            "background_flows": paper_max[0]["background_flows"],
            "error_pct": mean_pct([paper_max[1][0]]),
        },
        "our_mean_error_pct_4_to_200": mean_pct([r["model_error"] for r in ours]),
        "our_mean_signed_error_pct_4_to_200": mean_pct([r["model_signed_error"] for r in ours]),
        "our_max_error": {"background_flows": our_max[0], "error_pct": mean_pct([our_max[1]])},
        "rows_with_big_gaps": [
            {
                "background_flows": r["background_flows"],
                "sim_pkts_per_rtt": r["sim_pkts_per_rtt"],
                "sim_ci_low": r["sim_ci_low"],
                "sim_ci_high": r["sim_ci_high"],
                "paper_sim_pkts_per_rtt": r["paper_sim_pkts_per_rtt"],
                "sim_diff": r["sim_diff"],
            }
            for r in rows
            if r.get("sim_gap")
        ],
        "rows_compared": sum(1 for r in rows if r["in_paper"] and r["sim_diff"] is not None),
        "m_from": "ratio (loss rate / loss event rate), as the table's columns give it; "
        "model_pkts_per_rtt_m_drops uses the measured drops per loss event",
    }


# ---- Fig. 2 -----------------------------------------------------------------------------------


def _m_axis(paths: Sequence[str]) -> str | None:
    if LOSS_M in paths:
        return LOSS_M
    return next((p for p in paths if p.endswith("loss.m")), None)


def fig2(
    preset: Preset, observations: Sequence[ObservationLike], *, axes: Sequence[Mapping[str, Any]] | None = None
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Paper 000 Fig. 2's regions, crossover and model errors beside ours (module docstring)."""
    assert preset.published is not None
    published = dict(preset.published.values)
    paths = axis_paths(observations, axes)
    m_axis = _m_axis(paths)
    if m_axis is None:
        raise ConflictError(
            f"the comparison with {preset.name}'s Fig. 2 needs a sweep over {LOSS_M} (the losses per "
            f"event); this sweep's axes: {', '.join(paths) or 'none'}"
        )
    _need_flows(observations, [SBS, IMP], preset.name)
    rest = [p for p in paths if p != m_axis]
    by_point: dict[int, dict[str, list[ObservationLike]]] = {}
    for obs in observations:
        if obs.flow in (SBS, IMP):
            by_point.setdefault(obs.point, {SBS: [], IMP: []})[obs.flow].append(obs)
    rows = [finite_row(_fig2_row(point, groups, m_axis, rest, published)) for point, groups in sorted(by_point.items())]

    # The models' m_t and regions for our measured inputs, pooled over every point and both flows.
    pooled = [o for g in by_point.values() for o in g[SBS] + g[IMP]]
    p = summarize(metric_of(o, "loss_event_rate") for o in pooled).mean
    r = summarize(metric_of(o, "mean_rtt_s") for o in pooled).mean
    t = summarize(metric_of(o, "mean_rto_s") for o in pooled).mean
    nominal_p = number(published.get("p"))
    for row in rows:
        row["model_region"] = _model_region(nominal_p, row["m"], r, t)

    order = axis_order(observations, m_axis, axes)
    found = regions(rows, "m", order=order, group_by=rest)
    for reg in found:
        reg["region"] = REGION_OF_VERDICT.get(reg["verdict"], "undetermined")
    summary: dict[str, Any] = {
        "kind": "fig2",
        "reference": f"paper 000 {preset.reference.where}",
        "m_axis": m_axis,
        "paper": {
            k: published.get(k)
            for k in (
                "p",
                "m_range",
                "equality_region_m_below",
                "sbs_superior_m",
                "imp_superior_m_from",
                "analytic_crossover_m_t",
                "sbs_model_error_pct",
                "imp_model_error_pct",
            )
        },
        "regions": found,
        "simulated": [_fig2_findings(members, rest) for members in _groups(rows, rest)],
        "model_crossover": {
            "measured_p": _crossover(p, r, t),
            "nominal_p": _crossover(nominal_p, r, t),
            "note": "services.models.crossover with our mean R and RTO over every point and both flows; "
            "the paper's analytic m_t for comparison is paper.analytic_crossover_m_t (docs/models.md "
            "explains why eq. (4) and (8) give 24 and 19 at RTO = 200 ms, not 27 and 21)",
        },
    }
    return summary, rows


def _fig2_row(
    point: int,
    groups: Mapping[str, Sequence[ObservationLike]],
    m_axis: str,
    rest: Sequence[str],
    published: Mapping[str, Any],
) -> dict[str, Any]:
    first = (groups[SBS] or groups[IMP])[0]
    m = first.values.get(m_axis)
    sbs = {o.replication: metric_of(o, "throughput_pkts_per_rtt") for o in groups[SBS]}
    imp = {o.replication: metric_of(o, "throughput_pkts_per_rtt") for o in groups[IMP]}
    pairs = [(sbs.get(k), imp.get(k)) for k in sorted(set(sbs) | set(imp))]
    cmp = compare_pairs(pairs)
    s_sum, i_sum = summarize(sbs.values()), summarize(imp.values())
    row: dict[str, Any] = {"point": point, "m": m}
    row.update({p: first.values.get(p) for p in rest})
    row.update(
        replications=len(pairs),
        sbs_mean=s_sum.mean,
        sbs_ci_low=s_sum.ci_low,
        sbs_ci_high=s_sum.ci_high,
        imp_mean=i_sum.mean,
        imp_ci_low=i_sum.ci_low,
        imp_ci_high=i_sum.ci_high,
        ratio=cmp.ratio,
        ratio_ci_low=cmp.ratio_ci_low,
        ratio_ci_high=cmp.ratio_ci_high,
        diff=cmp.diff,
        diff_ci_low=cmp.diff_ci_low,
        diff_ci_high=cmp.diff_ci_high,
        verdict=cmp.verdict,
        region=REGION_OF_VERDICT.get(cmp.verdict, "undetermined"),
        paper_region=_paper_region(number(m), published) if _at_papers_p(first.values, published) else None,
    )
    for flow, model in ((SBS, "newreno-sbs"), (IMP, "newreno-impatient")):
        group = groups[flow]
        inputs: Inputs | None = derive_inputs(group) if group else None
        pred = predict(model, inputs) if inputs else None
        value = pred.value if pred else None
        sim = s_sum.mean if flow == SBS else i_sum.mean
        row[f"{flow}_model_pkts_per_rtt"] = value
        row[f"{flow}_model_error"] = errors(sim, value)[0]
        row[f"{flow}_model_note"] = pred.note if pred else "no observation"
        row[f"{flow}_p"] = inputs.p if inputs else None
        row[f"{flow}_m"] = inputs.m if inputs else None
    row["note"] = cmp.note
    return row


def _at_papers_p(values: Mapping[str, Any], published: Mapping[str, Any]) -> bool:
    """Whether the point has the paper's p (a sweep may vary p too: the paper's regions are
    for its one p)."""
    swept = [number(v) for path, v in values.items() if path.endswith("loss.p")]
    return all(v is not None and v == number(published.get("p")) for v in swept)


def _paper_region(m: float | None, published: Mapping[str, Any]) -> str | None:
    """The region the paper gives this m in Fig. 2 (§IV-B), None outside its range of m."""
    if m is None:
        return None
    lo, hi = (published.get("m_range") or [None, None])[:2]
    if lo is not None and hi is not None and not lo <= m <= hi:
        return None
    if m < published["equality_region_m_below"]:
        return "equality"
    if m >= published["imp_superior_m_from"]:
        return "imp_superior"
    return "sbs_superior"


def _model_region(p: float | None, m: Any, r: float | None, t: float | None) -> str | None:
    m = number(m)
    if p is None or m is None or r is None or t is None:
        return None
    try:
        return str(model_regions([p], [m], r, t).labels[0, 0])
    except ModelDomainError:
        return None


def _crossover(p: float | None, r: float | None, t: float | None) -> dict[str, Any]:
    out: dict[str, Any] = {"p": p, "rtt_s": r, "rto_s": t}
    if None in (p, r, t):
        return {**out, "status": "undefined", "m_t": None, "m_t_int": None, "m_star": None}
    try:
        c = crossover(p, r, t)
    except ModelDomainError as e:
        return {**out, "status": f"outside the model's domain: {e}", "m_t": None, "m_t_int": None, "m_star": None}
    return {
        **out,
        "status": str(np.asarray(c.status).item()),
        "m_t": number(np.asarray(c.m_t).item()),
        "m_t_int": number(np.asarray(c.m_t_int).item()),
        "m_star": number(np.asarray(c.m_star).item()),
    }


def _groups(rows: Sequence[dict[str, Any]], rest: Sequence[str]) -> list[list[dict[str, Any]]]:
    groups: dict[tuple[Hashable, ...], list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault(tuple(value_key(row.get(p)) for p in rest), []).append(row)
    return [sorted(g, key=lambda r: m if (m := number(r["m"])) is not None else float("inf")) for g in groups.values()]


def first_from_which(rows: Sequence[Mapping[str, Any]], holds: Any) -> Any:
    """The first m (rows in increasing m) from which ``holds(row)`` is true for every later row;
    None when the last row does not satisfy it."""
    found = None
    for row in reversed(rows):
        if not holds(row):
            break
        found = row["m"]
    return found


def _fig2_findings(rows: Sequence[dict[str, Any]], rest: Sequence[str]) -> dict[str, Any]:
    """Our regions and crossover along m (rows sorted by m), in the paper's terms."""
    equality_below = None
    for row in rows:
        if row["verdict"] != NO_DIFFERENCE:
            equality_below = row["m"]
            break
    sbs_ms = [row["m"] for row in rows if row["verdict"] == A_BETTER]
    cross = first_from_which(rows, lambda r: r["verdict"] == B_BETTER)
    cross_means = first_from_which(
        rows, lambda r: r["imp_mean"] is not None and r["sbs_mean"] is not None and r["imp_mean"] >= r["sbs_mean"]
    )

    def pct_range(key: str) -> list[float] | None:
        data = [100.0 * r[key] for r in rows if r[key] is not None]
        return [min(data), max(data)] if data else None

    return {
        "fixed": {p: rows[0].get(p) for p in rest} if rows else {},
        "m_values": [r["m"] for r in rows],
        "equality_region_m_below": equality_below,
        "sbs_superior_m": [min(sbs_ms), max(sbs_ms)] if sbs_ms else None,
        "imp_superior_m_from": cross,
        "crossover_m_significant": cross,
        "crossover_m_means": cross_means,
        "sbs_model_error_pct": pct_range("sbs_model_error"),
        "imp_model_error_pct": pct_range("imp_model_error"),
        "note": "regions from the paired verdicts at the swept m only: a coarse grid places each boundary "
        "somewhere between two swept values",
    }
