"""/v1/models on a bare FastAPI app (the router alone: no database, no worker)."""

from __future__ import annotations

import time

import numpy as np
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from api.routers import models as models_router
from services.models import MODELS, newreno


@pytest.fixture(scope="module")
def models_api() -> TestClient:
    app = FastAPI()
    app.include_router(models_router.router)
    return TestClient(app)


# ---- GET ---------------------------------------------------------------------------------------


def test_list_models_gives_every_model_with_units_ranges_and_reference(models_api):
    r = models_api.get("/v1/models")
    assert r.status_code == 200
    body = {m["name"]: m for m in r.json()}
    assert set(body) == set(MODELS)
    sbs = body["newreno-sbs"]
    assert "ICC 2006" in sbs["reference"] and "eq. (1)-(4)" in sbs["reference"]
    assert sbs["evaluate"] == "/v1/models/newreno-sbs/evaluate"
    params = {p["name"]: p for p in sbs["parameters"]}
    assert params["rtt_s"]["unit"] == "s" and params["rtt_s"]["domain"]["exclusive_minimum"] == 0
    assert params["p"]["valid_range"]["maximum"] == 0.05 and params["p"]["valid_range"]["reason"]
    assert params["mss_bytes"]["required"] is False
    pftk = {p["name"]: p for p in body["pftk-full"]["parameters"]}
    assert pftk["b"]["default"] == 1 and pftk["w_max"]["required"] is False


def test_show_one_model_and_404_for_an_unknown_one(models_api):
    assert models_api.get("/v1/models/mathis").json()["title"].startswith("Square-root law")
    r = models_api.get("/v1/models/bbr")
    assert r.status_code == 404 and "unknown model 'bbr'" in r.json()["detail"]


# ---- evaluate ----------------------------------------------------------------------------------


def test_evaluate_sbs_reproduces_a_table_ii_row(models_api):
    """Paper 000 Table II, 32 background flows: loss event rate 0.21 %, loss rate 0.81 %."""
    r = models_api.post("/v1/models/newreno-sbs/evaluate", json={"p": 0.0021, "m": 0.0081 / 0.0021, "rtt_s": 0.05})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["shape"] == [] and body["warnings"] == []
    assert body["outputs"]["throughput_pkts_per_rtt"] == pytest.approx(22.06, abs=0.03)
    assert body["inputs"] == {"p": 0.0021, "m": pytest.approx(3.857, abs=1e-3), "rtt_s": 0.05}


def test_evaluate_broadcast_lists_and_mss(models_api):
    r = models_api.post(
        "/v1/models/newreno-impatient/evaluate",
        json={"p": [0.0005, 0.001], "m": [2, 30], "rtt_s": 0.0703, "rto_s": 0.2, "mss_bytes": 1000},
    )
    assert r.status_code == 200, r.text
    out = r.json()["outputs"]
    assert r.json()["shape"] == [2]
    assert out["timeout_regime"] == [False, True]
    assert out["m_star"] == [4, 4]
    assert out["throughput_pkts_per_rtt"][1] == pytest.approx(newreno.imp_timeout_pkts_per_rtt(0.001, 0.0703, 0.2))
    assert out["throughput_bits_per_s"][0] == pytest.approx(out["throughput_pkts_per_s"][0] * 8000)


def test_evaluate_grid_gives_the_outer_product(models_api):
    r = models_api.post(
        "/v1/models/pftk-full/evaluate",
        json={"p": [0.001, 0.01, 0.1], "rtt_s": [0.05, 0.2], "rto_s": 1.0, "b": 2, "mode": "grid"},
    )
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["shape"] == [3, 2] and body["axes"] == ["p", "rtt_s"]
    assert np.array(body["outputs"]["throughput_pkts_per_s"]).shape == (3, 2)
    assert body["inputs"]["b"] == 2 and "w_max" not in body["inputs"]


def test_evaluate_defaults_b_to_one(models_api):
    r = models_api.post("/v1/models/mathis/evaluate", json={"p": 0.0001, "rtt_s": 0.1})
    assert r.json()["inputs"]["b"] == 1
    assert r.json()["outputs"]["throughput_pkts_per_rtt"] == pytest.approx(np.sqrt(1.5) * 100)


def test_evaluate_out_of_range_inputs_answer_with_warnings(models_api):
    r = models_api.post("/v1/models/mathis/evaluate", json={"p": [0.001, 0.05], "rtt_s": 0.1})
    assert r.status_code == 200
    (w,) = r.json()["warnings"]
    assert w["parameter"] == "p" and w["points"] == 1 and "timeouts" in w["reason"]


def test_evaluate_an_unknown_model_is_404(models_api):
    for name in ("bbr", "newreno"):
        r = models_api.post(f"/v1/models/{name}/evaluate", json={"p": 0.01})
        assert r.status_code == 404
        assert "known models: newreno-sbs" in r.json()["detail"]


