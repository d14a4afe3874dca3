"""``python -m infra.launch`` (``make run``): the one command that runs tcplab.

With nothing configured it starts an embedded PostgreSQL and Redis in ``TCPLAB_STATE_DIR``,
applies the migrations, starts two Celery workers (subprocesses, restarted if they die) — the
simulation worker and the control worker (one process, Celery beat embedded: the schedules'
tick and the reconciler, on a queue of their own so they never wait behind simulations) —
and serves the API with uvicorn on ``TCPLAB_HOST:TCPLAB_PORT``. With ``DATABASE_URL`` /
``REDIS_URL`` set it uses those servers instead. Ctrl-C or SIGTERM stops the API, then the
workers (letting a running task finish for a few seconds), then the embedded servers.

``--no-worker`` serves the API alone (the lab server's api container, whose workers run in
containers of their own).

The API is served by ``TCPLAB_API_PROCESSES`` processes (2 by default) on one listening
socket: the launcher itself and helpers it starts (``--serve-fd``), restarted like the workers
if they die and stopping on their own if the launcher dies. One Python process answers on one
core at a time (issue 12: 8 clients, one process, 270-290 requests/s with the core it runs on
busy); the request-latency histogram of ``/metrics`` is summed over them (prometheus_client's
multiprocess mode, files in ``state_dir/metrics``).
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

from pydantic import SecretStr, ValidationError

from services.settings import REPO_ROOT, Settings, get_settings, settings_env

if TYPE_CHECKING:
    from worker.process import WorkerProcess

log = logging.getLogger("tcplab.launch")

WORKER_SHUTDOWN_GRACE_S = 10.0
# Workers that die more often than this (together) are not restarted again: the service stops.
WORKER_RESTARTS = 5
WORKER_RESTART_WINDOW_S = 300.0


class Shutdown(BaseException):
    """Raised in the main thread by SIGINT / SIGTERM (a BaseException, like KeyboardInterrupt,
    so that no `except Exception` on the way swallows it)."""


class LaunchError(RuntimeError):
    pass


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m infra.launch",
        description="Run tcplab: embedded or external PostgreSQL and Redis, migrations, a "
        "worker and the API. Configured by TCPLAB_* variables, DATABASE_URL and REDIS_URL.",
    )
    parser.add_argument("--no-worker", action="store_true", help="serve the API without workers")
    # The launcher's helper API processes: the listening socket they inherit.
    parser.add_argument("--serve-fd", type=int, help=argparse.SUPPRESS)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)

    try:
        settings = get_settings()
    except ValidationError as exc:
        print(f"tcplab: invalid settings:\n{exc}", file=sys.stderr)
        return 2
    _configure_logging(settings)

    stopping = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        if stopping.is_set():
            log.info("already stopping (%s)", signal.Signals(signum).name)
            return
        stopping.set()
        raise Shutdown(signal.Signals(signum).name)

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)

    try:
        if args.serve_fd is not None:
            return _serve_inherited_socket(settings, args.serve_fd)
        return _run(settings, with_worker=not args.no_worker, stopping=stopping)
    except Shutdown as exc:
        log.info("stopped (%s)", exc)
        return 0
    except LaunchError as exc:
        log.error("%s", exc)
        return 1


def _run(settings: Settings, *, with_worker: bool, stopping: threading.Event) -> int:
    with ExitStack() as stack:
        try:
            return _start_and_serve(settings, stack, with_worker=with_worker)
        finally:
            stopping.set()  # from here on a signal no longer interrupts the clean-up


def _start_and_serve(settings: Settings, stack: ExitStack, *, with_worker: bool) -> int:
    import uvicorn

    from infra.embedded import EmbeddedServerError, EmbeddedServices, StateLock
    from services.db.migrate import upgrade_to_head

    description = _describe_servers(settings)
    if settings.uses_embedded_postgres or settings.uses_embedded_redis:
        try:
            stack.enter_context(StateLock(settings.state_dir))
        except EmbeddedServerError as exc:
            raise LaunchError(str(exc)) from None
        _stop_leftover_api_processes(settings)
        _check_port_free(settings.host, settings.port)
        embedded = EmbeddedServices(
            settings.state_dir,
            postgres=settings.uses_embedded_postgres,
            redis=settings.uses_embedded_redis,
        )
        stack.callback(embedded.stop)  # also after a partial start
        log.info("starting the embedded servers in %s", settings.state_dir)
        try:
            database_url, redis_url = embedded.start()
        except EmbeddedServerError as exc:
            raise LaunchError(str(exc)) from None
        settings = settings.model_copy(
            update={
                "database_url": settings.database_url or database_url,
                "redis_url": settings.redis_url or redis_url,
            }
        )
    else:
        _stop_leftover_api_processes(settings)
        _check_port_free(settings.host, settings.port)
    settings = _with_admin_token(settings)
    # This process and its children now see the servers' URLs through get_settings().
    os.environ.update(settings_env(settings))
    get_settings.cache_clear()

    assert settings.database_url is not None
    log.info("applying migrations")
    upgrade_to_head(settings.database_url)

    if settings.api_processes > 1:
        _share_request_metrics(settings.state_dir / "metrics")  # before prometheus_client loads
    from api.main import create_app
    from worker.app import configure

    configure(settings)  # the API sends its tasks to this broker

    listening = _listen(settings.host, settings.port)
    stack.callback(listening.close)
    server = uvicorn.Server(
        uvicorn.Config(
            create_app(settings),
            host=settings.host,
            port=settings.port,
            log_level=settings.log_level,
            log_config=None,  # keep the logging configured here
        )
    )
    supervisor = _Supervisor(settings, server, with_worker=with_worker, servers=description, listening=listening)
    stack.callback(supervisor.stop)
    supervisor.start()
    server.run(sockets=[listening])
    return 1 if supervisor.failed else 0


def _listen(host: str, port: int) -> socket.socket:
    """The API's listening socket, shared by its processes (they inherit it)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise LaunchError(
            f"cannot listen on {host}:{port} ({exc.strerror}): another program uses it; choose another TCPLAB_PORT"
        ) from None
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def _share_request_metrics(directory: Path) -> None:
    """prometheus_client's multiprocess mode for this process and the API processes it starts:
    each writes its request latencies to a file there, and /metrics sums them. Emptied first:
    a previous launch's counts are not this one's."""
    if "prometheus_client" in sys.modules:
        raise RuntimeError("prometheus_client was imported before its multiprocess directory was set")
    import shutil

    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(parents=True)
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = str(directory)


