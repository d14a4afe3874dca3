"""The tables of simulation runs and their results.

A run is one request to simulate one scenario with one seed; a result is what the core
returned for a ``cache_key`` (sha256 of canonical scenario + seed + core version). Identical
runs share one result: ``results.cache_key`` is unique, so a task delivered twice stores one
result (``INSERT … ON CONFLICT (cache_key) DO NOTHING``) and both runs point at it.

A sweep is a grid of points (axis values) times replications (seeds); each of its runs is an
ordinary run that also names its sweep, point and replication, so the cache, the workers and
the run pages treat sweep runs like any other.

PostgreSQL is the source of truth for every run's state; Redis only carries run ids.
"""

from __future__ import annotations

import datetime as dt
import enum
import uuid
from decimal import Decimal
from typing import Any

from sqlalchemy import (
    BigInteger,
    CheckConstraint,
    Double,
    Enum,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    Numeric,
    Text,
    TypeDecorator,
    func,
    text,
)
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import Mapped, mapped_column, relationship

from services.db.base import Base

U64_MAX = 2**64 - 1


class UInt64(TypeDecorator[int]):
    """An unsigned 64-bit integer, stored as NUMERIC(20, 0): the core's seeds are u64, and
    half of them do not fit a BIGINT."""

    impl = Numeric(20, 0)
    cache_ok = True

    def process_bind_param(self, value: int | None, dialect: Dialect) -> Decimal | None:
        return None if value is None else Decimal(int(value))

    def process_result_value(self, value: Any, dialect: Dialect) -> int | None:
        return None if value is None else int(value)


class RunStatus(enum.StrEnum):
    queued = "queued"
    running = "running"
    succeeded = "succeeded"
    failed = "failed"
    cancelled = "cancelled"

    @property
    def is_final(self) -> bool:
        return self in (RunStatus.succeeded, RunStatus.failed, RunStatus.cancelled)


def _now() -> Any:
    return func.now()


