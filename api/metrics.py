"""``/metrics`` for Prometheus.

Two kinds of figures:

- the service's state — runs by status, each user's queue by user id (waiting in PostgreSQL,
  handed to the broker, running), the broker queue's depth, recent runs' durations, the core's
  speed — read from PostgreSQL and Redis when Prometheus scrapes (:class:`ServiceCollector`,
  a custom collector over services/metrics.py). Any API process answers the same, and the
  Celery pool processes need no shared metric files. The answer is kept ``cache_s`` seconds,
  so a burst of scrapes costs one set of queries; the figures of finished runs, which grow
  with the history, are read every ``settled_cache_s`` only. A dependency that does not
  answer is reported as ``tcplab_dependency_up{dependency=…} 0`` and its figures are left
  out: the scrape itself never fails.
- the API's own request latencies: a histogram (:class:`HttpMetrics`), summed over the
  launcher's API processes (the process answering the scrape reads their files), by
  method (``other`` for one HTTP does not define), route template (``/v1/runs/{run_id}``, never
  the raw path; ``<unmatched>``) and status class: labels a client cannot multiply.

Every app has its own registry (tests build many apps in one process).
"""

from __future__ import annotations

import logging
import math
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    GCCollector,
    Histogram,
    PlatformCollector,
    ProcessCollector,
    generate_latest,
    values,
)
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.registry import Collector
from sqlalchemy import Connection, Engine

from services.metrics import (
    LiveRuns,
    QueueFigures,
    SettledRuns,
    live_runs,
    queue_figures,
    settled_runs,
)

log = logging.getLogger("tcplab.metrics")

NAMESPACE = "tcplab"
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)


@dataclass
class _Read:
    """One read of some figures, kept until it is ``ttl`` seconds old."""

    value: Any = None
    error: str | None = None
    at: float = -math.inf
    seconds: float = 0.0


class ServiceCollector(Collector):
    """The state of the service, read from the source of truth at scrape time.

    Three reads, each cached: the live runs and the queues for ``cache_s`` seconds, the
    settled runs (whose counts cost most) for ``settled_cache_s``. A read that fails leaves
    its figures out; the database counts as up when the live read answered.
    """

    def __init__(
        self,
        engine: Callable[[], Engine | None],
        redis_url: Callable[[], str | None],
        queues: Callable[[], list[str]],
        *,
        dispatch_window: Callable[[], int] | None = None,
        cache_s: float = 5.0,
        settled_cache_s: float = 60.0,
        window_s: float = 900.0,
    ) -> None:
        self._engine = engine
        self._redis_url = redis_url
        self._queues = queues
        self._dispatch_window = dispatch_window
        self.cache_s = cache_s
        self.settled_cache_s = settled_cache_s
        self.window_s = window_s
        self._lock = threading.Lock()
        self._reads = {"live": _Read(), "settled": _Read(), "broker": _Read()}

    def describe(self) -> Iterable[Metric]:
        return ()  # registering must not query the database

    def reads(self) -> dict[str, _Read]:
        with self._lock:  # concurrent scrapes share one set of queries
            engine = self._engine()
            self._refresh("live", self.cache_s, lambda: self._from_db(engine, live_runs))
            if self._reads["live"].error is None:
                self._refresh(
                    "settled",
                    self.settled_cache_s,
                    lambda: self._from_db(engine, lambda conn: settled_runs(conn, window_s=self.window_s)),
                )
            else:  # the database is away: nothing settled to report either
                self._reads["settled"] = _Read(error=self._reads["live"].error)
            self._refresh("broker", self.cache_s, self._from_broker)
            return dict(self._reads)

    def _refresh(self, name: str, ttl: float, read: Callable[[], Any]) -> None:
        now = time.monotonic()
        if now - self._reads[name].at < ttl:
            return
        start = time.perf_counter()
        try:
            value, error = read(), None
        except Exception as exc:  # noqa: BLE001 - a scrape reports, it does not fail
            value, error = None, _describe(exc)
            log.warning("metrics: the %s read failed: %s", name, error)
        self._reads[name] = _Read(value, error, time.monotonic(), time.perf_counter() - start)

    @staticmethod
    def _from_db(engine: Engine | None, read: Callable[[Connection], Any]) -> Any:
        if engine is None:
            raise RuntimeError("no database configured")
        with engine.connect() as conn:
            return read(conn)

    def _from_broker(self) -> QueueFigures:
        url = self._redis_url()
        if url is None:
            raise RuntimeError("no broker configured")
        return queue_figures(url, self._queues())

    def collect(self) -> Iterator[Metric]:
        reads = self.reads()
        live, settled, broker = reads["live"], reads["settled"], reads["broker"]
        up = GaugeMetricFamily(
            f"{NAMESPACE}_dependency_up",
            "1 when the dependency answered the last read of the service's figures, else 0",
            labels=["dependency"],
        )
        up.add_metric(["database"], 0 if live.error else 1)
        up.add_metric(["broker"], 0 if broker.error else 1)
        yield up
        seconds = GaugeMetricFamily(
            f"{NAMESPACE}_metrics_read_seconds",
            "time the last read of each part of these figures took (live: unfinished runs; "
            "settled: finished runs; broker: the queues)",
            labels=["part"],
        )
        for name, read in reads.items():
            seconds.add_metric([name], read.seconds)
        yield seconds
        yield from _run_metrics(live.value, settled.value)
        if live.value is not None:
            yield from _user_queue_metrics(live.value)
        if self._dispatch_window is not None:
            yield GaugeMetricFamily(
                f"{NAMESPACE}_dispatch_window",
                "runs the dispatcher lets be in flight (handed to the broker or running) at once",
                value=self._dispatch_window(),
            )
        if broker.value is not None:
            yield from _queue_metrics(broker.value)


