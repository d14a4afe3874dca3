"""services.models: the closed-form throughput models against paper 000 and each other.

The Table II data is a verbatim copy of ../shared/papers/published/000_table2_sbs_droptail.csv
(tests/services/data/), so the test runs where ../shared is not present.
"""

from __future__ import annotations

import csv
import math
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from services.models import (
    MODELS,
    ModelDomainError,
    UnknownModelError,
    crossover,
    cubic,
    evaluate,
    get_model,
    list_models,
    mathis,
    newreno,
    pftk,
    regions,
)

DATA = Path(__file__).parent / "data"


# ---- paper 000, Table II ---------------------------------------------------------------------


def table2() -> list[dict[str, float]]:
    with open(DATA / "paper000_table2_sbs_droptail.csv") as f:
        return [{k: float(v) for k, v in row.items()} for row in csv.DictReader(f)]


# The printed rates are percentages with two decimals (0.07 %): ±0.005 percentage points, i.e.
# ±5e-5 absolute, on both the loss event rate and the loss rate; the printed prediction is
# rounded to ±0.005 packets/RTT.
RATE_HALF_STEP = 5e-5
PRED_HALF_STEP = 0.005


def rounding_envelope(p: float, loss: float) -> tuple[float, float]:
    """min and max of eq. (4) over every (p, loss rate) that prints as the table's row."""
    pp = np.linspace(p - RATE_HALF_STEP, p + RATE_HALF_STEP, 41)[:, None]
    ll = np.linspace(loss - RATE_HALF_STEP, loss + RATE_HALF_STEP, 41)[None, :]
    t = newreno.sbs_pkts_per_rtt(pp, ll / pp)
    return float(t.min()), float(t.max())


def test_table2_rows_for_4_to_32_flows_are_reproduced_within_the_rounding_of_the_printed_rates():
    """m = loss rate / loss event rate, p = loss event rate; eq. (4) times R (R cancels).

    For these six rows the published prediction lies inside the range eq. (4) spans over every
    (p, loss rate) that rounds to the printed row (widened by the prediction's own rounding).
    """
    rows = [r for r in table2() if r["background_flows"] <= 32]
    assert len(rows) == 6
    for r in rows:
        lo, hi = rounding_envelope(r["loss_event_rate"], r["loss_rate"])
        assert lo - PRED_HALF_STEP <= r["model_pkts_per_rtt"] <= hi + PRED_HALF_STEP, r
        ours = newreno.sbs_pkts_per_rtt(r["loss_event_rate"], r["loss_rate"] / r["loss_event_rate"])
        assert abs(ours - r["model_pkts_per_rtt"]) / r["model_pkts_per_rtt"] < 0.02, r


def test_table2_rows_from_48_flows_on_sit_above_the_paper_by_more_than_the_rounding_allows():
    """From 48 background flows on the printed rates pin p and m down too tightly for rounding
    to explain the gap: eq. (4) on the printed rates is 0.3-7.1 % *above* the paper's
    prediction in every one of these rows (never below). The paper's figures need an m 1-21 %
    larger than loss rate / loss event rate (or a larger p); docs/models.md has the table."""
    rows = [r for r in table2() if r["background_flows"] >= 48]
    assert len(rows) == 9
    gaps = []
    for r in rows:
        lo, hi = rounding_envelope(r["loss_event_rate"], r["loss_rate"])
        assert not (lo - PRED_HALF_STEP <= r["model_pkts_per_rtt"] <= hi + PRED_HALF_STEP), r
        ours = float(newreno.sbs_pkts_per_rtt(r["loss_event_rate"], r["loss_rate"] / r["loss_event_rate"]))
        gaps.append((ours - r["model_pkts_per_rtt"]) / r["model_pkts_per_rtt"])
    assert min(gaps) > 0.002 and max(gaps) < 0.072
    assert max(gaps) == pytest.approx(0.0709, abs=5e-4)  # 256 flows: 2.37 against 2.21


def test_table2_summary_figures_of_the_paper_follow_from_its_columns_and_from_ours():
    """§IV-C: 'below the simulation throughput by 9.78 % on average' for 4-200 flows; the
    paper's own columns give 9.79 %, eq. (4) on the printed rates gives 9.67 %."""
    rows = [r for r in table2() if r["background_flows"] <= 200]
    sims = np.array([r["sim_pkts_per_rtt"] for r in rows])
    published = np.array([r["model_pkts_per_rtt"] for r in rows])
    ours = np.array(
        [newreno.sbs_pkts_per_rtt(r["loss_event_rate"], r["loss_rate"] / r["loss_event_rate"]) for r in rows]
    )
    assert np.mean(np.abs(sims - published) / sims) == pytest.approx(0.0978, abs=0.0005)
    assert np.mean(np.abs(sims - ours) / sims) == pytest.approx(0.0967, abs=0.0005)
    # "the number of drops per loss event is between 2.11 and 4.16" (4-200 flows): the ratio of
    # the printed rates gives 2.11 to 4.20 (0.42 % / 0.10 % at 16 flows is coarsely rounded).
    ms = [r["loss_rate"] / r["loss_event_rate"] for r in rows]
    assert min(ms) == pytest.approx(2.11, abs=0.005) and max(ms) == pytest.approx(4.20, abs=0.005)


