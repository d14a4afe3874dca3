"""a sweep's cancel answers at once; the next dispatcher pass marks its waiting runs

Cancelling a 50,000-run sweep rewrote 50,000 run rows in the request: status and finished_at
are indexed, so each row took a new entry in each of the runs table's 13 indexes (~25 µs of
PostgreSQL CPU a row; 1.2–1.6 s, measured with `python -m bench.sweep_admission` on the quiet
machine after migration 0012). Only the dispatcher sends waiting runs to the workers, so the
request now cancels the runs in flight (sent or running: about a window's worth), records the
cancel in `pending_cancels`, and answers; the dispatcher's next pass — the API starts one just
after the response — marks the waiting runs cancelled before it picks anything, under its
lock, so none of them is ever sent. Until then the sweep reads as cancelled, its waiting runs
count as cancelled in its progress and in no queue (services/admission.py).

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-25 21:20:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "pending_cancels",
        sa.Column("sweep_id", sa.Uuid(), nullable=False),
        sa.ForeignKeyConstraint(
            ["sweep_id"], ["sweeps.id"], name=op.f("fk_pending_cancels_sweep_id_sweeps"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("sweep_id", name=op.f("pk_pending_cancels")),
    )


def downgrade() -> None:
    # A cancel still pending is finished here, as the dispatcher would have.
    op.execute(
        "UPDATE runs SET status = 'cancelled', finished_at = now() FROM pending_cancels p "
        "WHERE runs.sweep_id = p.sweep_id AND runs.status = 'queued'"
    )
    op.drop_table("pending_cancels")
