"""Engines and sessions.

Who commits: never a service or a repository. The boundary does — the API's ``SessionDep``
(api/deps.py) commits when the endpoint returns, and a worker task commits by leaving
``session_scope()``. Work that must only happen once the rows are committed (sending a task
to the queue, above all) is registered with :func:`run_after_commit`.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DisconnectionError
from sqlalchemy.orm import Session, SessionTransaction, sessionmaker
from sqlalchemy.pool import ConnectionPoolEntry

_AFTER_COMMIT = "tcplab.after_commit"


def sqlalchemy_url(url: str) -> str:
    """The URL with the psycopg 3 driver (``postgres://`` and ``postgresql://`` are accepted)."""
    parsed = make_url(url)
    if parsed.drivername in ("postgres", "postgresql"):
        parsed = parsed.set(drivername="postgresql+psycopg")
    if parsed.drivername != "postgresql+psycopg":
        raise ValueError(f"not a PostgreSQL URL for psycopg 3: {parsed.drivername}://…")
    return parsed.render_as_string(hide_password=False)


def create_db_engine(url: str, **kwargs: object) -> Engine:
    """An engine for ``url``: pooled connections pinged after a pause (``_ping_if_idle``), a
    connect timeout, strict JSON."""
    options: dict[str, object] = {
        "connect_args": {"connect_timeout": 5, "application_name": "tcplab"},
        # NaN or infinity in a JSON column is a bug upstream: refuse it here, clearly.
        "json_serializer": partial(json.dumps, allow_nan=False),
    }
    options.update(kwargs)
    engine = create_engine(sqlalchemy_url(url), **options)
    event.listen(engine, "checkout", _ping_if_idle)
    event.listen(engine, "checkin", _note_checkin)
    return engine


PING_AFTER_IDLE_S = 1.0
"""A pooled connection unused this long is pinged before it is handed out (a PostgreSQL
restarted meanwhile has closed it: the pool then opens another). SQLAlchemy's pool_pre_ping
pinged on every checkout — a round trip before every transaction, a request's or a worker's.
One in use moments ago is handed out as it is: should PostgreSQL restart under load, the
first statement on it fails (the API answers 503, a worker retries) and the pool discards
every connection from before."""

_LAST_CHECKIN = "tcplab.last_checkin"


def _note_checkin(dbapi_connection: object, record: ConnectionPoolEntry) -> None:
    record.info[_LAST_CHECKIN] = time.monotonic()


def _ping_if_idle(dbapi_connection: Any, record: ConnectionPoolEntry, proxy: object) -> None:
    if time.monotonic() - record.info.get(_LAST_CHECKIN, -math.inf) < PING_AFTER_IDLE_S:
        return
    try:
        with dbapi_connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        if not dbapi_connection.autocommit:
            dbapi_connection.rollback()  # psycopg opened a transaction for the ping
    except Exception as exc:  # the server closed it: the pool opens another and tries again
        raise DisconnectionError(f"a pooled connection failed its ping: {exc}") from exc


def create_session_factory(engine: Engine) -> sessionmaker[Session]:
    # expire_on_commit=False: objects stay readable after the boundary has committed.
    return sessionmaker(bind=engine, expire_on_commit=False, autoflush=True)


@contextmanager
def session_scope(factory: sessionmaker[Session]) -> Iterator[Session]:
    """A unit of work for tasks and scripts, in a session of ``factory`` (passed, never the
    process's: a worker's is worker/db.py's): commits on success, rolls back on error."""
    session = factory()
    try:
        yield session
        session.commit()
    except BaseException:
        session.rollback()
        raise
    finally:
        session.close()


# ------------------------------------------------------------------------ after commit


def run_after_commit(session: Session, callback: Callable[[], object]) -> None:
    """Call ``callback`` once the session's current transaction has committed.

    For enqueueing: ``run_after_commit(session, lambda: simulate.delay(str(run.id)))`` sends
    the id only when the run's row is visible to the worker. A rollback drops the callbacks,
    and so does a savepoint (``begin_nested``) that is released: only the outermost commit
    runs them. They run in registration order; an exception in one propagates out of
    ``commit()`` (the rows are committed by then) and the rest are skipped.
    """
    if not session.in_transaction():
        session.begin()  # so that a rollback before any SQL still drops the callback
    session.info.setdefault(_AFTER_COMMIT, []).append(callback)


@event.listens_for(Session, "after_commit")
def _run_after_commit_callbacks(session: Session) -> None:
    if session.in_nested_transaction():  # a savepoint was released, not the transaction
        return
    callbacks = session.info.pop(_AFTER_COMMIT, [])
    for callback in callbacks:
        callback()


@event.listens_for(Session, "after_transaction_end")
def _drop_after_commit_callbacks(session: Session, transaction: SessionTransaction) -> None:
    if transaction.parent is None:  # the outermost transaction ended: committed or not
        session.info.pop(_AFTER_COMMIT, None)