def test_sbs_packets_per_rtt_do_not_depend_on_r():
    """Eq. (4) is (1/p) / (R (W/2 + m + 1)): times R, R cancels — Table II needs no R."""
    a = evaluate("newreno-sbs", {"p": 0.001, "m": 4.2, "rtt_s": 0.05})
    b = evaluate("newreno-sbs", {"p": 0.001, "m": 4.2, "rtt_s": 0.3})
    assert a.outputs["throughput_pkts_per_rtt"] == pytest.approx(b.outputs["throughput_pkts_per_rtt"], rel=1e-15)
    assert a.outputs["throughput_pkts_per_s"] == pytest.approx(6 * b.outputs["throughput_pkts_per_s"], rel=1e-12)


# ---- the equations -----------------------------------------------------------------------------


def test_windows_solve_eq_1_and_eq_5():
    p = np.geomspace(1e-6, 0.9, 50)[:, None]
    m = np.array([1.0, 2.5, 10.0, 100.0])[None, :]
    w = newreno.w_sbs(p, m)
    np.testing.assert_allclose((w / 4) * (3 * w / 2 + m + 3), np.broadcast_to(1 / p, w.shape), rtol=1e-12)
    wi = newreno.w_imp(p)
    np.testing.assert_allclose(15 / 32 * wi**2 + 7 / 8 * wi - 1, 1 / p, rtol=1e-10)


def test_windows_equal_the_printed_eq_2_and_eq_6():
    p, m = 0.0021, 3.857
    eq2 = (-3 * p - m * p + math.sqrt(9 * p * p + 6 * m * p * p + m * m * p * p + 24 * p)) / (3 * p)
    eq6 = (-14 * p + 2 * math.sqrt(169 * p * p + 120 * p)) / (15 * p)
    assert newreno.w_sbs(p, m) == pytest.approx(eq2, rel=1e-12)
    assert newreno.w_imp(p) == pytest.approx(eq6, rel=1e-12)


def test_impatient_slow_start_term_is_log_base_2():
    """Eq. (7): slow start from 1 to W/8 doubling each round: log2(W/8) + 1 rounds."""
    p, r, rto = 0.0005, 0.07, 0.2
    w = newreno.w_imp(p)
    rounds = (math.log2(w / 8) + 1) + (3 * w / 4 + 1) + (1 + rto / r)
    assert newreno.imp_timeout_pkts_per_rtt(p, r, rto) == pytest.approx((1 / p) / rounds, rel=1e-13)


@pytest.mark.parametrize(
    ("rto_over_r", "expected"),
    [(0.5, 2), (1.0, 3), (2.001, 4), (2.5, 4), (2.999, 4), (3.0, 5), (2.845, 4), (4.67, 6)],
)
def test_m_star_is_floor_rto_over_r_plus_2(rto_over_r, expected):
    """§II-C: timer reset at the first partial ACK (t = R), so it fires at R + RTO; hole j is
    acknowledged at jR; a timeout iff mR > R + RTO. 2R < RTO < 3R gives the paper's m* = 4;
    at RTO = 3R the full ACK of m = 4 ties with the timer and wins."""
    assert newreno.m_star(0.07, 0.07 * rto_over_r) == expected
    # the rule behind it, checked directly on the smallest m that times out:
    first_timeout = next(m for m in range(1, 100) if m * 1.0 > 1.0 + rto_over_r)
    assert first_timeout == expected


@pytest.mark.parametrize(
    ("rtt_s", "rto_s", "expected"),
    [(0.07, 0.35, 7), (0.07, 0.21, 5), (0.1, 0.3, 5), (0.03, 0.27, 11), (0.07, 0.35 * (1 - 1e-9), 6)],
)
def test_a_whole_rto_over_r_that_floating_point_misses_by_an_ulp_still_ties_to_the_ack(rtt_s, rto_s, expected):
    """0.35 / 0.07 is 4.999999999999999 in double precision; m* must be 5 + 2 = 7, as a whole
    RTO/R ties to the ACK (issue 15). A real difference (a nanosecond's worth) still counts."""
    assert newreno.m_star(rtt_s, rto_s) == expected
    e = evaluate("newreno-impatient", {"p": 0.001, "m": 6, "rtt_s": rtt_s, "rto_s": rto_s})
    assert float(e.outputs["m_star"]) == expected


def test_impatient_at_a_whole_rto_over_r_below_m_star_is_slow_but_steady():
    """Issue 15's numbers: p = 0.1 %, m = 6, R = 70 ms, RTO = 350 ms is below m* = 7, so eq. (4):
    31.88 pkts/RTT, not eq. (8)'s 22.49."""
    imp = newreno.imp_pkts_per_rtt(0.001, 6, 0.07, 0.35)
    assert imp == newreno.sbs_pkts_per_rtt(0.001, 6) == pytest.approx(31.88, abs=0.01)