class ApiProcess:
    """One of the launcher's helper API processes, serving on the listening socket it inherits."""

    def __init__(self, listening: socket.socket, index: int, pid_file: Path) -> None:
        self.listening = listening
        self.index = index
        self.pid_file = pid_file
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def name(self) -> str:
        return f"API process {self.index}"

    def start(self) -> None:
        fd = self.listening.fileno()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "infra.launch", "--serve-fd", str(fd)],
            cwd=REPO_ROOT,
            stdin=subprocess.DEVNULL,
            pass_fds=(fd,),
            start_new_session=True,  # a Ctrl-C reaches the launcher, which stops it in order
        )
        self.pid_file.parent.mkdir(parents=True, exist_ok=True)
        self.pid_file.write_text(f"{self.proc.pid}\n")

    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self, grace_s: float) -> None:
        """SIGTERM (uvicorn finishes the requests under way), then SIGKILL."""
        if self.proc is not None and self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                self.proc.terminate()
            try:
                self.proc.wait(timeout=grace_s)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.pid_file.unlink(missing_ok=True)


def _serve_inherited_socket(settings: Settings, fd: int) -> int:
    """A helper API process (``--serve-fd``): the app on the launcher's listening socket, until
    SIGTERM — or until the launcher is gone (killed outright, it cannot stop us)."""
    import uvicorn

    from api.main import create_app
    from worker.app import configure

    configure(settings)
    launcher = os.getppid()

    def stop_when_orphaned() -> None:
        while os.getppid() == launcher:
            time.sleep(0.5)
        log.warning("the launcher (pid %d) is gone: stopping", launcher)
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=stop_when_orphaned, name="tcplab-orphan-watch", daemon=True).start()
    listening = socket.socket(fileno=fd)
    server = uvicorn.Server(uvicorn.Config(create_app(settings), log_level=settings.log_level, log_config=None))
    server.run(sockets=[listening])
    return 0


@dataclass(frozen=True)
class _Role:
    """One of the launcher's workers: its node name, pid file and kind."""

    name: str
    pid_file: Path
    control: bool
    beat_schedule: Path | None = None