def _run_metrics(live: LiveRuns | None, settled: SettledRuns | None) -> Iterator[Metric]:
    if live is None:
        return
    runs = GaugeMetricFamily(f"{NAMESPACE}_runs", "simulation runs in PostgreSQL, by status", labels=["status"])
    for status, n in {**live.by_status, **(settled.by_status if settled else {})}.items():
        runs.add_metric([status], n)
    yield runs
    yield GaugeMetricFamily(
        f"{NAMESPACE}_oldest_queued_run_age_seconds",
        "how long the oldest queued run has waited (0 when none waits)",
        value=live.oldest_queued_age_s or 0.0,
    )
    yield GaugeMetricFamily(
        f"{NAMESPACE}_active_sweeps",
        "sweeps with a queued or running run",
        value=live.active_sweeps,
    )
    if settled is None:
        return
    recent = settled.recent
    yield GaugeMetricFamily(
        f"{NAMESPACE}_recent_window_seconds",
        "the window of the tcplab_recent_* figures: runs that finished within it",
        value=recent.window_s,
    )
    finished = GaugeMetricFamily(
        f"{NAMESPACE}_recent_runs_finished",
        "runs that finished within the recent window, by final status",
        labels=["status"],
    )
    for status, n in recent.finished.items():
        finished.add_metric([status], n)
    yield finished
    quantiles = GaugeMetricFamily(
        f"{NAMESPACE}_recent_run_duration_seconds",
        "start-to-finish wall time (finished_at - started_at) of the runs that finished within "
        "the recent window: quantiles, and 1 for the longest",
        labels=["status", "quantile"],
    )
    mean = GaugeMetricFamily(
        f"{NAMESPACE}_recent_run_mean_duration_seconds",
        "mean start-to-finish wall time of the runs that finished within the recent window",
        labels=["status"],
    )
    for status, d in recent.durations.items():
        for q, v in d.quantiles.items():
            quantiles.add_metric([status, f"{q:g}"], v)
        if d.max_s is not None:
            quantiles.add_metric([status, "1"], d.max_s)
        if d.count:
            mean.add_metric([status], d.sum_s / d.count)
    yield quantiles
    yield mean
    yield GaugeMetricFamily(
        f"{NAMESPACE}_recent_core_events",
        "simulated events of the runs that succeeded within the recent window",
        value=recent.events,
    )
    yield GaugeMetricFamily(
        f"{NAMESPACE}_recent_core_seconds",
        "the core's own wall time for those runs",
        value=recent.core_wall_s,
    )
    if recent.core_events_per_s is not None:
        yield GaugeMetricFamily(
            f"{NAMESPACE}_core_events_per_second",
            "the simulator core's speed over the runs that succeeded within the recent window "
            "(their events over their core time)",
            value=recent.core_events_per_s,
        )