@pytest.mark.parametrize(
    ("rto_s", "on_boundary"), [(0.35, True), (0.3534, True), (0.36, False), (0.3465, False), (0.2, False)]
)
def test_impatient_warns_when_a_one_percent_change_of_rto_would_flip_the_regime(rto_s, on_boundary):
    """Issue 15: at a whole RTO/R the answer is the tie rule's (31.88 pkts/RTT) while 1 % less
    RTO gives eq. (8)'s 22.49: the caller is told, as a boundary warning, not a range one."""
    e = evaluate("newreno-impatient", {"p": 0.001, "m": 6, "rtt_s": 0.07, "rto_s": rto_s})
    boundary = [w for w in e.warnings if w.kind == "boundary"]
    assert bool(boundary) == on_boundary
    if on_boundary:
        assert boundary[0].parameter == "m" and "regime boundary" in boundary[0].reason
        assert boundary[0].as_dict()["kind"] == "boundary"
        below = evaluate("newreno-impatient", {"p": 0.001, "m": 6, "rtt_s": 0.07, "rto_s": rto_s * 0.99})
        assert abs(float(below.outputs["throughput_pkts_per_rtt"]) - float(e.outputs["throughput_pkts_per_rtt"])) > 5


def test_an_explicit_m_star_is_never_on_a_boundary():
    e = evaluate("newreno-impatient", {"p": 0.001, "m": 6, "rtt_s": 0.07, "rto_s": 0.35, "m_star": 7})
    assert not [w for w in e.warnings if w.kind == "boundary"]


def test_the_boundary_warning_counts_only_the_points_on_it():
    e = evaluate("newreno-impatient", {"p": 0.001, "m": [3, 6, 7, 20], "rtt_s": 0.07, "rto_s": 0.35})
    assert [(w.parameter, w.points) for w in e.warnings if w.kind == "boundary"] == [("m", 1)]


# ---- CUBIC (RFC 9438 §5.1) ----------------------------------------------------------------------


def test_cubic_average_window_is_the_rfc_formula_where_the_cubic_region_rules():
    """RFC 9438 §5.1: (C(3+β)/(4(1−β)))^¼ · R^¾/p^¾; with C = 0.4, β = 0.7 the constant is 1.054."""
    e = evaluate("cubic", {"p": 1e-4, "rtt_s": 0.1})
    expected = (0.4 * 3.7 / (4 * 0.3)) ** 0.25 * (0.1 / 1e-4) ** 0.75
    assert float(e.outputs["throughput_pkts_per_rtt"]) == pytest.approx(expected, rel=1e-12)
    assert expected == pytest.approx(187.40, abs=0.01)
    assert not bool(e.outputs["reno_friendly"])
    assert float(e.outputs["throughput_pkts_per_s"]) == pytest.approx(expected / 0.1)


def test_cubic_on_a_short_path_is_reno_friendly_and_averages_renos_window():
    """§4.3: CUBIC never grows slower than Reno, so where the cubic average is below √(3/(2p)) the
    model answers Reno's — the square-root law with b = 1."""
    e = evaluate("cubic", {"p": 0.001, "rtt_s": 0.02})
    assert bool(e.outputs["reno_friendly"])
    assert float(e.outputs["throughput_pkts_per_rtt"]) == pytest.approx(float(mathis.pkts_per_rtt(0.001)), rel=1e-12)


@settings(max_examples=200, deadline=None)
@given(
    st.floats(1e-6, 0.01, exclude_min=True),
    st.floats(1e-3, 2.0),
    st.floats(0.05, 0.95),
)
def test_cubic_periodic_cycle_carries_one_over_p_packets(p, rtt_s, beta):
    """The derivation's invariant: over one cycle of the cubic curve (K seconds, from βW_max back
    to W_max) the flow sends (1/R)∫W dt = 1/p packets, and the mean window is W_max(3 + β)/4."""
    c = 0.4
    w = float(cubic.avg_w_cubic(p, rtt_s, c, beta))
    w_max = 4 * w / (3 + beta)
    k = (w_max * (1 - beta) / c) ** (1 / 3)
    t = np.linspace(0.0, k, 20001)
    window = c * (t - k) ** 3 + w_max
    packets = np.trapezoid(window, t) / rtt_s
    assert packets == pytest.approx(1 / p, rel=1e-6)


def test_the_reno_family_models_describe_the_reno_family_and_cubic_describes_cubic():
    assert evaluate("cubic", {"p": 0.01, "rtt_s": 0.1}).model == "cubic"
    from services.models import get_model

    assert get_model("cubic").variants == ("cubic",)
    for name in ("newreno-sbs", "newreno-impatient", "pftk-full", "pftk-approx", "mathis"):
        variants = get_model(name).variants
        assert "newreno-sbs" in variants and "reno" in variants
        assert not {"cubic", "bbr", "vegas"} & set(variants)


def test_impatient_equals_slow_but_steady_below_m_star_and_eq_8_from_it():
    e = evaluate("newreno-impatient", {"p": 0.001, "m": [1, 2, 3, 4, 5, 30], "rtt_s": 0.07, "rto_s": 0.2})
    sbs = newreno.sbs_pkts_per_rtt(0.001, np.array([1, 2, 3]))
    np.testing.assert_allclose(e.outputs["throughput_pkts_per_rtt"][:3], sbs)
    np.testing.assert_allclose(
        e.outputs["throughput_pkts_per_rtt"][3:], newreno.imp_timeout_pkts_per_rtt(0.001, 0.07, 0.2)
    )
    assert e.outputs["m_star"].tolist() == [4.0] * 6
    assert e.outputs["timeout_regime"].tolist() == [False, False, False, True, True, True]