class Run(Base):
    __tablename__ = "runs"
    __mapper_args__ = {"eager_defaults": True}  # RETURNING fills created_at etc. at flush

    id: Mapped[uuid.UUID] = mapped_column(
        primary_key=True, default=uuid.uuid4, server_default=text("gen_random_uuid()")
    )
    # VARCHAR + CHECK rather than a native ENUM type: a later state is one migration that
    # swaps the CHECK, inside a transaction.
    status: Mapped[RunStatus] = mapped_column(
        Enum(
            RunStatus,
            name="status",
            native_enum=False,
            create_constraint=True,
            length=16,
            validate_strings=True,
            values_callable=lambda e: [m.value for m in e],
        ),
        default=RunStatus.queued,
        server_default=RunStatus.queued.value,
    )
    scenario: Mapped[dict[str, Any] | None] = mapped_column(
        comment="the canonical scenario; null for a sweep run: its point's (sweep_points.scenario) "
        "with its own seed (runs.repository.scenarios_of)"
    )
    preset: Mapped[str | None] = mapped_column(comment="the preset it came from, if any")
    variants: Mapped[list[str]] = mapped_column(
        ARRAY(Text),
        default=list,
        server_default=text("'{}'::text[]"),
        comment="the TCP variants of the scenario's flows, for filtering",
    )
    seed: Mapped[int] = mapped_column(UInt64)
    cache_key: Mapped[str] = mapped_column(comment="sha256 (hex) of canonical scenario + seed + core version")
    core_version: Mapped[str]
    created_at: Mapped[dt.datetime] = mapped_column(server_default=_now())
    started_at: Mapped[dt.datetime | None]
    finished_at: Mapped[dt.datetime | None]
    attempts: Mapped[int] = mapped_column(Integer, default=0, server_default=text("0"))
    worker: Mapped[str | None] = mapped_column(comment="hostname of the worker that ran it")
    heartbeat_at: Mapped[dt.datetime | None] = mapped_column(
        comment="last sign of life of the worker running it (every TCPLAB_WORKER_HEARTBEAT_S): "
        "a running run whose heartbeat is older than TCPLAB_WORKER_DEAD_AFTER_S is handed to another worker"
    )
    error: Mapped[str | None] = mapped_column(comment="the core's message, or the failure's")
    error_kind: Mapped[str | None] = mapped_column(comment="e.g. scenario, limit, internal")
    result_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("results.id", ondelete="SET NULL"))
    core_wall_s: Mapped[float | None] = mapped_column(Double, comment="the core's own wall time for this run")
    events: Mapped[int | None] = mapped_column(BigInteger, comment="simulated events")
    sweep_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("sweeps.id", ondelete="CASCADE"), comment="the sweep it belongs to, if any"
    )
    sweep_point: Mapped[int | None] = mapped_column(Integer, comment="the sweep's grid point")
    replication: Mapped[int | None] = mapped_column(Integer, comment="0-based; sets the seed")
    owner_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), comment="who submitted it (null: before users)"
    )
    shared: Mapped[bool] = mapped_column(
        default=False, server_default=text("false"), comment="visible to the whole lab"
    )
    dispatched_at: Mapped[dt.datetime | None] = mapped_column(
        comment="when the dispatcher sent it to the broker (null: waiting in PostgreSQL)"
    )
    batch_id: Mapped[uuid.UUID | None] = mapped_column(
        comment="the batch it was dispatched in (its first run's id; null: not dispatched)"
    )
    tags: Mapped[list[str]] = mapped_column(
        ARRAY(Text),
        default=list,
        server_default=text("'{}'::text[]"),
        comment="labels to find it by (docs/experiments.md)",
    )
    note: Mapped[str | None] = mapped_column(comment="the owner's free text about it")
    archived_at: Mapped[dt.datetime | None] = mapped_column(
        comment="hidden from the default lists since (null: not archived)"
    )

    result: Mapped[Result | None] = relationship(back_populates="runs")
    # Lazy: a page of runs of one owner loads the user once (the identity map answers the rest).
    owner: Mapped[User | None] = relationship()

    __table_args__ = (
        CheckConstraint("attempts >= 0", name="attempts_not_negative"),
        CheckConstraint(f"seed >= 0 AND seed <= {U64_MAX}", name="seed_u64"),
        # 64 lowercase hex digits, without a regex's counted repetition (migration 0010).
        CheckConstraint("octet_length(cache_key) = 64 AND cache_key !~ '[^0-9a-f]'", name="cache_key_sha256"),
        CheckConstraint("events IS NULL OR events >= 0", name="events_not_negative"),
        CheckConstraint("scenario IS NOT NULL OR sweep_id IS NOT NULL", name="scenario_own_or_its_points"),
        # GET /v1/runs: newest first, optionally by status / preset / variant.
        Index(None, "created_at"),
        Index(None, "status", "created_at"),
        Index(None, "preset", "created_at"),
        Index(None, "variants", postgresql_using="gin"),
        Index(None, "cache_key"),
        Index(None, "result_id"),
        Index(None, "owner_id", "created_at"),
        Index(None, "finished_at"),
        # The dispatcher's work list: each owner's waiting runs, oldest first.
        Index(
            "ix_runs_waiting",
            "owner_id",
            "created_at",
            postgresql_where=text("status = 'queued' AND dispatched_at IS NULL"),
        ),
        # ... and the runs in flight (in the broker or running), counted at every dispatch.
        Index(
            "ix_runs_in_flight",
            "owner_id",
            "dispatched_at",
            postgresql_where=text("status = 'running' OR (status = 'queued' AND dispatched_at IS NOT NULL)"),
        ),
        # The dispatcher sizes an owner's batches by its latest core times.
        Index("ix_runs_owner_cost", "owner_id", "finished_at", postgresql_where=text("core_wall_s IS NOT NULL")),
        # One run per (sweep, point, replication): extending a sweep twice adds nothing twice.
        Index("uq_runs_sweep_point_replication", "sweep_id", "sweep_point", "replication", unique=True),
        Index(None, "sweep_id", "sweep_point", "status"),  # a sweep's progress from the index alone (0011)
        # Experiment search (0014): all of some tags, a parameter's value, the archived ones.
        Index(None, "tags", postgresql_using="gin"),
        Index(
            "ix_runs_scenario_path", "scenario", postgresql_using="gin", postgresql_ops={"scenario": "jsonb_path_ops"}
        ),
        Index("ix_runs_archived", "archived_at", postgresql_where=text("archived_at IS NOT NULL")),
        CheckConstraint("cardinality(tags) <= 32", name="tags_count"),
        CheckConstraint("note IS NULL OR char_length(note) <= 10000", name="note_length"),
        CheckConstraint(
            "(sweep_id IS NULL) = (sweep_point IS NULL) AND (sweep_id IS NULL) = (replication IS NULL)",
            name="sweep_fields_together",
        ),
    )


