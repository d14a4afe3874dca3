"""The scenario format as Pydantic models: the service's mirror of the core's serde structs.

The authority is `simulator/core/src/scenario.rs`. The plain string enumerations (variants,
profiles, trace kinds, ...) are read from the core's generated JSON Schema
(`services.scenarios.core_schema`); every other field, type, default and tagged union is written
here, field for field, and `tests/services/test_scenario_drift.py` walks these models beside
that schema and fails on any difference (a field missing or extra, requiredness, JSON type,
integer range, union tag or default).

Conventions, all the core's:

- Units are in the field names: `_s` seconds, `_ms` milliseconds, `_mbps` megabits per second
  (10^6 bit/s), `_pkts` packets (segments), `_bytes` bytes.
- Unknown fields are errors (`extra="forbid"`, serde's `deny_unknown_fields`), so a typo never
  falls back to a default silently.
- Types are strict, as serde's are: a float field takes any JSON number, an integer field only
  an integer (`1.0` is refused for a packet count), a boolean only `true`/`false`, a string
  only a string. NaN and infinities are refused.
- Fields whose default is "absent" (`variant`, `loss`, `stop_s`, ...) are `None` here and are
  left out of `model_dump(exclude_none=True)`, as serde leaves them out.
- Simple single-field ranges (probabilities in [0, 1], rates > 0, the core's hard caps) are
  Field constraints; checks across fields (warm-up below duration, RED thresholds in order,
  RTT at least twice the bottleneck delay, names that must exist, UDP flows carrying CBR) stay
  with the core, which `services.scenarios.validation` always runs after these models.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, field_validator, model_validator

import tcpsim
from services.scenarios.core_schema import definition, strings

__all__ = [
    "APP_TYPES",
    "EVENT_SPACINGS",
    "FACK_RECOVERIES",
    "FLOW_TYPES",
    "LOSS_TYPES",
    "QUEUE_TYPES",
    "RECOVER_GUARDS",
    "REPEATED_TIMEOUT_SSTHRESH",
    "RTT_SAMPLING",
    "SACK_RECOVERIES",
    "TCP_PROFILES",
    "TOPOLOGY_KINDS",
    "TRACE_FILES_REFUSED",
    "TRACE_KINDS",
    "UNION_TAGS",
    "VARIANTS",
    "AccessParams",
    "AppSpec",
    "BernoulliEventsLoss",
    "CbrApp",
    "CodelQueue",
    "DroptailQueue",
    "Dumbbell",
    "DumbbellTopology",
    "FlowSpec",
    "FqCodelQueue",
    "FtpApp",
    "GilbertElliottLoss",
    "Graph",
    "GraphLink",
    "GraphTopology",
    "HttpApp",
    "HystartParams",
    "Limits",
    "LinkParams",
    "LinkTrace",
    "NamedTrace",
    "SERVICE_EXTENSIONS",
    "TRACE_NAME_PATTERN",
    "LossSpec",
    "OutageLoss",
    "PacingParams",
    "Outputs",
    "PieQueue",
    "QueueSpec",
    "RedQueue",
    "Scenario",
    "ScheduledLoss",
    "TcpConfig",
    "Topology",
    "UniformLoss",
    "UniformValue",
    "Value",
    "VegasParams",
    "CubicParams",
    "SsdrParams",
    "PseudoRateParams",
    "ScalableParams",
    "VenoParams",
    "HyblaParams",
    "LedbatParams",
    "LpParams",
    "YeahParams",
]

# The core's hard caps (scenario.rs / plan.rs), so an absurd value is refused before it is
# even sent to the core.
MAX_FLOWS = 100_000
MAX_NODES = 100_000
MAX_DURATION_S = 1.0e7
MAX_TRACE_POINTS = 1_000_000
# A timer must advance simulated time (integer nanoseconds): at least one microsecond.
MIN_TIMER_S = 1e-6
U32_MAX = 2**32 - 1
U64_MAX = 2**64 - 1

# Free text: names (of flows, links, nodes, the scenario) and the description are stored with
# every run, so each is capped (a 422 naming the field beyond).
MAX_NAME_CHARS = 200
MAX_DESCRIPTION_CHARS = 10_000

Name = Annotated[str, Field(max_length=MAX_NAME_CHARS)]
U32 = Annotated[int, Field(ge=0, le=U32_MAX)]
U64 = Annotated[int, Field(ge=0, le=U64_MAX)]
Probability = Annotated[float, Field(ge=0.0, le=1.0)]


class _Model(BaseModel):
    """Every scenario model: strict types, no unknown fields, docstrings as descriptions."""

    model_config = ConfigDict(
        extra="forbid",
        strict=True,
        allow_inf_nan=False,
        use_attribute_docstrings=True,
        # `from` is a Python keyword: the field is `from_` with the alias `from`, and dumps use
        # the alias, so a dump is the JSON the core reads.
        validate_by_alias=True,
        validate_by_name=False,
        serialize_by_alias=True,
    )


# ---- enumerations ----------------------------------------------------------------------------

# Every plain string enumeration is the core's (services.scenarios.core_schema): a value added to
# the core reaches the service with no edit here. Type checkers see plain strings.
VARIANTS: tuple[str, ...] = strings(definition("FlowSpec")["properties"]["variant"])
"""The congestion-control variants (`cc::VARIANTS` in the core; `tcpsim.VARIANTS`)."""
FLOW_TYPES: tuple[str, ...] = strings(definition("FlowKind"))
RTT_SAMPLING: tuple[str, ...] = strings(definition("RttSampling"))
RECOVER_GUARDS: tuple[str, ...] = strings(definition("RecoverGuard"))
REPEATED_TIMEOUT_SSTHRESH: tuple[str, ...] = strings(definition("RepeatedTimeoutSsthresh"))
SACK_RECOVERIES: tuple[str, ...] = strings(definition("SackRecovery"))
FACK_RECOVERIES: tuple[str, ...] = strings(definition("FackRecovery"))
EVENT_SPACINGS: tuple[str, ...] = strings(definition("EventSpacing"))
TCP_PROFILES: tuple[str, ...] = strings(definition("TcpProfile"))
TRACE_KINDS: tuple[str, ...] = strings(definition("TraceKind"))

if TYPE_CHECKING:
    Variant: TypeAlias = str
    FlowType: TypeAlias = str
    RttSampling: TypeAlias = str
    RecoverGuard: TypeAlias = str
    RepeatedTimeoutSsthresh: TypeAlias = str
    SackRecovery: TypeAlias = str
    FackRecovery: TypeAlias = str
    EventSpacing: TypeAlias = str
    TcpProfile: TypeAlias = str
    TraceKind: TypeAlias = str
else:
    Variant = Literal[VARIANTS]
    FlowType = Literal[FLOW_TYPES]
    RttSampling = Literal[RTT_SAMPLING]
    RecoverGuard = Literal[RECOVER_GUARDS]
    RepeatedTimeoutSsthresh = Literal[REPEATED_TIMEOUT_SSTHRESH]
    SackRecovery = Literal[SACK_RECOVERIES]
    FackRecovery = Literal[FACK_RECOVERIES]
    EventSpacing = Literal[EVENT_SPACINGS]
    TcpProfile = Literal[TCP_PROFILES]
    TraceKind = Literal[TRACE_KINDS]
DEFAULT_VARIANT = "newreno-sbs"


# ---- numbers or distributions ------------------------------------------------------------------


class UniformValue(_Model):
    """A value drawn uniformly from [a, b] for every flow an entry generates (from the seed)."""

    uniform: Annotated[list[Annotated[float, Field(ge=0.0)]], Field(min_length=2, max_length=2)]
    """[a, b], both >= 0 and a <= b, in the unit of the field that holds it."""


def _value_tag(v: Any) -> str:
    return "uniform" if isinstance(v, dict | UniformValue) else "fixed"


Value = Annotated[
    Annotated[Annotated[float, Field(ge=0.0)], Tag("fixed")] | Annotated[UniformValue, Tag("uniform")],
    Discriminator(_value_tag),
]
"""A number (>= 0), or `{"uniform": [a, b]}` to draw one per generated flow."""


# ---- queues ----------------------------------------------------------------------------------


class DroptailQueue(_Model):
    """FIFO that drops arrivals when `limit_pkts` packets wait (the one in service not counted)."""

    type: Literal["droptail"]
    limit_pkts: Annotated[U32, Field(ge=1)]
    """Buffer size in packets."""
    ecn_threshold_pkts: Annotated[U32, Field(ge=1)] | None = None
    """DCTCP's marking threshold K (RFC 8257 §3.1), at most limit_pkts: an ECN-capable arrival
    that finds this many packets or more waiting is marked CE (the instantaneous queue, no
    averaging); absent, no marking."""


class RedQueue(_Model):
    """Random Early Detection (Floyd & Jacobson 1993), in packets. Thresholds default to 1/3 and
    2/3 of `limit_pkts`, as paper 000 §IV-A sets them (and so follow a change of the limit)."""

    type: Literal["red"]
    limit_pkts: Annotated[U32, Field(ge=1)]
    """Buffer size in packets."""
    min_th_pkts: Annotated[float, Field(ge=0.0)] | None = None
    """Minimum threshold of the average queue, packets (default limit_pkts / 3)."""
    max_th_pkts: Annotated[float, Field(gt=0.0)] | None = None
    """Maximum threshold of the average queue, packets (default 2 * limit_pkts / 3); above
    min_th_pkts."""
    max_p: Probability = 0.1
    """Drop probability at the maximum threshold."""
    weight: Annotated[float, Field(gt=0.0, le=1.0)] = 0.002
    """Weight of the exponentially weighted average queue length (q_w)."""
    gentle: bool = True
    """Gentle RED: the drop probability rises from max_p to 1 between max_th and 2 * max_th."""
    mean_pkt_bytes: Annotated[U32, Field(ge=1)] = 1000
    """Typical packet size in bytes, used to age the average across idle periods (F&J §4)."""
    ecn: bool = False
    """RFC 3168 §5: an early drop of an ECN-capable packet becomes a CE mark (gentle region
    included, as ns-2); a full buffer or an average past max_th (2 * max_th when gentle) drops."""
    rules: Literal["floyd-jacobson", "ns"] = "floyd-jacobson"
    """Whose early-drop rules: Floyd & Jacobson's (the average alone decides), or ns-2's and
    ns-3's (no early drop while at most one packet waits; the first arrival above min_th only
    starts the count)."""


AqmMillis = Annotated[float, Field(ge=1e-3, le=1.0e6)]
"""An AQM's time parameter in milliseconds: at least 1 µs (time is integer ns), at most 1000 s."""


