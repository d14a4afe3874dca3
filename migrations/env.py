"""Alembic environment: the URL comes from the settings, the metadata from services.db."""

from __future__ import annotations

import logging
from logging.config import fileConfig

from alembic import context
from sqlalchemy import create_engine, text
from sqlalchemy.pool import NullPool

from services.db import Base
from services.db.session import sqlalchemy_url
from services.settings import get_settings

config = context.config
log = logging.getLogger("alembic.env")

if config.config_file_name is not None and config.attributes.get("configure_logger", True):
    fileConfig(config.config_file_name, disable_existing_loggers=False)

target_metadata = Base.metadata

# Any number: every tcplab process that migrates takes this lock first, so that two
# launchers (or an API and a one-off `alembic upgrade`) never migrate at the same time.
MIGRATION_LOCK_ID = 0x7C91AB


def database_url() -> str:
    url = config.get_main_option("sqlalchemy.url")
    if url:
        return url
    settings = get_settings()
    if settings.database_url is not None:
        return sqlalchemy_url(settings.database_url)
    # Nothing configured: the developer's embedded server, as `python -m infra.launch` uses.
    from infra.embedded import EmbeddedPostgres

    log.info("DATABASE_URL is unset: using the embedded PostgreSQL in %s", settings.state_dir)
    return sqlalchemy_url(EmbeddedPostgres(settings.state_dir / "postgres").start())


def run_migrations_offline() -> None:
    context.configure(
        url=database_url(),
        target_metadata=target_metadata,
        literal_binds=True,
        dialect_opts={"paramstyle": "named"},
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    engine = create_engine(database_url(), poolclass=NullPool)
    try:
        with engine.connect() as connection:
            context.configure(connection=connection, target_metadata=target_metadata, compare_type=True)
            with context.begin_transaction():
                connection.execute(text("SELECT pg_advisory_xact_lock(:id)"), {"id": MIGRATION_LOCK_ID})
                context.run_migrations()
    finally:
        engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
