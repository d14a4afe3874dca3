"""runs, results, flow_results, traces

Revision ID: 0001
Revises:
Create Date: 2026-11-21

"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

SHA256_HEX = "cache_key ~ '^[0-9a-f]{64}$'"


def upgrade() -> None:
    op.create_table(
        "results",
        sa.Column("id", sa.Uuid(), server_default=sa.text("gen_random_uuid()"), nullable=False),
        sa.Column("cache_key", sa.Text(), nullable=False),
        sa.Column("core_version", sa.Text(), nullable=False),
        sa.Column(
            "summary",
            postgresql.JSONB(astext_type=sa.Text()),
            nullable=False,
            comment="links, fairness, stats, measured window (the core's result less flows/traces)",
        ),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
        sa.CheckConstraint(SHA256_HEX, name=op.f("ck_results_cache_key_sha256")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_results")),
        sa.UniqueConstraint("cache_key", name=op.f("uq_results_cache_key")),
    )

    op.create_table(
        "flow_results",
        sa.Column("result_id", sa.Uuid(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("type", sa.Text(), nullable=False, comment="tcp | udp"),
        sa.Column("variant", sa.Text(), nullable=True, comment="null for UDP"),
        sa.Column("rtt_propagation_s", sa.Double(), nullable=True),
        sa.Column("throughput_bps", sa.Double(), nullable=True),
        sa.Column("goodput_bps", sa.Double(), nullable=True),
        sa.Column("throughput_pkts_per_rtt", sa.Double(), nullable=True),
        sa.Column("goodput_pkts_per_rtt", sa.Double(), nullable=True),
        sa.Column("packets_sent", sa.BigInteger(), nullable=False),
        sa.Column("packets_received", sa.BigInteger(), nullable=False),
        sa.Column("retransmits", sa.BigInteger(), nullable=False),
        sa.Column("drops", sa.BigInteger(), nullable=False),
        sa.Column("ack_drops", sa.BigInteger(), nullable=False),
        sa.Column("loss_rate", sa.Double(), nullable=True),
        sa.Column("loss_events", sa.BigInteger(), nullable=False),
        sa.Column("loss_event_rate", sa.Double(), nullable=True),
        sa.Column("drops_per_loss_event", sa.Double(), nullable=True),
        sa.Column("timeouts", sa.BigInteger(), nullable=False),
        sa.Column("fast_retransmits", sa.BigInteger(), nullable=False),
        sa.Column("fast_recoveries", sa.BigInteger(), nullable=False),
        sa.Column("mean_recovery_s", sa.Double(), nullable=True),
        sa.Column("mean_rtt_s", sa.Double(), nullable=True),
        sa.Column("mean_rto_s", sa.Double(), nullable=True),
        sa.Column("downloads", sa.BigInteger(), nullable=False),
        sa.Column("download_time_s", sa.Double(), nullable=True),
        sa.CheckConstraint("position >= 0", name=op.f("ck_flow_results_position_not_negative")),
        sa.ForeignKeyConstraint(
            ["result_id"],
            ["results.id"],
            name=op.f("fk_flow_results_result_id_results"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("result_id", "position", name=op.f("pk_flow_results")),
    )
    op.create_index(op.f("ix_flow_results_variant"), "flow_results", ["variant"])

    op.create_table(
        "runs",
        sa.Column("id", sa.Uuid(), server_default=sa.text("gen_random_uuid()"), nullable=False),
        sa.Column(
            "status",
            sa.Enum(
                "queued",
                "running",
                "succeeded",
                "failed",
                "cancelled",
                name="status",
                native_enum=False,
                create_constraint=True,
                length=16,
            ),
            server_default="queued",
            nullable=False,
        ),
        sa.Column(
            "scenario",
            postgresql.JSONB(astext_type=sa.Text()),
            nullable=False,
            comment="the canonical scenario",
        ),
        sa.Column("preset", sa.Text(), nullable=True, comment="the preset it came from, if any"),
        sa.Column(
            "variants",
            postgresql.ARRAY(sa.Text()),
            server_default=sa.text("'{}'::text[]"),
            nullable=False,
            comment="the TCP variants of the scenario's flows, for filtering",
        ),
        # u64 seeds: NUMERIC(20, 0) (services.db.models.UInt64).
        sa.Column("seed", sa.Numeric(precision=20, scale=0), nullable=False),
        sa.Column(
            "cache_key",
            sa.Text(),
            nullable=False,
            comment="sha256 (hex) of canonical scenario + seed + core version",
        ),
        sa.Column("core_version", sa.Text(), nullable=False),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("attempts", sa.Integer(), server_default=sa.text("0"), nullable=False),
        sa.Column("worker", sa.Text(), nullable=True, comment="hostname of the worker that ran it"),
        sa.Column("error", sa.Text(), nullable=True, comment="the core's message, or the failure's"),
        sa.Column("error_kind", sa.Text(), nullable=True, comment="e.g. scenario, limit, internal"),
        sa.Column("result_id", sa.Uuid(), nullable=True),
        sa.Column(
            "core_wall_s",
            sa.Double(),
            nullable=True,
            comment="the core's own wall time for this run",
        ),
        sa.Column("events", sa.BigInteger(), nullable=True, comment="simulated events"),
        sa.CheckConstraint(SHA256_HEX, name=op.f("ck_runs_cache_key_sha256")),
        sa.CheckConstraint("attempts >= 0", name=op.f("ck_runs_attempts_not_negative")),
        sa.CheckConstraint("events IS NULL OR events >= 0", name=op.f("ck_runs_events_not_negative")),
        sa.CheckConstraint("seed >= 0 AND seed <= 18446744073709551615", name=op.f("ck_runs_seed_u64")),
        sa.ForeignKeyConstraint(
            ["result_id"],
            ["results.id"],
            name=op.f("fk_runs_result_id_results"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_runs")),
    )
    op.create_index(op.f("ix_runs_cache_key"), "runs", ["cache_key"])
    op.create_index(op.f("ix_runs_created_at"), "runs", ["created_at"])
    op.create_index(op.f("ix_runs_preset_created_at"), "runs", ["preset", "created_at"])
    op.create_index(op.f("ix_runs_result_id"), "runs", ["result_id"])
    op.create_index(op.f("ix_runs_status_created_at"), "runs", ["status", "created_at"])
    op.create_index(op.f("ix_runs_variants"), "runs", ["variants"], postgresql_using="gin")

    op.create_table(
        "traces",
        sa.Column("result_id", sa.Uuid(), nullable=False),
        sa.Column("data", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.ForeignKeyConstraint(
            ["result_id"],
            ["results.id"],
            name=op.f("fk_traces_result_id_results"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("result_id", name=op.f("pk_traces")),
    )


def downgrade() -> None:
    op.drop_table("traces")
    op.drop_table("runs")  # its indexes go with it
    op.drop_table("flow_results")
    op.drop_table("results")
