"""Summary statistics of replications: mean, spread and a Student-t confidence interval.

Replications of a simulation are independent draws (each its own seed), few in number (3-30),
so the interval on their mean is Student's t with n - 1 degrees of freedom, not the normal
one. Values that are undefined for a run (a flow without a loss event has no loss event rate)
arrive as None or NaN and are left out: `count` says how many values the summary rests on.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats as _scipy_stats

DEFAULT_CONFIDENCE = 0.95


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

    def as_dict(self) -> dict[str, Any]:
        return {
            "count": self.count,
            "mean": self.mean,
            "std": self.std,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "half_width": self.half_width,
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
    count: int, mean: float | None, variance: float | None, confidence: float = DEFAULT_CONFIDENCE
) -> Summary:
    """The summary of `count` values of this mean and sample variance (n - 1), as `summarize`
    gives it from the values themselves (services/sweeps/aggregates.py derives both from exact
    sums, so it may differ from numpy's floating-point pass in the last bits)."""
    if count == 0 or mean is None:
        return Summary(count, None, None, None, None, None)
    if count == 1 or variance is None:
        return Summary(count, mean, None, None, None, None)
    std = math.sqrt(variance)
    half = _t_cached(count, confidence) * std / math.sqrt(count)
    return Summary(count, mean, std, mean - half, mean + half, half)


@functools.lru_cache(maxsize=4096)
def _t_cached(count: int, confidence: float) -> float:
    return t_quantile(count, confidence)


def summarize(values: Iterable[float | None], confidence: float = DEFAULT_CONFIDENCE) -> Summary:
    data = finite_values(values)
    n = int(data.size)
    if n == 0:
        return Summary(0, None, None, None, None, None)
    mean = float(data.mean())
    if n == 1:
        return Summary(1, mean, None, None, None, None)
    std = float(data.std(ddof=1))
    half = t_quantile(n, confidence) * std / math.sqrt(n)
    return Summary(n, mean, std, mean - half, mean + half, half)
