"""Summary statistics of replications: mean, spread and a Student-t confidence interval.

Replications of a simulation are independent draws (each its own seed), few in number (3-30),
so the interval on their mean is Student's t with n - 1 degrees of freedom, not the normal
one. Values that are undefined for a run (a flow without a loss event has no loss event rate)
arrive as None or NaN and are left out: `count` says how many values the summary rests on.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import asdict, dataclass
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
        return asdict(self)

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
