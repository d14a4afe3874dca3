"""What the lab keeps in its user table stays unambiguous (issue 11, finding 7): migration 0007
makes user names unique regardless of case without losing a user."""

from __future__ import annotations

import uuid

import psycopg
from alembic import command

from services.db.migrate import alembic_config, upgrade_to_head
from tests.infra.test_migrations import scratch_database  # noqa: F401 - the fixture


def test_migration_0007_renames_names_that_differ_only_in_case_and_keeps_every_user(
    scratch_database: str,  # noqa: F811
) -> None:
    command.upgrade(alembic_config(scratch_database), "0006")
    names = ["alice", "ALICE", "Alice", "alice-2", "bob", "b" * 64, "B" * 64]
    with psycopg.connect(scratch_database, autocommit=True) as conn:
        for i, name in enumerate(names):  # created in this order, a second apart
            conn.execute(
                "INSERT INTO users (id, name, created_at) VALUES (%s, %s, now() + %s * interval '1 second')",
                (uuid.uuid4(), name, i),
            )
    upgrade_to_head(scratch_database)
    with psycopg.connect(scratch_database, autocommit=True) as conn:
        after = [row[0] for row in conn.execute("SELECT name FROM users ORDER BY created_at")]
        assert after == ["alice", "ALICE-3", "Alice-4", "alice-2", "bob", "b" * 64, "B" * 62 + "-2"]
        try:
            conn.execute("INSERT INTO users (name) VALUES ('BOB')")
        except psycopg.errors.UniqueViolation as exc:
            assert "uq_users_name_lower" in str(exc)
        else:
            raise AssertionError("BOB was stored beside bob")
