"""sweeps and sweep points; runs name their sweep

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22 00:07:33.725190

"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

SWEEP_FIELDS_TOGETHER = "(sweep_id IS NULL) = (sweep_point IS NULL) AND (sweep_id IS NULL) = (replication IS NULL)"


def upgrade() -> None:
    """Upgrade schema."""
    op.create_table(
        "sweeps",
        sa.Column("id", sa.Uuid(), server_default=sa.text("gen_random_uuid()"), nullable=False),
        sa.Column("name", sa.Text(), nullable=True),
        sa.Column("preset", sa.Text(), nullable=True, comment="the preset it sweeps, if any"),
        sa.Column("spec", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.Column("cancelled_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_sweeps")),
    )
    op.create_index(op.f("ix_sweeps_created_at"), "sweeps", ["created_at"], unique=False)
    op.create_index(op.f("ix_sweeps_preset_created_at"), "sweeps", ["preset", "created_at"], unique=False)
    op.create_table(
        "sweep_points",
        sa.Column("sweep_id", sa.Uuid(), nullable=False),
        sa.Column("index", sa.Integer(), nullable=False),
        sa.Column("values", postgresql.JSONB(astext_type=sa.Text()), nullable=False, comment="axis path -> value"),
        sa.Column(
            "flow_groups",
            postgresql.JSONB(astext_type=sa.Text()),
            nullable=False,
            comment="[{name, count, variant, type}] in the scenario's order",
        ),
        sa.CheckConstraint('"index" >= 0', name=op.f("ck_sweep_points_index_not_negative")),
        sa.ForeignKeyConstraint(
            ["sweep_id"], ["sweeps.id"], name=op.f("fk_sweep_points_sweep_id_sweeps"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("sweep_id", "index", name=op.f("pk_sweep_points")),
    )
    op.add_column("runs", sa.Column("sweep_id", sa.Uuid(), nullable=True, comment="the sweep it belongs to, if any"))
    op.add_column("runs", sa.Column("sweep_point", sa.Integer(), nullable=True, comment="the sweep's grid point"))
    op.add_column("runs", sa.Column("replication", sa.Integer(), nullable=True, comment="0-based; sets the seed"))
    op.create_index("uq_runs_sweep_point_replication", "runs", ["sweep_id", "sweep_point", "replication"], unique=True)
    op.create_foreign_key(op.f("fk_runs_sweep_id_sweeps"), "runs", "sweeps", ["sweep_id"], ["id"], ondelete="CASCADE")
    op.create_check_constraint(op.f("ck_runs_sweep_fields_together"), "runs", SWEEP_FIELDS_TOGETHER)


def downgrade() -> None:
    """Downgrade schema."""
    op.drop_constraint(op.f("ck_runs_sweep_fields_together"), "runs", type_="check")
    op.drop_constraint(op.f("fk_runs_sweep_id_sweeps"), "runs", type_="foreignkey")
    op.drop_index("uq_runs_sweep_point_replication", table_name="runs")
    op.drop_column("runs", "replication")
    op.drop_column("runs", "sweep_point")
    op.drop_column("runs", "sweep_id")
    op.drop_table("sweep_points")
    op.drop_index(op.f("ix_sweeps_preset_created_at"), table_name="sweeps")
    op.drop_index(op.f("ix_sweeps_created_at"), table_name="sweeps")
    op.drop_table("sweeps")
