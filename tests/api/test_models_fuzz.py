"""The model endpoints under extreme finite numbers (issue 11, finding 7): whatever finite
inputs a caller sends, the answer is a result (200) or a 422 naming what is wrong — never a
500. Driven by hypothesis through the router on a bare app (no database)."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from api.routers import models as models_router
from services.models import MODELS

FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))

# Every finite double, with the corners weighted in: 0, ±tiny, ±huge, subnormals, integers.
extreme = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([0.0, 5e-324, 1e-300, 1e-30, 0.5, 1.0, 2.0, 3.0, 1e30, 1e300, 1.7976931348623157e308]),
    st.integers(min_value=-(2**53), max_value=2**53).map(float),
)
number_or_list = st.one_of(extreme, st.lists(extreme, min_size=1, max_size=4))


@pytest.fixture(scope="module")
def models_api() -> TestClient:
    app = FastAPI()
    app.include_router(models_router.router)
    return TestClient(app, raise_server_exceptions=False)


def _answers(client: TestClient, path: str, body: dict[str, Any]) -> None:
    r = client.post(path, json=body)
    assert r.status_code in (200, 422), (path, body, r.status_code, r.text[:500])
    if r.status_code == 422:
        assert all(e["loc"][0] == "body" for e in r.json()["detail"]), r.json()


@pytest.mark.parametrize("name", list(MODELS))
def test_evaluating_a_model_on_any_finite_numbers_is_a_result_or_a_422(models_api, name):
    params = [p.name for p in MODELS[name].params]

    @FUZZ
    @given(values=st.fixed_dictionaries({}, optional={p: number_or_list for p in params}), grid=st.booleans())
    def check(values: dict[str, Any], grid: bool) -> None:
        _answers(models_api, f"/v1/models/{name}/evaluate", {**values, "mode": "grid" if grid else "broadcast"})

    check()


@FUZZ
@given(p=number_or_list, rtt_s=number_or_list, rto_s=number_or_list, m_star=st.none() | number_or_list)
def test_the_crossover_of_any_finite_numbers_is_a_result_or_a_422(models_api, p, rtt_s, rto_s, m_star):
    body = {"p": p, "rtt_s": rtt_s, "rto_s": rto_s} | ({} if m_star is None else {"m_star": m_star})
    _answers(models_api, "/v1/models/newreno/crossover", body)


@FUZZ
@given(
    p=st.lists(extreme, min_size=1, max_size=4),
    m=st.lists(extreme, min_size=1, max_size=4),
    rtt_s=extreme,
    rto_s=extreme,
    m_star=st.none() | extreme,
)
def test_the_region_map_of_any_finite_numbers_is_a_result_or_a_422(models_api, p, m, rtt_s, rto_s, m_star):
    body = {"p": p, "m": m, "rtt_s": rtt_s, "rto_s": rto_s} | ({} if m_star is None else {"m_star": m_star})
    _answers(models_api, "/v1/models/newreno/regions", body)


# The corners of the models' domains, where double precision gives out: hypothesis rarely draws
# three of them at once, so every combination is tried.
P_CORNERS = [5e-324, 1e-300, 1e-9, 0.01, 0.5, 0.999999]
TIME_CORNERS = [5e-324, 1e-300, 1e-3, 1.0, 1e300, 1.7976931348623157e308]
M_CORNERS = [1.0, 4.0, 1e300, 1.7976931348623157e308]


@pytest.mark.parametrize("m_star", [None, 1.0, 4.0, 1e300])
def test_the_crossover_answers_every_corner_of_its_domain(models_api, m_star):
    grid = list(itertools.product(P_CORNERS, TIME_CORNERS, TIME_CORNERS))
    p, rtt_s, rto_s = (list(column) for column in zip(*grid, strict=True))
    body = {"p": p, "rtt_s": rtt_s, "rto_s": rto_s} | ({} if m_star is None else {"m_star": m_star})
    _answers(models_api, "/v1/models/newreno/crossover", body)
    for row in grid:  # one at a time: a 422 for one corner must not hide a 500 of another
        single = dict(zip(("p", "rtt_s", "rto_s"), row, strict=True)) | ({} if m_star is None else {"m_star": m_star})
        _answers(models_api, "/v1/models/newreno/crossover", single)


@pytest.mark.parametrize("m_star", [None, 4.0, 1e300])
def test_the_region_map_answers_every_corner_of_its_domain(models_api, m_star):
    for rtt_s, rto_s in itertools.product(TIME_CORNERS, TIME_CORNERS):
        body = {"p": P_CORNERS, "m": M_CORNERS, "rtt_s": rtt_s, "rto_s": rto_s}
        _answers(models_api, "/v1/models/newreno/regions", body | ({} if m_star is None else {"m_star": m_star}))


@pytest.mark.parametrize("name", list(MODELS))
def test_every_model_answers_every_corner_of_its_domain(models_api, name):
    """One grid request: the outer product of every parameter's corners (valid, all of them)."""
    corners = {
        "p": P_CORNERS,
        "m": M_CORNERS,
        "rtt_s": TIME_CORNERS,
        "rto_s": TIME_CORNERS,
        "m_star": M_CORNERS,
        "b": [1.0, 2.0, 1e300],
        "w_max": M_CORNERS,
        "mss_bytes": [1.0, 1460.0, 1e300],
        "c": [5e-324, 0.4, 1e300],
        "beta": [5e-324, 0.7, 0.9999999],
    }
    body = {p.name: corners[p.name] for p in MODELS[name].params} | {"mode": "grid"}
    r = models_api.post(f"/v1/models/{name}/evaluate", json=body)
    assert r.status_code == 200, (name, r.status_code, r.text[:500])
