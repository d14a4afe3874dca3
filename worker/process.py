"""A Celery worker in a subprocess: started by the launcher, and by the end-to-end tests.

Two kinds: a simulation worker (the simulation queue, `worker_concurrency` processes) and a
control worker (the control queue: the schedules' tick and the reconciler, one process, beat
embedded), so neither ever waits behind the other's tasks (worker/app.py).

Shutdown goes warm, then cold, then kill: SIGTERM lets the running task finish (within
``grace_s``); SIGQUIT stops at once, and kombu puts the unacknowledged task back on the
queue as the connection closes; SIGKILL to the whole process group is the last resort (the
task then comes back after the broker's visibility timeout).
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO

from celery import Celery

from services.settings import REPO_ROOT, Settings, settings_env


class WorkerStartError(RuntimeError):
    pass


class WorkerProcess:
    def __init__(
        self,
        settings: Settings,
        *,
        name: str = "tcplab",
        log_path: Path | None = None,
        extra_args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        beat_schedule: Path | None = None,
        control: bool = False,
    ) -> None:
        self.settings = settings
        self.nodename = f"{name}@{socket.gethostname()}"
        self.log_path = log_path
        self.extra_args = tuple(extra_args)
        # With a schedule file, the worker embeds Celery beat (the periodic tasks): the
        # launcher's control worker does; a lab server runs one such worker (docker-compose.yml).
        self.beat_schedule = beat_schedule
        # The control queue with one process, rather than the simulation queue.
        self.control = control
        self.env = dict(env) if env is not None else {}
        self.proc: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None

    @property
    def command(self) -> list[str]:
        return [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "worker.app",
            "worker",
            "--concurrency",
            "1" if self.control else str(self.settings.worker_concurrency),
            "--loglevel",
            self.settings.log_level,
            "--queues",
            self.settings.control_queue if self.control else self.settings.queue,
            "--hostname",
            self.nodename,
            *(("--beat", "--schedule", str(self.beat_schedule)) if self.beat_schedule else ()),
            *self.extra_args,
        ]

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

    def child_pids(self) -> list[int]:
        """The pool processes (the ones that run tasks)."""
        import psutil

        if self.proc is None:
            return []
        with contextlib.suppress(psutil.Error):
            return [c.pid for c in psutil.Process(self.proc.pid).children()]
        return []

    def start(self) -> WorkerProcess:
        env = {**os.environ, **settings_env(self.settings), **self.env}
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_ROOT), env.get("PYTHONPATH", "")) if p)
        if self.log_path is not None:
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
            self._log = open(self.log_path, "ab")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(
            self.command,
            cwd=REPO_ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT if self._log else None,
            # Its own process group: a Ctrl-C in the terminal reaches the launcher, which
            # then stops the worker in order; and the group can be killed as a whole.
            start_new_session=True,
        )
        return self

    def wait_ready(self, app: Celery, timeout_s: float = 60.0) -> None:
        """Block until the worker answers a remote-control ping."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc is None or self.proc.poll() is not None:
                raise WorkerStartError(
                    f"the Celery worker exited with code {self.proc and self.proc.returncode}{self.log_tail()}"
                )
            with contextlib.suppress(Exception):
                if app.control.ping(destination=[self.nodename], timeout=0.5):
                    return
            time.sleep(0.2)
        raise WorkerStartError(
            f"the Celery worker {self.nodename} did not answer within {timeout_s:g} s{self.log_tail()}"
        )

    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self, grace_s: float = 10.0) -> int | None:
        """Warm shutdown, then cold, then SIGKILL; returns the exit code. Idempotent."""
        if self.proc is None:
            return None
        try:
            for sig, wait_s in ((signal.SIGTERM, grace_s), (signal.SIGQUIT, 5.0)):
                if self.proc.poll() is not None:
                    break
                with contextlib.suppress(ProcessLookupError):
                    self.proc.send_signal(sig)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self.proc.wait(timeout=wait_s)
            if self.proc.poll() is None:
                self.kill()
            self._reap_group()
            return self.proc.returncode
        finally:
            if self._log is not None:
                self._log.close()
                self._log = None

    def kill(self) -> None:
        """SIGKILL to the worker and its pool processes, as a crash would."""
        if self.proc is None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=10)

    def _reap_group(self) -> None:
        # Pool processes outliving their parent would keep running tasks: end them too.
        assert self.proc is not None
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)

    def log_tail(self, lines: int = 40) -> str:
        """The log's last lines, to say in an error what the worker was doing."""
        if self.log_path is None:
            return ""
        with contextlib.suppress(OSError):
            text = self.log_path.read_text(errors="replace").splitlines()[-lines:]
            return f"; last lines of {self.log_path}:\n" + "\n".join(text)
        return ""