def _user_queue_metrics(live: LiveRuns) -> Iterator[Metric]:
    """Fair share's figures: each user's queue, and how much of it waits in PostgreSQL. Users
    are labelled by id, never by name: the scrape is open, and names identify people."""
    depth = GaugeMetricFamily(
        f"{NAMESPACE}_user_queue_depth",
        "a user's queued runs: waiting in PostgreSQL for their turn, or dispatched (handed to "
        "the broker); by user id (GET /v1/users/{id} names it, for admins); user_id 'none' holds "
        "the runs from before users",
        labels=["user_id", "state"],
    )
    running = GaugeMetricFamily(
        f"{NAMESPACE}_user_running_runs",
        "a user's runs being simulated now, by user id",
        labels=["user_id"],
    )
    for user, queue in sorted(live.by_user.items()):
        depth.add_metric([user, "waiting"], queue.waiting)
        depth.add_metric([user, "dispatched"], queue.dispatched)
        running.add_metric([user], queue.running)
    yield depth
    yield running
    totals = GaugeMetricFamily(
        f"{NAMESPACE}_queued_runs",
        "queued runs: waiting in PostgreSQL for the dispatcher, or dispatched to the broker",
        labels=["state"],
    )
    totals.add_metric(["waiting"], live.waiting)
    totals.add_metric(["dispatched"], live.dispatched)
    yield totals


def _queue_metrics(figures: QueueFigures) -> Iterator[Metric]:
    # The broker's side: with the dispatcher it holds about a window of messages per queue.
    depth = GaugeMetricFamily(
        f"{NAMESPACE}_queue_depth",
        "task messages waiting in the broker, by queue",
        labels=["queue"],
    )
    for queue, n in figures.depth.items():
        depth.add_metric([queue], n)
    yield depth
    yield GaugeMetricFamily(
        f"{NAMESPACE}_broker_unacked_messages",
        "task messages delivered to a worker and not yet acknowledged (every queue of the broker's database)",
        value=figures.unacked,
    )


class HttpMetrics:
    """The API's request latencies: in this process, or — in prometheus_client's multiprocess
    mode (``shares_request_metrics``) — written to this process's file, which the registry's
    ``MultiProcessCollector`` sums with the other API processes'."""

    def __init__(self, registry: CollectorRegistry | None) -> None:
        self.latency = Histogram(
            f"{NAMESPACE}_http_request_duration_seconds",
            "time to answer an HTTP request, by method, route template and status class",
            ["method", "route", "status"],
            buckets=LATENCY_BUCKETS,
            registry=registry,
        )

    def observe(self, method: str, route: str, status: int, seconds: float) -> None:
        self.latency.labels(method, route, f"{status // 100}xx").observe(seconds)


def build_registry(collector: ServiceCollector, *, info: dict[str, str]) -> tuple[CollectorRegistry, HttpMetrics]:
    registry = CollectorRegistry()
    registry.register(collector)
    registry.register(_InfoCollector(info))
    ProcessCollector(registry=registry)
    PlatformCollector(registry=registry)
    GCCollector(registry=registry)
    if shares_request_metrics():
        MultiProcessCollector(registry)
        return registry, HttpMetrics(None)
    return registry, HttpMetrics(registry)


def shares_request_metrics() -> bool:
    """Whether this process writes its metric values to PROMETHEUS_MULTIPROC_DIR (set before
    prometheus_client was imported: the launcher's API processes, infra/launch.py)."""
    return bool(os.environ.get("PROMETHEUS_MULTIPROC_DIR")) and values.ValueClass is not values.MutexValue


class _InfoCollector(Collector):
    def __init__(self, info: dict[str, str]) -> None:
        self.info = info

    def describe(self) -> Iterable[Metric]:
        return ()

    def collect(self) -> Iterator[Metric]:
        build = GaugeMetricFamily(
            f"{NAMESPACE}_build_info",
            "1, labelled with the service's and the simulator core's versions",
            labels=list(self.info),
        )
        build.add_metric(list(self.info.values()), 1)
        yield build


router = APIRouter(tags=["health"])


@router.get(
    "/metrics",
    summary="Prometheus metrics",
    response_class=Response,
    responses={200: {"content": {CONTENT_TYPE_LATEST.split(";")[0]: {}}, "description": "text format"}},
)
def metrics(request: Request) -> Response:
    registry: CollectorRegistry = request.app.state.metrics_registry
    return Response(generate_latest(registry), media_type=CONTENT_TYPE_LATEST)


def _describe(exc: BaseException) -> str:
    message = " ".join(str(exc).split())[:200]
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__