class Result(Base):
    __tablename__ = "results"
    __mapper_args__ = {"eager_defaults": True}

    id: Mapped[uuid.UUID] = mapped_column(
        primary_key=True, default=uuid.uuid4, server_default=text("gen_random_uuid()")
    )
    cache_key: Mapped[str] = mapped_column(unique=True)
    core_version: Mapped[str]
    summary: Mapped[dict[str, Any]] = mapped_column(
        comment="links, fairness, stats, measured window (the core's result less flows/traces)"
    )
    created_at: Mapped[dt.datetime] = mapped_column(server_default=_now())

    flows: Mapped[list[FlowResult]] = relationship(
        back_populates="result",
        order_by="FlowResult.position",
        cascade="all, delete-orphan",
        passive_deletes=True,
    )
    trace: Mapped[Trace | None] = relationship(
        back_populates="result", cascade="all, delete-orphan", passive_deletes=True
    )
    runs: Mapped[list[Run]] = relationship(back_populates="result", passive_deletes=True)

    __table_args__ = (CheckConstraint("cache_key ~ '^[0-9a-f]{64}$'", name="cache_key_sha256"),)


class FlowResult(Base):
    """One row per flow of a result, in the core's order; one column per metric of
    docs/simulator.md "Result" (counts are never null; a float is null where the core says
    the metric is undefined, e.g. no loss event or no RTT sample)."""

    __tablename__ = "flow_results"

    result_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("results.id", ondelete="CASCADE"), primary_key=True)
    position: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str]
    type: Mapped[str] = mapped_column(comment="tcp | udp")
    variant: Mapped[str | None] = mapped_column(comment="null for UDP")
    rtt_propagation_s: Mapped[float | None] = mapped_column(Double)
    throughput_bps: Mapped[float | None] = mapped_column(Double)
    goodput_bps: Mapped[float | None] = mapped_column(Double)
    throughput_pkts_per_rtt: Mapped[float | None] = mapped_column(Double)
    goodput_pkts_per_rtt: Mapped[float | None] = mapped_column(Double)
    packets_sent: Mapped[int] = mapped_column(BigInteger)
    packets_received: Mapped[int] = mapped_column(BigInteger)
    retransmits: Mapped[int] = mapped_column(BigInteger)
    drops: Mapped[int] = mapped_column(BigInteger)
    ack_drops: Mapped[int] = mapped_column(BigInteger)
    loss_rate: Mapped[float | None] = mapped_column(Double)
    loss_events: Mapped[int] = mapped_column(BigInteger)
    loss_event_rate: Mapped[float | None] = mapped_column(Double)
    drops_per_loss_event: Mapped[float | None] = mapped_column(Double)
    timeouts: Mapped[int] = mapped_column(BigInteger)
    fast_retransmits: Mapped[int] = mapped_column(BigInteger)
    fast_recoveries: Mapped[int] = mapped_column(BigInteger)
    mean_recovery_s: Mapped[float | None] = mapped_column(Double)
    mean_rtt_s: Mapped[float | None] = mapped_column(Double)
    mean_rto_s: Mapped[float | None] = mapped_column(Double)
    downloads: Mapped[int] = mapped_column(BigInteger)
    download_time_s: Mapped[float | None] = mapped_column(Double)

    result: Mapped[Result] = relationship(back_populates="flows")

    __table_args__ = (
        CheckConstraint("position >= 0", name="position_not_negative"),
        Index(None, "variant"),
    )


