"""Alembic: the migrations build exactly the tables of services.db, and go down and up again."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import psycopg
import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from psycopg import sql
from sqlalchemy import create_engine, inspect
from sqlalchemy.engine import make_url
from sqlalchemy.pool import NullPool

from services.db import Base
from services.db.migrate import current_revision, downgrade, head_revision, upgrade_to_head
from services.db.session import sqlalchemy_url

TABLES = {
    "runs",
    "results",
    "flow_results",
    "traces",
    "trace_chunks",
    "sweeps",
    "sweep_points",
    "sweep_aggregates",
    "users",
    "api_tokens",
    "schedules",
    "pending_cancels",
    "link_traces",
}


@pytest.fixture
def scratch_database(postgres_url: str) -> Iterator[str]:
    """A database of its own on the test server, dropped afterwards."""
    name = f"tcplab_migrations_{uuid.uuid4().hex[:8]}"
    try:
        with psycopg.connect(postgres_url, autocommit=True) as conn:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    except psycopg.errors.InsufficientPrivilege:
        pytest.skip("the test database's role may not create databases")
    yield make_url(postgres_url).set(database=name).render_as_string(hide_password=False)
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(name)))


def _tables(url: str) -> set[str]:
    engine = create_engine(sqlalchemy_url(url), poolclass=NullPool)
    try:
        return set(inspect(engine).get_table_names()) - {"alembic_version"}
    finally:
        engine.dispose()


def _drift(url: str) -> list[object]:
    engine = create_engine(sqlalchemy_url(url), poolclass=NullPool)
    try:
        with engine.connect() as conn:
            context = MigrationContext.configure(conn, opts={"compare_type": True})
            return compare_metadata(context, Base.metadata)
    finally:
        engine.dispose()


def test_upgrade_downgrade_upgrade(scratch_database: str) -> None:
    assert current_revision(scratch_database) is None
    upgrade_to_head(scratch_database)
    assert current_revision(scratch_database) == head_revision() is not None
    assert _tables(scratch_database) == TABLES
    upgrade_to_head(scratch_database)  # a no-op when up to date

    downgrade(scratch_database, "base")
    assert current_revision(scratch_database) is None
    assert _tables(scratch_database) == set()

    upgrade_to_head(scratch_database)
    assert _tables(scratch_database) == TABLES


def test_the_migrations_match_the_models(scratch_database: str) -> None:
    """Change a model without a migration (or the reverse) and this fails: write the
    revision with `alembic revision --autogenerate -m "…" --rev-id NNNN`."""
    upgrade_to_head(scratch_database)
    assert _drift(scratch_database) == []


def test_the_session_database_is_at_head(migrated_database: str) -> None:
    assert current_revision(migrated_database) == head_revision()