class CodelQueue(_Model):
    """CoDel (RFC 8289): drops at dequeue once the sojourn time has stayed above `target_ms`
    for `interval_ms`, then interval/sqrt(count) apart."""

    type: Literal["codel"]
    limit_pkts: Annotated[U32, Field(ge=1)] = 1000
    """Packets waiting beyond which arrivals are dropped (Linux's default)."""
    target_ms: AqmMillis = 5.0
    """Acceptable standing queueing delay (RFC 8289 §4.3)."""
    interval_ms: AqmMillis = 100.0
    """How long the delay must stay above target before a drop (§4.2)."""
    ecn: bool = False
    """Mark ECN-capable packets CE instead of dropping them at dequeue (RFC 8289, Linux's `ecn`)."""


class PieQueue(_Model):
    """PIE (RFC 8033): early drops at enqueue with a probability a PI controller updates every
    `t_update_ms` from the queueing delay (the sojourn time of the last packet dequeued)."""

    type: Literal["pie"]
    limit_pkts: Annotated[U32, Field(ge=1)] = 1000
    """Packets waiting beyond which arrivals are dropped (Linux's default)."""
    target_ms: AqmMillis = 15.0
    """QDELAY_REF, the queueing delay aimed at (RFC 8033 §4.2)."""
    t_update_ms: AqmMillis = 15.0
    """T_UPDATE, the period of the probability's update (§4.2)."""
    alpha: Annotated[float, Field(ge=0.0, le=1.0e6)] = 0.125
    """Weight of the delay's distance from target, 1/s (§4.2)."""
    beta: Annotated[float, Field(ge=0.0, le=1.0e6)] = 1.25
    """Weight of the delay's change since the last update, 1/s (§4.2)."""
    max_burst_ms: Annotated[float, Field(ge=0.0, le=1.0e6)] = 150.0
    """MAX_BURST: how long a burst passes without early drops after a calm spell (§4.4)."""
    derandomize: bool = False
    """§5.4's derandomization of the drops."""
    ecn: bool = False
    """RFC 8033 §5.1: an early drop of an ECN-capable packet becomes a CE mark while the drop
    probability is at most 10 %."""


class FqCodelQueue(_Model):
    """FQ-CoDel (RFC 8290): packets hashed by flow into `flows` queues, each under CoDel, served
    by deficit round robin, new flows first."""

    type: Literal["fq_codel"]
    limit_pkts: Annotated[U32, Field(ge=1)] = 10_240
    """Packets in all queues beyond which the fattest queue loses packets (RFC 8290 §5.2.3)."""
    flows: Annotated[int, Field(ge=1, le=65_536)] = 1024
    """Flow queues (§5.2.5)."""
    quantum_bytes: Annotated[int, Field(ge=64, le=1_000_000)] = 1514
    """Bytes (on the wire, headers included) a queue sends per round (§5.2.4)."""
    target_ms: AqmMillis = 5.0
    """Each queue's CoDel target (§5.2.2)."""
    interval_ms: AqmMillis = 100.0
    """Each queue's CoDel interval (§5.2.1)."""
    ecn: bool = True
    """Each queue's CoDel marks ECN-capable packets instead of dropping them: on by default, as
    RFC 8290 §5.2.7 and Linux have it (a flow without `tcp.ecn` sends none)."""


class Dualpi2Queue(_Model):
    """DualPI2 (RFC 9332): ECT(1) and CE packets (`tcp.l4s`) in a low-latency queue marked on a
    ramp of about a millisecond, the rest in a classic queue under PI2, coupled (p_CL = k * p',
    p_C = p'^2) so both kinds get about the same rate. ECN-capable classic packets are marked."""

    type: Literal["dualpi2"]
    limit_pkts: Annotated[U32, Field(ge=1)] = 10_000
    """Packets in both queues beyond which arrivals are dropped (Linux's default)."""
    target_ms: AqmMillis = 15.0
    """The classic queue's target sojourn time (RFC 9332 A.1)."""
    t_update_ms: AqmMillis = 15.0
    """The base probability's update period (A.1: min(target, RTT_max / 3))."""
    alpha: Annotated[float, Field(ge=0.0, le=1.0e6)] = 0.15
    """PI integral gain, 1/s (A.1: 0.1 * Tupdate / RTT_max^2 with RTT_max 100 ms)."""
    beta: Annotated[float, Field(ge=0.0, le=1.0e6)] = 3.0
    """PI proportional gain, 1/s (A.1: 0.3 / RTT_max)."""
    coupling: Annotated[float, Field(gt=0.0, le=1.0e3)] = 2.0
    """Coupling factor k (RFC 9332 §2.1)."""
    ramp_min_ms: AqmMillis = 0.8
    """Sojourn time where the low-latency queue's marking ramp starts (A.1 minTh)."""
    ramp_range_ms: Annotated[float, Field(ge=0.0, le=1.0e6)] = 0.4
    """Width of the ramp up to certain marking (A.1 range); 0 is a step."""
    ramp_min_pkts: U32 = 1
    """No ramp marking while this many low-latency packets or fewer wait (A.1 Th_len)."""
    classic_weight: Probability = 0.1
    """The classic queue's share of the link while both queues wait (Linux's
    `classic_protection`; RFC 9332 §4.1 leaves the scheduler open)."""