# The per-flow metric columns, in the core's order: what a writer copies from result["flows"].
FLOW_METRICS: tuple[str, ...] = tuple(
    c.name for c in FlowResult.__table__.columns if c.name not in ("result_id", "position")
)


class Trace(Base):
    """The layout of a result's optional time series (``result["traces"]``); their values are
    in ``trace_chunks``, so that a reader holds one chunk at a time (services/runs/traces.py)."""

    __tablename__ = "traces"

    result_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("results.id", ondelete="CASCADE"), primary_key=True)
    samples: Mapped[int] = mapped_column(BigInteger, comment="sample times (the length of every series)")
    chunk_samples: Mapped[int] = mapped_column(Integer, comment="samples per chunk of every series")
    series: Mapped[list[dict[str, Any]]] = mapped_column(
        comment="[{kind: time|flow|link, name, quantity, dtype: f8|i8}]; its index is trace_chunks.series"
    )
    items: Mapped[dict[str, Any]] = mapped_column(
        comment='{"flows": [names], "links": [names]}: the traced flows and links, in the core\'s order'
    )

    result: Mapped[Result] = relationship(back_populates="trace")

    __table_args__ = (
        CheckConstraint("samples >= 0", name="samples_not_negative"),
        CheckConstraint("chunk_samples >= 1", name="chunk_samples_positive"),
    )


class TraceChunk(Base):
    """Samples [chunk × chunk_samples, (chunk + 1) × chunk_samples) of one series: its values
    as little-endian float64 (NaN for null) or int64, zlib-compressed."""

    __tablename__ = "trace_chunks"

    result_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("traces.result_id", ondelete="CASCADE"), primary_key=True)
    # (chunk, series) in this order: rows read in key order are the table's rows block by block.
    chunk: Mapped[int] = mapped_column(Integer, primary_key=True)
    series: Mapped[int] = mapped_column(Integer, primary_key=True)
    data: Mapped[bytes] = mapped_column(LargeBinary)

    __table_args__ = (
        CheckConstraint("chunk >= 0", name="chunk_not_negative"),
        CheckConstraint("series >= 0", name="series_not_negative"),
    )


class LinkTrace(Base):
    """A user's named Mahimahi trace, which a scenario's link may follow (`"trace": {"name": ...}`,
    issue 18). Its content is stored here, never read from a path: the canonical text
    (services/traces/format.py) zlib-compressed, and its sha256, which scenarios and cache keys
    carry in place of the name. The lab's built-in traces ship with the code
    (services/traces/builtin.py) and have no row."""

    __tablename__ = "link_traces"
    __mapper_args__ = {"eager_defaults": True}

    id: Mapped[uuid.UUID] = mapped_column(
        primary_key=True, default=uuid.uuid4, server_default=text("gen_random_uuid()")
    )
    owner_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(comment="unique per owner")
    sha256: Mapped[str] = mapped_column(comment="sha256 (hex) of the canonical text")
    content: Mapped[bytes] = mapped_column(LargeBinary, comment="the canonical text, zlib-compressed")
    text_bytes: Mapped[int] = mapped_column(BigInteger, comment="length of the canonical text (quota)")
    lines: Mapped[int] = mapped_column(BigInteger, comment="delivery opportunities in one pass")
    span_ms: Mapped[int] = mapped_column(BigInteger, comment="the loop period: the last line's millisecond")
    mean_mbps: Mapped[float] = mapped_column(Double, comment="lines x 1500 B x 8 / span")
    created_at: Mapped[dt.datetime] = mapped_column(server_default=_now())

    __table_args__ = (
        Index("uq_link_traces_owner_name", "owner_id", "name", unique=True),
        Index("ix_link_traces_sha256", "sha256"),
        CheckConstraint("sha256 ~ '^[0-9a-f]{64}$'", name="sha256_hex"),
        CheckConstraint("name ~ '^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$'", name="name_format"),
        CheckConstraint("lines >= 1 AND span_ms >= 1 AND text_bytes >= 2", name="not_empty"),
    )


