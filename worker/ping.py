"""The health task (``tcplab.ping``): a worker takes tasks and reaches the database. Its own
module, not the Celery app's, so that what sends tasks (the API) loads neither the database
engine of the worker process nor the simulator."""

from __future__ import annotations

import json
import os
from typing import Any

from sqlalchemy import text

import tcpsim
from infra.broker import redis_client
from infra.embedded import effective_redis_url
from services.settings import get_settings
from worker.app import app
from worker.db import get_engine


@app.task(name="tcplab.ping", bind=True, acks_late=False)
def ping(self: Any, reply_key: str | None = None) -> dict[str, Any]:
    """Health task: proves that a worker takes tasks and reaches the database.

    With ``reply_key`` it stores its answer in Redis under that key for five minutes (there
    is no result backend): the tests and ``/readyz``-style probes read it from there.
    """
    with get_engine().connect() as conn:
        conn.execute(text("SELECT 1"))
    answer = {"worker": self.request.hostname, "pid": os.getpid(), "core": tcpsim.__version__}
    if reply_key:
        client = redis_client(effective_redis_url(get_settings()))
        try:
            client.set(reply_key, json.dumps(answer), ex=300)
        finally:
            client.close()
    return answer