QueueSpec = Annotated[
    DroptailQueue | RedQueue | CodelQueue | PieQueue | FqCodelQueue | Dualpi2Queue, Field(discriminator="type")
]
"""A queue discipline, by `type`."""
QUEUE_TYPES: tuple[str, ...] = ("droptail", "red", "codel", "pie", "fq_codel", "dualpi2")


# ---- values that change over time --------------------------------------------------------------

MAX_SCHEDULE_POINTS = 1_000_000
"""The core's `schedule::MAX_SCHEDULE_POINTS`."""
SCHEDULE_SHAPES: tuple[str, ...] = strings(definition("ScheduleShape"))

if TYPE_CHECKING:
    ScheduleShape: TypeAlias = str
else:
    ScheduleShape = Literal[SCHEDULE_SHAPES]


class Schedule(_Model):
    """A quantity that changes over time (a link's rate, delay or loss; a Wi-Fi station's SNR):
    `[seconds, value]` points, times strictly increasing. The first value holds before the
    first point and the last after the last; between points the value is held (`step`) or
    follows a straight line (`linear`). The field holding a schedule gives its unit and range."""

    points: Annotated[
        list[Annotated[list[float], Field(min_length=2, max_length=2)]],
        Field(min_length=1, max_length=MAX_SCHEDULE_POINTS),
    ]
    """`[at_s, value]` pairs: simulated seconds (>= 0, increasing) and the value from then."""
    shape: ScheduleShape = "step"
    """`step` (hold each value until the next point) or `linear` (interpolate)."""

    @field_validator("points")
    @classmethod
    def _times_increase(cls, points: list[list[float]]) -> list[list[float]]:
        """The core's rule (`ScheduleSpec::check`), here so the error names the point."""
        for i, (at_s, _) in enumerate(points):
            if not 0.0 <= at_s <= MAX_DURATION_S:
                raise ValueError(f"points[{i}][0]: a time in seconds must be in [0, {MAX_DURATION_S:g}], got {at_s}")
            if i and at_s <= points[i - 1][0]:
                raise ValueError(f"points[{i}][0]: times must increase from one point to the next")
        return points


class LinkSchedule(_Model):
    """A link whose rate or delay changes over time (a handover, a route change, an outage);
    both directions of the duplex link follow it (docs/simulator.md, "Links that change over
    time"). The ranges of the values, and the rules between these and the link's other fields,
    are the core's: its errors name the point (`….schedule.rate_mbps.points[i][1]`)."""

    rate_mbps: Schedule | None = None
    """The link's rate over time, Mb/s (0 to 10^7), in place of the link's rate_mbps. A
    packet's bits are served at the rate in force while it is sent; a rate of 0 is a blackout
    in which packets wait. The last value must be above 0."""
    extra_delay_ms: Schedule | None = None
    """Delay added to the link's delay_ms over time, ms (0 to 10^6): a packet takes the delay in
    force when its transmission ends, and never overtakes the packet ahead of it."""


# ---- loss modules ----------------------------------------------------------------------------


class UniformLoss(_Model):
    """Each packet is lost independently with probability `rate`."""

    type: Literal["uniform"]
    rate: Probability
    """Per-packet loss probability."""


class BernoulliEventsLoss(_Model):
    """Paper 000 §IV-B's loss events: each data packet starts a loss event with probability `p`;
    the event drops that packet and the next `m - 1` data packets of the same flow (see
    docs/validation/fig2.md for the two defaults below)."""

    type: Literal["bernoulli_events"]
    p: Probability
    """Probability that a data packet starts a loss event (the loss event rate)."""
    m: Annotated[U32, Field(ge=1)]
    """Packets dropped per loss event."""
    spare_retransmissions: bool = True
    """Retransmissions pass untouched and do not count (paper 000 §III-A)."""
    event_span_s: Annotated[float, Field(gt=0.0, le=MAX_DURATION_S)] | None = None
    """An event lasts at most this long, seconds (default: the flow's round-trip propagation
    delay, one round)."""
    spacing: EventSpacing = "random"
    """Where events start: `random` (each counted packet with probability p: geometric gaps) or
    `periodic` (every round(1/p) counted packets from a seeded place in the first period, as
    paper 000's models assume; docs/validation/fig2-model-errors.md)."""


class ScheduledLoss(_Model):
    """Drops the listed data packets, counted 1, 2, 3, ... in the order they reach the module
    (retransmissions count too): paper 004's one- and two-loss cases."""

    type: Literal["scheduled"]
    packets: Annotated[list[Annotated[U64, Field(ge=1)]], Field(max_length=1_000_000)]
    """Packet numbers to drop (from 1)."""


class OutageLoss(_Model):
    """Loses packets with probability `rate` between `start_s` and `end_s` (a wireless fade)."""

    type: Literal["outage"]
    start_s: Annotated[float, Field(ge=0.0)]
    """Start of the outage, seconds of simulated time."""
    end_s: Annotated[float, Field(ge=0.0)]
    """End of the outage, seconds (not before start_s)."""
    rate: Probability = 1.0
    """Per-packet loss probability inside the outage."""


class ScheduleLoss(_Model):
    """Loses each packet with the probability `rate` scheduled for the moment it reaches the
    module (a fade, a handover's loss burst); the `outage` module is the step case."""

    type: Literal["schedule"]
    rate: Schedule
    """Per-packet loss probability over time, each value in [0, 1] (checked by the core, whose
    error names the point: `….rate.points[i][1]`)."""


class GilbertElliottLoss(_Model):
    """Two-state (good/bad) Markov chain stepped once per packet: bursty loss."""

    type: Literal["gilbert_elliott"]
    p_good_to_bad: Probability
    """Per-packet probability of moving from the good to the bad state."""
    p_bad_to_good: Probability
    """Per-packet probability of moving from the bad to the good state."""
    loss_good: Probability = 0.0
    """Loss probability in the good state."""
    loss_bad: Probability = 1.0
    """Loss probability in the bad state."""


LossSpec = Annotated[
    UniformLoss | BernoulliEventsLoss | ScheduledLoss | OutageLoss | ScheduleLoss | GilbertElliottLoss,
    Field(discriminator="type"),
]
"""A loss module, by `type`. On a link direction it sees every packet; on a flow, the flow's
data packets just before its receiver."""
LOSS_TYPES: tuple[str, ...] = ("uniform", "bernoulli_events", "scheduled", "outage", "schedule", "gilbert_elliott")


# ---- topology --------------------------------------------------------------------------------


def _droptail(limit_pkts: int) -> DroptailQueue:
    return DroptailQueue(type="droptail", limit_pkts=limit_pkts)


TRACE_FILES_REFUSED = (
    "trace files are not accepted by the service: the core would read the path on the server's disk; "
    'upload the trace once (PUT /v1/traces/{name}) and name it: "trace": {"name": ...}'
)
"""Why the service refuses a link's `trace` by path (the core's `"trace": {"file": PATH}`)."""

TRACE_NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$"
"""A named trace's name: what a user calls an upload, or a built-in trace's name."""


class LinkTrace(_Model):
    """A trace-driven link: Mahimahi trace files (one line per 1500-byte delivery opportunity).
    The core's scenario format; the service refuses it (`TRACE_FILES_REFUSED`)."""

    file: str
    """Forward (data) direction's trace file, a path on the machine that runs the core."""
    reverse_file: str | None = None
    """Reverse (ACK) direction's trace file (default: `file`)."""