class _Supervisor(threading.Thread):
    """Keeps the simulation and control workers running beside the API, and announces the
    API once it listens."""

    def __init__(
        self,
        settings: Settings,
        server: object,
        *,
        with_worker: bool,
        servers: str,
        listening: socket.socket,
    ) -> None:
        super().__init__(name="tcplab-supervisor", daemon=True)
        self.settings = settings
        self.server = server
        self.with_worker = with_worker
        self.servers = servers
        self.failed = False
        self.workers: dict[_Role, WorkerProcess] = {}
        self.api_processes = [
            ApiProcess(listening, i, settings.state_dir / f"api-{settings.port}-{i}.pid")
            for i in range(2, settings.api_processes + 1)
        ]
        self._done = threading.Event()
        self._restarts: deque[float] = deque()
        self._lock = threading.Lock()

    @property
    def roles(self) -> tuple[_Role, ...]:
        port, state = self.settings.port, self.settings.state_dir
        return (
            _Role(f"tcplab-{port}", state / f"worker-{port}.pid", control=False),
            # Beat inside the control worker: the schedules and the reconciler run on a lab of
            # one machine too.
            _Role(
                f"tcplab-{port}-control",
                state / f"control-{port}.pid",
                control=True,
                beat_schedule=state / f"celerybeat-{port}",
            ),
        )

    def _start_worker(self, role: _Role) -> None:
        from worker.process import WorkerProcess

        with self._lock:
            if self._done.is_set():
                return
            previous = self.workers.get(role)
            if previous is not None:
                previous.stop(grace_s=0)  # reaps the pool processes of a dead worker
            else:
                _stop_leftover_worker(role.pid_file, role.name)
            worker = WorkerProcess(
                self.settings, name=role.name, beat_schedule=role.beat_schedule, control=role.control
            )
            self.workers[role] = worker
            worker.start()
            role.pid_file.parent.mkdir(parents=True, exist_ok=True)
            role.pid_file.write_text(f"{worker.pid}\n")
            log.info("worker started (pid %d): %s", worker.pid, " ".join(worker.command[1:]))

    def _start_api_process(self, api: ApiProcess) -> None:
        with self._lock:
            if self._done.is_set():
                return
            api.start()
            assert api.proc is not None
            log.info("%s started (pid %d)", api.name, api.proc.pid)

    def run(self) -> None:
        for api in self.api_processes:
            self._start_api_process(api)
        if self.with_worker:
            for role in self.roles:
                self._start_worker(role)
        announced = False
        while not self._done.wait(0.5):
            if not announced and getattr(self.server, "started", False):
                announced = True
                _announce(self.settings, self.with_worker, self.servers)
            for role, worker in list(self.workers.items()):
                if worker.running() or self._done.is_set():
                    continue
                if not self._may_restart(f"the worker {worker.nodename}", worker.proc):
                    return
                self._start_worker(role)
            for api in self.api_processes:
                if api.running() or self._done.is_set():
                    continue
                if not self._may_restart(api.name, api.proc):
                    return
                self._start_api_process(api)

    def _may_restart(self, name: str, proc: subprocess.Popen[bytes] | None) -> bool:
        """Counts a restart; False (and the service stops) past the allowed rate."""
        code = proc.returncode if proc else None
        now = time.monotonic()
        while self._restarts and now - self._restarts[0] > WORKER_RESTART_WINDOW_S:
            self._restarts.popleft()
        if len(self._restarts) >= WORKER_RESTARTS:
            log.error(
                "the workers and API processes exited (%s: code %s) %d times within %g s: stopping tcplab",
                name,
                code,
                WORKER_RESTARTS,
                WORKER_RESTART_WINDOW_S,
            )
            self.failed = True
            self.server.should_exit = True  # type: ignore[attr-defined]
            return False
        self._restarts.append(now)
        log.warning("%s exited (code %s): starting a new one", name, code)
        return True

    def stop(self) -> None:
        with self._lock:
            self._done.set()
        if self.is_alive():
            self.join(timeout=5)
        # Both at once: each may take the grace period to finish its task.
        stopping = [
            threading.Thread(target=api.stop, kwargs={"grace_s": WORKER_SHUTDOWN_GRACE_S}) for api in self.api_processes
        ]
        for thread in stopping:
            thread.start()
        for worker in self.workers.values():
            if worker.running():
                log.info(
                    "stopping the worker %s (up to %g s for a running task)", worker.nodename, WORKER_SHUTDOWN_GRACE_S
                )
            thread = threading.Thread(target=worker.stop, kwargs={"grace_s": WORKER_SHUTDOWN_GRACE_S})
            thread.start()
            stopping.append(thread)
        for thread in stopping:
            thread.join()
        for role in self.workers:
            role.pid_file.unlink(missing_ok=True)


def _stop_leftover_worker(pid_file: Path, name: str) -> None:
    """A launcher killed outright leaves its worker running: stop it before starting ours."""
    _stop_leftover(pid_file, "worker", lambda cmdline: "celery" in cmdline and f"{name}@" in cmdline)


