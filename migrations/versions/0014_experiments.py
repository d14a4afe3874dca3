"""experiment management: tags, a note and archiving on runs and sweeps

Researchers find their runs and sweeps again by tags (`tags @> ARRAY[...]`, GIN-indexed),
note why they made them (`note`, at most 10,000 characters), and hide the ones they are done
with (`archived_at`: the default lists leave them out; restorable). A parameter's value is
searched in a standalone run's scenario with a jsonpath (`scenario @@ '$.duration_s == 20'`),
which `ix_runs_scenario_path` (GIN, jsonb_path_ops) answers; a sweep run's scenario is its
point's (docs/experiments.md). Adding nullable columns, and array columns with a constant
default, rewrites no row; the GIN indexes are built from the existing rows.

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-26 10:40:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TABLES = ("runs", "sweeps")
ARCHIVED_COMMENT = {
    "runs": "hidden from the default lists since (null: not archived)",
    "sweeps": "hidden from the default lists since, its runs with it (null: not archived)",
}


def upgrade() -> None:
    for table in TABLES:
        op.add_column(
            table,
            sa.Column(
                "tags",
                postgresql.ARRAY(sa.Text()),
                server_default=sa.text("'{}'::text[]"),
                nullable=False,
                comment="labels to find it by (docs/experiments.md)",
            ),
        )
        op.add_column(table, sa.Column("note", sa.Text(), nullable=True, comment="the owner's free text about it"))
        op.add_column(
            table,
            sa.Column("archived_at", sa.DateTime(timezone=True), nullable=True, comment=ARCHIVED_COMMENT[table]),
        )
        op.create_check_constraint(op.f(f"ck_{table}_tags_count"), table, "cardinality(tags) <= 32")
        op.create_check_constraint(op.f(f"ck_{table}_note_length"), table, "note IS NULL OR char_length(note) <= 10000")
        op.create_index(op.f(f"ix_{table}_tags"), table, ["tags"], postgresql_using="gin")
        op.create_index(
            f"ix_{table}_archived", table, ["archived_at"], postgresql_where=sa.text("archived_at IS NOT NULL")
        )
    op.create_index(
        "ix_runs_scenario_path",
        "runs",
        ["scenario"],
        postgresql_using="gin",
        postgresql_ops={"scenario": "jsonb_path_ops"},
    )


def downgrade() -> None:
    op.drop_index("ix_runs_scenario_path", table_name="runs")
    for table in reversed(TABLES):
        op.drop_index(f"ix_{table}_archived", table_name=table)
        op.drop_index(op.f(f"ix_{table}_tags"), table_name=table)
        op.drop_constraint(op.f(f"ck_{table}_note_length"), table, type_="check")
        op.drop_constraint(op.f(f"ck_{table}_tags_count"), table, type_="check")
        op.drop_column(table, "archived_at")
        op.drop_column(table, "note")
        op.drop_column(table, "tags")
