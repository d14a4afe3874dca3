"""worker batches: runs dispatched together, and each owner's recent run costs

A task carries a *batch*: several waiting runs of one owner, dispatched together and simulated
one after another by one worker process (docs/fair-share.md). `batch_id` (the id of the
batch's first run) ties them: the dispatch window counts batches in flight, not runs. The
dispatcher sizes a batch by the owner's recent core times, read through
`ix_runs_owner_cost` (finished runs with a core time, by owner, newest first).

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-24 01:50:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column(
        "runs",
        sa.Column(
            "batch_id",
            sa.Uuid(),
            nullable=True,
            comment="the batch it was dispatched in (its first run's id; null: not dispatched)",
        ),
    )
    op.create_index(
        "ix_runs_owner_cost",
        "runs",
        ["owner_id", "finished_at"],
        postgresql_where=sa.text("core_wall_s IS NOT NULL"),
    )


def downgrade() -> None:
    op.drop_index("ix_runs_owner_cost", table_name="runs")
    op.drop_column("runs", "batch_id")
