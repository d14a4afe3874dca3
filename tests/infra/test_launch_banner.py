"""The launch banner names the `tcplab` client really installed (issue 15): the one beside the
server's Python (its venv's bin), else the first on PATH, else says how to install it."""

from __future__ import annotations

import sys
from pathlib import Path

from infra.launch import client_command
from tests.support import LaunchedService


def _executable(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    return path


def test_the_client_beside_the_python_comes_first_then_the_one_on_path_then_none(tmp_path: Path) -> None:
    venv_python = tmp_path / "venv" / "bin" / "python"
    on_path = _executable(tmp_path / "elsewhere" / "tcplab")
    assert client_command(str(venv_python), search_path=str(on_path.parent)) == str(on_path)
    beside = _executable(venv_python.parent / "tcplab")
    assert client_command(str(venv_python), search_path=str(on_path.parent)) == str(beside)
    assert client_command(str(tmp_path / "bare" / "python"), search_path=str(tmp_path / "empty")) is None
    beside.chmod(0o644)  # not executable: not a command
    assert client_command(str(venv_python), search_path="") is None


def test_the_launched_services_banner_prints_the_installed_clients_path(launched_service: LaunchedService) -> None:
    installed = Path(sys.executable).parent / "tcplab"
    assert installed.is_file(), "make install puts the client beside the venv's python"
    log = launched_service.log()
    assert f"  admin  user 'admin': {installed} login --url {launched_service.base_url} --token" in log