class NamedTrace(_Model):
    """A trace-driven link over traces stored in the service (docs/traces.md): the caller's own
    uploads or the lab's built-in traces, by name. A service extension of the core's format:
    `services.scenarios.canonical` puts each trace's content hash in the canonical scenario,
    and the worker hands the core a file holding that content."""

    name: Annotated[str, Field(pattern=TRACE_NAME_PATTERN)]
    """Forward (data) direction's trace, by name."""
    reverse_name: Annotated[str, Field(pattern=TRACE_NAME_PATTERN)] | None = None
    """Reverse (ACK) direction's trace, by name (default: `name`)."""


SERVICE_EXTENSIONS: tuple[type[BaseModel], ...] = (NamedTrace,)
"""Union members the service accepts and the core does not know: they are resolved before the
core reads a scenario (`NamedTrace`: canonical.py). The drift test leaves them out, and checks
that the core has no such alternative of its own."""


def _trace_form(value: Any) -> str:
    return "file" if isinstance(value, LinkTrace) or (isinstance(value, dict) and "file" in value) else "name"


TraceRef = Annotated[
    Annotated[LinkTrace, Tag("file")] | Annotated[NamedTrace, Tag("name")],
    Discriminator(_trace_form),
]
"""`{"name": ...}` (a stored trace), or the core's `{"file": ...}`, which is refused."""


class _Link(_Model):
    """A duplex link's own fields, shared by the dumbbell's bottleneck and a graph's links (the
    core writes both structs out; tests/services/test_scenario_drift.py keeps them equal)."""

    rate_mbps: Annotated[float, Field(gt=0.0, le=1.0e7)] | None = None
    """Link rate, Mb/s (10^6 bit/s). Required unless `trace` names a stored trace or
    `schedule.rate_mbps` gives it."""
    trace: TraceRef | None = None
    """Delivery opportunities from a stored Mahimahi trace in place of rate_mbps:
    `{"name": N, "reverse_name": M}` (docs/traces.md). The core's `{"file": PATH}` is refused
    (`TRACE_FILES_REFUSED`)."""
    delay_ms: Annotated[float, Field(ge=0.0, le=1.0e6)]
    """One-way propagation delay, ms. On a dumbbell's bottleneck every flow's rtt_ms must be at
    least twice it."""
    schedule: LinkSchedule | None = None
    """Rate and delay over time, both directions alike."""
    queue: QueueSpec = Field(default_factory=lambda: _droptail(100))
    """Queue of each direction (default Drop-Tail, 100 packets)."""
    loss: LossSpec | None = None
    """Loss module on the forward (data) direction."""
    reverse_loss: LossSpec | None = None
    """Loss module on the reverse (ACK) direction."""

    @field_validator("trace")
    @classmethod
    def _no_trace_files(cls, value: LinkTrace | NamedTrace | None) -> LinkTrace | NamedTrace | None:
        """A path from a user must never make the server read its own disk."""
        if isinstance(value, LinkTrace):
            raise ValueError(TRACE_FILES_REFUSED)
        return value


class LinkParams(_Link):
    """The dumbbell's bottleneck link (duplex; the reverse direction carries ACKs)."""


class AccessParams(_Model):
    """Every flow's access links (its own, one at the sender and one at the receiver)."""

    rate_mbps: Annotated[float, Field(gt=0.0)] = 1000.0
    """Access link rate, Mb/s."""
    queue: QueueSpec = Field(default_factory=lambda: _droptail(1000))
    """Queue of each access link direction (default Drop-Tail, 1000 packets)."""


class Dumbbell(_Model):
    """N sender/receiver pairs around one bottleneck. Each flow gets its own access links whose
    one-way delay is (rtt_ms / 2 - bottleneck delay) / 2, so the flow's round-trip propagation
    delay is its rtt_ms (paper 000 §IV-A). Links are named `bottleneck`, `bottleneck-rev`,
    `<flow>.src-access`, `<flow>.dst-access` and their `-rev` directions."""

    bottleneck: LinkParams
    access: AccessParams = Field(default_factory=AccessParams)


class GraphLink(_Link):
    """A duplex link of an explicit graph; its reverse direction is named `<name>-rev`."""

    name: Name | None = None
    """Link name (default "<from>-<to>")."""
    from_: Name = Field(alias="from")
    """Node at the forward direction's start."""
    to: Name
    """Node at the forward direction's end."""


WIFI_STANDARDS: tuple[str, ...] = strings(definition("WifiStandard"))
"""The core's `WifiStandard`: "802.11b", "802.11g"."""
WIFI_RATES_MBPS: dict[str, tuple[float, ...]] = {
    "802.11b": (1.0, 2.0, 5.5, 11.0),
    "802.11g": (6.0, 9.0, 12.0, 18.0, 24.0, 36.0, 48.0, 54.0),
}
"""Each standard's data rates (the core's `WifiStandard::rates_mbps`)."""
SNR_DB_RANGE = (-30.0, 100.0)
"""SNRs a station may have, dB (the core's `SNR_DB_RANGE`)."""

CW_AFTER_DROP: tuple[str, ...] = strings(definition("CwAfterDrop"))
"""The core's `CwAfterDrop`: "reset", "keep"."""

if TYPE_CHECKING:
    WifiStandard: TypeAlias = str
    CwAfterDrop: TypeAlias = str
else:
    WifiStandard = Literal[WIFI_STANDARDS]
    CwAfterDrop = Literal[CW_AFTER_DROP]


class WifiStation(_Model):
    """A station of an 802.11 network."""

    node: Name
    """The station's graph node."""
    snr_db: Annotated[float, Field(ge=SNR_DB_RANGE[0], le=SNR_DB_RANGE[1])] | Schedule
    """SNR of the frames between the station and its access point (both ways), dB: a number or
    a schedule (a fade)."""

    @field_validator("snr_db")
    @classmethod
    def _scheduled_snr_in_range(cls, value: float | Schedule) -> float | Schedule:
        """The core's range for every point of a schedule, here so the error names the point."""
        if isinstance(value, Schedule):
            low, high = SNR_DB_RANGE
            for i, (_, db) in enumerate(value.points):
                if not low <= db <= high:
                    raise ValueError(f"points[{i}][1]: an SNR must be in [{low:g}, {high:g}] dB, got {db}")
        return value


class WifiSpec(_Model):
    """An 802.11 network (issue 18): an access point and its stations, graph nodes, sharing one
    medium under the DCF. Each station gets the links `<name>-<station>` (from the access
    point) and `<name>-<station>-rev` (to it), whose results carry the MAC's counts."""

    name: Name
    """Names the network's links."""
    ap: Name
    """The access point's graph node."""
    stations: Annotated[list[WifiStation], Field(min_length=1)]
    standard: WifiStandard
    """ "802.11b" (DSSS/CCK, long preamble) or "802.11g" (ERP-OFDM)."""
    rate_mbps: float
    """Data rate, one of the standard's (`WIFI_RATES_MBPS`); ACKs go at the highest basic rate
    not above it."""
    retry_limit: Annotated[int, Field(ge=1, le=65535)] = 7
    """Transmission attempts per frame before it is dropped (dot11ShortRetryLimit)."""
    cw_after_drop: CwAfterDrop = "reset"
    """The contention window after a drop: "reset" to CWmin (802.11-2016 10.3.3), or "keep" it
    for the next frame's backoff until that frame's first failure (802.11-2020 10.23.2.2, as
    ns-3.44)."""
    short_slot: bool = True
    """802.11g only: 9 µs slots (a BSS of ERP stations only); false: 20 µs."""
    queue: QueueSpec = Field(default_factory=lambda: _droptail(500))
    """Each transmitter's queue: Drop-Tail only (default 500 packets, ns-3's WifiMacQueue)."""

    @model_validator(mode="after")
    def _a_rate_of_the_standard_and_a_drop_tail_queue(self) -> WifiSpec:
        """The core's `WifiSpec::check`."""
        rates = WIFI_RATES_MBPS[self.standard]
        if self.rate_mbps not in rates:
            raise ValueError(
                f"rate_mbps: {self.standard} has no rate of {self.rate_mbps:g} Mb/s: one of "
                + ", ".join(f"{r:g}" for r in rates)
            )
        if not isinstance(self.queue, DroptailQueue) or self.queue.ecn_threshold_pkts is not None:
            raise ValueError("queue: a Wi-Fi transmitter's queue is Drop-Tail (no ecn_threshold_pkts)")
        return self


