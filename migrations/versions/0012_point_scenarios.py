"""a sweep point's scenario stored once, not once per run

A sweep's replications of one point differ only by their seed, yet each run row carried the
whole canonical scenario: 1.0 kB of a 1.3 kB row (paper000-fig2a, JSONB; measured with
pg_column_size over a 50,000-run sweep). Admission wrote it 50,000 times and a cancel rewrote
it 50,000 times. Measured with `python -m bench.sweep_admission` on the quiet machine, the
sweep's runs written with an empty scenario instead: 50,000 runs as 5,000 points x 10 accepted
in 2.38 s instead of 3.46 s, cancelled in 1.30 s instead of 1.53 s.

`sweep_points.scenario` holds the point's canonical scenario without its seed; a sweep run's
own `scenario` is null, and its scenario is the point's with the run's `seed`
(`runs.repository.scenarios_of`; the worker's claim reads it so). Runs outside a sweep keep
their own. The existing points are filled from one of their runs; the existing sweep runs keep
their own scenario (readers take a run's own first), so nothing is rewritten but the points.

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-25 21:10:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

CHECK = "ck_runs_scenario_own_or_its_points"


def upgrade() -> None:
    op.add_column(
        "sweep_points",
        sa.Column(
            "scenario",
            postgresql.JSONB(astext_type=sa.Text()),
            nullable=True,
            comment="the canonical scenario without its seed: each of the point's runs is this with its own seed "
            "(null only for a point stored before migration 0012 without runs)",
        ),
    )
    op.execute(
        "UPDATE sweep_points p SET scenario = first.scenario - 'seed' FROM ("
        "SELECT DISTINCT ON (sweep_id, sweep_point) sweep_id, sweep_point, scenario FROM runs "
        "WHERE sweep_id IS NOT NULL ORDER BY sweep_id, sweep_point, replication) AS first "
        'WHERE first.sweep_id = p.sweep_id AND first.sweep_point = p."index"'
    )
    op.alter_column(
        "runs",
        "scenario",
        existing_type=postgresql.JSONB(astext_type=sa.Text()),
        nullable=True,
        comment="the canonical scenario; null for a sweep run: its point's (sweep_points.scenario) "
        "with its own seed (runs.repository.scenarios_of)",
        existing_comment="the canonical scenario",
    )
    op.execute(f"ALTER TABLE runs ADD CONSTRAINT {CHECK} CHECK (scenario IS NOT NULL OR sweep_id IS NOT NULL)")


def downgrade() -> None:
    op.execute(
        "UPDATE runs r SET scenario = p.scenario || jsonb_build_object('seed', r.seed) FROM sweep_points p "
        'WHERE r.scenario IS NULL AND p.sweep_id = r.sweep_id AND p."index" = r.sweep_point'
    )
    op.drop_constraint(op.f(CHECK), "runs", type_="check")
    op.alter_column(
        "runs",
        "scenario",
        existing_type=postgresql.JSONB(astext_type=sa.Text()),
        nullable=False,
        comment="the canonical scenario",
        existing_comment="the canonical scenario; null for a sweep run: its point's (sweep_points.scenario) "
        "with its own seed (runs.repository.scenarios_of)",
    )
    op.drop_column("sweep_points", "scenario")
