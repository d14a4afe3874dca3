"""admission caps on sweep points

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-23 21:45:00.000000

Why a sweep's stopping rule stopped adding replications at a point: the target met, its
`max_replications` reached without meeting it, or capped by an admission limit (the owner's
quota, the per-sweep cap, the server's queue) — services/admission.py.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# The values of services.db.models.StopReason when this revision was written.
REASONS = (
    "target met",
    "max_replications reached, target not met",
    "no values to estimate",
    "capped: quota",
    "capped: sweep cap",
    "capped: server queue",
)


def upgrade() -> None:
    """Upgrade schema."""
    op.add_column(
        "sweep_points",
        sa.Column(
            "stop_reason",
            sa.Text(),
            nullable=True,
            comment="why the stopping rule stopped here (StopReason); null while it may grow, or without a rule",
        ),
    )
    op.create_check_constraint(
        op.f("ck_sweep_points_stop_reason_known"),
        "sweep_points",
        "stop_reason IS NULL OR stop_reason IN (" + ", ".join(f"'{r}'" for r in REASONS) + ")",
    )


def downgrade() -> None:
    """Downgrade schema."""
    op.drop_constraint(op.f("ck_sweep_points_stop_reason_known"), "sweep_points", type_="check")
    op.drop_column("sweep_points", "stop_reason")