class Graph(_Model):
    """An explicit graph: named nodes and duplex links (paper 002's six-node topology). Routes
    are static shortest paths by propagation delay (ties by hop count)."""

    nodes: Annotated[list[Name], Field(max_length=MAX_NODES)]
    links: list[GraphLink]
    wifi: list[WifiSpec] | None = None
    """802.11 networks joining an access point to its stations over one shared medium (absent:
    none; the core leaves an empty list out of the scenario it writes back)."""


class DumbbellTopology(_Model):
    """`{"dumbbell": {...}}`."""

    dumbbell: Dumbbell


class GraphTopology(_Model):
    """`{"graph": {...}}`."""

    graph: Graph


def _topology_tag(v: Any) -> str | None:
    if isinstance(v, DumbbellTopology | GraphTopology):
        return "dumbbell" if isinstance(v, DumbbellTopology) else "graph"
    if isinstance(v, dict):
        for kind in ("dumbbell", "graph"):
            if kind in v:
                return kind
    return None


Topology = Annotated[
    Annotated[DumbbellTopology, Tag("dumbbell")] | Annotated[GraphTopology, Tag("graph")],
    Discriminator(
        _topology_tag,
        custom_error_type="topology_kind",
        custom_error_message='topology must be {"dumbbell": {...}} or {"graph": {...}}',
    ),
]
"""Exactly one of `{"dumbbell": ...}` and `{"graph": ...}` (serde's externally tagged enum)."""
TOPOLOGY_KINDS: tuple[str, ...] = ("dumbbell", "graph")


# ---- applications ----------------------------------------------------------------------------


class FtpApp(_Model):
    """Bulk transfer: endless, or a file of `bytes` whose download response time is measured."""

    type: Literal["ftp"]
    bytes: Annotated[U64, Field(ge=1, le=U32_MAX * 1000)] | None = None
    """File size in bytes (default: endless)."""


class CbrApp(_Model):
    """Constant bit rate over UDP (the flow's `type` must be "udp")."""

    type: Literal["cbr"]
    rate_mbps: Annotated[float, Field(gt=0.0, le=1.0e6)]
    """Sending rate, Mb/s."""
    packet_bytes: Annotated[U32, Field(ge=1, le=65_535)] = 1000
    """Packet size on the wire, bytes."""


class HttpApp(_Model):
    """Paper 000 §IV-A's HTTP sessions: a request on the reverse path, a Pareto-sized response
    over TCP on a fresh connection, an exponential think time, repeat."""

    type: Literal["http"]
    mean_file_bytes: Annotated[float, Field(gt=0.0, le=1.0e10)] = 48_000.0
    """Mean response size, bytes (Pareto)."""
    shape: Annotated[float, Field(gt=1.0)] = 1.2
    """Pareto shape (> 1, for a finite mean)."""
    mean_think_s: Annotated[float, Field(ge=0.0, le=MAX_DURATION_S)] = 0.5
    """Mean think time between a response and the next request, seconds (exponential)."""
    request_bytes: Annotated[U32, Field(le=65_535)] = 100
    """Request packet size, bytes."""
    request_timeout_s: Annotated[float, Field(gt=0.0, le=MAX_DURATION_S)] = 3.0
    """A request lost on the way is sent again after this long, seconds (like a SYN retry)."""


AppSpec = Annotated[FtpApp | CbrApp | HttpApp, Field(discriminator="type")]
"""The application a flow carries, by `type`."""
APP_TYPES: tuple[str, ...] = ("ftp", "cbr", "http")


# ---- TCP -------------------------------------------------------------------------------------


class VegasParams(_Model):
    """Brakmo & Peterson's thresholds, in packets queued in the network (ns-2's defaults)."""

    alpha: Annotated[float, Field(ge=0.0)] = 1.0
    beta: Annotated[float, Field(ge=0.0)] = 3.0
    """At least alpha."""
    gamma: Annotated[float, Field(ge=0.0)] = 1.0


class PacingParams(_Model):
    """Linux's pacing rate for window-based variants (`tcp_update_pacing_rate`): ratio x max(cwnd,
    segments in flight) / SRTT, the slow-start ratio while cwnd is below half of ssthresh, the
    congestion-avoidance ratio after; no pacing before the first RTT sample."""

    ss_ratio: Annotated[float, Field(gt=0.0, le=100.0)] = 2.0
    """`net.ipv4.tcp_pacing_ss_ratio` (200 %)."""
    ca_ratio: Annotated[float, Field(gt=0.0, le=100.0)] = 1.2
    """`net.ipv4.tcp_pacing_ca_ratio` (120 %)."""


# A variant's own knobs mirror its `<Name>Params` in `simulator/core/src/cc/<variant>.rs`, which
# is authoritative (defaults, ranges, sources); `TcpConfig` carries one field per variant.


class CubicParams(_Model):
    """CUBIC's knobs (RFC 9438), used by the `cubic` variant only; the RFC's defaults, which
    Linux and ns-3 also use."""

    c: Annotated[float, Field(gt=0.0, le=1.0e6)] = 0.4
    """C, segments per second cubed: how fast the window grows away from W_max (RFC 9438 §5.1)."""
    beta: Annotated[float, Field(gt=0.0, lt=1.0)] = 0.7
    """β_cubic: the share of the window kept at a congestion event (RFC 9438 §4.6); α_cubic
    follows from it (§4.3)."""
    reno_friendly: Literal["rfc9438", "linux"] = "rfc9438"
    """How the Reno-friendly estimate grows: `rfc9438` α_cubic until it reaches the window of the
    last congestion event, then 1 (RFC 9438 §4.3); `linux` α_cubic throughout (RFC 8312, Linux's
    tcp_cubic.c, ns-3.44's TcpCubic)."""


class SsdrParams(_Model):
    """Smooth start's knobs, used by the `ssdr` variant only; the ns-3 SmoothStart model's
    defaults (the original paper's were not at hand)."""

    grain: Annotated[U32, Field(ge=1, le=1_000_000)] = 2
    """ACKs the first one-segment step of the smooth phase takes, each later step one more."""
    depth: Annotated[U32, Field(le=30)] = 2
    """The smooth phase begins at ssthresh / 2^depth: greater begins it earlier, 0 leaves none."""


class PseudoRateParams(_Model):
    """Pseudo-Rate's knob, used by the `pseudo-rate` variant only."""

    queue_pkts: Annotated[float, Field(gt=0.0, le=1.0e7)] = 2.0
    """q, segments: the backlog of its own the flow keeps queued at the bottleneck (2, between
    Vegas's default alpha and beta; Chen & Chen's value was not at hand)."""


class ScalableParams(_Model):
    """Scalable TCP's knobs (Kelly 2003, §2), used by the `scalable` variant only."""

    a: Annotated[float, Field(gt=0.0, le=1.0)] = 0.01
    """a, segments added per ACK above the legacy window of 50 segments."""
    b: Annotated[float, Field(gt=0.0, lt=1.0)] = 0.125
    """b, the share of the window a congestion event takes away above the legacy window."""
    legacy_b: Annotated[float, Field(gt=0.0, lt=1.0)] = 0.5
    """The share a congestion event takes away at or below the legacy window: Standard TCP's
    half (the paper's legacy mode); ns-3's and Linux's 0.125, b at every window (the `ns3` and
    `linux` profiles)."""


class VenoParams(_Model):
    """Veno's switch (Fu & Liew 2003), used by the `veno` variant only."""

    reno_growth: bool = False
    """Grow as Reno in congestion avoidance whatever the backlog N, as ns-3.44's `TcpVeno` does
    (the `ns3` profile); off, one segment every other round trip once N reaches 3 (the paper's
    and Linux's)."""


