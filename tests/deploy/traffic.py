"""What the deploy test asks the API, recorded: every answer's status (a 5xx other than the
documented 503 fails the test), a background load of reads and submissions that goes on through
every fault, and a monitor of the sweep and of the run whose worker was killed."""

from __future__ import annotations

import collections
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


@dataclass(frozen=True)
class Answer:
    at_s: float
    who: str
    method: str
    route: str  # the path with ids as {id}
    status: int | None  # None: no HTTP answer (connection refused, reset, timeout)
    detail: str


class Recorder:
    """Every request the test makes and what came back."""

    def __init__(self, start: float) -> None:
        self.start = start
        self.answers: list[Answer] = []
        self._lock = threading.Lock()

    def add(self, who: str, method: str, path: str, status: int | None, detail: str) -> None:
        answer = Answer(time.monotonic() - self.start, who, method, UUID.sub("{id}", path), status, detail[:200])
        with self._lock:
            self.answers.append(answer)

    def by_status(self) -> dict[str, int]:
        with self._lock:
            counts = collections.Counter("error" if a.status is None else str(a.status) for a in self.answers)
        return dict(sorted(counts.items()))

    def client_errors(self) -> dict[str, int]:
        """4xx answers by status and route (a result read before its run finished is a 409)."""
        with self._lock:
            counts = collections.Counter(
                f"{a.status} {a.method} {a.route}" for a in self.answers if a.status and 400 <= a.status < 500
            )
        return dict(sorted(counts.items()))

    def unexpected(self) -> list[Answer]:
        """5xx other than 503, and requests that got no HTTP answer at all."""
        with self._lock:
            return [a for a in self.answers if a.status is None or (a.status >= 500 and a.status != 503)]

    def of_status(self, status: int) -> list[Answer]:
        with self._lock:
            return [a for a in self.answers if a.status == status]


class Api:
    """An httpx client for one token whose every answer goes to the recorder."""

    def __init__(self, base_url: str, token: str, who: str, recorder: Recorder) -> None:
        self.who = who
        self.recorder = recorder
        self.http = httpx.Client(base_url=base_url, headers={"Authorization": f"Bearer {token}"}, timeout=30)

    def request(self, method: str, path: str, **kwargs: Any) -> httpx.Response | None:
        try:
            response = self.http.request(method, path, **kwargs)
        except httpx.TransportError as e:
            self.recorder.add(self.who, method, path, None, f"{type(e).__name__}: {e}")
            return None
        detail = response.text if response.status_code >= 400 else ""
        self.recorder.add(self.who, method, path, response.status_code, detail)
        return response

    def get(self, path: str, **kwargs: Any) -> httpx.Response | None:
        return self.request("GET", path, **kwargs)

    def post(self, path: str, **kwargs: Any) -> httpx.Response | None:
        return self.request("POST", path, **kwargs)

    def json(self, method: str, path: str, expect: int = 200, **kwargs: Any) -> Any:
        """The answer's JSON when its status is ``expect``, else None."""
        response = self.request(method, path, **kwargs)
        return response.json() if response is not None and response.status_code == expect else None


class Load(threading.Thread):
    """A user going about their work through the whole test: a run submitted every second and
    reads of the health routes, their runs and one result, twice a second."""

    def __init__(self, api: Api, run_body: Callable[[int], dict[str, Any]]) -> None:
        super().__init__(name="load", daemon=True)
        self.api = api
        self.run_body = run_body
        self.submitted: list[str] = []  # ids answered 201
        self.refused = 0  # submissions answered 503 (not stored)
        self.stop = threading.Event()

    def run(self) -> None:
        seed = 0
        next_submit = 0.0
        while not self.stop.is_set():
            if time.monotonic() >= next_submit:
                next_submit = time.monotonic() + 1.0
                seed += 1
                response = self.api.post("/v1/runs", json=self.run_body(seed))
                if response is not None and response.status_code == 201:
                    self.submitted.append(response.json()["id"])
                elif response is not None and response.status_code == 503:
                    self.refused += 1
            self.api.get("/healthz")
            self.api.get("/readyz")
            self.api.get("/v1/runs", params={"mine": "true", "limit": 20})
            if self.submitted:
                self.api.get(f"/v1/runs/{self.submitted[len(self.submitted) // 2]}/result")
            self.stop.wait(0.5)


@dataclass
class Seen:
    """The monitor's latest view; ``watched`` is the killed run's history of (seconds since
    start, status, attempts, worker) at each change."""

    progress: dict[str, int] = field(default_factory=dict)
    status: str = ""
    running: list[dict[str, Any]] = field(default_factory=list)
    workers_done: set[str] = field(default_factory=set)  # the workers of its succeeded runs
    watched: list[tuple[float, str, int, str | None]] = field(default_factory=list)


class Monitor(threading.Thread):
    """Polls the sweep, its running runs, the workers of its finished ones and the watched
    run about once a second; an answer that is not 200 (the database restarting) keeps the last
    view."""

    def __init__(self, api: Api, sweep_id: str, start: float) -> None:
        super().__init__(name="monitor", daemon=True)
        self.api = api
        self.sweep_id = sweep_id
        self.start_t = start
        self.seen = Seen()
        self.watch_id: str | None = None
        self.stop = threading.Event()
        self.lock = threading.Lock()

    def run(self) -> None:
        polls = 0
        while not self.stop.is_set():
            sweep = self.api.json("GET", f"/v1/sweeps/{self.sweep_id}")
            running = self.api.json("GET", "/v1/runs", params={"status": "running", "mine": "true", "limit": 100})
            done = (
                self.api.json("GET", "/v1/runs", params={"status": "succeeded", "mine": "true", "limit": 500})
                if polls % 2 == 0
                else None
            )
            watched = self.api.json("GET", f"/v1/runs/{self.watch_id}") if self.watch_id else None
            with self.lock:
                if sweep is not None:
                    self.seen.progress, self.seen.status = sweep["progress"], sweep["status"]
                if done is not None:
                    self.seen.workers_done.update(r["worker"] for r in done["items"] if r["worker"])
                if running is not None:
                    self.seen.running = running["items"]
                if watched is not None:
                    state = (watched["status"], watched["attempts"], watched["worker"])
                    if not self.seen.watched or self.seen.watched[-1][1:] != state:
                        self.seen.watched.append((time.monotonic() - self.start_t, *state))
            polls += 1
            self.stop.wait(1.0)

    def view(self) -> Seen:
        with self.lock:
            return Seen(
                dict(self.seen.progress),
                self.seen.status,
                list(self.seen.running),
                set(self.seen.workers_done),
                list(self.seen.watched),
            )

    def wait(self, what: str, condition: Callable[[Seen], Any], timeout_s: float, say: Callable[[str], None]) -> Any:
        """Until ``condition(view)`` is truthy (returned); progress every 10 s; TimeoutError
        naming ``what`` past the deadline."""
        deadline = time.monotonic() + timeout_s
        next_line = time.monotonic() + 10
        while True:
            view = self.view()
            value = condition(view)
            if value:
                return value
            now = time.monotonic()
            if now > deadline:
                raise TimeoutError(f"{what}: not within {timeout_s:g} s (sweep {view.status} {view.progress})")
            if now >= next_line:
                next_line = now + 10
                say(f"  waiting for {what}: sweep {view.progress}")
            time.sleep(0.5)