class Sweep(Base):
    """A base scenario (or preset) swept along axes, with replications.

    `spec` is the sweep as it stands now (after any extension): base, axes with all their
    values, combine mode, replications, seed, stopping rule — the body that would recreate it.
    """

    __tablename__ = "sweeps"
    __mapper_args__ = {"eager_defaults": True}

    id: Mapped[uuid.UUID] = mapped_column(
        primary_key=True, default=uuid.uuid4, server_default=text("gen_random_uuid()")
    )
    name: Mapped[str | None]
    preset: Mapped[str | None] = mapped_column(comment="the preset it sweeps, if any")
    spec: Mapped[dict[str, Any]]
    created_at: Mapped[dt.datetime] = mapped_column(server_default=_now())
    cancelled_at: Mapped[dt.datetime | None]
    owner_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), comment="who created it (null: before users)"
    )
    shared: Mapped[bool] = mapped_column(
        default=False, server_default=text("false"), comment="visible to the whole lab"
    )
    schedule_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("schedules.id", ondelete="SET NULL"), comment="the schedule that fired it, if any"
    )
    fired_for: Mapped[dt.datetime | None] = mapped_column(comment="the schedule's firing time this sweep answers")
    tags: Mapped[list[str]] = mapped_column(
        ARRAY(Text),
        default=list,
        server_default=text("'{}'::text[]"),
        comment="labels to find it by (docs/experiments.md)",
    )
    note: Mapped[str | None] = mapped_column(comment="the owner's free text about it")
    archived_at: Mapped[dt.datetime | None] = mapped_column(
        comment="hidden from the default lists since, its runs with it (null: not archived)"
    )

    owner: Mapped[User | None] = relationship()
    points: Mapped[list[SweepPoint]] = relationship(
        back_populates="sweep",
        order_by="SweepPoint.index",
        cascade="all, delete-orphan",
        passive_deletes=True,
    )

    __table_args__ = (
        Index(None, "created_at"),
        Index(None, "preset", "created_at"),
        Index(None, "owner_id", "created_at"),
        # One sweep per firing of a schedule: two beat processes cannot fire it twice.
        Index("uq_sweeps_schedule_firing", "schedule_id", "fired_for", unique=True),
        Index(None, "tags", postgresql_using="gin"),
        Index("ix_sweeps_archived", "archived_at", postgresql_where=text("archived_at IS NOT NULL")),
        CheckConstraint("cardinality(tags) <= 32", name="tags_count"),
        CheckConstraint("note IS NULL OR char_length(note) <= 10000", name="note_length"),
    )


class PendingCancel(Base):
    """A sweep cancelled whose waiting runs are not marked cancelled yet: the dispatcher's next
    pass marks them, and deletes this row, before it picks anything (services/runs/dispatch.py
    `finish_cancels`; migration 0013). A table of its own, so that the dispatcher never locks
    a sweep's row, which a cancel or an extension holds while it waits for the dispatcher."""

    __tablename__ = "pending_cancels"

    sweep_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("sweeps.id", ondelete="CASCADE"), primary_key=True)


class StopReason(enum.StrEnum):
    """Why a sweep's stopping rule stopped adding replications at a point (docs/sweeps.md).
    A capped point resumes when its sweep is extended."""

    target_met = "target met"
    max_replications = "max_replications reached, target not met"
    no_values = "no values to estimate"
    capped_quota = "capped: quota"
    capped_sweep = "capped: sweep cap"
    capped_server = "capped: server queue"

    @property
    def capped(self) -> bool:
        return self.value.startswith("capped:")


