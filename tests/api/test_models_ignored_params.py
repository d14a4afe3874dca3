"""One command line for both NewReno models (issue 15): Slow-but-Steady accepts Impatient's
`rto_s` and `m_star`, does not use them, and says so in a warning naming each — instead of a
422 for an extra field. Everything else still refuses what it does not know."""

from __future__ import annotations

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from api.routers import models as models_router

SBS = "/v1/models/newreno-sbs/evaluate"
BASE = {"p": 0.001, "m": 4, "rtt_s": 0.07}


@pytest.fixture(scope="module")
def models_api() -> TestClient:
    app = FastAPI()
    app.include_router(models_router.router)
    return TestClient(app)


def test_sbs_accepts_rto_and_m_star_answers_the_same_and_names_each_as_unused(models_api: TestClient) -> None:
    plain = models_api.post(SBS, json=BASE).json()
    r = models_api.post(SBS, json={**BASE, "rto_s": 0.35, "m_star": 7})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["outputs"] == plain["outputs"] and body["inputs"] == plain["inputs"]
    unused = {w["parameter"]: w for w in body["warnings"]}
    assert set(unused) == {"rto_s", "m_star"} and plain["warnings"] == []
    assert unused["rto_s"]["reason"].startswith("not used by newreno-sbs") and "times out" in unused["rto_s"]["reason"]
    assert unused["rto_s"]["points"] == 1


def test_an_unused_list_counts_every_point_and_a_non_number_is_still_a_422(models_api: TestClient) -> None:
    r = models_api.post(SBS, json={**BASE, "p": [0.001, 0.002, 0.004], "rto_s": [0.2, 0.3, 0.4]})
    assert r.status_code == 200 and r.json()["shape"] == [3]
    assert [w["points"] for w in r.json()["warnings"] if w["parameter"] == "rto_s"] == [3]
    bad = models_api.post(SBS, json={**BASE, "rto_s": "slow"})
    assert bad.status_code == 422 and bad.json()["detail"][0]["loc"][:2] == ["body", "rto_s"]
    unknown = models_api.post(SBS, json={**BASE, "rto": 0.35})
    assert unknown.status_code == 422 and unknown.json()["detail"][0]["type"] == "extra_forbidden"


def test_the_models_metadata_lists_what_it_ignores_and_impatient_still_uses_rto(models_api: TestClient) -> None:
    sbs = models_api.get("/v1/models/newreno-sbs").json()
    assert [p["name"] for p in sbs["ignored_parameters"]] == ["rto_s", "m_star"]
    assert "rto_s" not in {p["name"] for p in sbs["parameters"]}
    imp = models_api.post("/v1/models/newreno-impatient/evaluate", json={**BASE, "m": 8, "rto_s": 0.35}).json()
    assert not [w for w in imp["warnings"] if "not used" in w["reason"]]
    assert imp["outputs"]["timeout_regime"] is True
    assert models_api.get("/v1/models/mathis").json()["ignored_parameters"] == []
