"""Intervals that stay inside a metric's range (issue 15: throughput CIs reached −14 pkts/RTT)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as scipy_stats

from services.stats import (
    FRACTION,
    NONNEGATIVE,
    differs,
    fieller_interval,
    paired_difference,
    significant_direction,
    summarize,
    summary_of_moments,
    welch_direction,
)
from services.sweeps.spec import NUMERIC_METRICS, metric_bounds


def test_three_spread_out_throughputs_get_a_positive_interval_where_the_t_interval_went_below_zero():
    values = [2.0, 40.0, 5.0]
    plain = summarize(values)
    assert plain.ci_low is not None and plain.ci_low < 0
    s = summarize(values, bounds=NONNEGATIVE)
    assert s.interval == "log" and s.ci_low is not None and s.ci_high is not None
    assert 0 < s.ci_low < s.mean < s.ci_high
    # The delta method on log m: se(log m) = (s/√n)/m, the t interval there, mapped back.
    k = plain.half_width / s.mean
    assert (s.ci_low, s.ci_high) == pytest.approx((s.mean / math.exp(k), s.mean * math.exp(k)))
    assert s.half_width == pytest.approx((s.ci_high - s.ci_low) / 2)


def test_a_tight_positive_sample_gets_nearly_the_plain_t_interval():
    values = [100.0, 101.0, 99.0, 100.5]
    plain, log = summarize(values), summarize(values, bounds=NONNEGATIVE)
    assert (log.ci_low, log.ci_high) == pytest.approx((plain.ci_low, plain.ci_high), rel=2e-4)


def test_a_fraction_gets_a_logit_interval_inside_zero_and_one():
    s = summarize([0.01, 0.2, 0.03], bounds=FRACTION)
    assert s.interval == "logit" and 0 < s.ci_low < s.mean < s.ci_high < 1


def test_values_all_on_the_bound_have_a_zero_width_interval():
    s = summarize([0.0, 0.0, 0.0], bounds=NONNEGATIVE)
    assert (s.ci_low, s.ci_high, s.half_width) == (0.0, 0.0, 0.0)


def test_differences_keep_the_symmetric_t_interval():
    s = summarize([-3.0, 1.0, 5.0])
    assert s.interval == "t" and s.ci_low == pytest.approx(-s.ci_high + 2 * s.mean)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(0.0, 1e9), min_size=2, max_size=30), st.sampled_from([0.8, 0.9, 0.95, 0.99]))
def test_a_nonnegative_metrics_interval_never_leaves_zero_to_infinity_and_contains_its_mean(values, confidence):
    s = summarize(values, confidence, bounds=NONNEGATIVE)
    assert s.ci_low is not None and s.ci_high is not None and s.mean is not None
    assert 0 <= s.ci_low <= s.mean * (1 + 1e-12) and s.ci_high >= s.mean * (1 - 1e-12)
    assert math.isfinite(s.ci_high)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(0.0, 1.0), min_size=2, max_size=30))
def test_a_fractions_interval_stays_in_zero_one(values):
    s = summarize(values, bounds=FRACTION)
    assert 0 <= s.ci_low <= s.ci_high <= 1


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(1e-3, 1e6), min_size=2, max_size=30))
def test_the_summary_from_moments_is_the_summary_from_values(values):
    """Sweeps summarise from exact sums (services/sweeps/aggregates.py): same interval."""
    data = np.array(values)
    a = summarize(values, bounds=NONNEGATIVE)
    b = summary_of_moments(len(values), float(data.mean()), float(data.var(ddof=1)), bounds=NONNEGATIVE)
    assert (b.ci_low, b.ci_high, b.interval) == (
        pytest.approx(a.ci_low, rel=1e-9, abs=1e-12),
        pytest.approx(a.ci_high, rel=1e-9),
        a.interval,
    )


def test_every_sweep_metric_has_a_range_and_the_rates_are_fractions():
    assert {m: metric_bounds(m) for m in ("loss_rate", "loss_event_rate")} == {
        "loss_rate": FRACTION,
        "loss_event_rate": FRACTION,
    }
    assert all(metric_bounds(m) in (FRACTION, NONNEGATIVE) for m in NUMERIC_METRICS)


# ---- comparing two samples (issue 16: one home for what ratios, papers 003/004 and schedules share)

moderate = st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False)
paired_samples = st.lists(st.tuples(moderate, moderate), min_size=2, max_size=20)


def _away_from(p_value: float, alpha: float) -> bool:
    """Far enough from the test's boundary that rounding cannot decide it."""
    return math.isfinite(p_value) and abs(p_value - alpha) > 1e-6


@pytest.mark.filterwarnings("ignore:Precision loss occurred:RuntimeWarning")  # scipy's, on nearly equal data
@settings(max_examples=300, deadline=None)
@given(paired_samples)
def test_the_paired_difference_is_significant_exactly_when_the_paired_t_test_rejects_at_five_percent(pairs):
    a, b = np.array([x for x, _ in pairs]), np.array([y for _, y in pairs])
    d = paired_difference(pairs)
    assert d.count == len(pairs) and d.mean == pytest.approx(float((b - a).mean()), abs=1e-6)
    p_value = float(scipy_stats.ttest_rel(b, a).pvalue)
    if _away_from(p_value, 0.05):
        assert (significant_direction(d) != 0) == (p_value < 0.05)
    if significant_direction(d):
        assert significant_direction(d) == (1 if d.mean > 0 else -1)