class SweepPoint(Base):
    """One grid point: the axis values, and the layout of the scenario's flow groups there
    (names, counts, variants), so per-flow results map back to the groups a researcher wrote."""

    __tablename__ = "sweep_points"

    sweep_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("sweeps.id", ondelete="CASCADE"), primary_key=True)
    index: Mapped[int] = mapped_column(Integer, primary_key=True)
    values: Mapped[dict[str, Any]] = mapped_column(comment="axis path -> value")
    flow_groups: Mapped[list[dict[str, Any]]] = mapped_column(
        comment="[{name, count, variant, type}] in the scenario's order"
    )
    # Once per point rather than once per run: a 50,000-run sweep's runs were 1.3 kB rows
    # that admission wrote and a cancel rewrote, 1 kB of it the same scenario (migration 0012).
    # Deferred: the points' tables and summaries never need it (10,000 points: 15 MB of JSON).
    scenario: Mapped[dict[str, Any] | None] = mapped_column(
        deferred=True,
        comment="the canonical scenario without its seed: each of the point's runs is this with its own seed "
        "(null only for a point stored before migration 0012 without runs)",
    )
    stop_reason: Mapped[str | None] = mapped_column(
        Text, comment="why the stopping rule stopped here (StopReason); null while it may grow, or without a rule"
    )

    sweep: Mapped[Sweep] = relationship(back_populates="points")

    __table_args__ = (
        CheckConstraint('"index" >= 0', name="index_not_negative"),
        CheckConstraint(
            "stop_reason IS NULL OR stop_reason IN (" + ", ".join(f"'{r.value}'" for r in StopReason) + ")",
            name="stop_reason_known",
        ),
    )


class SweepAggregate(Base):
    """What a sweep's summaries rest on, per point × flow group (by name) × metric, kept as
    runs succeed (services/sweeps/aggregates.py): how many runs and group observations, how
    many finite values, and their exact sum and sum of squares. `sum` and `sum_squares` are
    exact (numeric fed with each float's exact decimal expansion): adding runs in any order
    gives the same value as a full recomputation, to the last digit."""

    __tablename__ = "sweep_aggregates"

    sweep_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("sweeps.id", ondelete="CASCADE"), primary_key=True)
    metric: Mapped[str] = mapped_column(Text, primary_key=True)
    point: Mapped[int] = mapped_column(Integer, primary_key=True)
    flow: Mapped[str] = mapped_column(Text, primary_key=True, comment="the flow group's name")
    position: Mapped[int] = mapped_column(Integer, comment="the first group of that name in the point's flow_groups")
    type: Mapped[str] = mapped_column(Text, comment="that group's type (tcp, udp)")
    variant: Mapped[str | None] = mapped_column(Text, comment="that group's variant")
    app: Mapped[str | None] = mapped_column(Text, comment="that group's application, if any")
    runs: Mapped[int] = mapped_column(Integer, comment="succeeded runs counted")
    observations: Mapped[int] = mapped_column(
        Integer, comment="group observations counted (runs × groups of that name)"
    )
    count: Mapped[int] = mapped_column(Integer, comment="observations with a finite value")
    sum: Mapped[Decimal] = mapped_column(Numeric, comment="exact sum of the finite values")
    sum_squares: Mapped[Decimal] = mapped_column(Numeric, comment="exact sum of their squares")
    mean: Mapped[float | None] = mapped_column(
        Double, comment="sum / count, rounded once from the exact sums (null: no value, or beyond float8)"
    )
    variance: Mapped[float | None] = mapped_column(
        Double, comment="the sample variance (n - 1), rounded once from the exact sums (null: below two values)"
    )


