"""Per-user submission rate limits, counted in Redis (one counter per user per minute).

Redis is only an accelerator here: when it does not answer, submissions are let through
(logged), because PostgreSQL — not Redis — must decide whether work is accepted, and the
fault tests submit runs while Redis is down.
"""

from __future__ import annotations

import logging
import math
import time
from functools import lru_cache

import redis

from infra.broker import redis_client
from services.errors import QuotaExceededError
from services.users.identity import Identity

log = logging.getLogger("tcplab.users")

WINDOW_S = 60


@lru_cache(maxsize=4)
def pooled_client(redis_url: str) -> redis.Redis:
    """One pooled client per URL for the process (rate counts, sign-in links): a connection
    per request would cost more than the count itself."""
    return redis_client(redis_url, timeout_s=0.5)


def check_submission_rate(redis_url: str | None, viewer: Identity, *, now: float | None = None) -> None:
    """Counts one submission of `viewer`; QuotaExceededError (429) past their per-minute limit."""
    limit = viewer.quotas.submissions_per_minute
    if redis_url is None:
        return
    now = time.time() if now is None else now
    window = int(now // WINDOW_S)
    key = f"tcplab:submissions:{viewer.id}:{window}"
    try:
        pipe = pooled_client(redis_url).pipeline()
        pipe.incr(key)
        pipe.expire(key, 2 * WINDOW_S)
        count = int(pipe.execute()[0])
    except redis.RedisError as exc:
        log.warning("submission rate of %s not counted, Redis did not answer: %s", viewer.name, exc)
        return
    if count > limit:
        retry_after = max(1, math.ceil((window + 1) * WINDOW_S - now))
        raise QuotaExceededError(
            f"{viewer.name} may submit {limit} times per minute; try again in {retry_after} s",
            retry_after_s=retry_after,
        )
