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
    scenario: Mapped[dict[str, Any]] = mapped_column(comment="the canonical scenario")
    preset: Mapped[str | None] = mapped_column(comment="the preset it came from, if any")
    variants: Mapped[list[str]] = mapped_column(
        ARRAY(Text),
        default=list,
        server_default=text("'{}'::text[]"),
        comment="the TCP variants of the scenario's flows, for filtering",
    )
    seed: Mapped[int] = mapped_column(UInt64)
    cache_key: Mapped[str] = mapped_column(
        comment="sha256 (hex) of canonical scenario + seed + core version"
    )
    core_version: Mapped[str]
    created_at: Mapped[dt.datetime] = mapped_column(server_default=_now())
    started_at: Mapped[dt.datetime | None]
    finished_at: Mapped[dt.datetime | None]
    attempts: Mapped[int] = mapped_column(Integer, default=0, server_default=text("0"))
    worker: Mapped[str | None] = mapped_column(comment="hostname of the worker that ran it")
    error: Mapped[str | None] = mapped_column(comment="the core's message, or the failure's")
    error_kind: Mapped[str | None] = mapped_column(comment="e.g. scenario, limit, internal")
    result_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("results.id", ondelete="SET NULL")
    )
    core_wall_s: Mapped[float | None] = mapped_column(
        Double, comment="the core's own wall time for this run"
    )
    events: Mapped[int | None] = mapped_column(BigInteger, comment="simulated events")
    sweep_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("sweeps.id", ondelete="CASCADE"), comment="the sweep it belongs to, if any"
    )
    sweep_point: Mapped[int | None] = mapped_column(Integer, comment="the sweep's grid point")
    replication: Mapped[int | None] = mapped_column(Integer, comment="0-based; sets the seed")

    result: Mapped[Result | None] = relationship(back_populates="runs")

    __table_args__ = (
        CheckConstraint("attempts >= 0", name="attempts_not_negative"),
        CheckConstraint(f"seed >= 0 AND seed <= {U64_MAX}", name="seed_u64"),
        CheckConstraint("cache_key ~ '^[0-9a-f]{64}$'", name="cache_key_sha256"),
        CheckConstraint("events IS NULL OR events >= 0", name="events_not_negative"),
        # GET /v1/runs: newest first, optionally by status / preset / variant.
        Index(None, "created_at"),
        Index(None, "status", "created_at"),
        Index(None, "preset", "created_at"),
        Index(None, "variants", postgresql_using="gin"),
        Index(None, "cache_key"),
        Index(None, "result_id"),
        # One run per (sweep, point, replication): extending a sweep twice adds nothing twice.
        Index("uq_runs_sweep_point_replication", "sweep_id", "sweep_point", "replication", unique=True),
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

    result_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("results.id", ondelete="CASCADE"), primary_key=True
    )
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
    """The optional time series of a result (``result["traces"]``), as the core returned it."""

    __tablename__ = "traces"

    result_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("results.id", ondelete="CASCADE"), primary_key=True
    )
    data: Mapped[dict[str, Any]]

    result: Mapped[Result] = relationship(back_populates="trace")


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

    points: Mapped[list[SweepPoint]] = relationship(
        back_populates="sweep",
        order_by="SweepPoint.index",
        cascade="all, delete-orphan",
        passive_deletes=True,
    )

    __table_args__ = (Index(None, "created_at"), Index(None, "preset", "created_at"))


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

    sweep: Mapped[Sweep] = relationship(back_populates="points")

    __table_args__ = (CheckConstraint('"index" >= 0', name="index_not_negative"),)
