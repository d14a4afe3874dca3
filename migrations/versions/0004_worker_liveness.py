"""worker liveness: run heartbeats

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-23 21:45:00.000000

"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Upgrade schema."""
    op.add_column(
        "runs",
        sa.Column(
            "heartbeat_at",
            sa.DateTime(timezone=True),
            nullable=True,
            comment="last sign of life of the worker running it (every TCPLAB_WORKER_HEARTBEAT_S): "
            "a running run whose heartbeat is older than TCPLAB_WORKER_DEAD_AFTER_S is handed to another worker",
        ),
    )


def downgrade() -> None:
    """Downgrade schema."""
    op.drop_column("runs", "heartbeat_at")
