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

Comparing two variants, every caller (comparisons, the papers' reproductions, schedules) uses
the functions of the second half: the paired difference and the side of zero its interval lies
on (`paired_difference`, `significant_direction`), Fieller's interval for a ratio of paired
means (`fieller_interval`), Welch's test for two independent samples (`welch_direction`), and a
relative tolerance below which two numbers are one (`differs`). Each caller keeps its own words
for the outcome (b_better, more, better, up …).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Sequence
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
    return t_critical(count - 1, confidence)


def t_critical(dof: float, confidence: float = DEFAULT_CONFIDENCE) -> float:
    """The two-sided Student-t critical value for `dof` degrees of freedom, not necessarily a
    whole number (Welch–Satterthwaite's is not)."""
    return float(_scipy_stats.t.ppf(0.5 + confidence / 2, dof))


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


# ---- comparing two samples ------------------------------------------------------------------


def paired_difference(
    pairs: Iterable[tuple[float | None, float | None]], confidence: float = DEFAULT_CONFIDENCE
) -> Summary:
    """The summary of b − a over the pairs (a, b) where neither is None: its mean, and the
    Student-t interval that `significant_direction` reads. Paired because replication r runs
    every side with the same seed (common random numbers): the difference cancels the noise the
    sides share, so its interval is much narrower than that of two independent means. A
    difference that is not a finite number (a side NaN or infinite, or b − a overflowing) is left
    out, as `summarize` leaves it out."""
    return summarize([b - a for a, b in pairs if a is not None and b is not None], confidence)


def significant_direction(summary: Summary) -> Literal[-1, 0, 1] | None:
    """Where zero lies against the interval of a difference: 1 when the whole interval is above
    it (b significantly larger), −1 when below, 0 when the interval contains it (no significant
    difference); None without an interval (fewer than two values), where callers differ on
    what to say."""
    if summary.ci_low is None or summary.ci_high is None:
        return None
    if summary.ci_low > 0:
        return 1
    if summary.ci_high < 0:
        return -1
    return 0


def fieller_interval(
    a: np.ndarray, b: np.ndarray, confidence: float = DEFAULT_CONFIDENCE
) -> tuple[float | None, float | None, str | None]:
    """Fieller's interval for mean(b) / mean(a) from paired samples: (low, high, None), or
    (None, None, why) when it is unbounded or undefined.

    The set of ρ with (b̄ − ρā)² ≤ t²·(s_bb − 2ρ s_ab + ρ² s_aa)/n, t Student's with n − 1
    degrees of freedom. Chosen over a t interval on the per-pair ratios b_i/a_i because it is an
    interval for the ratio of means (the mean of ratios is another, biased estimate that one
    near-zero a_i ruins), it uses the pairing (the covariance s_ab), and it agrees exactly with
    the paired difference: ρ = 1 lies in it iff the t interval of b − a contains 0. It is
    unbounded when ā itself is not significantly different from 0."""
    n = a.size
    if n < 2:
        return None, None, "fewer than two pairs: no interval"
    t2 = t_quantile(n, confidence) ** 2
    ma, mb = float(a.mean()), float(b.mean())
    cov = np.cov(np.vstack([a, b]), ddof=1) / n
    vaa, vbb, vab = float(cov[0, 0]), float(cov[1, 1]), float(cov[0, 1])
    qa = ma * ma - t2 * vaa
    qb = ma * mb - t2 * vab
    qc = mb * mb - t2 * vbb
    if not all(math.isfinite(x) for x in (qa, qb, qc)):
        return None, None, "the values are too large for an interval in double precision"
    if qa <= 0:
        return None, None, "mean_a is not significantly different from 0: the ratio's interval is unbounded"
    disc = qb * qb - qa * qc
    if disc < 0:  # only by rounding: with qa > 0 the interval is bounded and not empty
        disc = 0.0
    root = math.sqrt(disc)
    low, high = (qb - root) / qa, (qb + root) / qa
    if not (math.isfinite(low) and math.isfinite(high)):
        return None, None, "the values are too large for an interval in double precision"
    return low, high, None


def welch_direction(
    a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray, confidence: float = DEFAULT_CONFIDENCE
) -> Literal[-1, 0, 1]:
    """The sign of mean(a) − mean(b) when Welch's t test finds the means different at
    `confidence`, else 0 (also when a side is empty).

    For two samples that are not paired and need not share a variance (a schedule's firing
    against its baseline): different when |ā − b̄| > t(ν)·√(s_a²/n_a + s_b²/n_b), ν by
    Welch–Satterthwaite. A side with one value adds no variance term; with no variance at all
    any difference counts, so callers first decide what is a difference at all (`differs`)."""
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if x.size == 0 or y.size == 0:
        return 0
    diff = float(x.mean() - y.mean())
    terms = [(float(s.var(ddof=1)) / s.size, s.size - 1) for s in (x, y) if s.size >= 2]
    variance = sum(v for v, _ in terms)
    if variance > 0:
        if 1e-150 < variance < 1e150:
            dof = variance**2 / sum(v * v / d for v, d in terms if v > 0)
        else:  # the squares would underflow to 0 or overflow: the same ratio on v / Σv
            dof = 1.0 / sum((v / variance) ** 2 / d for v, d in terms if v > 0)
        if abs(diff) <= t_critical(dof, confidence) * math.sqrt(variance):
            return 0
    return 1 if diff > 0 else -1 if diff < 0 else 0


_TINY = 1e-300
"""The floor of `differs`' scale: two numbers this close to 0 are one."""


def differs(a: float, b: float, tolerance: float) -> bool:
    """Whether a and b differ by more than `tolerance` of the larger magnitude: the tie rule for
    numbers that should be equal but for rounding (a mean over 15 copies of a value and over 3
    may differ in the last bit) or whose difference is too small to matter. Symmetric in a
    and b; NaN differs from nothing."""
    return abs(a - b) > tolerance * max(abs(a), abs(b), _TINY)
