"""sweep aggregates: exact per point × flow group × metric sums, kept as runs succeed

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-24 01:50:00.000000

A sweep's summary, its model comparison and its page were recomputed from every succeeded
run's flow results on each request (0.6-7 s at a few thousand runs). `sweep_aggregates` holds,
per sweep, metric, point and flow group, the runs and observations counted, the number of
finite values and their exact sum and sum of squares (numeric: each float's exact decimal
expansion) with the mean and variance rounded once from them, added to in the transaction that marks runs succeeded
(services/sweeps/aggregates.py). The upgrade fills it for the sweeps that exist, by the same
full recomputation the repair tool uses.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Upgrade schema."""
    op.create_table(
        "sweep_aggregates",
        sa.Column("sweep_id", sa.Uuid(), nullable=False),
        sa.Column("metric", sa.Text(), nullable=False),
        sa.Column("point", sa.Integer(), nullable=False),
        sa.Column("flow", sa.Text(), nullable=False, comment="the flow group's name"),
        sa.Column(
            "position", sa.Integer(), nullable=False, comment="the first group of that name in the point's flow_groups"
        ),
        sa.Column("type", sa.Text(), nullable=False, comment="that group's type (tcp, udp)"),
        sa.Column("variant", sa.Text(), nullable=True, comment="that group's variant"),
        sa.Column("app", sa.Text(), nullable=True, comment="that group's application, if any"),
        sa.Column("runs", sa.Integer(), nullable=False, comment="succeeded runs counted"),
        sa.Column(
            "observations",
            sa.Integer(),
            nullable=False,
            comment="group observations counted (runs × groups of that name)",
        ),
        sa.Column("count", sa.Integer(), nullable=False, comment="observations with a finite value"),
        sa.Column("sum", sa.Numeric(), nullable=False, comment="exact sum of the finite values"),
        sa.Column("sum_squares", sa.Numeric(), nullable=False, comment="exact sum of their squares"),
        sa.Column(
            "mean",
            sa.Double(),
            nullable=True,
            comment="sum / count, rounded once from the exact sums (null: no value, or beyond float8)",
        ),
        sa.Column(
            "variance",
            sa.Double(),
            nullable=True,
            comment="the sample variance (n - 1), rounded once from the exact sums (null: below two values)",
        ),
        sa.ForeignKeyConstraint(
            ["sweep_id"], ["sweeps.id"], name=op.f("fk_sweep_aggregates_sweep_id_sweeps"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("sweep_id", "metric", "point", "flow", name=op.f("pk_sweep_aggregates")),
    )
    # The backfill runs the service's own recomputation (the code of the checkout, as 0005 does
    # with its codec): it reads runs, sweep_points and flow_results by the models' columns, so
    # a later migration that adds a per-flow metric must keep this one working on old data
    # (e.g. by filling sweep_aggregates after its own column exists).
    from sqlalchemy.orm import Session

    from services.sweeps import aggregates

    session = Session(bind=op.get_bind())
    for (sweep_id,) in session.execute(sa.text("SELECT id FROM sweeps")).all():
        aggregates.recompute(session, sweep_id)
    session.flush()


def downgrade() -> None:
    """Downgrade schema."""
    op.drop_table("sweep_aggregates")
