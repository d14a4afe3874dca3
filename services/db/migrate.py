"""Alembic, called from Python: the launcher and the tests migrate with these."""

from __future__ import annotations

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import create_engine
from sqlalchemy.pool import NullPool

from services.db.session import sqlalchemy_url
from services.settings import REPO_ROOT

ALEMBIC_INI = REPO_ROOT / "alembic.ini"


def alembic_config(url: str) -> Config:
    """The repository's Alembic configuration, aimed at ``url``."""
    config = Config(str(ALEMBIC_INI))
    config.set_main_option("script_location", str(REPO_ROOT / "migrations"))
    # ConfigParser interpolates '%': a password with one must be doubled.
    config.set_main_option("sqlalchemy.url", sqlalchemy_url(url).replace("%", "%%"))
    # Leave the caller's logging alone (env.py reads the ini's loggers only from the CLI).
    config.attributes["configure_logger"] = False
    return config


def upgrade_to_head(url: str) -> None:
    """Apply every migration not yet applied (a no-op on an up-to-date database)."""
    command.upgrade(alembic_config(url), "head")


def downgrade(url: str, revision: str = "base") -> None:
    command.downgrade(alembic_config(url), revision)


def current_revision(url: str) -> str | None:
    engine = create_engine(sqlalchemy_url(url), poolclass=NullPool)
    try:
        with engine.connect() as conn:
            return MigrationContext.configure(conn).get_current_revision()
    finally:
        engine.dispose()


def head_revision() -> str | None:
    return ScriptDirectory.from_config(alembic_config("postgresql://localhost/x")).get_current_head()
