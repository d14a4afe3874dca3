"""Helpers for tests (fixtures live in conftest.py)."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from services.settings import REPO_ROOT


def wait_for(predicate: Callable[[], Any], timeout_s: float = 30.0, interval_s: float = 0.1) -> Any:
    """Poll ``predicate`` until it returns something truthy; fail after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"condition not met within {timeout_s:g} s: {predicate}")
        time.sleep(interval_s)


SESSION_APPS: list[Any] = []
"""The apps tests/conftest.py's session-long `app` fixture made (here, not there: that module
may be imported twice, as conftest and as tests.conftest)."""


# ------------------------------------------------------------------ the launched service


def free_port() -> int:
    with contextlib.closing(socket.socket()) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class LaunchedService:
    base_url: str
    state_dir: Path
    log_path: Path
    process: subprocess.Popen[bytes]
    log_offset: int = 0

    @property
    def token(self) -> str:
        """The bootstrap admin's token, which the launcher made in the state folder."""
        return (self.state_dir / "admin-token").read_text().strip()

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    def log(self) -> str:
        """What this launcher (and its worker) printed."""
        with open(self.log_path, "rb") as handle:
            handle.seek(self.log_offset)
            return handle.read().decode(errors="replace")


def launch_service(state_dir: Path, port: int, *, timeout_s: float = 90.0, **env: str) -> LaunchedService:
    """Start ``python -m infra.launch`` with nothing configured, as the README says; return once
    /readyz answers 200 and the worker is up."""
    import httpx

    environment = {
        k: v for k, v in os.environ.items() if not k.startswith("TCPLAB_") and k not in ("DATABASE_URL", "REDIS_URL")
    }
    environment.update(TCPLAB_STATE_DIR=str(state_dir), TCPLAB_PORT=str(port), **env)
    state_dir.mkdir(parents=True, exist_ok=True)
    log_path = state_dir / "launch.log"
    offset = log_path.stat().st_size if log_path.exists() else 0
    with open(log_path, "ab") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "infra.launch"],
            cwd=REPO_ROOT,
            env=environment,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    service = LaunchedService(f"http://127.0.0.1:{port}", state_dir, log_path, process, offset)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"infra.launch exited with {process.returncode}:\n{service.log()}")
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(f"{service.base_url}/readyz", timeout=2).status_code == 200 and (
                " ready." in service.log()  # the worker's own "tcplab-<port>@host ready."
            ):
                return service
        time.sleep(0.25)
    process.kill()
    raise AssertionError(f"infra.launch not ready within {timeout_s:g} s:\n{service.log()}")


def stop_service(service: LaunchedService, timeout_s: float = 60.0) -> int:
    if service.process.poll() is None:
        service.process.terminate()
        try:
            service.process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            service.process.kill()
            service.process.wait()
    return service.process.returncode


# ------------------------------------------------------------------------------ users


def make_user(client: Any, name: str, **fields: Any) -> str:
    """Creates a user through the API (``client`` signed in as an admin); returns their token."""
    response = client.post("/v1/users", json={"name": name, **fields})
    assert response.status_code == 201, response.text
    return response.json()["token"]["token"]


def user_client(app: Any, token: str) -> Any:
    """A TestClient of ``app`` signed in with ``token`` (close it, or use it in ``with``)."""
    from fastapi.testclient import TestClient

    return TestClient(app, headers={"Authorization": f"Bearer {token}"})