def test_an_explicit_m_star_overrides_the_derived_one():
    e = evaluate("newreno-impatient", {"p": 0.001, "m": [3, 6, 7], "rtt_s": 0.07, "rto_s": 0.2, "m_star": 7})
    assert e.outputs["timeout_regime"].tolist() == [False, False, True]
    assert e.outputs["throughput_pkts_per_rtt"][1] == pytest.approx(newreno.sbs_pkts_per_rtt(0.001, 6))


# ---- the crossover and paper 000's Fig. 4 values ---------------------------------------------

R = 0.070


def bisect_crossover(p, r, rto, log=np.log2) -> np.ndarray:
    """m where eq. (4) = eq. (8), by vectorised bisection (an independent check of the closed
    form; p, r and rto broadcast); ``log`` replaces the base-2 slow-start log to test other
    readings of eq. (7)."""
    p, r, rto = np.broadcast_arrays(*(np.asarray(x, dtype=float) for x in (p, r, rto)))
    w = 16 * (1 + p) / (p * (np.sqrt(169 + 120 / p) + 7))  # eq. (6)
    rounds = (log(w / 8) + 1) + (3 * w / 4 + 1) + (1 + rto / r)
    imp = (1 / p) / rounds
    lo, hi = np.full(p.shape, 1e-6), np.full(p.shape, 1e6)
    for _ in range(100):
        mid = (lo + hi) / 2
        sbs_higher = newreno.sbs_pkts_per_rtt(p, mid) > imp
        lo, hi = np.where(sbs_higher, mid, lo), np.where(sbs_higher, hi, mid)
    return (lo + hi) / 2


def test_closed_form_crossover_agrees_with_a_numerical_root():
    p = np.geomspace(1e-5, 0.05, 200)
    for rto in (0.1, 0.2, 0.33, 1.0):
        np.testing.assert_allclose(newreno.crossover_m(p, R, rto), bisect_crossover(p, R, rto), rtol=1e-9)


def test_crossover_with_the_simulator_rto_is_24_and_19():
    """The simulator's measured R = 70.3 ms and RTO = 200 ms (ns-2's minimum RTO): by the rule
    'first whole m where eq. 8 > eq. 4' the models give 24 at p = 0.05 % and 19 at 0.10 % —
    three and two below the paper's 27 and 21."""
    for r in (0.0703, 0.070):
        c = crossover([0.0005, 0.001], r, 0.2)
        assert c.m_t_int.tolist() == [24, 19]
        assert c.status.tolist() == ["crossover", "crossover"]
        assert c.m_star.tolist() == [4, 4]
    c = crossover([0.0005, 0.001], 0.070, 0.2)
    np.testing.assert_allclose(c.m_t, [23.862, 18.896], atol=5e-4)


RTOS = np.arange(0.01, 3.0, 1e-4)  # 0.1 ms steps


def rto_window(p: float, target: int, rule=np.ceil, log=np.log2) -> tuple[float, float] | None:
    """The RTOs (R = 70 ms, 0.1 ms steps up to 3 s) for which ``rule(m_t)`` equals ``target``."""
    hits = RTOS[rule(bisect_crossover(p, R, RTOS, log)) == target]
    return (float(hits.min()), float(hits.max())) if hits.size else None


def test_paper_crossovers_27_and_21_each_need_a_different_rto():
    """No single RTO gives the paper's pair. With the log base 2 and 'first whole m ≥ m_t',
    27 at p = 0.05 % needs RTO in (328, 388] ms and 21 at p = 0.10 % needs (266, 326] ms: the
    two windows miss each other by 1.6 ms."""
    w27 = rto_window(0.0005, 27)
    w21 = rto_window(0.001, 21)
    assert w27 is not None and w21 is not None
    assert w27[0] == pytest.approx(0.3280, abs=2e-4) and w27[1] == pytest.approx(0.3878, abs=2e-4)
    assert w21[0] == pytest.approx(0.2663, abs=2e-4) and w21[1] == pytest.approx(0.3263, abs=2e-4)
    assert w21[1] < w27[0]


@pytest.mark.parametrize("log", [np.log2, np.log, np.log10], ids=["log2", "ln", "log10"])
def test_no_rto_log_base_or_integer_rule_gives_both_27_and_21(log):
    """Wherever m_t at p = 0.05 % is below 28 (so that some rounding of it can be 27), the
    crossover at p = 0.10 % is less than 5 below it (4.97 at RTO = 200 ms with log2): any
    rounding rule applied to both gives whole numbers at most 5 apart, never 27 and 21. The
    gap reaches 5 only past RTO = 0.63 s (log2), 1.9 s (ln), 3.0 s (log10), where m_t at
    p = 0.05 % is 31, 51, 67. Scanned over RTO = 10 ms ... 3 s in 0.1 ms steps."""
    a = bisect_crossover(0.0005, R, RTOS, log)
    b = bisect_crossover(0.001, R, RTOS, log)
    assert ((a - b)[a < 28] < 5).all()
    for rule in (np.ceil, lambda x: np.floor(x) + 1, np.round):
        both = (rule(a) == 27) & (rule(b) == 21)
        assert not both.any(), RTOS[both]


