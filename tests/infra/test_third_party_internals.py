"""The three places tcplab relies on another library's internals, each behind one adapter, each
checked here against the installed version, so that an upgrade that changes one fails here,
by name, instead of somewhere downstream (issue 16):

- kombu's Redis layout of a queue (``infra/broker.py``: ``queue_keys``, ``UNACKED_HASH``), which
  the queue-depth metrics and the reconciler read: no public API says where messages wait;
- Celery's connection and producer pools (``worker/app.py`` ``configure``), dropped when the app
  is pointed at another broker: Celery resets them only after a fork, privately;
- pgserver's handle cache and exit hook (``infra/embedded.py``), which we bypass to restart a
  server that died and to stop it ourselves.
"""

from __future__ import annotations

import uuid

import kombu
import pgserver
from celery.app.amqp import AMQP

from infra import broker
from services.settings import Settings
from worker.app import app as celery_app
from worker.app import configure


def test_kombu_keeps_a_priority_message_in_the_key_queue_keys_names(redis_url: str) -> None:
    queue = f"internals-{uuid.uuid4().hex[:8]}"
    client = broker.redis_client(redis_url)
    with kombu.Connection(broker.kombu_url(redis_url)) as conn:
        q = kombu.Queue(queue, routing_key=queue, max_priority=9)
        producer = conn.Producer()
        for priority in broker.PRIORITY_STEPS:
            producer.publish({"p": priority}, routing_key=queue, declare=[q], priority=priority)
    lengths = [client.llen(key) for key in broker.queue_keys(queue)]
    assert lengths == [1] * len(broker.PRIORITY_STEPS), (
        f"kombu no longer keeps priority messages where infra/broker.py's queue_keys says ({lengths}): "
        "update queue_keys and PRIORITY_STEPS for this kombu version"
    )
    client.delete(*broker.queue_keys(queue))
    client.close()


def test_kombu_parks_a_delivered_unacknowledged_message_in_the_unacked_hash(redis_url: str) -> None:
    queue = f"internals-{uuid.uuid4().hex[:8]}"
    client = broker.redis_client(redis_url)
    before = client.hlen(broker.UNACKED_HASH)
    with kombu.Connection(broker.kombu_url(redis_url)) as conn:
        simple = conn.SimpleQueue(queue)
        simple.put({"hello": 1})
        message = simple.get(timeout=5)  # delivered, not acknowledged
        assert client.hlen(broker.UNACKED_HASH) == before + 1, (
            f"kombu no longer records unacknowledged messages in the {broker.UNACKED_HASH!r} hash: "
            "update infra/broker.py's UNACKED_HASH for this kombu version"
        )
        message.ack()
        simple.close()
    assert client.hlen(broker.UNACKED_HASH) == before
    client.delete(*broker.queue_keys(queue))
    client.close()


def test_celery_still_has_the_pools_configure_drops_and_a_new_broker_is_used(test_settings: Settings) -> None:
    assert "_pool" in vars(type(celery_app)), "Celery.app no longer has `_pool`: update worker/app.py configure()"
    assert "_producer_pool" in vars(AMQP), (
        "Celery's AMQP no longer has `_producer_pool`: update worker/app.py configure()"
    )
    other = test_settings.model_copy(update={"redis_url": "redis://127.0.0.1:1/0"})
    try:
        configure(other)
        connection = celery_app.pool.connection
        assert (connection.hostname, connection.port) == ("127.0.0.1", 1), (
            "after configure() the app still connects to the old broker"
        )
    finally:
        configure(test_settings)
    assert celery_app.pool.connection.port != 1


def test_pgserver_still_caches_handles_by_folder_and_registers_an_exit_hook() -> None:
    cache = getattr(pgserver.PostgresServer, "_instances", None)
    assert isinstance(cache, dict), (
        "pgserver.PostgresServer._instances is gone: update infra/embedded.py start()/stop()"
    )
    assert callable(getattr(pgserver.PostgresServer, "_cleanup", None)), (
        "pgserver.PostgresServer._cleanup is gone: update infra/embedded.py start() (atexit.unregister)"
    )