@pytest.mark.parametrize(
    ("body", "loc", "words"),
    [
        ({"p": 0, "m": 2, "rtt_s": 0.1}, ["body", "p"], "0 < p < 1"),
        ({"p": 1, "m": 2, "rtt_s": 0.1}, ["body", "p"], "probability"),
        ({"p": [0.01, 0.02, 1.5], "m": 2, "rtt_s": 0.1}, ["body", "p", 2], "0 < p < 1"),
        ({"p": 0.01, "m": 2, "rtt_s": -1}, ["body", "rtt_s"], "R > 0"),
        ({"p": 0.01, "m": 0, "rtt_s": 0.1}, ["body", "m"], "m ≥ 1"),
        ({"p": 0.01, "m": [1, 0.5], "rtt_s": 0.1}, ["body", "m", 1], "at least one segment"),
    ],
)
def test_impossible_inputs_are_422_with_the_json_path_and_the_reason(models_api, body, loc, words):
    r = models_api.post("/v1/models/newreno-sbs/evaluate", json=body)
    assert r.status_code == 422
    (err,) = r.json()["detail"]
    assert err["loc"] == loc and words in err["msg"] and err["type"] == "value_error"


def test_422_for_impatient_parameters_and_mismatched_lists(models_api):
    r = models_api.post(
        "/v1/models/newreno-impatient/evaluate",
        json={"p": 0.01, "m": 5, "rtt_s": 0.1, "rto_s": 0, "m_star": 2.5},
    )
    assert r.status_code == 422
    assert [e["loc"] for e in r.json()["detail"]] == [["body", "rto_s"], ["body", "m_star"]]
    r = models_api.post("/v1/models/mathis/evaluate", json={"p": [0.01, 0.02], "rtt_s": [0.1, 0.2, 0.3]})
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["body", "mode"]


def test_malformed_bodies_are_pydantic_422s(models_api):
    for body in ({"p": "x", "rtt_s": 0.1}, {"p": 0.01}, {"p": 0.01, "rtt_s": 0.1, "rto_s": 1}, {"p": [], "rtt_s": 0.1}):
        r = models_api.post("/v1/models/mathis/evaluate", json=body)
        assert r.status_code == 422, body
        assert r.json()["detail"][0]["loc"][0] == "body"


def test_too_many_points_is_422(models_api):
    r = models_api.post(
        "/v1/models/mathis/evaluate",
        json={"p": list(np.geomspace(1e-5, 0.01, 400)), "rtt_s": list(np.linspace(0.01, 1, 400)), "mode": "grid"},
    )
    assert r.status_code == 422 and "at most 100000" in r.json()["detail"][0]["msg"]


# ---- crossover and regions ---------------------------------------------------------------------


def test_crossover_for_the_paper_setting(models_api):
    r = models_api.post("/v1/models/newreno/crossover", json={"p": [0.0005, 0.001, 0.05], "rtt_s": 0.07, "rto_s": 0.2})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["m_t_int"] == [24, 19, None]
    assert body["status"] == ["crossover", "crossover", "beyond_model"]
    assert body["m_t"][0] == pytest.approx(23.862, abs=1e-3) and body["m_t"][2] is None
    assert body["m_star"] == [4, 4, 4]
    assert body["warnings"] == []


def test_crossover_over_a_log_range_of_p(models_api):
    r = models_api.post(
        "/v1/models/newreno/crossover",
        json={"p": {"start": 1e-5, "stop": 0.1, "num": 50, "scale": "log"}, "rtt_s": 0.07, "rto_s": 0.327},
    )
    assert r.status_code == 200, r.text
    body = r.json()
    assert len(body["m_t"]) == 50 and body["p"][0] == pytest.approx(1e-5) and body["p"][-1] == pytest.approx(0.1)
    assert any(w["parameter"] == "p" for w in body["warnings"])  # p > 5 %


def test_crossover_422(models_api):
    r = models_api.post("/v1/models/newreno/crossover", json={"p": [0.001, 0], "rtt_s": 0.07, "rto_s": 0.2})
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["body", "p", 1]
    r = models_api.post(
        "/v1/models/newreno/crossover", json={"p": {"start": 0, "stop": 0.1, "num": 5}, "rtt_s": 0.07, "rto_s": 0.2}
    )
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["body", "p"]
    r = models_api.post(
        "/v1/models/newreno/crossover", json={"p": {"start": 0.1, "stop": 0.2}, "rtt_s": 0.07, "rto_s": 0.2}
    )
    assert r.status_code == 422  # neither step nor num


def test_regions_map_with_ranges(models_api):
    r = models_api.post(
        "/v1/models/newreno/regions",
        json={
            "p": [0.0005, 0.001, 0.03],
            "m": {"start": 1, "stop": 70, "step": 1},
            "rtt_s": 0.07,
            "rto_s": 0.2,
        },
    )
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["m"] == list(range(1, 71)) and body["m_star"] == 4
    row = body["labels"][0]
    assert row[:3] == ["equality"] * 3
    assert row[3:23] == ["sbs_superior"] * 20  # m = 4 … 23
    assert row[23:61] == ["imp_superior"] * 38  # m = 24 … 61 (W_IMP − 3 = 61.4)
    assert set(row[61:]) == {"outside_model"}
    assert body["m_t_int"][:2] == [24, 19] and body["status"][2] == "beyond_model"
    assert sum(body["counts"].values()) == 3 * 70
    assert set(body["legend"]) == {"equality", "sbs_superior", "imp_superior", "outside_model"}
    assert body["w_imp_minus_3"][0] == pytest.approx(61.41, abs=0.01)