def test_the_closest_single_rto_is_about_327_ms_where_both_crossovers_sit_on_whole_numbers():
    """At RTO ≈ 0.327 s (4.67 R) the real crossovers are 25.99 and 21.00: the paper's pair is
    one step off at either p, whichever side of 327 ms one takes: (26, 21) just below, (27, 22)
    just above."""
    a, b = crossover([0.0005, 0.001], R, 0.327).m_t
    assert a == pytest.approx(25.99, abs=0.02) and b == pytest.approx(21.00, abs=0.02)
    assert crossover([0.0005, 0.001], R, 0.326).m_t_int.tolist() == [26, 21]
    assert crossover([0.0005, 0.001], R, 0.327).m_t_int.tolist() == [26, 22]
    assert crossover([0.0005, 0.001], R, 0.329).m_t_int.tolist() == [27, 22]


def test_the_papers_other_statements_point_to_a_200_ms_rto():
    """m* = 4 (§IV-B, Fig. 4) needs 2R < RTO < 3R, i.e. 140-210 ms at R = 70 ms; §V's 'IMP is
    superior at p = 0.25 % if m_t / W_IMP ≥ 1/2' holds at RTO = 200 ms (0.502) and not at
    330 ms (0.578); 'at p = 0.05 % when ≥ 1/3' gives 0.370 at 200 ms, 0.404 at 330 ms."""
    assert crossover(0.0005, R, 0.2).m_star == 4
    assert crossover(0.0005, R, 0.33).m_star == 6
    ratio = lambda p, rto: float(crossover(p, R, rto).m_t / newreno.w_imp(p))  # noqa: E731
    assert ratio(0.0025, 0.2) == pytest.approx(0.502, abs=0.002)
    assert ratio(0.0025, 0.33) == pytest.approx(0.578, abs=0.002)
    assert ratio(0.0005, 0.2) == pytest.approx(0.370, abs=0.002)


def test_crossover_beyond_w_sbs_minus_3_is_reported_as_none():
    c = crossover([0.0005, 0.03, 0.2], R, 0.2)
    assert c.status.tolist() == ["crossover", "beyond_model", "beyond_model"]
    assert np.isnan(c.m_t[1:]).all() and np.isnan(c.m_t_int[1:]).all()


def test_crossover_is_vectorised_over_p_and_broadcasts_r_and_rto():
    p = np.geomspace(1e-4, 0.01, 7)
    c = crossover(p, [[0.05], [0.1]], 0.3)
    assert c.m_t.shape == (2, 7)
    assert c.status[0].tolist().count("crossover") >= 4
    for i, r in enumerate((0.05, 0.1)):
        for j, pj in enumerate(p):
            one = crossover(pj, r, 0.3)
            assert c.status[i, j] == one.status
            np.testing.assert_allclose(c.m_t[i, j], one.m_t, rtol=1e-12, equal_nan=True)


# ---- Fig. 4, the region map --------------------------------------------------------------------


def test_region_map_at_p_005_percent_with_rto_200_ms():
    m = np.arange(1, 80)
    r = regions([0.0005], m, R, 0.2)
    labels = r.labels[0]
    assert set(labels[m < 4]) == {"equality"}
    assert set(labels[(m >= 4) & (m <= 23)]) == {"sbs_superior"}
    assert set(labels[(m >= 24) & (m <= 61)]) == {"imp_superior"}  # W_IMP − 3 = 61.4
    assert set(labels[m >= 62]) == {"outside_model"}
    assert r.crossover.m_t_int.tolist() == [24]


def test_sbs_and_imp_regions_are_bounded_by_their_own_windows():
    """§V: the SBS region ends at W_SBS − 3, the IMP region at W_IMP − 3 (not W_SBS − 3)."""
    p = 0.002
    m = np.arange(1, 60)
    r = regions([p], m, R, 0.2)
    imp = m[r.labels[0] == "imp_superior"]
    assert imp.max() == math.floor(newreno.w_imp(p) - 3)
    assert (imp > newreno.w_sbs(p, imp) - 3).any()  # past the SBS bound, still in the IMP region
    # With a long RTO the SBS-superior region reaches W_SBS − 3 before any crossover.
    r = regions([0.01], np.arange(1, 30), R, 2.0, m_star=4)
    sbs = np.arange(1, 30)[r.labels[0] == "sbs_superior"]
    assert sbs.max() == max(mm for mm in range(1, 30) if mm <= newreno.w_sbs(0.01, mm) - 3)
    assert "imp_superior" not in set(r.labels[0]) and r.crossover.status.tolist() == ["beyond_model"]


def test_above_3_percent_the_superior_regions_essentially_vanish():
    """§V: 'At a loss event rate of 3% or higher, the IMP superior and the SBS superior
    regions essentially vanish.'"""
    m = np.arange(1, 41)
    for p in (0.03, 0.05):
        labels = regions([p], m, R, 0.2).labels[0]
        assert np.count_nonzero((labels == "sbs_superior") | (labels == "imp_superior")) <= 3
    labels = regions([0.0005], m, R, 0.2).labels[0]
    assert np.count_nonzero((labels == "sbs_superior") | (labels == "imp_superior")) == 37


def test_region_map_shape_and_an_explicit_m_star():
    r = regions(np.geomspace(1e-4, 0.05, 30), np.arange(1, 41), R, 0.2, m_star=6)
    assert r.labels.shape == (30, 40) and r.m_star == 6
    assert set(r.labels[:, :5].ravel()) <= {"equality", "outside_model"}
    assert "equality" not in set(r.labels[:, 5:].ravel())


