"""Redis URLs and clients, for the broker checks of the API and the worker.

Two spellings of a Redis server on a unix socket exist: redis-py's ``unix:///path`` and
kombu's (Celery's) ``redis+socket:///path``. Settings accept both; these helpers turn one into
the other, so the API's readiness probe and the Celery app reach the same server.
"""

from __future__ import annotations

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

# kombu's Redis transport keeps a queue's messages of priority p > 0 in "<queue>\x06\x16<p>"
# beside the plain name (priority steps 0, 3, 6, 9), and every message delivered to a worker
# but not yet acknowledged in one hash.
PRIORITY_STEPS = (0, 3, 6, 9)
UNACKED_HASH = "unacked"

_KOMBU_SOCKET = "redis+socket://"
_REDIS_PY_SOCKET = "unix://"


def redis_py_url(url: str) -> str:
    """The URL as redis-py spells it (``redis+socket://`` becomes ``unix://``)."""
    if url.startswith(_KOMBU_SOCKET):
        return _REDIS_PY_SOCKET + url[len(_KOMBU_SOCKET) :]
    return url


def kombu_url(url: str) -> str:
    """The URL as kombu spells it (``unix://`` becomes ``redis+socket://``)."""
    if url.startswith(_REDIS_PY_SOCKET):
        return _KOMBU_SOCKET + url[len(_REDIS_PY_SOCKET) :]
    return url


def socket_url(path: str) -> str:
    """The broker URL of a Redis server listening on the unix socket ``path``."""
    return _KOMBU_SOCKET + path


def redis_client(url: str, *, timeout_s: float = 2.0) -> redis.Redis:
    """A client that fails within ``timeout_s`` instead of retrying: for health checks."""
    return redis.Redis.from_url(
        redis_py_url(url),
        socket_timeout=timeout_s,
        socket_connect_timeout=timeout_s,
        retry=Retry(NoBackoff(), 0),
    )


def ping(url: str, *, timeout_s: float = 2.0) -> None:
    """Raise unless the Redis server at ``url`` answers PING within ``timeout_s``."""
    client = redis_client(url, timeout_s=timeout_s)
    try:
        client.ping()
    finally:
        client.close()


def queue_keys(queue: str) -> list[str]:
    """The Redis lists that hold `queue`'s waiting messages, one per priority step."""
    return [queue if step == 0 else f"{queue}\x06\x16{step}" for step in PRIORITY_STEPS]