class User(Base):
    """A person (or a script's account) of the lab server. Quotas left null take the
    server's defaults (settings); a disabled user's tokens stop working."""

    __tablename__ = "users"
    __mapper_args__ = {"eager_defaults": True}

    id: Mapped[uuid.UUID] = mapped_column(
        primary_key=True, default=uuid.uuid4, server_default=text("gen_random_uuid()")
    )
    name: Mapped[str]  # unique regardless of case: uq_users_name_lower below
    is_admin: Mapped[bool] = mapped_column(default=False, server_default=text("false"))
    created_at: Mapped[dt.datetime] = mapped_column(server_default=_now())
    disabled_at: Mapped[dt.datetime | None]
    max_queued_runs: Mapped[int | None] = mapped_column(Integer, comment="null: the server's default")
    max_events_per_run: Mapped[int | None] = mapped_column(BigInteger, comment="null: the server's default")
    max_flows: Mapped[int | None] = mapped_column(Integer, comment="flows in one scenario; null: default")
    submissions_per_minute: Mapped[int | None] = mapped_column(Integer, comment="null: the server's default")

    __table_args__ = (
        # `alice` and `ALICE` are one name (migration 0007).
        Index("uq_users_name_lower", func.lower(text("name")), unique=True),
        CheckConstraint("name ~ '^[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}$'", name="name_format"),
        CheckConstraint("max_queued_runs IS NULL OR max_queued_runs >= 0", name="max_queued_runs_not_negative"),
        CheckConstraint("max_events_per_run IS NULL OR max_events_per_run >= 1", name="max_events_positive"),
        CheckConstraint("max_flows IS NULL OR max_flows >= 1", name="max_flows_positive"),
        CheckConstraint(
            "submissions_per_minute IS NULL OR submissions_per_minute >= 0", name="submissions_not_negative"
        ),
    )


class ApiToken(Base):
    """A bearer token. Only its sha256 is stored: the token itself is shown once, when it
    is made. (A fast hash suffices: tokens are 256 random bits, not passwords to guess.)"""

    __tablename__ = "api_tokens"
    __mapper_args__ = {"eager_defaults": True}

    id: Mapped[uuid.UUID] = mapped_column(
        primary_key=True, default=uuid.uuid4, server_default=text("gen_random_uuid()")
    )
    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(comment="what the owner calls it (laptop, ci, …)")
    prefix: Mapped[str] = mapped_column(comment="the token's first characters, to recognise it")
    token_hash: Mapped[str] = mapped_column(unique=True, comment="sha256 (hex) of the token")
    created_at: Mapped[dt.datetime] = mapped_column(server_default=_now())
    last_used_at: Mapped[dt.datetime | None]
    revoked_at: Mapped[dt.datetime | None]

    __table_args__ = (
        CheckConstraint("token_hash ~ '^[0-9a-f]{64}$'", name="token_hash_sha256"),
        Index(None, "user_id"),
    )


class Schedule(Base):
    """A sweep template fired on a cron line (UTC). `next_fire_at` is when it fires next;
    the beat task fires every enabled schedule whose time has come, in its own row lock."""

    __tablename__ = "schedules"
    __mapper_args__ = {"eager_defaults": True}

    id: Mapped[uuid.UUID] = mapped_column(
        primary_key=True, default=uuid.uuid4, server_default=text("gen_random_uuid()")
    )
    name: Mapped[str]
    owner_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    shared: Mapped[bool] = mapped_column(default=False, server_default=text("false"))
    cron: Mapped[str] = mapped_column(comment="five fields, UTC")
    template: Mapped[dict[str, Any]] = mapped_column(comment="the sweep body each firing creates")
    enabled: Mapped[bool] = mapped_column(default=True, server_default=text("true"))
    builtin: Mapped[str | None] = mapped_column(unique=True, comment="the key of a built-in schedule")
    created_at: Mapped[dt.datetime] = mapped_column(server_default=_now())
    updated_at: Mapped[dt.datetime] = mapped_column(server_default=_now())
    next_fire_at: Mapped[dt.datetime | None] = mapped_column(comment="null while disabled")
    last_fired_at: Mapped[dt.datetime | None]
    last_error: Mapped[str | None] = mapped_column(comment="why the last firing created no sweep")

    owner: Mapped[User | None] = relationship()

    __table_args__ = (
        Index(None, "owner_id", "created_at"),
        Index("ix_schedules_due", "next_fire_at", postgresql_where=text("enabled")),
    )
