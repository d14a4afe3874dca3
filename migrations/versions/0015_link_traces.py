"""named link traces: Mahimahi traces stored in PostgreSQL, by owner and name (issue 18)

A scenario's link follows a trace by name (`"trace": {"name": ...}`); the service never reads
a path a user gives. A row holds the canonical text zlib-compressed, its sha256 (what the
canonical scenario and the cache key carry), and what a list shows (lines, span, mean rate).
Names are unique per owner. The lab's built-in traces have no row: they ship with the code
(services/traces/builtin.py), one source that cannot drift from a copy in the database, and a
new one needs no migration. A new, empty table: no existing row is touched.

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-26 22:50:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "link_traces",
        sa.Column("id", sa.Uuid(), server_default=sa.text("gen_random_uuid()"), nullable=False),
        sa.Column("owner_id", sa.Uuid(), nullable=False),
        sa.Column("name", sa.Text(), nullable=False, comment="unique per owner"),
        sa.Column("sha256", sa.Text(), nullable=False, comment="sha256 (hex) of the canonical text"),
        sa.Column("content", sa.LargeBinary(), nullable=False, comment="the canonical text, zlib-compressed"),
        sa.Column("text_bytes", sa.BigInteger(), nullable=False, comment="length of the canonical text (quota)"),
        sa.Column("lines", sa.BigInteger(), nullable=False, comment="delivery opportunities in one pass"),
        sa.Column("span_ms", sa.BigInteger(), nullable=False, comment="the loop period: the last line's millisecond"),
        sa.Column("mean_mbps", sa.Double(), nullable=False, comment="lines x 1500 B x 8 / span"),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.CheckConstraint("lines >= 1 AND span_ms >= 1 AND text_bytes >= 2", name=op.f("ck_link_traces_not_empty")),
        sa.CheckConstraint("name ~ '^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$'", name=op.f("ck_link_traces_name_format")),
        sa.CheckConstraint("sha256 ~ '^[0-9a-f]{64}$'", name=op.f("ck_link_traces_sha256_hex")),
        sa.ForeignKeyConstraint(
            ["owner_id"], ["users.id"], name=op.f("fk_link_traces_owner_id_users"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_link_traces")),
    )
    op.create_index("uq_link_traces_owner_name", "link_traces", ["owner_id", "name"], unique=True)
    op.create_index("ix_link_traces_sha256", "link_traces", ["sha256"])


def downgrade() -> None:
    op.drop_table("link_traces")
