"""The client's pure pieces, without a server: reading YAML/JSON, `--set` paths, turning an
error response into a typed error, the config file's precedence."""

from __future__ import annotations

import io
import json
from pathlib import Path

import httpx
import pytest

from tcplab_client.config import Config, resolve, save_config
from tcplab_client.errors import Conflict, InvalidInput, NotFound, ServerError, TcplabError, Unavailable, error_for
from tcplab_client.files import BadFile, load_file, parse_assignment, parse_text, set_path


def test_yaml_and_json_by_extension_and_by_content(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    doc = {"duration_s": 5, "flows": [{"name": "a", "rtt_ms": 70.5}]}
    (tmp_path / "s.json").write_text(json.dumps(doc))
    (tmp_path / "s.yml").write_text("duration_s: 5\nflows:\n  - {name: a, rtt_ms: 70.5}\n")
    (tmp_path / "s.txt").write_text(json.dumps(doc))
    assert load_file(tmp_path / "s.json") == load_file(tmp_path / "s.yml") == load_file(tmp_path / "s.txt") == doc
    monkeypatch.setattr("sys.stdin", io.StringIO("duration_s: 5\nflows: [{name: a, rtt_ms: 70.5}]\n"))
    assert load_file("-") == doc
    assert parse_text('  {"a": 1}') == {"a": 1}

    (tmp_path / "bad.json").write_text("duration_s: 5\n")
    with pytest.raises(BadFile, match="not valid JSON"):
        load_file(tmp_path / "bad.json")
    with pytest.raises(BadFile, match="not valid YAML"):
        parse_text("a: [1,\n")
    with pytest.raises(BadFile, match="no such file"):
        load_file(tmp_path / "missing.yaml")


def test_set_paths_in_a_scenario() -> None:
    scenario = {"duration_s": 10, "flows": [{"loss": {"m": 1}}, {"loss": {"m": 1}}]}
    set_path(scenario, "flows[*].loss.m", 4)
    set_path(scenario, "flows[1].rtt_ms", 30)
    set_path(scenario, "$.duration_s", 5)
    set_path(scenario, "topology.dumbbell.bottleneck.rate_mbps", 15)
    assert scenario == {
        "duration_s": 5,
        "flows": [{"loss": {"m": 4}}, {"loss": {"m": 4}, "rtt_ms": 30}],
        "topology": {"dumbbell": {"bottleneck": {"rate_mbps": 15}}},
    }
    with pytest.raises(BadFile, match=r"no element \[5\]"):
        set_path(scenario, "flows[5].rtt_ms", 1)
    with pytest.raises(BadFile, match="needs a list"):
        set_path(scenario, "duration_s[*]", 1)

    assert parse_assignment("duration_s=5") == ("duration_s", 5)
    assert parse_assignment("flows[*].loss.p = 0.001") == ("flows[*].loss.p", 0.001)
    assert parse_assignment("flows[*].variant=newreno-sbs") == ("flows[*].variant", "newreno-sbs")
    assert parse_assignment("queue={type: red, min_th: 5}") == ("queue", {"type": "red", "min_th": 5})
    with pytest.raises(BadFile, match="path=value"):
        parse_assignment("duration_s")


def _response(status: int, body: object, path: str = "/v1/runs") -> httpx.Response:
    request = httpx.Request("GET", f"http://lab{path}")
    if isinstance(body, str):
        return httpx.Response(status, text=body, request=request)
    return httpx.Response(status, json=body, request=request)


def test_error_responses_become_typed_errors_with_the_servers_message() -> None:
    invalid = error_for(
        _response(
            422,
            {
                "detail": [
                    {
                        "loc": ["body", "scenario", "duration_s"],
                        "msg": "must be > 0",
                        "type": "x",
                        "path": "$.scenario.duration_s",
                    },
                    {"loc": ["query", "metric"], "msg": "unknown metric 'x'", "type": "unknown_metric", "input": None},
                ]
            },
        )
    )
    assert isinstance(invalid, InvalidInput) and invalid.status == 422
    assert [(e.path, e.msg) for e in invalid.errors] == [
        ("$.scenario.duration_s", "must be > 0"),
        ("query.metric", "unknown metric 'x'"),
    ]
    assert str(invalid) == "$.scenario.duration_s: must be > 0\nquery.metric: unknown metric 'x'"
    assert len(invalid.detail) == 2

    not_found = error_for(_response(404, {"detail": "run 1 not found"}))
    assert isinstance(not_found, NotFound) and str(not_found) == "run 1 not found"
    assert isinstance(error_for(_response(409, {"detail": "it is queued"})), Conflict)
    unavailable = error_for(
        _response(503, {"status": "unavailable", "checks": {"database": "down", "broker": "ok"}}, "/readyz")
    )
    assert isinstance(unavailable, Unavailable) and "database: down" in str(unavailable)
    server = error_for(_response(500, "Internal Server Error"))
    assert isinstance(server, ServerError) and "Internal Server Error" in str(server)
    other = error_for(_response(413, {"detail": "too large"}))
    assert type(other) is TcplabError and other.status == 413 and "too large" in str(other)


def test_the_config_token_goes_only_to_the_config_url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TCPLAB_URL", raising=False)
    monkeypatch.delenv("TCPLAB_TOKEN", raising=False)
    config = Config(url="http://lab:8000/", token="t")
    assert resolve(None, None, config) == ("http://lab:8000", "t")
    assert resolve("http://other:8000", None, config) == ("http://other:8000", None)
    assert resolve("http://other:8000", "x", config) == ("http://other:8000", "x")
    assert resolve(None, None, Config()) == ("http://127.0.0.1:8000", None)
    monkeypatch.setenv("TCPLAB_URL", "lab:8000")
    assert resolve(None, None, config) == ("http://lab:8000", "t")
    monkeypatch.setenv("TCPLAB_TOKEN", "env")
    assert resolve(None, None, config) == ("http://lab:8000", "env")

    path = save_config(Config(url="http://lab", token='quote " and \\ backslash'), tmp_path / "c" / "config.toml")
    import tomllib

    assert tomllib.loads(path.read_text())["token"] == 'quote " and \\ backslash'
