"""The worker process's database: one engine from the process's settings (``DATABASE_URL``, or
the embedded PostgreSQL of ``TCPLAB_STATE_DIR``), shared by its tasks, the reconciler and the
schedules' tick. services/ never fetch it (they take a session or a session factory), and the
API uses its app's engine (``.importlinter`` keeps api off this module)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache

from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from infra.embedded import effective_database_url
from services.db import session as db_session
from services.db.session import create_db_engine, create_session_factory
from services.settings import get_settings


@lru_cache(maxsize=1)
def get_engine() -> Engine:
    """The engine of this process, from its settings."""
    url = effective_database_url(get_settings())
    if url is None:
        raise RuntimeError(
            "DATABASE_URL is not set and no embedded PostgreSQL runs in TCPLAB_STATE_DIR: "
            "start the service with `python -m infra.launch` (make run), or set DATABASE_URL"
        )
    return create_db_engine(url)


@lru_cache(maxsize=1)
def get_session_factory() -> sessionmaker[Session]:
    return create_session_factory(get_engine())


def reset_engine() -> None:
    """Forget the process's engine (after the settings changed); disposes its pool."""
    if get_engine.cache_info().currsize:
        get_engine().dispose()
    get_engine.cache_clear()
    get_session_factory.cache_clear()


@contextmanager
def session_scope() -> Iterator[Session]:
    """A unit of work on the process's database (services.db.session.session_scope)."""
    with db_session.session_scope(get_session_factory()) as session:
        yield session


def _after_fork_in_child() -> None:
    # A forked child (a Celery pool process) must not reuse its parent's connections.
    if get_engine.cache_info().currsize:
        get_engine().dispose(close=False)


os.register_at_fork(after_in_child=_after_fork_in_child)