class HyblaParams(_Model):
    """Hybla's knob (Caini & Firrincieli 2004), used by the `hybla` variant only."""

    rtt0_ms: Annotated[float, Field(gt=0.0, le=1.0e5)] = 25.0
    """RTT0, ms: the reference RTT whose growth every flow matches (the paper's and Linux's 25;
    ns-3's `RRTT` is 50)."""


class PragueParams(_Model):
    """TCP Prague's knob (RFC 9331 §4.3; Linux's `tcp_prague.c`), used by the `prague` variant only."""

    rtt_virt_ms: Annotated[float, Field(ge=0.0, le=1.0e5)] = 25.0
    """R_virt, ms: below it the additive increase per round trip shrinks to (SRTT/R_virt)^2
    segments, so the rate grows as a R_virt flow's (Linux's `prague_rtt_target`); 0 is Reno's."""
    rtt_transition_rounds: U32 = 4
    """Round trips after slow start before the RTT scaling starts (Linux's `prague_rtt_transition`)."""


class LedbatParams(_Model):
    """LEDBAT's knobs (RFC 6817 §3.2, ns-3's `TcpLedbat` defaults), used by the `ledbat` variant only."""

    target_ms: Annotated[float, Field(gt=0.0, le=1.0e5)] = 100.0
    """TARGET, ms: the queueing delay it aims to add (the RFC allows at most 100)."""
    gain: Annotated[float, Field(gt=0.0, le=100.0)] = 1.0
    """GAIN: how fast the window follows the distance to the target (the RFC allows at most 1)."""


class LpParams(_Model):
    """TCP-LP's knobs (Kuzmanovic & Knightly 2003, §III; constants in ns-3 and Linux), used by the
    `lp` variant only."""

    threshold: Annotated[float, Field(gt=0.0, lt=1.0)] = 0.15
    """δ: the share of the delay range above its minimum that signals early congestion."""
    inference_rtts: Annotated[float, Field(gt=0.0, le=1000.0)] = 3.0
    """The inference time-out after an early indication, in round trips."""


class YeahParams(_Model):
    """YeAH-TCP's knobs, named and defaulted as ns-3.44's `TcpYeah` attributes, used by the `yeah`
    variant only."""

    alpha: U32 = 80
    """α, packets: the most it keeps queued at the bottleneck in fast mode."""
    gamma: Annotated[U32, Field(ge=1)] = 1
    """γ: precautionary decongestion removes Q/γ packets a round trip."""
    delta: Annotated[U32, Field(le=16)] = 3
    """δ: a loss removes at least cwnd/2^δ."""
    epsilon: Annotated[U32, Field(le=16)] = 1
    """ε: precautionary decongestion removes at most cwnd/2^ε."""
    phy: Annotated[U32, Field(ge=1)] = 8
    """φ: slow mode when the queueing delay passes the base RTT over φ."""
    rho: U32 = 16
    """ρ: slow-mode rounds in a row after which a loss halves, as Reno."""
    zeta: U32 = 50
    """ζ: fast-mode rounds after which the decongestion floor is reset to 2."""
    stcp_ai_factor: Annotated[U32, Field(ge=1)] = 100
    """Fast mode adds one segment per min(cwnd, this) ACKs."""


class AckAggregationParams(_Model):
    """BBR's ACK-aggregation allowance (Linux `bbr_update_ack_aggregation`; Linux's constants)."""

    gain: Annotated[float, Field(ge=0.0, le=100.0)] = 1.0
    """`bbr_extra_acked_gain`: the share of the measured excess added to the cwnd target."""
    window_rounds: Annotated[U32, Field(ge=1, le=31)] = 5
    """`bbr_extra_acked_win_rtts`: the maximum is kept over this many to twice as many rounds."""
    max_s: Annotated[float, Field(ge=0.0, le=60.0)] = 0.1
    """`bbr_extra_acked_max_us`: the allowance is at most this many seconds of BtlBw."""
    epoch_reset_pkts: Annotated[float, Field(gt=0.0)] = float(1 << 20)
    """`bbr_ack_epoch_acked_reset_thresh`: an epoch restarts after this many segments (ns-3.44:
    4096 bytes)."""
    whole_second_epochs: bool = False
    """ns-3.44's way: the epoch's expected delivery from its length in whole seconds."""


class LongTermBwParams(_Model):
    """BBR's long-term bandwidth sampling, policer detection (Linux `bbr_lt_bw_sampling`)."""

    min_rounds: Annotated[U32, Field(ge=1, le=1000)] = 4
    """`bbr_lt_intvl_min_rtts`: rounds a sampling interval lasts at least (at most 4x as many)."""
    loss_thresh: Annotated[float, Field(ge=0.0, le=1.0)] = 50.0 / 256.0
    """`bbr_lt_loss_thresh`: an interval is lossy once lost/delivered reaches this."""
    bw_ratio: Annotated[float, Field(ge=0.0, le=1.0)] = 0.125
    """`bbr_lt_bw_ratio`: two intervals' rates within this share of each other agree."""
    bw_diff_bps: Annotated[float, Field(ge=0.0)] = 4000.0
    """`bbr_lt_bw_diff`: or within this many bits per second."""
    max_rounds: Annotated[U32, Field(ge=1)] = 48
    """`bbr_lt_bw_max_rtts`: ProbeBW rounds the long-term rate is used for."""


class BbrParams(_Model):
    """BBRv1's parts beyond the draft's core (`cc/bbr.rs`), used by the `bbr` variant only; the
    defaults leave them out but the lost-segment deduction. The `ns3` and `linux` profiles set
    ns-3.44's TcpBbr's and Linux's."""

    ack_aggregation: AckAggregationParams | None = None
    """The ACK-aggregation allowance on the cwnd target; absent, none."""
    long_term_bw: LongTermBwParams | None = None
    """Long-term bandwidth sampling (policer detection); absent, none."""
    lost_deduction: bool = True
    """Segments an ACK newly marks lost come off cwnd (draft §4.2.3.5)."""
    idle_restart: bool = False
    """Restart from idle: ProbeBW paces at BtlBw, ProbeRTT waits for the next delivery."""
    probe_bw_extra_pkts: Annotated[float, Field(ge=0.0, le=1.0e6)] = 0.0
    """Segments added to the in-flight targets in ProbeBW's 1.25 phase (Linux and ns-3: 2)."""
    pacing_margin: Annotated[float, Field(ge=0.0, lt=1.0)] = 0.0
    """Paced at BtlBw x gain x (1 - margin) (Linux and ns-3: 0.01)."""
    send_quantum_pkts: Annotated[float, Field(gt=0.0, le=1.0e6)] | None = None
    """A fixed send quantum, segments (ns-3: 1); absent, the draft's, from the pacing rate."""


class HystartParams(_Model):
    """HyStart++ (RFC 9406 §4.3's constants): leave the first slow start when the RTT rises, through
    Conservative Slow Start, before the buffer overflows. `css_rounds: 0` and `min_window_pkts: 16`
    is Linux CUBIC's delay detector (no CSS, not below 16 segments)."""

    min_rtt_thresh_ms: Annotated[float, Field(gt=0.0)] = 4.0
    """MIN_RTT_THRESH, ms."""
    max_rtt_thresh_ms: Annotated[float, Field(gt=0.0, le=1.0e6)] = 16.0
    """MAX_RTT_THRESH, ms (at least min_rtt_thresh_ms)."""
    min_rtt_divisor: Annotated[float, Field(gt=0.0)] = 8.0
    """MIN_RTT_DIVISOR: the rise that counts is the last round's minimum RTT over this, clamped."""
    n_rtt_sample: Annotated[U32, Field(ge=1)] = 8
    """N_RTT_SAMPLE: RTT samples a round needs before it is judged."""
    css_growth_divisor: Annotated[float, Field(gt=0.0, le=1.0e6)] = 4.0
    """CSS_GROWTH_DIVISOR: Conservative Slow Start grows this many times slower."""
    css_rounds: U32 = 5
    """CSS_ROUNDS: rounds in CSS before congestion avoidance (0: none, as Linux)."""
    min_window_pkts: Annotated[float, Field(ge=0.0)] = 0.0
    """No exit below this window, segments (Linux's hystart_low_window: 16)."""


