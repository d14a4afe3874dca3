"""What every comparison shares: the observations it reads, grouping, axis values, metrics.

A comparison reads *observations* (``services.sweeps.Observation``): one flow group of one
succeeded run, with the grid point it belongs to, its replication index (replication r uses
the same seed at every point: common random numbers) and the group's metrics. The functions
here only read attributes.
"""

from __future__ import annotations

import json
import math
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

from services.errors import InvalidInputError
from services.sweeps import Observation

# One identity for axis values everywhere: the sweeps' own (re-exported for the comparisons).
from services.sweeps.spec import SUMMARY_METRICS, point_key, unknown_metric_message, value_key  # noqa: F401

ObservationLike = Observation
"""What a comparison reads (the tests build them by hand)."""


# The metrics a comparison can be asked about: those a sweep summarises, per flow group, per
# link (a link is compared under its name, as a flow group is) and per run (under "run").
METRICS: tuple[str, ...] = SUMMARY_METRICS

# Metrics where less is better (everything else — throughput, goodput, packets, downloads — is
# better when higher). A verdict "a_better" follows this direction.
LOWER_IS_BETTER: frozenset[str] = frozenset(
    {
        "retransmits",
        "drops",
        "ack_drops",
        "loss_rate",
        "loss_events",
        "loss_event_rate",
        "drops_per_loss_event",
        "timeouts",
        "mean_recovery_s",
        "mean_rtt_s",
        "mean_rto_s",
        "download_time_s",
        "link_drops",
        "queue_drops",
        "loss_drops",
        "overflow_drops",
        "aqm_drops",
        "ecn_marks",
        "mean_queue_pkts",
        "mean_queue_delay_s",
        "p95_queue_delay_s",
        "p99_queue_delay_s",
        "mac_retries",
        "mac_retry_drops",
        "mac_collisions",
        "uf_percent",
    }
)


def check_metric(metric: str, path: str = "$.metric") -> str:
    if metric not in METRICS:
        raise InvalidInputError(unknown_metric_message(metric), path=path, kind="unknown_metric")
    return metric


def higher_is_better(metric: str) -> bool:
    return metric not in LOWER_IS_BETTER


def number(value: Any) -> float | None:
    """A finite float, or None (None, NaN, ±∞, booleans and non-numbers all are "undefined")."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def metric_of(obs: ObservationLike, metric: str) -> float | None:
    return number((obs.metrics or {}).get(metric))


def matches(value: Any, text: str) -> bool:
    """Whether an axis value equals ``text`` as given in a query string: ``"newreno-sbs"``,
    ``"12"`` for 12 or 12.0, ``"true"``, or JSON (``"[1, 2]"``)."""
    if isinstance(value, str):
        return value == text
    try:
        parsed = json.loads(text)
    except (ValueError, RecursionError):
        return False
    return value_key(parsed) == value_key(value)


def axis_paths(observations: Sequence[ObservationLike], axes: Sequence[Mapping[str, Any]] | None = None) -> list[str]:
    """The swept axis paths: the sweep's own order when known, else as the observations carry them."""
    if axes:
        return [str(a["path"]) for a in axes]
    seen: dict[str, None] = {}
    for obs in observations:
        seen.update(dict.fromkeys(obs.values or {}))
    return list(seen)


def axis_order(
    observations: Sequence[ObservationLike], path: str, axes: Sequence[Mapping[str, Any]] | None = None
) -> dict[Hashable, int]:
    """Position of each value of axis ``path`` along the axis: the sweep's order of values when
    known, else ascending for numbers and first appearance for anything else."""
    declared = next((a.get("values") for a in axes or () if a.get("path") == path), None)
    values: list[Any] = list(declared) if isinstance(declared, list) else []
    if not values:
        seen: dict[Hashable, Any] = {}
        for obs in observations:
            if path in (obs.values or {}):
                seen.setdefault(value_key(obs.values[path]), obs.values[path])
        values = list(seen.values())
        if all(number(v) is not None for v in values):
            values.sort(key=float)
    order: dict[Hashable, int] = {}
    for v in values:
        order.setdefault(value_key(v), len(order))
    return order


def flows_of(observations: Sequence[ObservationLike]) -> list[str]:
    """The flow groups, in the order the scenario lists them."""
    return list(dict.fromkeys(o.flow for o in observations))


def check_flow(observations: Sequence[ObservationLike], flow: str, path: str) -> str:
    known = flows_of(observations)
    if observations and flow not in known:  # nothing has succeeded yet: nothing to check against
        listed = ", ".join(known)
        raise InvalidInputError(
            f"unknown flow {flow!r}; the flow groups here are: {listed}", path=path, kind="unknown_flow"
        )
    return flow


def relative(ours: float | None, theirs: float | None) -> float | None:
    """(ours − theirs) / theirs, or None when either is undefined or theirs is 0."""
    if ours is None or theirs is None or theirs == 0:
        return None
    return (ours - theirs) / theirs


BIG_GAP = 0.25
"""A published value more than 25 % from ours, and outside our 95 % interval, is a gap a reader
must see: the row is flagged whatever a claim's verdict says."""


def gap_flag(ours: float | None, low: float | None, high: float | None, theirs: float | None) -> str | None:
    """'big gap: …' when `theirs` is outside [low, high] (or there is no interval) and more than
    BIG_GAP from `ours`; None otherwise, or when either is undefined."""
    diff = relative(ours, theirs)
    if diff is None or abs(diff) <= BIG_GAP:
        return None
    inside = low is not None and high is not None and theirs is not None and low <= theirs <= high
    if inside:
        return None
    where = "outside our 95 % interval" if low is not None and high is not None else "one replication, no interval"
    return f"big gap: ours {diff:+.0%} from the paper's ({where})"


def finite_row(row: dict[str, Any]) -> dict[str, Any]:
    """The row with every non-finite float (an overflow on absurd inputs) as None."""
    return {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in row.items()}
