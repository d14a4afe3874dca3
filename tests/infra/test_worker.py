"""A real Celery worker subprocess on the test servers."""

from __future__ import annotations

import json
import os
import signal
import time
import uuid
from typing import Any

from infra import broker
from services.settings import Settings
from tests.support import wait_for
from worker.app import app as celery_app
from worker.app import celery_config
from worker.ping import ping


def _ping_round_trip(redis_url: str, timeout_s: float = 30.0) -> dict[str, Any]:
    key = f"tcplab:test:ping:{uuid.uuid4().hex}"
    ping.delay(key)
    client = broker.redis_client(redis_url)
    try:
        raw = wait_for(lambda: client.get(key), timeout_s=timeout_s)
    finally:
        client.close()
    return json.loads(raw)


def test_the_celery_configuration(test_settings: Settings) -> None:
    conf = celery_config(test_settings)
    assert conf["broker_url"].startswith(("redis://", "rediss://", "redis+socket://"))
    assert conf["task_acks_late"] and conf["task_reject_on_worker_lost"]
    assert conf["worker_prefetch_multiplier"] == 1
    assert conf["result_backend"] is None and conf["task_ignore_result"]
    assert conf["task_serializer"] == "json" and conf["accept_content"] == ["json"]
    assert conf["broker_connection_retry_on_startup"]
    assert conf["task_default_queue"] == test_settings.queue
    assert (
        conf["broker_transport_options"]["visibility_timeout"]
        == test_settings.broker_visibility_timeout_s
        >= 1.5 * test_settings.run_max_wall_s
    )
    assert celery_app.conf.broker_url == conf["broker_url"]


def test_a_ping_task_round_trips_through_a_real_worker(celery_worker_process: Any, test_settings: Settings) -> None:
    answer = _ping_round_trip(test_settings.redis_url)
    assert answer["worker"] == celery_worker_process.nodename
    assert answer["pid"] in celery_worker_process.child_pids()


def test_a_test_without_the_worker_fixture_gets_no_worker(test_settings: Settings) -> None:
    """The shared worker (started by an earlier test) does not consume now: a task stays
    queued, as it would with no worker at all."""
    key = f"tcplab:test:ping:{uuid.uuid4().hex}"
    ping.delay(key)
    client = broker.redis_client(test_settings.redis_url)
    try:
        time.sleep(2)
        assert client.get(key) is None
    finally:
        client.close()


def test_a_killed_pool_process_is_replaced(celery_worker_process: Any, test_settings: Settings) -> None:
    (child,) = celery_worker_process.child_pids()
    os.kill(child, signal.SIGKILL)
    wait_for(lambda: celery_worker_process.child_pids() not in ([], [child]), timeout_s=30)
    assert _ping_round_trip(test_settings.redis_url)["pid"] != child
