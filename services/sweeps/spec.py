"""What a researcher writes to ask for a sweep, and to extend one.

    {"preset": "paper000-fig2a", "overrides": {"duration_s": 200},
     "axes": [{"path": "flows[*].loss.m", "range": {"start": 1, "stop": 40}}],
     "replications": 5, "seed": 1}

An axis is a scenario path (`services.scenarios.paths`) or a preset parameter
(`background_flows`), with a list of values or an inclusive range. Axes combine as a product
(every combination) or zipped (the i-th values together). Replication r of every point runs
with the same seed (derived from the sweep's `seed`), so points differ only by their axis
values: common random numbers, which make paired comparisons between points sharper.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from enum import StrEnum
from typing import Any, Self

from pydantic import BaseModel, ConfigDict, Field, StrictBool, field_validator, model_validator

from services.db.models import FLOW_METRICS, U64_MAX
from services.scenarios import Scenario
from services.stats import FRACTION, NONNEGATIVE, Bounds

MAX_AXES = 8
MAX_AXIS_VALUES = 10_000
MAX_REPLICATIONS = 1_000

NUMERIC_METRICS: tuple[str, ...] = tuple(m for m in FLOW_METRICS if m not in ("name", "type", "variant"))
"""The per-flow metrics a sweep summarises."""

LINK_METRICS: tuple[str, ...] = (
    "utilization",
    "link_packets",
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
    "mac_frames_sent",
    "mac_retries",
    "mac_retry_drops",
    "mac_collisions",
)
"""The per-link metrics a sweep summarises (docs/simulator.md "Result", `links`). A link's
`packets` and `drops` are `link_packets` and `link_drops` here, so that every metric name
means one thing (a flow's `drops` is a flow metric). `overflow_drops` and `aqm_drops` exist on
links whose queue is CoDel, PIE or FQ-CoDel only, `ecn_marks` on queues that mark (`ecn`, or
Drop-Tail's `ecn_threshold_pkts`) only, the `mac_*` counts on an 802.11 network's links only
(the core's `wifi` object); elsewhere they are missing, not zero."""

LINK_FIELDS: dict[str, tuple[str, ...]] = {
    "link_packets": ("packets",),
    "link_drops": ("drops",),
    "mac_frames_sent": ("wifi", "frames_sent"),
    "mac_retries": ("wifi", "mac_retries"),
    "mac_retry_drops": ("wifi", "retry_drops"),
    "mac_collisions": ("wifi", "collisions"),
}
"""Link metric -> where the core's result holds it, where that is not a field of the same name."""

RUN_METRICS: tuple[str, ...] = ("jain", "uf_percent")
"""The per-run metrics (the core's `fairness`)."""

RUN_GROUP = "run"
"""The name run-level metrics go under where flow metrics name a flow group."""

SUMMARY_METRICS: tuple[str, ...] = (*NUMERIC_METRICS, *LINK_METRICS, *RUN_METRICS)
"""Every metric a sweep's summary, table and comparisons take."""


def level_of(metric: str) -> str:
    """`flow`, `link` or `run`: what a metric is measured on."""
    return "flow" if metric in NUMERIC_METRICS else "link" if metric in LINK_METRICS else "run"


def unknown_metric_message(metric: str) -> str:
    return (
        f"unknown metric {metric!r}; per flow: {', '.join(NUMERIC_METRICS)}; per link: {', '.join(LINK_METRICS)}; "
        f"per run: {', '.join(RUN_METRICS)}"
    )


FRACTION_METRICS = frozenset({"loss_rate", "loss_event_rate", "utilization", "jain"})
"""Metrics in [0, 1]; every other one is never negative (counts, rates, durations, percentages)."""


def metric_bounds(metric: str) -> Bounds:
    """A metric's range, for an interval that stays inside it (services/stats.py)."""
    return FRACTION if metric in FRACTION_METRICS else NONNEGATIVE


def value_key(value: Any) -> str:
    """A value's identity on an axis: its JSON text, so 2 and 2.0 are one value (as the
    scenario's canonical form makes them), `true` is not 1, and lists and objects compare by
    content."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def point_key(values: Mapping[str, Any], leave_out: Iterable[str] = ()) -> str:
    """A grid point's identity from its axis values (less the axes in `leave_out`): to find
    a point again when a sweep is extended, or to pair points that differ on one axis."""
    skip = set(leave_out)
    return "|".join(f"{path}={value_key(v)}" for path, v in sorted(values.items()) if path not in skip)


class Combine(StrEnum):
    product = "product"
    zip = "zip"


class AxisRange(BaseModel):
    """`start`, `start + step`, … up to and including `stop` (within a rounding error)."""

    model_config = ConfigDict(extra="forbid")

    start: float
    stop: float
    step: float = Field(default=1, description="positive; the values are integers when start and step are")

    @model_validator(mode="after")
    def finite_and_ordered(self) -> Self:
        for name in ("start", "stop", "step"):
            if not math.isfinite(getattr(self, name)):
                raise ValueError(f"{name} must be a finite number")
        if self.step <= 0:
            raise ValueError("step must be positive")
        if self.stop < self.start:
            raise ValueError("stop must not be below start")
        if (self.stop - self.start) / self.step >= MAX_AXIS_VALUES:
            raise ValueError(f"the range has more than {MAX_AXIS_VALUES} values")
        return self

    def values(self) -> list[float | int]:
        count = math.floor((self.stop - self.start) / self.step + 1e-9) + 1
        integral = float(self.start).is_integer() and float(self.step).is_integer()
        values = [self.start + i * self.step for i in range(count)]
        # 0.1 + 2 * 0.1 is 0.30000000000000004: round to the step's decimals.
        decimals = max(0, -math.floor(math.log10(self.step))) + 6
        return [int(round(v)) if integral else round(v, decimals) for v in values]


class Axis(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str = Field(
        min_length=1,
        max_length=300,
        description="A scenario path (`flows[*].loss.m`, `topology.dumbbell.bottleneck.queue.type`) "
        "or a preset parameter (`background_flows`)",
    )
    values: list[Any] | None = Field(default=None, min_length=1, max_length=MAX_AXIS_VALUES)
    range: AxisRange | None = None

    @model_validator(mode="after")
    def values_or_range(self) -> Self:
        if (self.values is None) == (self.range is None):
            raise ValueError("give either `values` or `range`")
        self.resolved()
        return self

    @field_validator("path")
    @classmethod
    def not_the_seed(cls, path: str) -> str:
        if path.lstrip("$.") == "seed":
            raise ValueError("the seed is not an axis: ask for `replications` (seeds follow from the sweep's `seed`)")
        return path

    def resolved(self) -> list[Any]:
        """The axis's values, in order; ValueError for a repeated or non-finite one."""
        values = self.values if self.values is not None else self.range.values()  # type: ignore[union-attr]
        seen: set[str] = set()
        for v in values:
            if isinstance(v, float) and not math.isfinite(v):
                raise ValueError(f"{v} is not a finite number")
            key = value_key(v)
            if key in seen:
                raise ValueError(f"{v!r} appears twice")
            seen.add(key)
        return list(values)


class StoppingRule(BaseModel):
    """Keep adding replications at a point until the 95 % CI half-width of `metric` is at most
    `target_relative_half_width` × |mean| for every TCP flow group (or `flow`), or the point
    has `max_replications` runs."""

    model_config = ConfigDict(extra="forbid")

    metric: str = Field(default="throughput_pkts_per_rtt", description="a per-flow metric")
    flow: str | None = Field(default=None, description="a flow group name; all TCP groups when absent")
    target_relative_half_width: float = Field(gt=0, le=1, description="e.g. 0.05 for ±5 % of the mean")
    max_replications: int = Field(ge=2, le=MAX_REPLICATIONS)

    @field_validator("metric")
    @classmethod
    def known_metric(cls, metric: str) -> str:
        if metric not in NUMERIC_METRICS:
            raise ValueError(f"unknown metric {metric!r}; one of {', '.join(NUMERIC_METRICS)}")
        return metric


class SweepSpec(BaseModel):
    """A base (a `preset` with `overrides`, or a `scenario`), its axes, and its replications."""

    model_config = ConfigDict(extra="forbid")

    name: str | None = Field(default=None, max_length=200)
    preset: str | None = Field(default=None, description="A preset name (GET /v1/presets).")
    overrides: dict[str, Any] | None = Field(default=None, description="Overrides for the preset, at every point.")
    scenario: Scenario | None = Field(default=None, description="A scenario to sweep, instead of a preset.")
    axes: list[Axis] = Field(min_length=1, max_length=MAX_AXES)
    combine: Combine = Combine.product
    replications: int = Field(default=3, ge=1, le=MAX_REPLICATIONS, description="seeds per point")
    seed: int = Field(default=1, ge=0, le=U64_MAX, description="the sweep seed: replication seeds derive from it")
    stopping: StoppingRule | None = None
    shared: StrictBool = Field(default=False, description="Visible to the whole lab (else to you and admins).")
    reuse_results: StrictBool = Field(
        default=True,
        description="Answer a run from a stored identical run (same scenario, seed and core version). "
        "false: simulate every run anyway (a benchmark of the core's speed); the result row is still "
        "shared through its cache key.",
    )

    @model_validator(mode="after")
    def consistent(self) -> Self:
        if (self.scenario is None) == (self.preset is None):
            raise ValueError("give either `scenario` or `preset`")
        if self.overrides and self.preset is None:
            raise ValueError("`overrides` apply to a `preset`")
        paths = [a.path for a in self.axes]
        if len(set(paths)) != len(paths):
            raise ValueError("an axis path appears twice")
        if self.stopping is not None and self.stopping.max_replications < self.replications:
            raise ValueError("stopping.max_replications must be at least `replications`")
        return self


class SweepExtension(BaseModel):
    """More replications (a new total) and/or more values on existing axes. Everything already
    computed is kept; only the new (point, replication) pairs become runs."""

    model_config = ConfigDict(extra="forbid")

    replications: int | None = Field(default=None, ge=1, le=MAX_REPLICATIONS, description="the new total per point")
    axes: list[Axis] | None = Field(default=None, max_length=MAX_AXES, description="new values per axis path")

    @model_validator(mode="after")
    def something(self) -> Self:
        if self.replications is None and not self.axes:
            raise ValueError("give `replications` and/or `axes`")
        return self
