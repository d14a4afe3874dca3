"""sweep progress: runs by (sweep, point, status), counted from the index alone

A sweep's progress (`GET /v1/sweeps/{id}`, the sweep page's live progress) and its per-point
progress (`GET /v1/sweeps/{id}/points`) count the sweep's runs by status. Through the unique
index on (sweep_id, sweep_point, replication) every run's heap row was read for its status:
a 50,000-run sweep's 8,357 heap pages (a run row carries its scenario), 70–370 ms a request
(EXPLAIN ANALYZE, warm to cold). `ix_runs_sweep_progress` holds the status in the index, so
PostgreSQL counts from the index alone (an index-only scan): 50 pages (B-tree deduplication:
a key repeats once per replication), 6–8 ms once the pages are all-visible; while runs keep
changing, the pages they changed are read as before (all 50,000 changed: 70 ms).

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-25 18:45:00.000000
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index(op.f("ix_runs_sweep_id_sweep_point_status"), "runs", ["sweep_id", "sweep_point", "status"])


def downgrade() -> None:
    op.drop_index(op.f("ix_runs_sweep_id_sweep_point_status"), table_name="runs")
