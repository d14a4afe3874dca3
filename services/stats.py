"""Summary statistics of replications: mean, spread and a Student-t confidence interval.

Replications of a simulation are independent draws (each its own seed), few in number (3-30),
so the interval on their mean is Student's t with n - 1 degrees of freedom, not the normal
one. Values that are undefined for a run (a flow without a loss event has no loss event rate)
arrive as None or NaN and are left out: `count` says how many values the summary rests on.

A metric that cannot be negative (a throughput, a delay) or lies in [0, 1] (a loss rate, a
utilisation) gets its interval on the scale where it is unbounded, as survival analysis does
for probabilities: the mean m with standard error se = s/√n is mapped to log m (or
logit m), the delta method gives that scale's standard error (se/m, or se/(m(1 − m))), the
Student-t interval is taken there and mapped back. The interval then stays inside the
metric's range — a throughput's never reaches below zero, as the plain t interval did at
−14 pkts/RTT with three spread-out replications — is asymmetric where the data are skewed,
and matches the plain one when se/m is small. `interval` says which was used.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from scipy import stats as _scipy_stats

DEFAULT_CONFIDENCE = 0.95

Interval = Literal["t", "log", "logit"]
Bounds = tuple[float, float | None] | None
"""A metric's range: None (any real number: a difference), (0, None) (never negative), or
(0, 1) (a fraction)."""
NONNEGATIVE: Bounds = (0.0, None)
FRACTION: Bounds = (0.0, 1.0)
_MAX_EXPONENT = 700.0  # exp(700) ≈ 1e304: a wider interval is reported as that, not as ∞


@dataclass(frozen=True)
class Summary:
    """`ci_low`/`ci_high`/`half_width` are None below two values (no spread to speak of);
    `std` is the sample standard deviation (n - 1)."""

    count: int
    mean: float | None
    std: float | None
    ci_low: float | None
    ci_high: float | None
    half_width: float | None
    """(ci_high − ci_low) / 2: the interval's half-width, symmetric or not."""
    interval: Interval = "t"

    def as_dict(self) -> dict[str, Any]:
        return {
            "count": self.count,
            "mean": self.mean,
            "std": self.std,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "half_width": self.half_width,
            "interval": self.interval,
        }

    @property
    def relative_half_width(self) -> float | None:
        """Half-width over |mean|: the stopping rule's measure. None when undefined (mean 0)."""
        if self.half_width is None or self.mean is None or self.mean == 0:
            return None
        return self.half_width / abs(self.mean)


def finite_values(values: Iterable[float | None]) -> np.ndarray:
    """The values that are numbers, as a float array (None and NaN left out)."""
    array = np.array([v for v in values if v is not None], dtype=float)
    return array[np.isfinite(array)]


def t_quantile(count: int, confidence: float = DEFAULT_CONFIDENCE) -> float:
    """The two-sided Student-t critical value for `count` values (count - 1 degrees of freedom)."""
    if count < 2:
        raise ValueError("a t interval needs at least two values")
    return float(_scipy_stats.t.ppf(0.5 + confidence / 2, count - 1))


def summary_of_moments(
    count: int,
    mean: float | None,
    variance: float | None,
    confidence: float = DEFAULT_CONFIDENCE,
    bounds: Bounds = None,
) -> Summary:
    """The summary of `count` values of this mean and sample variance (n - 1), as `summarize`
    gives it from the values themselves (services/sweeps/aggregates.py derives both from exact
    sums, so it may differ from numpy's floating-point pass in the last bits)."""
    if count == 0 or mean is None:
        return Summary(count, None, None, None, None, None)
    if count == 1 or variance is None:
        return Summary(count, mean, None, None, None, None)
    std = math.sqrt(variance)
    return _summary(count, mean, std, confidence, bounds)


@functools.lru_cache(maxsize=4096)
def _t_cached(count: int, confidence: float) -> float:
    return t_quantile(count, confidence)


def summarize(values: Iterable[float | None], confidence: float = DEFAULT_CONFIDENCE, bounds: Bounds = None) -> Summary:
    """Mean, sample standard deviation and interval of the values that are numbers; `bounds`
    the metric's range (module docstring)."""
    data = finite_values(values)
    n = int(data.size)
    if n == 0:
        return Summary(0, None, None, None, None, None)
    mean = float(data.mean())
    if n == 1:
        return Summary(1, mean, None, None, None, None)
    return _summary(n, mean, float(data.std(ddof=1)), confidence, bounds)


def _summary(n: int, mean: float, std: float, confidence: float, bounds: Bounds) -> Summary:
    t = _t_cached(n, confidence)
    se = std / math.sqrt(n)
    low_bound, high_bound = bounds if bounds is not None else (None, None)
    inside = low_bound is not None and mean > low_bound and (high_bound is None or mean < high_bound)
    if bounds is not None and low_bound == 0.0 and inside and high_bound is None:
        spread = math.exp(min(t * se / mean, _MAX_EXPONENT))
        low, high, kind = mean / spread, mean * spread, "log"
    elif bounds is not None and low_bound == 0.0 and high_bound == 1.0 and inside:
        centre = math.log(mean / (1.0 - mean))
        k = min(t * se / (mean * (1.0 - mean)), _MAX_EXPONENT)
        low, high, kind = _expit(centre - k), _expit(centre + k), "logit"
    elif bounds is not None and std == 0.0:
        low, high, kind = mean, mean, "t"  # every value on the bound: nothing to spread
    else:
        half = t * se
        return Summary(n, mean, std, mean - half, mean + half, half)
    return Summary(n, mean, std, low, high, (high - low) / 2.0, kind)  # type: ignore[arg-type]


def _expit(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x)) if x >= 0 else math.exp(x) / (1.0 + math.exp(x))
