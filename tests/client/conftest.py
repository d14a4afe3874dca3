"""Fixtures for the client tests: the SDK aimed at the launched service (``python -m
infra.launch``: real PostgreSQL, Redis and worker), and an empty config/environment so neither
a developer's `tcplab login` nor their TCPLAB_URL/TCPLAB_TOKEN leaks into a test."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from tcplab_client import Client
from tests.support import LaunchedService


@pytest.fixture(autouse=True)
def isolated_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty XDG config folder; no TCPLAB_URL / TCPLAB_TOKEN. Returns the folder."""
    folder = tmp_path / "xdg"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(folder))
    monkeypatch.delenv("TCPLAB_URL", raising=False)
    monkeypatch.delenv("TCPLAB_TOKEN", raising=False)
    return folder


@pytest.fixture
def lab(launched_service: LaunchedService) -> Iterator[Client]:
    with Client(launched_service.base_url, token=launched_service.token) as client:
        yield client


@pytest.fixture(scope="session")
def session_seed() -> int:
    """A seed of this session, so a scenario's first submission here is simulated (the
    launched service's database lives for the session, but a rerun must not find it)."""
    return random.randrange(1_000_000, 2**31)