def test_regions_422(models_api):
    for body, loc in (
        ({"p": [0.001], "m": [0, 1], "rtt_s": 0.07, "rto_s": 0.2}, ["body", "m", 0]),
        ({"p": [0.001], "m": [1], "rtt_s": -1, "rto_s": 0.2}, ["body", "rtt_s"]),
        ({"p": [1.0], "m": [1], "rtt_s": 0.07, "rto_s": 0.2}, ["body", "p", 0]),
    ):
        r = models_api.post("/v1/models/newreno/regions", json=body)
        assert r.status_code == 422, body
        assert r.json()["detail"][0]["loc"] == loc


def test_openapi_documents_each_models_body(models_api):
    spec = models_api.get("/openapi.json").json()
    paths = spec["paths"]
    for name in MODELS:
        assert f"/v1/models/{name}/evaluate" in paths
    assert "/v1/models/{name}/evaluate" not in paths
    schema = spec["components"]["schemas"]["EvaluateNewrenoSbs"]
    assert set(schema["required"]) == {"p", "m", "rtt_s"}
    assert schema["properties"]["rtt_s"]["x-unit"] == "s"


def test_ten_thousand_points_through_the_api(models_api, capsys):
    """The whole request: JSON in, validation, evaluation, JSON out (printed; generous bound)."""
    rng = np.random.default_rng(3)
    body = {
        "p": rng.uniform(1e-4, 0.05, 10_000).tolist(),
        "m": rng.uniform(1, 30, 10_000).tolist(),
        "rtt_s": 0.07,
        "rto_s": 0.2,
    }
    models_api.post("/v1/models/newreno-impatient/evaluate", json=body)
    times = []
    for _ in range(3):
        t = time.perf_counter()
        r = models_api.post("/v1/models/newreno-impatient/evaluate", json=body)
        times.append(time.perf_counter() - t)
        assert r.status_code == 200 and len(r.json()["outputs"]["throughput_pkts_per_s"]) == 10_000
    with capsys.disabled():
        print(f"\n10,000-point request through the API (TestClient, best of 3): {min(times) * 1e3:.1f} ms")
    assert min(times) < 2.0


@pytest.mark.parametrize(
    ("path", "text", "loc"),
    [
        ("/v1/models/mathis/evaluate", '{"p": NaN, "rtt_s": 0.1}', ["body", "p"]),
        ("/v1/models/mathis/evaluate", '{"p": [0.1, Infinity], "rtt_s": 0.1}', ["body", "p", 1]),
        (
            "/v1/models/newreno/crossover",
            '{"p": {"start": NaN, "stop": 1, "step": 1}, "rtt_s": 0.1, "rto_s": 1}',
            ["body", "p"],
        ),
        (
            "/v1/models/newreno/crossover",
            '{"p": {"start": 0, "stop": Infinity, "step": 1}, "rtt_s": 0.1, "rto_s": 1}',
            ["body", "p"],
        ),
        ("/v1/models/newreno/regions", '{"p": [0.01], "m": [1], "rtt_s": -Infinity, "rto_s": 1}', ["body", "rtt_s"]),
    ],
)
def test_nan_and_infinity_are_422_not_500(models_api, path, text, loc):
    """Python's JSON parser accepts NaN and Infinity; the answer is a 422 whose input is null
    (a NaN echoed back could not be written as JSON)."""
    r = models_api.post(path, content=text, headers={"content-type": "application/json"})
    assert r.status_code == 422, r.text
    (err,) = r.json()["detail"]
    assert err["loc"] == loc and "finite" in err["msg"] and err["input"] is None


def test_too_large_a_region_map_is_422_on_the_body(models_api):
    r = models_api.post(
        "/v1/models/newreno/regions",
        json={
            "p": {"start": 1e-5, "stop": 0.05, "num": 1000, "scale": "log"},
            "m": {"start": 1, "stop": 200, "step": 1},
            "rtt_s": 0.07,
            "rto_s": 0.2,
        },
    )
    assert r.status_code == 422
    (err,) = r.json()["detail"]
    assert err["loc"] == ["body"] and "at most 100000" in err["msg"]


def test_generated_requests_never_get_a_server_error(models_api):
    """schemathesis on the router's own OpenAPI document (the whole app's document is fuzzed
    by tests/api/test_openapi_fuzz.py, with a database): no 500, responses as declared."""
    import schemathesis
    from hypothesis import HealthCheck, given, settings
    from schemathesis.checks import not_a_server_error
    from schemathesis.specs.openapi.checks import response_schema_conformance

    schema = schemathesis.openapi.from_asgi("/openapi.json", models_api.app)
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) == 4 + len(MODELS)
    for operation in operations:

        @given(case=operation.as_strategy())
        @settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
        def check(case):
            case.call_and_validate(checks=[not_a_server_error, response_schema_conformance])

        check()