class TcpConfig(_Model):
    """Per-flow TCP parameters. Defaults are ns-2.35's where paper 000 relied on them, not everywhere:
    the receiver window, limited transmit and the four ns-2 ways differ (docs/simulator.md)."""

    profile: TcpProfile | None = None
    """A reference's TCP defaults for every field left out: `ns2` (ns-2.35), `ns3` (ns-3.44),
    `linux` (a Linux 6.x host), `opnet` (paper 004's OPNET table); fields given here still win.
    The settings are the core's (`tcpsim.TCP_PROFILES`; docs/simulator.md, "TCP profiles")."""

    @model_validator(mode="before")
    @classmethod
    def _profile_defaults(cls, data: Any) -> Any:
        """The profile's settings under the fields the scenario leaves out, as the core does."""
        if isinstance(data, dict) and isinstance(data.get("profile"), str) and data["profile"] in tcpsim.TCP_PROFILES:
            return {**tcpsim.TCP_PROFILES[data["profile"]], **data}
        return data

    mss_bytes: Annotated[U32, Field(ge=64, le=65_000)] = 1000
    """Segment payload, bytes."""
    header_bytes: Annotated[U32, Field(le=1000)] = 40
    """TCP/IP header bytes added to every segment on the wire (an ACK is one header)."""
    initial_cwnd_pkts: Annotated[float, Field(gt=0.0, le=1.0e6)] = 2.0
    """Initial congestion window, segments."""
    initial_ssthresh_pkts: Annotated[float, Field(gt=0.0)] | None = None
    """Initial slow-start threshold, segments (default: unlimited)."""
    max_window_pkts: Annotated[U32, Field(ge=1, le=10_000_000)] = 100_000
    """Receiver window, segments: never more than this outstanding."""
    delayed_ack: bool = False
    """Acknowledge every second segment (or after delack_timeout_s)."""
    delack_timeout_s: Annotated[float, Field(ge=MIN_TIMER_S, le=1.0e3)] = 0.1
    """Delayed-ACK timer, seconds (at least 1 µs)."""
    sack: bool | None = None
    """SACK blocks on ACKs (default: on for the variants that recover with them: `sack`, `cubic`,
    `bbr`, `fack`, `rate-halving`)."""
    dupack_threshold: Annotated[U32, Field(ge=1, le=1000)] = 3
    """Duplicate ACKs that trigger fast retransmit."""
    initial_rto_s: Annotated[float, Field(ge=MIN_TIMER_S, le=1.0e5)] = 3.0
    """Retransmission timeout before the first RTT sample, seconds (at least 1 µs)."""
    min_rto_s: Annotated[float, Field(ge=MIN_TIMER_S)] = 0.2
    """Lower bound of the RTO, seconds (at least 1 µs, at most max_rto_s)."""
    max_rto_s: Annotated[float, Field(gt=0.0, le=1.0e5)] = 60.0
    """Upper bound of the RTO (backoff included), seconds."""
    rtt_gain: Annotated[float, Field(gt=0.0, le=1.0)] = 0.125
    """RFC 6298 alpha: SRTT gain."""
    rttvar_gain: Annotated[float, Field(gt=0.0, le=1.0)] = 0.25
    """RFC 6298 beta: RTTVAR gain."""
    rttvar_k: Annotated[float, Field(ge=0.0)] = 4.0
    """RFC 6298 K: RTO = SRTT + max(G, K * RTTVAR)."""
    timer_granularity_s: Annotated[float, Field(ge=0.0, le=10.0)] = 0.01
    """Clock granularity G of RFC 6298, seconds; the RTO is rounded up to a multiple of it."""
    rtt_sampling: RttSampling = "per_rtt"
    """Where the RTO estimator's samples come from: `per_rtt` (one timed segment per round,
    Karn's rule: ns-2, what paper 000 simulated) or `timestamps` (every ACK, RFC 7323: ns-3,
    Linux)."""
    pacing: PacingParams | None = None
    """Pace every transmission at Linux's rate from cwnd and SRTT (`{}` for its ratios); absent,
    only variants with a rate of their own (`bbr`) pace."""
    hystart: HystartParams | None = None
    """HyStart++ (RFC 9406) for the first slow start of the variants that slow-start by RFC 5681
    (`{}` for the RFC's constants); absent, slow start runs to the first loss. The `linux` profile
    sets Linux's way."""
    ecn: bool = False
    """ECN (RFC 3168): new data segments are ECT(0), the receiver echoes CE marks with ECE until
    CWR, the sender halves its window on ECE (the variant's loss reduction, no retransmission)
    at most once per window of data."""
    l4s: bool = False
    """New data goes out ECT(1), the L4S identifier (RFC 9331 §4.1), in place of ECT(0), and ECN is
    on: a `dualpi2` queue puts it in its low-latency queue. The response to marks is the variant's
    own: `dctcp` answers them as RFC 9331 §4.3 asks of a scalable control; a classic variant halves."""
    ecn_reduction_holds_window: bool = False
    """After a reduction for ECE the window does not grow until the window then in flight is
    acknowledged (the CWR state), as Linux and ns-3.44 hold it; off, it grows per ACK."""
    rack: bool = False
    """RACK-TLP loss detection (RFC 8985) for the SACK recoveries (`sack_recovery` `rfc6675` or
    `prr`): a segment is lost when one sent after it is delivered and RACK.rtt + min_RTT/4 has
    passed since it was sent, not after three SACKs, and a tail loss probe two SRTTs after the
    last transmission repairs most tail losses without a timeout."""
    handshake_rtt: bool = False
    """Start each connection with one RTT sample of the path's propagation round trip, as a host
    has from its SYN exchange (RFC 6298 §2.2): the RTO and TLP's probe timeout start from it, not
    from `initial_rto_s` (tcpsim has no handshake)."""
    quickack_pkts: Annotated[U32, Field(le=65_535)] = 0
    """Acknowledge a connection's first this many in-order segments at once, whatever
    `delayed_ack` (Linux's quick-ACK mode at a connection's start, 16 segments)."""
    limited_transmit: bool = False
    """RFC 3042: send one new segment on each of the first two duplicate ACKs."""
    limited_transmit_after_timeout: bool = False
    """Limited transmit also while go-back-N resends after a timeout (ns-2.35)."""
    recover_guard: RecoverGuard = "ack_reaches_recover"
    """When duplicate ACKs may start a new fast retransmit after a recovery or a timeout:
    `ack_reaches_recover` once everything sent before it is acknowledged (RFC 6582 §3.2, RFC 6675
    §5), or `ack_passes_recover` only once a segment beyond that is (ns-2.35)."""
    integer_ssthresh: bool = False
    """Round ssthresh down to whole segments at every reduction, as ns-2.35 does."""
    repeated_timeout_ssthresh: RepeatedTimeoutSsthresh = "hold"
    """ssthresh when the same data times out again: `hold` (RFC 5681 §3.1, Linux) or `halve` from
    the one-segment window, so 2 (ns-2.35)."""
    fack_recovery: FackRecovery = "mathis"
    """`fack` only: `mathis` (Mathis & Mahdavi 1996: cwnd = ssthresh through the recovery) or
    `ns2_fack` (ns-2.35's Agent/TCP/Fack: cwnd restarts from one segment and grows on every ACK of
    the recovery, and is kept at its end)."""
    recovery_keeps_half_window: bool = False
    """After a fast recovery cwnd is the reduced window as computed, not ssthresh rounded down by
    `integer_ssthresh` (ns-2.35's `cwnd_ = halfwin` beside `ssthresh_ = (int) halfwin`)."""
    sack_recovery: SackRecovery = "rfc6675"
    """`sack` only: `rfc6675` (pipe from the scoreboard) or `ns2_sack1` (ns-2.35's Agent/TCP/Sack1:
    a pipe counter, every hole below the highest SACK lost, the scoreboard forgotten at a timeout)."""
    vegas: VegasParams = Field(default_factory=VegasParams)
    """Vegas thresholds (used by the `vegas` variant only)."""
    cubic: CubicParams = Field(default_factory=CubicParams)
    """CUBIC's C and β (used by the `cubic` variant only)."""
    ssdr: SsdrParams = Field(default_factory=SsdrParams)
    """Smooth start's grain and depth (used by the `ssdr` variant only)."""
    pseudo_rate: PseudoRateParams = Field(default_factory=PseudoRateParams)
    """Pseudo-Rate's queue length q (used by the `pseudo-rate` variant only)."""
    scalable: ScalableParams = Field(default_factory=ScalableParams)
    """Scalable TCP's a and b (used by the `scalable` variant only)."""
    veno: VenoParams = Field(default_factory=VenoParams)
    """Veno's growth switch (used by the `veno` variant only)."""
    hybla: HyblaParams = Field(default_factory=HyblaParams)
    """Hybla's reference RTT0 (used by the `hybla` variant only)."""
    ledbat: LedbatParams = Field(default_factory=LedbatParams)
    """LEDBAT's target and gain (used by the `ledbat` variant only)."""
    lp: LpParams = Field(default_factory=LpParams)
    """TCP-LP's threshold and inference time-out (used by the `lp` variant only)."""
    yeah: YeahParams = Field(default_factory=YeahParams)
    """YeAH-TCP's constants (used by the `yeah` variant only)."""
    prague: PragueParams = Field(default_factory=PragueParams)
    """TCP Prague's virtual RTT (used by the `prague` variant only)."""
    bbr: BbrParams = Field(default_factory=BbrParams)
    """BBRv1's switches beyond the draft (used by the `bbr` variant only)."""


