"""TCP NewReno Slow-but-Steady and Impatient: paper 000's throughput models.

Parvez, Mahanti & Williamson, "TCP NewReno: Slow-but-Steady or Impatient?", ICC 2006
(``papers/000``): eq. (1)-(4) Slow-but-Steady (SBS), eq. (5)-(8) Impatient (IMP), §II-C the
threshold m*, §V and Fig. 4 the crossover m_t and the region map.

Notation (paper Table I): p loss event rate, m segment losses per loss event, R mean round-trip
time, RTO mean duration of the first timeout. Every function here is a numpy ufunc-style
function: scalars or arrays for every argument, broadcast together. The raw equations
(``w_sbs`` ... ``m_star``) do no input checking; :func:`crossover`, :func:`regions` and the
registered models (``services.models.registry``) check their inputs and raise
:class:`~services.models.common.ModelDomainError` on impossible ones.

Throughput in packets per RTT is eq. (4) or (8) times R: R cancels out of eq. (4), so the SBS
model in packets/RTT depends on p and m only; the IMP model depends on R and RTO only through
RTO/R.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from services.models.common import (
    MSS,
    RENO_FAMILY,
    RTT,
    THROUGHPUT_OUTPUTS,
    Bound,
    DomainIssue,
    Model,
    ModelDomainError,
    ModelWarning,
    Output,
    Param,
    derived_warning,
    loss_event_rate,
    prepare,
    range_warnings,
    rto,
    scalar_or_array,
)

REFERENCE = 'N. Parvez, A. Mahanti, C. Williamson, "TCP NewReno: Slow-but-Steady or Impatient?", Proc. IEEE ICC 2006'

# §V: "we believe that our model predictions are reasonably accurate up to loss event rates of 5%."
P_VALID = Bound(0.0, 0.05, lo_open=True)
P_VALID_REASON = "paper 000 §V and Table II: the models are claimed accurate up to loss event rates of 5 %"

P = loss_event_rate(P_VALID, P_VALID_REASON)
M = Param(
    name="m",
    symbol="m",
    unit="packets",
    description="mean number of segment losses per loss event (need not be a whole number)",
    domain=Bound(1.0, None),
    domain_reason="a loss event loses at least one segment",
)
RTO_PARAM = rto(
    "mean duration of the first timeout (paper 000 Table I)",
    valid=None,
)
M_STAR = Param(
    name="m_star",
    symbol="m*",
    unit="packets",
    description="losses per event from which Impatient times out; derived as floor(RTO/R) + 2 when absent",
    domain=Bound(1.0, None),
    domain_reason="m* counts losses in a loss event: a whole number ≥ 1",
    required=False,
    integer=True,
)


# ---- the equations -----------------------------------------------------------------------------


def w_sbs(p: Any, m: Any) -> np.ndarray | np.float64:
    """Eq. (2): mean peak window W_SBS (packets) of Slow-but-Steady, from S_SBS = 1/p (eq. 1).

    Eq. (2) is the positive root of (3/8) W² + ((m + 3)/4) W − 1/p = 0. With u = m + 3 it is
    (−u + √(u² + 24/p)) / 3; computed here in the algebraically equal form
    8 / (p (u + √(u² + 24/p))), which does not lose digits when u² ≫ 24/p.
    """
    p = np.asarray(p, dtype=float)
    u = np.asarray(m, dtype=float) + 3.0
    return scalar_or_array(8.0 / (p * (u + np.sqrt(u * u + 24.0 / p))))


def sbs_pkts_per_rtt(p: Any, m: Any) -> np.ndarray | np.float64:
    """Eq. (4) times R: T_SBS · R = (1/p) / (W_SBS/2 + m + 1) packets per round trip."""
    p = np.asarray(p, dtype=float)
    m = np.asarray(m, dtype=float)
    return scalar_or_array((1.0 / p) / (w_sbs(p, m) / 2.0 + m + 1.0))


def w_imp(p: Any) -> np.ndarray | np.float64:
    """Eq. (6): mean peak window W_IMP (packets) of Impatient, from S_IMP = 1/p (eq. 5).

    Eq. (6), (−14p + 2√(169p² + 120p)) / (15p) = 2(a − 7)/15 with a = √(169 + 120/p), is
    computed as 16 (1 + p) / (p (a + 7)), algebraically the same (a² − 49 = 120 (1 + 1/p)).
    """
    p = np.asarray(p, dtype=float)
    # A subnormal p overflows to inf; callers report that as an overflow, not numpy.
    with np.errstate(over="ignore"):
        return scalar_or_array(16.0 * (1.0 + p) / (p * (np.sqrt(169.0 + 120.0 / p) + 7.0)))


def imp_rounds(p: Any, rtt_s: Any, rto_s: Any) -> np.ndarray | np.float64:
    """Eq. (7) divided by R: the duration of an Impatient cycle in round trips,
    (log₂(W_IMP/8) + 1) + (3 W_IMP/4 + 1) + (1 + RTO/R).

    The slow-start term is log base 2: the window doubles every round from 1 to W_IMP/8
    (eq. 5 sums 1 + 2 + … + W_IMP/8), which takes log₂(W_IMP/8) + 1 rounds.
    """
    w = w_imp(p)
    ratio = np.asarray(rto_s, dtype=float) / np.asarray(rtt_s, dtype=float)
    return scalar_or_array((np.log2(w / 8.0) + 1.0) + (0.75 * w + 1.0) + (1.0 + ratio))


def imp_timeout_pkts_per_rtt(p: Any, rtt_s: Any, rto_s: Any) -> np.ndarray | np.float64:
    """Eq. (8) times R: Impatient in its timeout regime (m ≥ m*), packets per round trip.
    Independent of m: every cycle ends in one timeout whatever the number of losses."""
    p = np.asarray(p, dtype=float)
    return scalar_or_array((1.0 / p) / imp_rounds(p, rtt_s, rto_s))


def m_star(rtt_s: Any, rto_s: Any) -> np.ndarray | np.float64:
    """§II-C: the number of losses per event from which Impatient times out, floor(RTO/R) + 2.

    Fast recovery starts at t = 0 with the retransmission of the first hole; its ACK, the
    first partial ACK, arrives at t = R and Impatient resets its timer there — for the last
    time — so the timer fires at R + RTO. One hole is repaired per round trip: hole j is
    retransmitted at (j − 1)R and acknowledged at jR, so the full ACK of an event with m
    losses arrives at mR. Impatient times out iff mR > R + RTO, i.e. m > 1 + RTO/R; the
    smallest such whole m is floor(RTO/R) + 2 (at RTO/R whole, m = 1 + RTO/R is a tie that
    the ACK wins). For 2R < RTO < 3R this gives m* = 4, the paper's value ("if 2RTT < RTO <
    3RTT, Impatient will continue in fast recovery for at least 3 RTTs. Thus, if 4 or more
    segments are dropped ..., Impatient will incur a timeout").
    """
    # A subnormal R overflows RTO/R to +inf: m* = inf, Impatient never times out — the limit
    # the formula means, so no warning.
    with np.errstate(over="ignore", invalid="ignore"):
        ratio = np.asarray(rto_s, dtype=float) / np.asarray(rtt_s, dtype=float)
        # A whole RTO/R computed a rounding error short (0.35 / 0.07 = 4.999999999999999) is
        # still whole: the tie the ACK wins, not one more round.
        whole = np.rint(ratio)
        ratio = np.where(np.abs(ratio - whole) <= WHOLE_RATIO_TOLERANCE * np.abs(ratio), whole, ratio)
    return scalar_or_array(np.floor(ratio) + 2.0)


WHOLE_RATIO_TOLERANCE = 1e-12
"""Relative distance within which RTO/R counts as a whole number (a few ulps of double
precision: the inputs' own rounding, not a real difference in timing)."""


_derive_m_star = m_star  # for functions whose m_star argument shadows the name


def imp_pkts_per_rtt(p: Any, m: Any, rtt_s: Any, rto_s: Any, m_star: Any = None) -> np.ndarray | np.float64:
    """Impatient, packets per round trip: eq. (4) for m < m* (it behaves as Slow-but-Steady),
    eq. (8) for m ≥ m*. ``m_star`` defaults to floor(RTO/R) + 2 (:func:`m_star`)."""
    ms = _derive_m_star(rtt_s, rto_s) if m_star is None else np.asarray(m_star, dtype=float)
    m = np.asarray(m, dtype=float)
    return scalar_or_array(np.where(m < ms, sbs_pkts_per_rtt(p, m), imp_timeout_pkts_per_rtt(p, rtt_s, rto_s)))


def crossover_m(p: Any, rtt_s: Any, rto_s: Any) -> np.ndarray | np.float64:
    """The real m_t where eq. (4) equals eq. (8) (§V), in closed form.

    T_SBS(m) = T_IMP ⇔ W_SBS(m)/2 + m + 1 = C, with C = imp_rounds(p, R, RTO). The left side
    strictly increases with m (dW_SBS/dm > −2/3), so the root is unique. Writing u = m + 3 and
    E = C + 2, eq. (2) turns this into √(u² + 24/p) = 6E − 5u, whose root with 6E − 5u ≥ 0 is
    u = (5E − √(E² + 16/p)) / 4. So m_t = (5E − √(E² + 16/p)) / 4 − 3. (The tests check it
    against a numerical root-finder.)
    """
    p = np.asarray(p, dtype=float)
    e = imp_rounds(p, rtt_s, rto_s) + 2.0
    return scalar_or_array((5.0 * e - np.sqrt(e * e + 16.0 / p)) / 4.0 - 3.0)


# ---- checked entry points: crossover and the region map ------------------------------------


CROSSOVER_PARAMS = (P, RTT, RTO_PARAM, M_STAR)


@dataclass(frozen=True)
class Crossover:
    """Per p (broadcast with R, RTO): the crossover of eq. (4) and eq. (8).

    ``m_t`` the real crossover (NaN where there is none), ``m_t_int`` the first whole m ≥ m_t
    (from there on IMP is superior; NaN where none), ``status``: "crossover", "beyond_model"
    (m_t > W_SBS(m_t) − 3: the paper's bound, fast recovery needs three duplicate ACKs),
    "below_one" (m_t < 1) or "overflow" (inputs so extreme that double precision cannot
    represent the answer); ``m_star`` the equality threshold; ``w_sbs_at_m_t`` and ``w_imp``
    the windows behind the bounds.
    """

    p: np.ndarray
    rtt_s: np.ndarray
    rto_s: np.ndarray
    m_star: np.ndarray
    m_t: np.ndarray
    m_t_int: np.ndarray
    status: np.ndarray
    w_sbs_at_m_t: np.ndarray
    w_imp: np.ndarray
    warnings: list[ModelWarning]


def _default_m_star(r: Any, t: Any) -> np.ndarray:
    """m* = floor(RTO/R) + 2 for a caller who gave none. RTO/R past double precision (an RTO of
    1e300 s over an R of 1e-300 s) has no m*: ModelDomainError, which the API answers with a
    422 at `rto_s`, rather than an infinite m* no JSON can carry."""
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        ms = np.asarray(_derive_m_star(r, t), dtype=float)
    if not np.isfinite(ms).all():
        reason = "RTO/R is too large for double precision: m* = floor(RTO/R) + 2 has no value; give m_star"
        raise ModelDomainError([DomainIssue("rto_s", reason)])
    return ms


def _crossover_arrays(p: np.ndarray, r: np.ndarray, t: np.ndarray, ms: np.ndarray | None):
    shape = np.broadcast_shapes(p.shape, r.shape, t.shape, () if ms is None else ms.shape)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        raw = np.broadcast_to(crossover_m(p, r, t), shape)
        w_at = np.broadcast_to(w_sbs(p, np.maximum(raw, 1.0)), shape)
    status = np.full(shape, "crossover", dtype=object)
    status[raw < 1.0] = "below_one"
    status[(raw >= 1.0) & (raw > w_at - 3.0)] = "beyond_model"
    status[~np.isfinite(raw) | ~np.isfinite(w_at)] = "overflow"
    ok = status == "crossover"
    m_t = np.where(ok, raw, np.nan)
    m_t_int = np.where(ok, np.ceil(raw), np.nan)
    mstar = np.broadcast_to(_default_m_star(r, t) if ms is None else ms, shape)
    return shape, m_t, m_t_int, status, w_at, mstar


def crossover(p: Any, rtt_s: Any, rto_s: Any, m_star: Any = None, max_points: int | None = None) -> Crossover:
    """The crossover m_t for each p (R, RTO and m* broadcast with it). Checks its inputs."""
    inputs = {"p": p, "rtt_s": rtt_s, "rto_s": rto_s, "m_star": m_star}
    prep = prepare(CROSSOVER_PARAMS, inputs, "broadcast", max_points)
    a = prep.arrays
    shape, m_t, m_t_int, status, w_at, mstar = _crossover_arrays(a["p"], a["rtt_s"], a["rto_s"], a.get("m_star"))
    warnings = range_warnings(CROSSOVER_PARAMS, a, shape)
    warnings += _rto_warning(a["rtt_s"], a["rto_s"], shape)
    below = np.isfinite(m_t) & (m_t < mstar)
    warnings += derived_warning(
        "m_star",
        below,
        shape,
        "m_t < m*: below m* the variants are the same protocol, so IMP is superior from m* on, not from m_t",
    )
    return Crossover(
        p=np.broadcast_to(a["p"], shape),
        rtt_s=np.broadcast_to(a["rtt_s"], shape),
        rto_s=np.broadcast_to(a["rto_s"], shape),
        m_star=mstar,
        m_t=m_t,
        m_t_int=m_t_int,
        status=status,
        w_sbs_at_m_t=w_at,
        w_imp=np.broadcast_to(w_imp(a["p"]), shape),
        warnings=warnings,
    )


EQUALITY, SBS_SUPERIOR, IMP_SUPERIOR, OUTSIDE_MODEL = "equality", "sbs_superior", "imp_superior", "outside_model"
REGION_LABELS = (EQUALITY, SBS_SUPERIOR, IMP_SUPERIOR, OUTSIDE_MODEL)
REGION_MEANING = {
    EQUALITY: "m < m*: Impatient never times out and behaves as Slow-but-Steady (needs m ≤ W_SBS − 3)",
    SBS_SUPERIOR: "m ≥ m* and eq. (4) > eq. (8), with m ≤ W_SBS − 3",
    IMP_SUPERIOR: "m ≥ m* and eq. (8) ≥ eq. (4) (m ≥ m_t), with m ≤ W_IMP − 3",
    OUTSIDE_MODEL: "more losses than the window can carry while still raising three duplicate ACKs "
    "(m > W_SBS − 3 where SBS is superior or in equality, m > W_IMP − 3 where IMP is)",
}

REGION_P = replace(P, valid=None)  # the map is meant to show where the models stop holding


@dataclass(frozen=True)
class Regions:
    """Fig. 4: ``labels[i, j]`` is the region of (p[i], m[j]); ``crossover`` per p."""

    p: np.ndarray
    m: np.ndarray
    rtt_s: float
    rto_s: float
    m_star: float
    labels: np.ndarray
    crossover: Crossover
    w_sbs_minus_3: np.ndarray  # (len(p), len(m))
    w_imp_minus_3: np.ndarray  # (len(p),)
    warnings: list[ModelWarning]


def regions(
    p: Any, m: Any, rtt_s: float, rto_s: float, m_star: float | None = None, max_points: int | None = None
) -> Regions:
    """The fast-recovery region map of Fig. 4 over the grid p × m.

    Each point is ``equality`` (m < m*), ``sbs_superior`` (eq. 4 > eq. 8), ``imp_superior``
    (eq. 8 ≥ eq. 4, i.e. m ≥ m_t) or ``outside_model``. §V bounds the regions differently:
    the SBS-superior region by m ≤ W_SBS − 3 ("m_t must satisfy m_t ≤ W_SBS − 3"), the
    IMP-superior region by m ≤ W_IMP − 3 ("the maximum number of segment losses that can be
    tolerated, while still triggering fast recovery"); the equality region, where both
    variants follow eq. (4), is bounded like SBS. W_SBS is evaluated at the point's own m.
    """
    params = (REGION_P, M, RTT, RTO_PARAM, M_STAR)
    inputs = {"p": p, "m": m, "rtt_s": rtt_s, "rto_s": rto_s, "m_star": m_star}
    issues = [
        DomainIssue(n, "must be a single number for the region map")
        for n in ("rtt_s", "rto_s", "m_star")
        if inputs[n] is not None and np.ndim(inputs[n]) != 0
    ]
    issues += [DomainIssue(n, "must be a flat list (or a single number)") for n in ("p", "m") if np.ndim(inputs[n]) > 1]
    if issues:
        raise ModelDomainError(issues)
    prep = prepare(
        params, {k: (np.atleast_1d(v) if k in ("p", "m") else v) for k, v in inputs.items()}, "grid", max_points
    )
    a = prep.arrays
    pp, mm, r, t = a["p"], a["m"], a["rtt_s"], a["rto_s"]  # pp (n_p, 1), mm (1, n_m)
    mstar = float(a["m_star"]) if "m_star" in a else float(_default_m_star(r, t))
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        sbs = sbs_pkts_per_rtt(pp, mm)
        imp = imp_timeout_pkts_per_rtt(pp, r, t)
        wsbs3 = w_sbs(pp, mm) - 3.0
        wimp3 = w_imp(pp) - 3.0
    shape = prep.shape
    labels = np.empty(shape, dtype=object)
    below = np.broadcast_to(mm < mstar, shape)
    imp_better = np.broadcast_to(imp >= sbs, shape)
    sbs_ok = np.broadcast_to(mm <= wsbs3, shape)
    imp_ok = np.broadcast_to(mm <= wimp3, shape)
    labels[:] = OUTSIDE_MODEL
    labels[below & sbs_ok] = EQUALITY
    labels[~below & ~imp_better & sbs_ok] = SBS_SUPERIOR
    labels[~below & imp_better & imp_ok] = IMP_SUPERIOR
    cross = crossover(prep.given["p"], r, t, m_star=mstar)
    warnings = _rto_warning(r, t, ())
    return Regions(
        p=prep.given["p"],
        m=prep.given["m"],
        rtt_s=float(r),
        rto_s=float(t),
        m_star=mstar,
        labels=labels,
        crossover=cross,
        w_sbs_minus_3=np.broadcast_to(wsbs3, shape),
        w_imp_minus_3=np.broadcast_to(wimp3, (shape[0], 1))[:, 0],
        warnings=warnings,
    )


def _rto_warning(r: np.ndarray, t: np.ndarray, shape: tuple[int, ...]) -> list[ModelWarning]:
    return derived_warning(
        "rto_s",
        np.asarray(t) < np.asarray(r),
        shape,
        "RTO < R: the timer would fire before the first retransmission can be acknowledged, so both "
        "variants time out at every loss event, which neither model describes",
    )


BOUNDARY_RELATIVE = 0.01
"""How close to a regime boundary counts as on it: a 1 % change of RTO or R. Measured RTTs and
timer values vary by more than that between runs, so an answer whose regime a 1 % change
flips is the tie rule's, not the network's."""


def _boundary_warning(
    m: np.ndarray, r: np.ndarray, t: np.ndarray, timeout: np.ndarray, shape: tuple[int, ...]
) -> list[ModelWarning]:
    """Impatient's regime (m ≥ m*, eq. 8, or below, eq. 4) at the points where RTO or R 1 % off
    would put m in the other one: m* jumps by one there, and the two regimes' throughputs can
    differ by tens of percent (p = 0.1 %, m = 6, R = 70 ms, RTO = 350 ms: 31.88 pkts/RTT by
    the tie rule, 22.49 in the timeout regime)."""
    with np.errstate(over="ignore", invalid="ignore"):
        low = m >= np.asarray(m_star(r, np.asarray(t) * (1.0 - BOUNDARY_RELATIVE)))
        high = m >= np.asarray(m_star(r, np.asarray(t) * (1.0 + BOUNDARY_RELATIVE)))
    return derived_warning(
        "m",
        (low != high) | (low != timeout),
        shape,
        f"on the regime boundary: RTO/R is within {BOUNDARY_RELATIVE:.0%} of the value where m* = floor(RTO/R) + 2 "
        "steps, and this m times out on one side and not on the other (eq. 8 vs eq. 4). The answer follows the "
        "tie rule (a whole RTO/R ties to the ACK); compare both regimes, or pass m_star explicitly",
        kind="boundary",
    )


# ---- the registered models -------------------------------------------------------------------


WINDOW = Output("window_pkts", "packets", "mean peak congestion window (W_SBS, eq. 2, or W_IMP, eq. 6)")


def _sbs(shape: tuple[int, ...], p: np.ndarray, m: np.ndarray, rtt_s: np.ndarray) -> tuple[dict, list]:
    w = np.asarray(w_sbs(p, m))
    per_rtt = np.asarray(sbs_pkts_per_rtt(p, m))
    warnings = derived_warning(
        "m",
        m > w - 3.0,
        shape,
        "m > W_SBS − 3: too few packets of the window survive to raise three duplicate ACKs; the "
        "model assumes every loss event triggers fast recovery (paper 000 §III-A, §V)",
    )
    return {"throughput_pkts_per_s": per_rtt / rtt_s, "throughput_pkts_per_rtt": per_rtt, "window_pkts": w}, warnings


def _imp(shape, p, m, rtt_s, rto_s, m_star=None) -> tuple[dict, list]:
    ms = np.asarray(_derive_m_star(rtt_s, rto_s)) if m_star is None else m_star
    timeout = m >= ms
    per_rtt = np.where(timeout, imp_timeout_pkts_per_rtt(p, rtt_s, rto_s), sbs_pkts_per_rtt(p, m))
    w = np.where(timeout, w_imp(p), w_sbs(p, m))
    warnings = derived_warning(
        "m",
        timeout & (m > w - 3.0),
        shape,
        "m > W_IMP − 3: too few packets of the window survive to raise three duplicate ACKs, "
        "so the recovery does not start (paper 000 §V)",
    )
    warnings += derived_warning(
        "m",
        ~timeout & (m > w - 3.0),
        shape,
        "m > W_SBS − 3 (below m*, where Impatient follows eq. 4): too few packets survive to raise "
        "three duplicate ACKs (paper 000 §III-A)",
    )
    warnings += derived_warning(
        "p",
        timeout & (w_imp(p) < 8.0),
        shape,
        "W_IMP < 8: the slow start of eq. (5) (1 + 2 + … + W_IMP/8) lasts less than one round, "
        "so its log₂ term is negative (p above about 2.8 %)",
    )
    warnings += _rto_warning(rtt_s, rto_s, shape)
    if m_star is None:
        warnings += _boundary_warning(m, rtt_s, rto_s, timeout, shape)
    return {
        "throughput_pkts_per_s": per_rtt / rtt_s,
        "throughput_pkts_per_rtt": per_rtt,
        "window_pkts": w,
        "m_star": np.broadcast_to(ms, shape).astype(float),
        "timeout_regime": np.broadcast_to(timeout, shape),
    }, warnings


SBS_MODEL = Model(
    name="newreno-sbs",
    title="TCP NewReno Slow-but-Steady",
    reference=REFERENCE + ", eq. (1)-(4)",
    equations=(
        "S_SBS = (W/4)(3W/2 + m + 3) = 1/p (1); "
        "W_SBS = (−3p − mp + √(9p² + 6mp² + m²p² + 24p)) / (3p) (2); "
        "D_SBS = (W_SBS/2 + 1) R + m R (3); "
        "T_SBS = (1/p) / (R (W_SBS/2 + m + 1)) (4)"
    ),
    params=(P, M, RTT, MSS),
    outputs=THROUGHPUT_OUTPUTS + (WINDOW,),
    compute=_sbs,
    variants=RENO_FAMILY,
    ignored=(
        (
            RTO_PARAM,
            "Slow-but-Steady never times out (each partial ACK restarts the retransmit timer), so RTO "
            "does not enter eq. (1)-(4)",
        ),
        (M_STAR, "m* is Impatient's timeout threshold; Slow-but-Steady has none"),
    ),
    notes="Every loss event is repaired by fast recovery, one lost segment per round trip, sending about "
    "W_SBS/4 segments per round trip meanwhile (footnote 2: conservative; the paper's Table II sits "
    "9.78 % below simulation on average). In packets/RTT the model does not depend on R.",
)

IMP_MODEL = Model(
    name="newreno-impatient",
    title="TCP NewReno Impatient",
    reference=REFERENCE + ", eq. (5)-(8) and §II-C (m*)",
    equations=(
        "S_IMP = (1 + 2 + … + W/8) + Σ_{i=W/4}^{W} i = 15W²/32 + 7W/8 − 1 = 1/p (5); "
        "W_IMP = (−14p + 2√(169p² + 120p)) / (15p) (6); "
        "D_IMP = (log₂(W_IMP/8) + 1) R + (3W_IMP/4 + 1) R + (R + RTO) (7); "
        "T_IMP = (1/p) / D_IMP (8) for m ≥ m*; T_SBS (4) for m < m*; m* = floor(RTO/R) + 2 (§II-C)"
    ),
    params=(P, M, RTT, RTO_PARAM, M_STAR, MSS),
    outputs=THROUGHPUT_OUTPUTS
    + (
        WINDOW,
        Output("m_star", "packets", "the threshold used: given, or floor(RTO/R) + 2"),
        Output("timeout_regime", "boolean", "m ≥ m*: eq. (8) applies (else eq. 4)"),
    ),
    compute=_imp,
    variants=RENO_FAMILY,
    notes="The paper writes 'log' in eq. (7); the slow start doubles the window every round, so it is "
    "log base 2. m* is derived from RTO and R unless given.",
)