# ---- PFTK and Mathis ---------------------------------------------------------------------------


@pytest.mark.parametrize("b", [1, 2])
def test_pftk_approaches_the_square_root_law_at_small_p(b):
    """At small p timeouts vanish and both PFTK forms tend to C/(R√p), C = √(3/(2b))."""
    c = math.sqrt(3 / (2 * b))
    for p in (1e-6, 1e-5):
        for form in (pftk.approx_pkts_per_s, pftk.full_pkts_per_s):
            assert form(p, 0.1, 0.4, b) * 0.1 * math.sqrt(p) == pytest.approx(c, rel=0.005)
    assert mathis.pkts_per_rtt(1e-4, b) == pytest.approx(c * 100, rel=1e-12)


def test_pftk_approximation_stays_within_7_percent_of_the_full_model_up_to_p_5_percent():
    """The valid range declared for pftk-approx (p ≤ 0.05), measured."""
    p = np.geomspace(1e-6, 0.05, 400)
    worst = 0.0
    for b in (1, 2):
        for k in (1, 2, 4, 10):
            full = pftk.full_pkts_per_s(p, 0.1, k * 0.1, b)
            worst = max(worst, float(np.max(np.abs(pftk.approx_pkts_per_s(p, 0.1, k * 0.1, b) - full) / full)))
    assert 0.05 < worst < 0.07


def test_pftk_branches_meet_at_the_window_limit_only_for_b_2():
    """Eq. (32)'s window-limited branch was derived with the E[W_u] of b = 2: at E[W_u] =
    W_max the two branches agree for b = 2 and jump (here by 3.2 %) for b = 1."""
    for b, jump in ((2, 0.0), (1, 0.032)):
        w_max = 10.0
        # p where E[W_u] = W_max, by bisection on the decreasing E[W_u]
        lo, hi = 1e-6, 0.5
        for _ in range(200):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if pftk.expected_window(mid, b) > w_max else (lo, mid)
        left = pftk.full_pkts_per_s(lo * (1 - 1e-9), 0.1, 0.4, b, w_max)
        right = pftk.full_pkts_per_s(hi * (1 + 1e-9), 0.1, 0.4, b, w_max)
        assert (right - left) / left == pytest.approx(jump, abs=0.002)


probabilities = st.floats(min_value=1e-6, max_value=0.5)
rtts = st.floats(min_value=1e-3, max_value=5.0)


@settings(max_examples=300, deadline=None)
@given(
    p=st.floats(1e-6, 0.99), r=rtts, t0_over_r=st.floats(1.0, 100.0), b=st.floats(1.0, 4.0), w_max=st.floats(1.0, 1e4)
)
def test_pftk_full_never_exceeds_w_max_over_r(p, r, t0_over_r, b, w_max):
    """Within the valid range (T0 ≥ R: TCP's timeout is at least the smoothed RTT)."""
    assert pftk.full_pkts_per_s(p, r, t0_over_r * r, b, w_max) <= w_max / r * (1 + 1e-12)
    assert pftk.approx_pkts_per_s(p, r, t0_over_r * r, b, w_max) <= w_max / r * (1 + 1e-12)


@settings(max_examples=300, deadline=None)
@given(p1=probabilities, p2=probabilities, r=rtts, t0_over_r=st.floats(1.0, 100.0), b=st.floats(1.0, 4.0))
def test_throughput_decreases_with_p_for_pftk_and_mathis(p1, p2, r, t0_over_r, b):
    lo, hi = sorted((p1, p2))
    if hi <= lo * (1 + 1e-9):
        return
    t0 = t0_over_r * r
    assert pftk.full_pkts_per_s(hi, r, t0, b) < pftk.full_pkts_per_s(lo, r, t0, b)
    assert pftk.approx_pkts_per_s(hi, r, t0, b) < pftk.approx_pkts_per_s(lo, r, t0, b)
    assert pftk.full_pkts_per_s(hi, r, t0, 2.0, 20.0) <= pftk.full_pkts_per_s(lo, r, t0, 2.0, 20.0) * (1 + 1e-12)
    assert mathis.pkts_per_rtt(hi, b) < mathis.pkts_per_rtt(lo, b)


@settings(max_examples=300, deadline=None)
@given(
    p1=st.floats(1e-7, 0.05),
    p2=st.floats(1e-7, 0.05),
    m=st.floats(1.0, 200.0),
    rto_over_r=st.floats(1.0, 100.0),
)
def test_newreno_throughput_decreases_with_p(p1, p2, m, rto_over_r):
    lo, hi = sorted((p1, p2))
    if hi <= lo * (1 + 1e-9):
        return
    assert newreno.sbs_pkts_per_rtt(hi, m) < newreno.sbs_pkts_per_rtt(lo, m)
    assert newreno.imp_timeout_pkts_per_rtt(hi, 1.0, rto_over_r) < newreno.imp_timeout_pkts_per_rtt(lo, 1.0, rto_over_r)


# ---- evaluation: vectorisation, grid, errors, warnings ---------------------------------------


