"""fast admission: a cheaper check of runs.cache_key

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-24 01:50:00.000000

Issue 12's admission stores a 50,000-run sweep in one request, and a cancel rewrites every one
of its rows; PostgreSQL evaluates each CHECK constraint on every row written. The cache key's
check was the regular expression `^[0-9a-f]{64}$`, whose counted repetition cost 5.5 µs a row
(a quarter of the row's bare insert; measured by COPY of 50,000 keys). The same rule, as
`octet_length(cache_key) = 64 AND cache_key !~ '[^0-9a-f]'` (64 bytes, none outside 0-9a-f:
exactly 64 lowercase hex digits), costs 0.7 µs. Same name, same rows accepted.

Nothing else: the runs are written by COPY and cancelled by one UPDATE through the existing
index on (sweep_id, sweep_point, replication); no index was missing.
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

NAME = "ck_runs_cache_key_sha256"
FAST = "octet_length(cache_key) = 64 AND cache_key !~ '[^0-9a-f]'"
REGEX = "cache_key ~ '^[0-9a-f]{64}$'"


def _replace(condition: str) -> None:
    # NOT VALID, then VALIDATE: the check of the existing rows holds a lighter lock.
    op.drop_constraint(op.f(NAME), "runs", type_="check")
    op.execute(f"ALTER TABLE runs ADD CONSTRAINT {NAME} CHECK ({condition}) NOT VALID")
    op.execute(f"ALTER TABLE runs VALIDATE CONSTRAINT {NAME}")


def upgrade() -> None:
    """Upgrade schema."""
    _replace(FAST)


def downgrade() -> None:
    """Downgrade schema."""
    _replace(REGEX)
