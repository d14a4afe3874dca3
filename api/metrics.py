"""``/metrics`` for Prometheus.

Two kinds of figures:

- the service's state — runs by status, the queue's depth, recent runs' durations, the core's
  speed — read from PostgreSQL and Redis when Prometheus scrapes (:class:`ServiceCollector`,
  a custom collector over services/metrics.py). Any API process answers the same, and the
  Celery pool processes need no shared metric files. The answer is kept ``cache_s`` seconds,
  so a burst of scrapes costs one set of queries. A dependency that does not answer is
  reported as ``tcplab_dependency_up{dependency=…} 0`` and its figures are left out: the
  scrape itself never fails.
- the API's own request latencies: a histogram in this process (:class:`HttpMetrics`), by
  method, route template (``/v1/runs/{run_id}``, never the raw path) and status class.

Every app has its own registry (tests build many apps in one process).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

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
)
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from sqlalchemy import Engine

from services.metrics import QueueFigures, RunFigures, queue_figures, run_figures

log = logging.getLogger("tcplab.metrics")

NAMESPACE = "tcplab"
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)


@dataclass(frozen=True)
class _Snapshot:
    runs: RunFigures | None
    runs_error: str | None
    queues: QueueFigures | None
    queues_error: str | None
    seconds: float


class ServiceCollector(Collector):
    """The state of the service, read from the source of truth at scrape time."""

    def __init__(
        self,
        engine: Callable[[], Engine | None],
        redis_url: Callable[[], str | None],
        queues: Callable[[], list[str]],
        *,
        cache_s: float = 5.0,
        window_s: float = 900.0,
    ) -> None:
        self._engine = engine
        self._redis_url = redis_url
        self._queues = queues
        self.cache_s = cache_s
        self.window_s = window_s
        self._lock = threading.Lock()
        self._snapshot: _Snapshot | None = None
        self._taken_at = 0.0

    def describe(self) -> Iterable[Metric]:
        return ()  # registering must not query the database

    def snapshot(self) -> _Snapshot:
        with self._lock:  # concurrent scrapes share one set of queries
            now = time.monotonic()
            if self._snapshot is None or now - self._taken_at >= self.cache_s:
                self._snapshot = self._read()
                self._taken_at = time.monotonic()
            return self._snapshot

    def _read(self) -> _Snapshot:
        start = time.perf_counter()
        runs = queues = None
        runs_error = queues_error = None
        engine = self._engine()
        if engine is None:
            runs_error = "not configured"
        else:
            try:
                with engine.connect() as conn:
                    runs = run_figures(conn, window_s=self.window_s)
            except Exception as exc:  # noqa: BLE001 - a scrape reports, it does not fail
                runs_error = _describe(exc)
                log.warning("metrics: the database did not answer: %s", runs_error)
        url = self._redis_url()
        if url is None:
            queues_error = "not configured"
        else:
            try:
                queues = queue_figures(url, self._queues())
            except Exception as exc:  # noqa: BLE001
                queues_error = _describe(exc)
                log.warning("metrics: the broker did not answer: %s", queues_error)
        return _Snapshot(runs, runs_error, queues, queues_error, time.perf_counter() - start)

    def collect(self) -> Iterator[Metric]:
        snap = self.snapshot()
        up = GaugeMetricFamily(
            f"{NAMESPACE}_dependency_up",
            "1 when the dependency answered the last read of the service's figures, else 0",
            labels=["dependency"],
        )
        up.add_metric(["database"], 0 if snap.runs is None else 1)
        up.add_metric(["broker"], 0 if snap.queues is None else 1)
        yield up
        yield GaugeMetricFamily(
            f"{NAMESPACE}_metrics_read_seconds",
            "time the last read of the service's figures from PostgreSQL and Redis took",
            value=snap.seconds,
        )
        if snap.runs is not None:
            yield from _run_metrics(snap.runs)
        if snap.queues is not None:
            yield from _queue_metrics(snap.queues)


def _run_metrics(figures: RunFigures) -> Iterator[Metric]:
    runs = GaugeMetricFamily(
        f"{NAMESPACE}_runs", "simulation runs in PostgreSQL, by status", labels=["status"]
    )
    for status, n in figures.by_status.items():
        runs.add_metric([status], n)
    yield runs
    yield GaugeMetricFamily(
        f"{NAMESPACE}_oldest_queued_run_age_seconds",
        "how long the oldest queued run has waited (0 when none waits)",
        value=figures.oldest_queued_age_s or 0.0,
    )
    yield GaugeMetricFamily(
        f"{NAMESPACE}_active_sweeps",
        "sweeps with a queued or running run",
        value=figures.active_sweeps,
    )
    recent = figures.recent
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


def _queue_metrics(figures: QueueFigures) -> Iterator[Metric]:
    # One series per queue today; per-user queues will add a `user` label to the same name.
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
        "task messages delivered to a worker and not yet acknowledged (every queue of the "
        "broker's database)",
        value=figures.unacked,
    )


class HttpMetrics:
    """The API's request latencies, in this process."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.latency = Histogram(
            f"{NAMESPACE}_http_request_duration_seconds",
            "time to answer an HTTP request, by method, route template and status class",
            ["method", "route", "status"],
            buckets=LATENCY_BUCKETS,
            registry=registry,
        )

    def observe(self, method: str, route: str, status: int, seconds: float) -> None:
        self.latency.labels(method, route, f"{status // 100}xx").observe(seconds)


def build_registry(
    collector: ServiceCollector, *, info: dict[str, str]
) -> tuple[CollectorRegistry, HttpMetrics]:
    registry = CollectorRegistry()
    registry.register(collector)
    registry.register(_InfoCollector(info))
    ProcessCollector(registry=registry)
    PlatformCollector(registry=registry)
    GCCollector(registry=registry)
    return registry, HttpMetrics(registry)


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
    responses={
        200: {"content": {CONTENT_TYPE_LATEST.split(";")[0]: {}}, "description": "text format"}
    },
)
def metrics(request: Request) -> Response:
    registry: CollectorRegistry = request.app.state.metrics_registry
    return Response(generate_latest(registry), media_type=CONTENT_TYPE_LATEST)


def _describe(exc: BaseException) -> str:
    message = " ".join(str(exc).split())[:200]
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__