@settings(max_examples=200, deadline=None)
@given(paired_samples)
def test_swapping_the_sides_flips_the_direction(pairs):
    forward = significant_direction(paired_difference(pairs))
    backward = significant_direction(paired_difference([(b, a) for a, b in pairs]))
    assert backward == -forward


def test_pairs_with_a_missing_side_are_left_out_and_one_pair_has_no_direction():
    d = paired_difference([(1.0, 2.0), (None, 5.0), (3.0, None), (float("nan"), 1.0)])
    assert (d.count, d.mean) == (1, 1.0)
    assert significant_direction(d) is None
    assert significant_direction(paired_difference([])) is None
    assert significant_direction(paired_difference([(1.0, 2.0), (2.0, 3.1), (3.0, 3.9)])) == 1
    assert significant_direction(paired_difference([(1.0, 2.0), (2.0, 1.0), (3.0, 3.5)])) == 0


@pytest.mark.filterwarnings("ignore:Precision loss occurred:RuntimeWarning")  # scipy's, on nearly equal data
@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(st.floats(1.0, 1e3), st.floats(-10.0, 10.0)), min_size=2, max_size=15),
    st.floats(0.2, 5.0),
)
def test_fiellers_interval_holds_the_ratio_of_means_and_contains_one_exactly_when_the_difference_is_not_significant(
    draws, factor
):
    a = np.array([x for x, _ in draws])
    b = a * factor + np.array([e for _, e in draws])
    low, high, note = fieller_interval(a, b)
    if low is None:
        assert note is not None and "unbounded" in note
        return
    assert note is None and low <= high
    ratio = float(b.mean() / a.mean())
    assert low - 1e-9 * abs(ratio) <= ratio <= high + 1e-9 * abs(ratio)
    p_value = float(scipy_stats.ttest_rel(b, a).pvalue)
    if _away_from(p_value, 0.05) and min(abs(low - 1), abs(high - 1)) > 1e-9:
        assert (low <= 1 <= high) == (p_value >= 0.05)


samples = st.lists(st.floats(-1e6, 1e6), min_size=2, max_size=15)


@pytest.mark.filterwarnings("ignore:Precision loss occurred:RuntimeWarning")  # scipy's, on nearly equal data
@settings(max_examples=300, deadline=None)
@given(samples, samples, st.sampled_from([0.9, 0.95, 0.99]))
def test_welchs_direction_is_scipys_welch_test_and_flips_with_the_sides(a, b, confidence):
    direction = welch_direction(a, b, confidence)
    assert welch_direction(b, a, confidence) == -direction
    if np.var(a) > 0 or np.var(b) > 0:
        p_value = float(scipy_stats.ttest_ind(a, b, equal_var=False).pvalue)
        if _away_from(p_value, 1 - confidence):
            assert (direction != 0) == (p_value < 1 - confidence)
    if direction:
        assert direction == (1 if np.mean(a) > np.mean(b) else -1)


def test_welch_with_no_spread_counts_any_difference_and_an_empty_side_none():
    assert welch_direction([2.0, 2.0], [1.0]) == 1
    assert welch_direction([1.0], [1.0, 1.0, 1.0]) == 0
    assert welch_direction([], [1.0, 2.0]) == 0


def test_welch_degrees_of_freedom_survive_variances_whose_squares_underflow_or_overflow():
    """Found by the property test above: ν = (Σv)²/Σ(v²/d) divided 0 by 0 at v ≈ 1e-170."""
    assert welch_direction([0.0, 1e-160, 2e-160], [5e-160, 6e-160, 7e-160]) == -1
    assert welch_direction([0.0, 1e-160, 2e-160], [0.5e-160, 1.5e-160, 2.5e-160]) == 0
    assert welch_direction([1e100, 3e100, 2e100], [1e100, 2e100, 3e100]) == 0
    assert welch_direction([1e100, 1.1e100, 1.2e100], [5e100, 5.1e100, 5.2e100]) == -1


@settings(max_examples=300, deadline=None)
@given(st.floats(-1e12, 1e12), st.floats(-1e12, 1e12), st.sampled_from([1e-9, 0.001, 0.05]))
def test_differs_is_symmetric_and_means_more_than_the_tolerance_of_the_larger(a, b, tolerance):
    assert differs(a, b, tolerance) == differs(b, a, tolerance)
    assert not differs(a, a, tolerance)
    larger = max(abs(a), abs(b))
    if abs(a - b) > 2 * tolerance * larger and larger > 1e-290:
        assert differs(a, b, tolerance)
    if abs(a - b) < 0.5 * tolerance * larger:
        assert not differs(a, b, tolerance)
