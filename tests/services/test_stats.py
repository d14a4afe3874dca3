"""Intervals that stay inside a metric's range (issue 15: throughput CIs reached −14 pkts/RTT)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from services.stats import FRACTION, NONNEGATIVE, summarize, summary_of_moments
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
    assert (b.ci_low, b.ci_high, b.interval) == (pytest.approx(a.ci_low, rel=1e-9, abs=1e-12), pytest.approx(a.ci_high, rel=1e-9), a.interval)


def test_every_sweep_metric_has_a_range_and_the_rates_are_fractions():
    assert {m: metric_bounds(m) for m in ("loss_rate", "loss_event_rate")} == {"loss_rate": FRACTION, "loss_event_rate": FRACTION}
    assert all(metric_bounds(m) in (FRACTION, NONNEGATIVE) for m in NUMERIC_METRICS)