def sample_inputs(name: str, n: int, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    pool = {
        "p": rng.uniform(1e-5, 0.04, n),
        "m": rng.uniform(1, 30, n),
        "rtt_s": rng.uniform(0.01, 0.5, n),
        "rto_s": rng.uniform(0.5, 3.0, n),
        "b": rng.choice([1.0, 2.0], n),
        "w_max": rng.uniform(5, 200, n),
        "mss_bytes": rng.choice([536.0, 1000.0, 1460.0], n),
    }
    names = {p.name for p in get_model(name).params}
    return {k: v for k, v in pool.items() if k in names}


@pytest.mark.parametrize("name", list(MODELS))
def test_array_evaluation_equals_point_by_point_evaluation(name):
    inputs = sample_inputs(name, 25)
    whole = evaluate(name, inputs)
    assert whole.shape == (25,)
    for i in range(25):
        one = evaluate(name, {k: float(v[i]) for k, v in inputs.items()})
        assert one.shape == ()
        for k, v in whole.outputs.items():
            assert one.outputs[k] == pytest.approx(v[i], rel=1e-12), (k, i)


def test_grid_mode_is_the_outer_product_in_parameter_order():
    e = evaluate(
        "newreno-impatient",
        {"rto_s": [0.2, 1.0], "m": [1, 5, 10, 20], "p": [1e-4, 1e-3, 1e-2], "rtt_s": 0.07},
        mode="grid",
    )
    assert e.shape == (3, 4, 2) and e.axes == ("p", "m", "rto_s")
    assert e.outputs["throughput_pkts_per_rtt"][2, 1, 0] == pytest.approx(
        float(newreno.imp_pkts_per_rtt(1e-2, 5, 0.07, 0.2))
    )
    b = evaluate("newreno-impatient", {"p": [1e-4, 1e-3, 1e-2], "m": 5, "rtt_s": 0.07, "rto_s": 0.2})
    np.testing.assert_allclose(e.outputs["throughput_pkts_per_rtt"][:, 1, 0], b.outputs["throughput_pkts_per_rtt"])


def test_broadcast_mode_pairs_lists_and_refuses_mismatched_lengths():
    e = evaluate("mathis", {"p": [0.01, 0.001], "rtt_s": [0.1, 0.2]})
    np.testing.assert_allclose(
        e.outputs["throughput_pkts_per_s"], [math.sqrt(1.5) / 0.1 / 0.1, math.sqrt(1.5) / 0.2 / math.sqrt(0.001)]
    )
    with pytest.raises(ModelDomainError) as exc:
        evaluate("mathis", {"p": [0.01, 0.001, 0.1], "rtt_s": [0.1, 0.2]})
    assert exc.value.issues[0].parameter == "mode"


def test_bits_per_second_appear_when_mss_is_given():
    e = evaluate("newreno-sbs", {"p": 0.001, "m": 2, "rtt_s": 0.1, "mss_bytes": 1460})
    assert e.outputs["throughput_bits_per_s"] == pytest.approx(e.outputs["throughput_pkts_per_s"] * 1460 * 8)
    assert "throughput_bits_per_s" not in evaluate("newreno-sbs", {"p": 0.001, "m": 2, "rtt_s": 0.1}).outputs


@pytest.mark.parametrize(
    ("name", "inputs", "parameter", "index"),
    [
        ("newreno-sbs", {"p": 0.0, "m": 1, "rtt_s": 0.1}, "p", ()),
        ("newreno-sbs", {"p": [0.01, 1.0], "m": 1, "rtt_s": 0.1}, "p", (1,)),
        ("newreno-sbs", {"p": 0.01, "m": 0, "rtt_s": 0.1}, "m", ()),
        ("newreno-sbs", {"p": 0.01, "m": 1, "rtt_s": -1}, "rtt_s", ()),
        ("newreno-sbs", {"p": float("nan"), "m": 1, "rtt_s": 0.1}, "p", ()),
        ("newreno-impatient", {"p": 0.01, "m": 1, "rtt_s": 0.1, "rto_s": 0}, "rto_s", ()),
        ("newreno-impatient", {"p": 0.01, "m": 1, "rtt_s": 0.1, "rto_s": 1, "m_star": 2.5}, "m_star", ()),
        ("newreno-impatient", {"p": 0.01, "m": 1, "rtt_s": 0.1, "rto_s": 1, "m_star": 0}, "m_star", ()),
        ("pftk-full", {"p": 0.01, "rtt_s": 0.1, "rto_s": 1, "w_max": 0.5}, "w_max", ()),
        ("pftk-full", {"p": 0.01, "rtt_s": 0.1, "rto_s": 1, "b": 0.5}, "b", ()),
        ("pftk-approx", {"p": 0.01, "rtt_s": 0.1, "rto_s": 1, "mss_bytes": 0}, "mss_bytes", ()),
        ("mathis", {"p": 0.01, "rtt_s": float("inf")}, "rtt_s", ()),
        ("mathis", {"p": 0.01}, "rtt_s", ()),
        ("mathis", {"p": 0.01, "rtt_s": 0.1, "rto_s": 1}, "rto_s", ()),
    ],
)
def test_impossible_inputs_raise_a_domain_error_naming_the_parameter(name, inputs, parameter, index):
    with pytest.raises(ModelDomainError) as exc:
        evaluate(name, inputs)
    issue = exc.value.issues[0]
    assert (issue.parameter, issue.index) == (parameter, index)
    assert issue.reason


def test_every_impossible_parameter_is_reported_at_once():
    with pytest.raises(ModelDomainError) as exc:
        evaluate("newreno-sbs", {"p": 1.0, "m": 0.5, "rtt_s": 0})
    assert [i.parameter for i in exc.value.issues] == ["p", "m", "rtt_s"]


def test_unknown_model():
    with pytest.raises(UnknownModelError):
        evaluate("bbr", {"p": 0.1})


@pytest.mark.parametrize(
    ("name", "inputs", "parameter", "points"),
    [
        ("newreno-sbs", {"p": [0.01, 0.06, 0.2], "m": 1, "rtt_s": 0.1}, "p", 2),
        ("newreno-sbs", {"p": 0.01, "m": [2, 30], "rtt_s": 0.1}, "m", 1),  # W_SBS(0.01, 30) = 7.6
        ("newreno-impatient", {"p": 0.01, "m": 5, "rtt_s": 0.1, "rto_s": 0.05}, "rto_s", 1),
        ("newreno-impatient", {"p": 0.04, "m": 5, "rtt_s": 0.1, "rto_s": 0.3}, "p", 1),  # W_IMP < 8
        ("pftk-full", {"p": 0.01, "rtt_s": 0.1, "rto_s": 0.05}, "rto_s", 1),
        ("pftk-full", {"p": 0.01, "rtt_s": 0.1, "rto_s": 1, "b": 3}, "b", 1),
        ("pftk-approx", {"p": [0.01, 0.2], "rtt_s": 0.1, "rto_s": 1}, "p", 1),
        ("mathis", {"p": [0.001, 0.02, 0.05], "rtt_s": 0.1}, "p", 2),
    ],
)
def test_inputs_outside_the_valid_range_give_an_answer_with_a_warning(name, inputs, parameter, points):
    e = evaluate(name, inputs)
    assert np.isfinite(e.outputs["throughput_pkts_per_s"]).all()
    assert any(w.parameter == parameter and w.points == points for w in e.warnings), e.warnings


def test_no_warning_inside_the_valid_ranges():
    assert evaluate("newreno-impatient", {"p": 0.001, "m": 10, "rtt_s": 0.07, "rto_s": 0.2}).warnings == []
    assert evaluate("pftk-full", {"p": 0.01, "rtt_s": 0.1, "rto_s": 0.4}).warnings == []


def test_models_list_their_metadata():
    meta = {m["name"]: m for m in list_models()}
    assert set(meta) == {"newreno-sbs", "newreno-impatient", "pftk-full", "pftk-approx", "mathis", "cubic"}
    for m in meta.values():
        assert m["title"] and m["reference"] and m["equations"]
        for p in m["parameters"]:
            assert p["unit"] and p["domain"]["reason"] and p["domain"]["text"]
    assert "eq. (1)-(4)" in meta["newreno-sbs"]["reference"]
    assert "eq. (33)" in meta["pftk-approx"]["reference"]
    p = next(x for x in meta["newreno-sbs"]["parameters"] if x["name"] == "p")
    assert p["domain"]["exclusive_minimum"] == 0 and p["domain"]["exclusive_maximum"] == 1
    assert p["valid_range"]["maximum"] == 0.05
    rtt = next(x for x in meta["mathis"]["parameters"] if x["name"] == "rtt_s")
    assert rtt["unit"] == "s"


# ---- speed ------------------------------------------------------------------------------------


def test_ten_thousand_points_evaluate_well_under_50_ms(record_property, capsys):
    """Every model on 10,000 points (broadcast), and the region map on a 100 × 100 grid. The
    figure is printed and recorded; the assertion is generous so a loaded machine cannot
    make it flake (the issue's target is 50 ms)."""
    figures = {}
    for name in MODELS:
        inputs = sample_inputs(name, 10_000, seed=1)
        evaluate(name, inputs)  # warm-up
        best = min(_timed(lambda: evaluate(name, inputs)) for _ in range(5))
        figures[name] = best
    p, m = np.geomspace(1e-4, 0.05, 100), np.arange(1, 101)
    figures["newreno regions 100x100"] = min(_timed(lambda: regions(p, m, R, 0.2)) for _ in range(5))
    figures["newreno crossover 10000 p"] = min(
        _timed(lambda: crossover(np.geomspace(1e-5, 0.05, 10_000), R, 0.2)) for _ in range(5)
    )
    with capsys.disabled():
        print("\n10,000-point timings (best of 5): " + ", ".join(f"{k} {v * 1e3:.2f} ms" for k, v in figures.items()))
    for k, v in figures.items():
        record_property(f"ms_{k}", round(v * 1e3, 3))
        assert v < 0.5, (k, v)


def _timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def test_extreme_inputs_answer_with_a_warning_instead_of_silently_overflowing():
    e = evaluate("mathis", {"p": [0.01, 1e-300], "rtt_s": 1e-300})
    (w,) = [w for w in e.warnings if w.parameter == "throughput_pkts_per_s"]
    assert w.points == 1 and "double precision" in w.reason  # 1.2e301 is still a double, ∞ is not
    c = crossover([0.001, 1e-310], 0.07, 0.2)
    assert c.status.tolist() == ["crossover", "overflow"] and np.isnan(c.m_t[1])