# ---- flows -----------------------------------------------------------------------------------


class FlowSpec(_Model):
    """One flow, or `count` identical flows (background traffic) named `<name>-0`, `<name>-1`, ..."""

    name: Name | None = None
    """Flow name (default "flow<i>", i its index in `flows`)."""
    count: Annotated[U32, Field(ge=1, le=MAX_FLOWS)] = 1
    """How many flows this entry generates; distributions are drawn once per flow."""
    type: FlowType = "tcp"
    """Transport: "tcp", or "udp" (which carries a cbr app)."""
    variant: Variant | None = None
    """TCP congestion-control variant (default "newreno-sbs"; none for UDP)."""
    rtt_ms: Value | None = None
    """Round-trip propagation delay, ms (dumbbell flows only, where it is required): a number or
    {"uniform": [a, b]}."""
    from_: Name | None = Field(default=None, alias="from")
    """Sender node (graph flows only)."""
    to: Name | None = None
    """Receiver node (graph flows only)."""
    start_s: Value = 0.0
    """Start time, seconds: a number or {"uniform": [a, b]}."""
    stop_s: Annotated[float, Field(ge=0.0, le=MAX_DURATION_S)] | None = None
    """Stop time, seconds (default: runs to the end)."""
    app: AppSpec = Field(default_factory=lambda: FtpApp(type="ftp"))
    """Application (default: endless FTP)."""
    tcp: TcpConfig = Field(default_factory=TcpConfig)
    """TCP parameters."""
    loss: LossSpec | None = None
    """Loss module on this flow's path, just before its receiver (paper 000 §IV-B)."""

    @model_validator(mode="before")
    @classmethod
    def _profile_rack_where_it_serves(cls, data: Any) -> Any:
        """A profile's `rack` serves the variants that recover with SACK; the others keep their
        own recovery (as the core's `Scenario::from_json`; asking for `rack` on one is refused)."""
        if not isinstance(data, dict) or not isinstance(tcp := data.get("tcp"), dict) or "rack" in tcp:
            return data
        profile = tcp.get("profile")
        settings = tcpsim.TCP_PROFILES.get(profile, {}) if isinstance(profile, str) else {}
        if settings.get("rack") is not True:
            return data
        variant = data.get("variant") or DEFAULT_VARIANT
        sack = tcp.get("sack", settings.get("sack"))
        if variant not in tcpsim.SACK_VARIANTS or sack is False:
            return {**data, "tcp": {**tcp, "rack": False}}
        return data


# ---- outputs and limits ----------------------------------------------------------------------


class Outputs(_Model):
    """Optional time series, sampled every trace_interval_s and bounded in size."""

    trace_interval_s: Annotated[float, Field(ge=MIN_TIMER_S)] | None = None
    """Sampling interval of the time series, seconds, at least 1 µs (default: no traces)."""
    trace: list[TraceKind] = Field(default_factory=lambda: ["cwnd", "ssthresh", "queue"])
    """Which series to record."""
    trace_flows: list[Name] | None = None
    """Flow names to trace (default: every flow)."""
    trace_links: list[Name] | None = None
    """Link names whose queue to trace (default: the bottleneck, or every graph link)."""
    max_trace_points: Annotated[U64, Field(le=MAX_TRACE_POINTS * 10)] = 200_000
    """Upper bound on all trace samples together; a scenario that would exceed it is refused."""


class Limits(_Model):
    """A run passing one of these stops with an error (`limit_exceeded`)."""

    max_events: U64 | None = None
    """Most simulated events."""
    max_wall_s: Annotated[float, Field(gt=0.0)] | None = None
    """Most wall-clock seconds."""


# ---- the scenario ----------------------------------------------------------------------------


class Scenario(_Model):
    """One simulation run: a topology, its flows, how long to run and what to measure.

    Metrics cover [warmup_s, duration_s]. Every random stream derives from `seed`: the same
    scenario, seed and core version give bit-identical results.
    """

    name: Name | None = None
    """Free text for people (at most 200 characters); ignored by the core."""
    description: Annotated[str, Field(max_length=MAX_DESCRIPTION_CHARS)] | None = None
    """Free text for people (at most 10,000 characters); ignored by the core."""
    duration_s: Annotated[float, Field(gt=0.0, le=MAX_DURATION_S)]
    """Simulated seconds."""
    warmup_s: Annotated[float, Field(ge=0.0)] = 0.0
    """Start of the measurement window, seconds (below duration_s)."""
    seed: U64 = 1
    """Seed of every random stream of the run."""
    topology: Topology
    """`{"dumbbell": {...}}` or `{"graph": {...}}`."""
    flows: Annotated[list[FlowSpec], Field(min_length=1)]
    """The flows (at least one; at most 100,000 after `count`s are expanded)."""
    outputs: Outputs = Field(default_factory=Outputs)
    """Time series to record (none by default)."""
    limits: Limits = Field(default_factory=Limits)
    """Event and wall-time limits (none by default)."""


UNION_TAGS: dict[str, frozenset[str]] = {
    "topology": frozenset(TOPOLOGY_KINDS),
    "queue": frozenset(QUEUE_TYPES),
    "loss": frozenset(LOSS_TYPES),
    "reverse_loss": frozenset(LOSS_TYPES),
    "app": frozenset(APP_TYPES),
    "rtt_ms": frozenset({"fixed", "uniform"}),
    "trace": frozenset({"file", "name"}),
    "start_s": frozenset({"fixed", "uniform"}),
}
"""Fields holding a tagged union, and the tags Pydantic puts after them in an error's `loc`
(`("flows", 0, "loss", "bernoulli_events", "m")`); `validation.json_path` drops them."""
