"""What the lab keeps on disk and in its user table stays private and unambiguous (issue 11,
finding 7): the embedded Redis's files are readable by this user only, and migration 0007 makes
user names unique regardless of case without losing a user."""

from __future__ import annotations

import stat
import uuid
from pathlib import Path

import psycopg
from alembic import command

from infra import broker
from infra.embedded import EmbeddedRedis
from services.db.migrate import alembic_config, upgrade_to_head
from tests.infra.test_migrations import scratch_database  # noqa: F401 - the fixture


def test_the_embedded_redis_keeps_its_files_to_this_user(tmp_path: Path) -> None:
    directory = tmp_path / "redis"
    directory.mkdir(mode=0o755)  # as an older start, or a umask of 022, left it
    server = EmbeddedRedis(directory)
    url = server.start()
    try:
        client = broker.redis_client(url)
        client.set("k", "v")
        client.bgrewriteaof()
        client.save()  # the dump too
        client.close()
    finally:
        server.stop()
    files = [p for p in directory.rglob("*") if p.name != "redis.conf"]
    assert any("appendonly" in p.name for p in files), files
    assert any(p.name.endswith(".rdb") for p in files), files
    loose = {
        str(p.relative_to(directory)): oct(stat.S_IMODE(p.stat().st_mode))
        for p in files
        if stat.S_IMODE(p.stat().st_mode) & 0o077
    }
    assert loose == {}, loose
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700


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
