"""``python -m infra.launch``, the README's run command, as a user runs it."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import uuid
from pathlib import Path

import httpx
import psutil
from celery import Celery

from infra import broker
from infra.embedded import EmbeddedRedis, wait_gone
from services.settings import REPO_ROOT
from tests.support import LaunchedService, free_port, launch_service, stop_service, wait_for


def _ping_through(service: LaunchedService) -> dict[str, object]:
    """Send the ping task to the service's own broker and read the worker's answer."""
    url = EmbeddedRedis(service.state_dir / "redis").url
    client_app = Celery("probe", broker=broker.kombu_url(url), set_as_current=False)
    key = f"tcplab:test:ping:{uuid.uuid4().hex}"
    client_app.send_task("tcplab.ping", args=[key], queue="tcplab")
    redis = broker.redis_client(url)
    try:
        return json.loads(wait_for(lambda: redis.get(key), timeout_s=60))
    finally:
        redis.close()
        client_app.close()


def _launch_cli(state_dir: Path, port: int) -> subprocess.CompletedProcess[str]:
    env = {"PATH": "/usr/bin:/bin", "TCPLAB_STATE_DIR": str(state_dir), "TCPLAB_PORT": str(port)}
    return subprocess.run(
        [sys.executable, "-m", "infra.launch"],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def _servers_of(state_dir: Path) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter(["cmdline", "status"]):
        cmdline = " ".join(proc.info["cmdline"] or [])
        if proc.info["status"] != psutil.STATUS_ZOMBIE and str(state_dir) in cmdline:
            found.append(proc)
    return found


def _workers_of(port: int) -> list[psutil.Process]:
    return [
        p
        for p in psutil.process_iter(["cmdline", "status"])
        if p.info["status"] != psutil.STATUS_ZOMBIE and f"tcplab-{port}@" in " ".join(p.info["cmdline"] or [])
    ]


def test_the_launched_service_answers(launched_service: LaunchedService) -> None:
    base = launched_service.base_url
    assert httpx.get(f"{base}/healthz").json()["status"] == "ok"
    assert httpx.get(f"{base}/readyz").json() == {
        "status": "ready",
        "checks": {"database": "ok", "broker": "ok"},
    }
    assert httpx.get(f"{base}/docs").status_code == 200
    log = launched_service.log()
    assert f"docs   {base}/docs" in log and "applying migrations" in log


def test_its_worker_takes_tasks(launched_service: LaunchedService) -> None:
    answer = _ping_through(launched_service)
    assert str(answer["worker"]).startswith(f"tcplab-{launched_service.base_url.rsplit(':', 1)[1]}@")


def _api_helpers_of(service: LaunchedService) -> list[psutil.Process]:
    """The launcher's helper API processes (``--serve-fd``)."""
    launcher = psutil.Process(service.process.pid)
    return [p for p in launcher.children() if "--serve-fd" in " ".join(p.cmdline())]


def _healthz_answers_by_process(metrics_dir: Path) -> dict[str, float]:
    """/healthz answers counted in each API process's metrics file (prometheus_client's
    multiprocess mode), by file."""
    from prometheus_client.mmap_dict import MmapedDict

    counts = {}
    for path in metrics_dir.glob("histogram_*.db"):
        values = MmapedDict(str(path), read_mode=True)
        try:
            counts[path.name] = sum(  # a file holds each bucket's own count, not cumulative ones
                value
                for key, value, *_ in values.read_all_values()
                if (sample := json.loads(key))[1].endswith("_bucket") and sample[2].get("route") == "/healthz"
            )
        finally:
            values.close()
    return counts


def test_the_api_answers_from_several_processes_whose_request_metrics_are_summed(
    launched_service: LaunchedService,
) -> None:
    base = launched_service.base_url
    (helper,) = _api_helpers_of(launched_service)  # TCPLAB_API_PROCESSES=2 by default
    metrics_dir = launched_service.state_dir / "metrics"

    def both_answered() -> bool:
        for _ in range(20):
            assert httpx.get(f"{base}/healthz").status_code == 200  # a new connection each
        return sum(count > 0 for count in _healthz_answers_by_process(metrics_dir).values()) >= 2

    wait_for(both_answered, timeout_s=60)
    scrape = httpx.get(f"{base}/metrics").text
    (line,) = [
        line
        for line in scrape.splitlines()
        if line.startswith("tcplab_http_request_duration_seconds_count{") and 'route="/healthz"' in line
    ]
    # Whichever process answered the scrape, it counts every process's answers.
    assert float(line.rsplit(" ", 1)[1]) == sum(_healthz_answers_by_process(metrics_dir).values())

    # A helper that dies is replaced, like a worker; the API answers throughout.
    helper.kill()
    wait_for(lambda: "API process 2 exited" in launched_service.log(), timeout_s=30)
    (replacement,) = wait_for(lambda: _api_helpers_of(launched_service) or None, timeout_s=30)
    assert replacement.pid != helper.pid
    assert httpx.get(f"{base}/healthz").status_code == 200


def test_a_second_launcher_on_the_same_state_dir_is_refused(
    launched_service: LaunchedService,
) -> None:
    result = _launch_cli(launched_service.state_dir, free_port())
    assert result.returncode == 1
    assert "another tcplab" in result.stderr and "TCPLAB_STATE_DIR" in result.stderr


def test_a_port_in_use_is_refused_before_anything_starts(launched_service: LaunchedService, tmp_path: Path) -> None:
    port = int(launched_service.base_url.rsplit(":", 1)[1])
    result = _launch_cli(tmp_path / "state", port)
    assert result.returncode == 1 and "choose another TCPLAB_PORT" in result.stderr
    assert not (tmp_path / "state" / "postgres").exists()


def test_side_by_side_crash_recovery_and_sigterm(launched_service: LaunchedService, tmp_path: Path) -> None:
    """A second instance beside the first; its worker dies and comes back; the launcher is
    killed outright and a new one reuses the servers it left; SIGTERM stops everything."""
    state_dir = tmp_path / "second"
    port = free_port()
    service = launch_service(state_dir, port)
    try:
        assert httpx.get(f"{launched_service.base_url}/readyz").status_code == 200
        assert _ping_through(service)

        # The supervisor replaces a worker that dies.
        (worker,) = [p for p in _workers_of(port) if p.ppid() == service.process.pid]
        worker.kill()
        wait_for(lambda: "starting a new one" in service.log(), timeout_s=30)
        assert _ping_through(service)

        # SIGKILL the launcher: its servers and its worker stay behind …
        (orphan,) = [p for p in _workers_of(port) if p.ppid() == service.process.pid]
        (api_helper,) = _api_helpers_of(service)
        service.process.kill()
        service.process.wait()
        assert _servers_of(state_dir) and orphan.is_running()
        # … and the next launcher reuses the servers and stops the orphaned worker (the API
        # helper stops on its own, or is stopped before the port is taken again).
        service = launch_service(state_dir, port)
        assert "a previous launcher left running" in service.log()
        assert wait_gone(orphan, timeout_s=30) and wait_gone(api_helper, timeout_s=30)
        assert _ping_through(service)
    finally:
        code = stop_service(service)
    assert code == 0, service.log()[-3000:]
    assert "stopped (SIGTERM)" in service.log()
    deadline = time.monotonic() + 10
    while (_servers_of(state_dir) or _workers_of(port)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _servers_of(state_dir) == [] and _workers_of(port) == []
    assert not (state_dir / "postgres" / "postmaster.pid").exists()