def _stop_leftover_api_processes(settings: Settings) -> None:
    """A launcher killed outright leaves its helper API processes holding the port until they
    notice (within a second): stop them before listening on it again."""
    for pid_file in settings.state_dir.glob(f"api-{settings.port}-*.pid"):
        # api.launch: a helper left by a launcher from before the module moved to infra/.
        _stop_leftover(
            pid_file,
            "API process",
            lambda cmdline: ("infra.launch" in cmdline or "api.launch" in cmdline) and "--serve-fd" in cmdline,
        )
        pid_file.unlink(missing_ok=True)


def _stop_leftover(pid_file: Path, what: str, is_ours: Callable[[str], bool]) -> None:
    import psutil

    try:
        proc = psutil.Process(int(pid_file.read_text().strip()))
        cmdline = " ".join(proc.cmdline())
    except (OSError, ValueError, psutil.Error):
        return
    if not is_ours(cmdline):
        return
    from infra.embedded import wait_gone

    log.warning("stopping the %s (pid %d) that a previous launcher left running", what, proc.pid)
    with contextlib.suppress(psutil.Error):
        proc.terminate()
        wait_gone(proc, timeout_s=WORKER_SHUTDOWN_GRACE_S)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)  # it leads its own process group


ADMIN_TOKEN_FILE = "admin-token"


def _with_admin_token(settings: Settings) -> Settings:
    """The bootstrap admin's token: TCPLAB_ADMIN_TOKEN, else the one kept in
    state_dir/admin-token (mode 0600), made on the first launch. Without it nobody could
    create the lab's users."""
    if settings.admin_token is not None:
        return settings
    path = settings.state_dir / ADMIN_TOKEN_FILE
    if not path.exists():
        from services.users.tokens import new_token

        settings.state_dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(new_token() + "\n")
        log.info("made the bootstrap admin's token in %s", path)
    return settings.model_copy(update={"admin_token": SecretStr(path.read_text().strip())})


def _announce(settings: Settings, with_worker: bool, servers: str) -> None:
    host = f"[{settings.host}]" if ":" in settings.host else settings.host
    base = f"http://{host}:{settings.port}"
    worker = (
        f"a worker of concurrency {settings.worker_concurrency} and a control worker" if with_worker else "no worker"
    )
    print(
        f"\ntcplab is up ({servers}; {worker})\n"
        f"  API    {base}/\n"
        f"  docs   {base}/docs\n"
        f"  ready  {base}/readyz\n"
        f"{_admin_hint(settings, base)}"
        "Ctrl-C stops it.\n",
        flush=True,
    )


def client_command(python: str = sys.executable, search_path: str | None = None) -> str | None:
    """The `tcplab` command that is really installed: the one beside this Python (its venv's
    bin, where `make install` puts it), else the first on PATH; None when there is none."""
    beside = Path(python).parent / "tcplab"  # not resolved: a venv's python is a symlink
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    found = shutil.which("tcplab", path=search_path if search_path is not None else os.environ.get("PATH"))
    return str(Path(found).absolute()) if found else None


def _admin_hint(settings: Settings, base: str) -> str:
    path = settings.state_dir / ADMIN_TOKEN_FILE
    if not path.exists():
        return "  admin  user 'admin', token from TCPLAB_ADMIN_TOKEN\n"
    command = client_command()
    if command is None:
        return (
            f"  admin  user 'admin', token in {path}\n"
            "  client not installed (pip install ./client), then: tcplab login --url "
            f'{base} --token "$(cat {path})"\n'
        )
    return f"  admin  user 'admin': {command} login --url {base} --token \"$(cat {path})\"\n"


def _describe_servers(settings: Settings) -> str:
    pg = "embedded" if settings.uses_embedded_postgres else "external"
    redis = "embedded" if settings.uses_embedded_redis else "external"
    where = f" in {settings.state_dir}" if "embedded" in (pg, redis) else ""
    if pg == redis:
        return f"{pg} PostgreSQL and Redis{where}"
    return f"{pg} PostgreSQL, {redis} Redis{where}"


def _check_port_free(host: str, port: int) -> None:
    """Refuses a port in use before anything is started (the API listens on it later)."""
    _listen(host, port).close()


def _configure_logging(settings: Settings) -> None:
    logging.basicConfig(
        level=settings.log_level.upper(),
        format="%(asctime)s %(levelname)-7s %(name)s: %(message)s",
        datefmt="%H:%M:%S",
    )
    # pgserver logs every command it runs, and alembic every plugin it loads, at INFO.
    logging.getLogger("pgserver").setLevel(logging.WARNING)
    logging.getLogger("alembic.runtime.plugins").setLevel(logging.WARNING)
    # tcplab's format (JSON lines off a terminal) from the first line, not only once the app
    # is built.
    from infra.logging import configure_logging

    configure_logging(settings.log_level)


if __name__ == "__main__":
    sys.exit(main())
