"""A heavy request body does not stall the API (issue 11, finding 6): `/healthz` answers in
well under 100 ms while the launched service (``python -m infra.launch``, a real uvicorn process)
parses and validates a 7.5 MB model request and a 4.3 MB graph scenario.

The service is launched with the per-route body limits raised to the global cap, so both
bodies are read, parsed and validated in full (the worst case), not refused at once by their
routes' smaller default limits. The figures are printed (``pytest -s``)."""

from __future__ import annotations

import json
import statistics
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.support import LaunchedService, free_port, launch_service, stop_service

# A loaded 2-core machine (other test sessions, the worker, PostgreSQL): the median must stay
# well under 100 ms, and no single probe may wait as long as a heavy request used to block it:
# the whole parse (1.5-1.7 s on an idle machine, 4.6 s on a loaded one), most of the request's
# time. Measured at a load average of 6 on 2 cores: medians of 8-33 ms, at most 320 ms; at 7
# (three compilers beside the suite) one probe waited 1.2 s while the request took 5.8 s. So the
# longest wait must be under 0.75 s or, on a machine slow enough to stretch the request, under
# half of the request's own time: a blocked event loop fails either way.
P50_BOUND_S = 0.075
MAX_BOUND_S = 0.75
MAX_SHARE_OF_REQUEST = 0.5


def _max_bound_ms(took_s: float) -> float:
    return max(MAX_BOUND_S, MAX_SHARE_OF_REQUEST * took_s) * 1000


PROBE_INTERVAL_S = 0.02


def model_body(size: int) -> bytes:
    """A Mathis query whose `p` is a list far past the model's 100,000 values: refused (422)."""
    n = size // len("0.012345678901234,")
    body = json.dumps({"p": [0.012345678901234] * n, "rtt_s": 0.1})
    return body.encode()


def graph_body(size: int) -> bytes:
    """A valid run of a chain graph with as many nodes as it takes to weigh `size` bytes."""
    link = len(json.dumps({"from": "n00000", "to": "n00001", "rate_mbps": 100, "delay_ms": 1})) + 10
    n = size // link
    nodes = [f"n{i:05d}" for i in range(n + 1)]
    links = [{"from": a, "to": b, "rate_mbps": 100, "delay_ms": 1} for a, b in zip(nodes, nodes[1:], strict=False)]
    scenario = {
        "name": "a long chain",
        "duration_s": 0.1,
        "topology": {"graph": {"nodes": nodes, "links": links}},
        "flows": [{"from": nodes[0], "to": nodes[1]}],
    }
    return json.dumps({"scenario": scenario}).encode()


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LaunchedService]:
    state: Path = tmp_path_factory.mktemp("healthz-load") / "state"
    limit = str(10_000_000)
    launched = launch_service(
        state,
        free_port(),
        TCPLAB_MAX_MODEL_BODY_BYTES=limit,
        TCPLAB_MAX_SCENARIO_BODY_BYTES=limit,
    )
    try:
        yield launched
    finally:
        stop_service(launched)


class Prober:
    """Polls /healthz from a thread of its own; each probe's latency is kept."""

    def __init__(self, base_url: str) -> None:
        self.client = httpx.Client(base_url=base_url, timeout=30)
        self.latencies: list[float] = []
        self.failures: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="healthz-prober", daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            start = time.perf_counter()
            try:
                r = self.client.get("/healthz")
                if r.status_code != 200:
                    self.failures.append(f"{r.status_code} {r.text[:200]}")
            except httpx.HTTPError as exc:
                self.failures.append(repr(exc))
            self.latencies.append(time.perf_counter() - start)
            self._stop.wait(PROBE_INTERVAL_S)

    def __enter__(self) -> Prober:
        self.client.get("/healthz")  # the connection is open before the measurement
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=60)
        self.client.close()


def _figures(latencies: list[float]) -> dict[str, float]:
    ordered = sorted(latencies)
    return {
        "probes": len(ordered),
        "p50_ms": round(statistics.median(ordered) * 1000, 1),
        "p95_ms": round(ordered[int(0.95 * (len(ordered) - 1))] * 1000, 1),
        "max_ms": round(ordered[-1] * 1000, 1),
    }


def _while_posting(
    service: LaunchedService, path: str, body: bytes, times: int = 1
) -> tuple[httpx.Response, float, dict[str, float]]:
    """Posts `body` `times` times in a row while /healthz is probed; the last response, the
    mean time one took, and the probes' figures."""
    headers = {**service.headers, "Content-Type": "application/json"}
    with httpx.Client(base_url=service.base_url, timeout=120, headers=headers) as client:
        with Prober(service.base_url) as prober:
            time.sleep(0.2)  # a few probes before the body arrives
            start = time.perf_counter()
            for _ in range(times):
                response = client.post(path, content=body)
            took = (time.perf_counter() - start) / times
            time.sleep(0.2)
    assert not prober.failures, prober.failures[:3]
    return response, took, _figures(prober.latencies)


def test_healthz_answers_quickly_while_a_75_mb_model_request_is_validated(service):
    body = model_body(7_500_000)
    response, took, figures = _while_posting(service, "/v1/models/mathis/evaluate", body, times=4)
    print(
        f"\n7.5 MB model request: {response.status_code} in {took:.2f} s, "
        f"{len(response.content)} bytes answered; /healthz meanwhile: {figures}"
    )
    assert response.status_code == 422
    assert len(response.content) < 20_000  # the error does not echo the 7.5 MB input
    assert figures["p50_ms"] < P50_BOUND_S * 1000, figures
    assert figures["max_ms"] < _max_bound_ms(took), (figures, took)


def test_healthz_answers_quickly_while_a_43_mb_graph_scenario_is_validated(service):
    body = graph_body(4_300_000)
    response, took, figures = _while_posting(service, "/v1/runs", body)
    print(f"\n4.3 MB graph scenario: {response.status_code} in {took:.2f} s; /healthz meanwhile: {figures}")
    assert response.status_code == 201, response.text[:500]
    assert figures["p50_ms"] < P50_BOUND_S * 1000, figures
    assert figures["max_ms"] < _max_bound_ms(took), (figures, took)
