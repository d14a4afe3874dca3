"""case-insensitive user names

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-23 21:45:00.000000

`alice` and `ALICE` were two users. A user name is now unique regardless of case: a unique
index on lower(name) replaces the unique constraint on the name as written. Names that already
differ only in case are kept by the oldest user of each group; each later one gets the first
free suffix (`ALICE-2`, `ALICE-3`, ...), logged, so the upgrade never fails on old data. A
user's tokens, runs and quotas do not depend on the name.
"""

import logging
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

log = logging.getLogger("alembic.runtime.migration")

MAX_NAME = 64  # the users.name check constraint's length


def upgrade() -> None:
    """Upgrade schema."""
    conn = op.get_bind()
    users = conn.execute(sa.text("SELECT id, name FROM users ORDER BY created_at, id")).all()
    taken = {name.lower() for _, name in users}
    kept: set[str] = set()
    for user_id, name in users:
        if name.lower() not in kept:
            kept.add(name.lower())
            continue
        renamed = _free_name(name, taken)
        taken.add(renamed.lower())
        conn.execute(sa.text("UPDATE users SET name = :name WHERE id = :id"), {"name": renamed, "id": user_id})
        log.warning("user %s renamed %r -> %r: user names are now unique regardless of case", user_id, name, renamed)
    op.drop_constraint(op.f("uq_users_name"), "users", type_="unique")
    op.create_index("uq_users_name_lower", "users", [sa.text("lower(name)")], unique=True)


def _free_name(name: str, taken: set[str]) -> str:
    n = 2
    while True:
        suffix = f"-{n}"
        candidate = name[: MAX_NAME - len(suffix)] + suffix
        if candidate.lower() not in taken:
            return candidate
        n += 1


def downgrade() -> None:
    """Downgrade schema."""
    op.drop_index("uq_users_name_lower", table_name="users")
    op.create_unique_constraint(op.f("uq_users_name"), "users", ["name"])
