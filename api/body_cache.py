"""Response bodies kept under a key that says what they were made from.

A finished sweep's summaries and model comparison are functions of its aggregates, and those
change only when a run is added (`services.sweeps.aggregates.Version`): read again at the
same version — a page reloaded, a sweep polled, a download after the plot — the body is the
same text. Writing it is most of such a read (the model comparison of 1,000 points × 2 flow
groups × 4 models: 4.4 MB of JSON, ~140 ms to build and ~140 ms to encode), so each API
process keeps the latest bodies, least recently used out first, within a byte budget.

A stored run result never changes at all: its text is kept by result id (api/routers/runs.py).

A key must name everything the body depends on; the caller checks the reader's access before
asking (a cached body is never a way around visibility).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable


class BodyCache:
    """Bodies by key, least recently used out first once they pass `max_bytes` together; a
    body larger than `max_bytes // 2` is not kept (it would push out everything else)."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._bodies: OrderedDict[Hashable, bytes] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()  # sync endpoints run in a thread pool
        self.hits = 0
        self.misses = 0

    def get(self, key: Hashable) -> bytes | None:
        with self._lock:
            body = self._bodies.get(key)
            if body is None:
                self.misses += 1
                return None
            self._bodies.move_to_end(key)
            self.hits += 1
            return body

    def put(self, key: Hashable, body: bytes) -> None:
        if len(body) > self.max_bytes // 2:
            return
        with self._lock:
            old = self._bodies.pop(key, None)
            if old is not None:
                self._bytes -= len(old)
            self._bodies[key] = body
            self._bytes += len(body)
            while self._bytes > self.max_bytes:
                _, dropped = self._bodies.popitem(last=False)
                self._bytes -= len(dropped)

    def clear(self) -> None:
        with self._lock:
            self._bodies.clear()
            self._bytes = 0

    def __len__(self) -> int:
        return len(self._bodies)
