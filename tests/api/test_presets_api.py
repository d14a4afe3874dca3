"""GET /v1/presets and /v1/presets/{name}, on a bare FastAPI app with the router alone."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

import tcpsim
from api.routers.presets import router
from services.presets import get_preset, list_presets
from services.scenarios import cache_key
from services.traces.builtin import builtin_trace_file
from services.traces.refs import link_traces

NAMES = [p.name for p in list_presets()]


def as_the_core_reads(scenario: dict[str, Any]) -> dict[str, Any]:
    """`tcpsim.normalize`, a trace named in the service's way (a built-in one) read from the file
    it names, then named again: the core does not know the service's name form."""
    files = copy.deepcopy(scenario)
    named = []
    for _, trace in link_traces(files):
        named.append(dict(trace))
        found = {
            core: builtin_trace_file(trace[key])
            for key, core in (("name", "file"), ("reverse_name", "reverse_file"))
            if key in trace
        }
        trace.clear()
        trace.update({core: str(f[1]) for core, f in found.items() if f is not None})
    normal = tcpsim.normalize(files)
    for (_, trace), original in zip(link_traces(normal), named, strict=True):
        trace.clear()
        trace.update(original)
    return normal


@pytest.fixture(scope="module")
def client() -> TestClient:
    app = FastAPI()
    app.include_router(router)
    return TestClient(app)


def test_the_list_has_every_preset_with_its_metadata_but_not_its_scenario(client):
    response = client.get("/v1/presets")
    assert response.status_code == 200
    body = response.json()
    assert [p["name"] for p in body] == NAMES
    for p in body:
        assert {"name", "title", "description", "reference", "tcp_profile", "parameters"} <= set(p)
        assert p["tcp_profile"] == get_preset(p["name"]).tcp_profile
        assert "scenario" not in p
        if p["name"].startswith("study-"):  # a study: its sources, no paper and no published numbers
            assert p["reference"].get("paper") is None and p["reference"]["citation"] and "published" not in p
        else:
            assert p["reference"]["paper"] == p["name"][5:8] and "published" in p  # paperNNN-...
        assert p["parameters"] and all("name" in q and "meaning" in q for q in p["parameters"])


def test_the_table2_preset_lists_table_ii_and_the_background_flows_parameter(client):
    body = {p["name"]: p for p in client.get("/v1/presets").json()}
    table2 = body["paper000-table2-droptail"]
    (table,) = table2["published"]["tables"]
    assert table["name"] == "Table II" and len(table["rows"]) == 15
    assert table["rows"][7] == {
        "background_flows": 64,
        "loss_event_rate": 0.0066,
        "loss_rate": 0.0199,
        "sim_pkts_per_rtt": 12.89,
        "model_pkts_per_rtt": 11.15,
    }
    background = next(q for q in table2["parameters"] if q["name"] == "background_flows")
    assert background["default"] == 64 and background["paper_range"] == [4, 256]
    assert background["expands_to"] == ["flows[2].count", "flows[3].count"]
    fig2a = body["paper000-fig2a"]
    assert fig2a["published"]["values"]["analytic_crossover_m_t"] == 27
    assert fig2a["published"]["values"]["sbs_superior_m"] == [4, 25]


@pytest.mark.parametrize("name", NAMES)
def test_one_preset_comes_with_its_full_scenario(client, name):
    response = client.get(f"/v1/presets/{name}")
    assert response.status_code == 200
    body = response.json()
    assert body["name"] == name
    scenario = body["scenario"]
    # Every default spelled out, exactly the core's reading, no nulls.
    assert scenario == as_the_core_reads(get_preset(name).scenario)
    assert cache_key(scenario, tcpsim.__version__) == cache_key(get_preset(name).scenario, tcpsim.__version__)
    assert "null" not in response.text


def test_an_unknown_preset_is_a_404_naming_the_known_ones(client):
    response = client.get("/v1/presets/paper999-fig1")
    assert response.status_code == 404
    assert "paper999-fig1" in response.json()["detail"] and "paper000-fig2a" in response.json()["detail"]


def test_the_openapi_document_describes_the_presets_and_the_scenario_schema(client):
    doc = client.get("/openapi.json").json()
    assert set(doc["paths"]) == {"/v1/presets", "/v1/presets/{name}"}
    assert doc["paths"]["/v1/presets"]["get"]["tags"] == ["presets"]
    schemas = doc["components"]["schemas"]
    assert {"PresetSummary", "PresetDetail", "Scenario", "TcpConfig", "BernoulliEventsLoss"} <= set(schemas)
    assert "404" in doc["paths"]["/v1/presets/{name}"]["get"]["responses"]
