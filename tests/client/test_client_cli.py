"""`tcplab` through Typer's CliRunner against the launched service, and once as the installed
`.venv/bin/tcplab` in a subprocess: login and its config, runs from YAML and JSON, sweeps,
results in every format, models, presets, cancel, and the exit codes of errors."""

from __future__ import annotations

import io
import json
import os
import stat
import subprocess
import sys
import threading
import tomllib
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pandas as pd
import pyarrow.parquet as pq
import pytest
import yaml
from click.testing import Result
from typer.testing import CliRunner

from tcplab_client import Client
from tcplab_client.cli import app
from tests.client.helpers import SHORT_RUN, TINY_SWEEP, small_scenario
from tests.support import LaunchedService, free_port

runner = CliRunner()


def tcplab(*args: str, input: str | None = None) -> Result:
    return runner.invoke(app, list(args), input=input, catch_exceptions=False)


@pytest.fixture
def url(launched_service: LaunchedService, isolated_config: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """The launched service's URL, with its admin token in TCPLAB_TOKEN for the commands."""
    monkeypatch.setenv("TCPLAB_TOKEN", launched_service.token)
    return launched_service.base_url


def last_line(text: str) -> str:
    return text.strip().splitlines()[-1]


# ---- login, config, token ------------------------------------------------------------------------


class _Recorder(BaseHTTPRequestHandler):
    """A tiny HTTP server that records each request's Authorization header (only to see what
    the client sends; everything else runs against the real service)."""

    seen: ClassVar[list[tuple[str, str | None]]] = []

    def do_GET(self) -> None:
        self.seen.append((self.path, self.headers.get("Authorization")))
        if self.path.startswith("/healthz"):
            body: Any = {"status": "ok", "version": "0.0", "core_version": "0.0"}
        elif self.path.startswith("/v1/me"):
            body = {"name": "recorded", "is_admin": False}
        else:
            body = {"items": [], "total": 0, "limit": 20, "offset": 0}
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def recorder() -> Iterator[tuple[str, list[tuple[str, str | None]]]]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    _Recorder.seen = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", _Recorder.seen
    finally:
        server.shutdown()
        server.server_close()


def test_login_writes_a_private_config_and_the_token_is_sent(
    recorder: tuple[str, list[tuple[str, str | None]]], isolated_config: Path
) -> None:
    base, seen = recorder
    result = tcplab("login", "--url", base, "--token", "s3cret-token")
    assert result.exit_code == 0, result.output
    path = isolated_config / "tcplab" / "config.toml"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert tomllib.loads(path.read_text()) == {"url": base, "token": "s3cret-token"}
    # login checked the server and the token
    assert seen == [("/healthz", "Bearer s3cret-token"), ("/v1/me", "Bearer s3cret-token")]
    assert "as recorded" in result.stderr

    # Later commands use the stored server and token.
    assert tcplab("runs").exit_code == 0
    assert seen[-1] == ("/v1/runs?limit=20&offset=0", "Bearer s3cret-token")
    with Client() as lab:
        assert (lab.base_url, lab.token) == (base, "s3cret-token")

    # --token and TCPLAB_TOKEN override the file; a token stored for one server is not sent
    # to another named by --url.
    assert tcplab("--token", "other", "runs").exit_code == 0
    assert seen[-1][1] == "Bearer other"
    with Client(f"http://127.0.0.1:{free_port()}") as elsewhere:
        assert elsewhere.token is None
    os.environ["TCPLAB_TOKEN"] = "from-env"
    try:
        with Client() as lab:
            assert lab.token == "from-env"
    finally:
        del os.environ["TCPLAB_TOKEN"]

    # Login again: the file is rewritten, still 0600.
    path.chmod(0o644)
    assert tcplab("login", "--url", base, "--token", "new").exit_code == 0
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert tomllib.loads(path.read_text())["token"] == "new"


def test_login_against_the_service_and_a_server_that_is_not_there(
    url: str, isolated_config: Path, launched_service: LaunchedService, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TCPLAB_TOKEN")
    refused = tcplab("login", "--url", url, "--token", "not-a-token")
    assert refused.exit_code == 1 and "unknown or revoked" in refused.stderr, refused.output
    assert not (isolated_config / "tcplab" / "config.toml").exists()  # nothing saved

    result = tcplab("login", "--url", url, "--token", launched_service.token)
    assert result.exit_code == 0, result.output
    assert "logged in" in result.stderr and "as admin" in result.stderr
    assert tcplab("presets").exit_code == 0  # the stored URL and token are used

    nowhere = f"http://127.0.0.1:{free_port()}"
    result = tcplab("login", "--url", nowhere, "--token", "t")
    assert result.exit_code == 1
    assert "cannot reach tcplab" in result.stderr and "Traceback" not in result.output
    assert tomllib.loads((isolated_config / "tcplab" / "config.toml").read_text())["url"] == url


# ---- runs -----------------------------------------------------------------------------------------


def test_run_a_preset_and_wait_prints_the_flows(url: str) -> None:
    result = tcplab(
        "--url", url, "run", "--preset", "paper000-fig2a", "--set", "duration_s=5", "--set", "warmup_s=1", "--wait"
    )
    assert result.exit_code == 0, result.output
    run_id = result.stdout.strip().splitlines()[0]
    uuid.UUID(run_id)
    assert "sbs" in result.stdout and "newreno-impatient" in result.stdout and "pkts/RTT" in result.stdout


def test_yaml_and_json_files_give_the_same_run(url: str, tmp_path: Path, session_seed: int) -> None:
    scenario = small_scenario(session_seed)
    as_json = tmp_path / "scenario.json"
    as_json.write_text(json.dumps(scenario))
    as_yaml = tmp_path / "scenario.yaml"
    as_yaml.write_text(yaml.safe_dump(scenario, sort_keys=True))  # another order, another syntax

    first = tcplab("--url", url, "run", str(as_json), "--wait")
    assert first.exit_code == 0, first.output
    second = tcplab("--url", url, "run", str(as_yaml))
    assert second.exit_code == 0, second.output
    assert "answered from a stored identical run" in second.stderr
    ids = [first.stdout.splitlines()[0], second.stdout.strip()]
    with Client(url) as lab:
        runs = [lab.run(i) for i in ids]
    assert runs[0]["cache_key"] == runs[1]["cache_key"]
    assert runs[1]["status"] == "succeeded"

    # stdin: YAML or JSON sniffed from the content; a {preset, overrides} file; --set on a
    # scenario file changes it before submission.
    via_stdin = tcplab("--url", url, "run", "-", "--json", input=as_yaml.read_text())
    assert json.loads(via_stdin.stdout)["cached"] is True
    via_stdin = tcplab("--url", url, "run", "-", "--json", input=json.dumps(scenario))
    assert json.loads(via_stdin.stdout)["cache_key"] == runs[0]["cache_key"]
    changed = tcplab("--url", url, "run", str(as_yaml), "--set", "flows[0].loss.m=4", "--json")
    assert json.loads(changed.stdout)["cache_key"] != runs[0]["cache_key"]
    submission = tmp_path / "preset.yml"
    submission.write_text(yaml.safe_dump(SHORT_RUN))
    assert tcplab("--url", url, "run", str(submission), "--wait").exit_code == 0


def test_run_errors_are_one_red_line_and_an_exit_code(url: str, tmp_path: Path) -> None:
    bad = small_scenario(1)
    bad["flows"][0]["rtt_ms"] = -5
    bad["duration_s"] = "long"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bad))
    result = tcplab("--url", url, "run", str(path))
    assert result.exit_code == 2
    assert "$.scenario.flows[0].rtt_ms:" in result.stderr and "$.scenario.duration_s:" in result.stderr
    assert "Traceback" not in result.output

    broken = tmp_path / "broken.yaml"
    broken.write_text("flows: [unclosed\n")
    result = tcplab("--url", url, "run", str(broken))
    assert result.exit_code == 2 and "not valid YAML" in result.stderr
    result = tcplab("--url", url, "run", str(tmp_path / "missing.yaml"))
    assert result.exit_code == 2 and "no such file" in result.stderr
    result = tcplab("--url", url, "run")
    assert result.exit_code == 2 and "--preset" in result.stderr
    result = tcplab("--url", url, "run", "--preset", "nope")
    assert result.exit_code == 2 and "nope" in result.stderr
    result = tcplab("--url", f"http://127.0.0.1:{free_port()}", "run", "--preset", "paper000-fig2a")
    assert result.exit_code == 1 and "cannot reach tcplab" in result.stderr


# ---- sweeps and results -----------------------------------------------------------------------------


def test_sweep_wait_and_results_in_every_format(url: str, tmp_path: Path) -> None:
    spec = tmp_path / "sweep.yaml"
    spec.write_text(yaml.safe_dump(TINY_SWEEP))
    result = tcplab("--url", url, "sweep", str(spec), "--wait")
    assert result.exit_code == 0, result.output
    sweep_id = result.stdout.splitlines()[0]
    assert "2 points × 2 replications" in result.stderr
    assert "4/4" in result.stderr  # the progress bar's last state
    assert "flows[*].loss.m" in result.stdout and "throughput_pkts_per_rtt" in result.stdout

    listed = tcplab("--url", url, "sweeps")
    assert listed.exit_code == 0 and sweep_id in listed.stdout

    metric = ["--metric", "throughput_pkts_per_rtt"]
    out = {fmt: tmp_path / f"summary.{fmt}" for fmt in ("csv", "parquet", "json")}
    for fmt, path in out.items():
        r = tcplab("--url", url, "results", sweep_id, "--format", fmt, "--output", str(path), *metric)
        assert r.exit_code == 0, r.output
    rows = json.loads(out["json"].read_text())["rows"]
    frames = [pd.DataFrame(rows), pd.read_csv(out["csv"]), pq.read_table(out["parquet"]).to_pandas()]
    with Client(url) as lab:
        frames.append(lab.sweep_summary(sweep_id, metric="throughput_pkts_per_rtt", format="frame"))
    columns = list(frames[-1].columns)
    for frame in frames[:-1]:
        pd.testing.assert_frame_equal(frame[columns], frames[-1], check_dtype=False)
    table = tcplab("--url", url, "results", sweep_id)
    assert table.exit_code == 0 and "95 % CI" in table.stdout

    # A run's results: its flows as a table, JSON, CSV, Parquet (to stdout when piped).
    with Client(url) as lab:
        run_id = lab.sweep_runs(sweep_id)[0]["run_id"]
        flows = lab.result(run_id)["flows"]
        expected = lab.result_frame(run_id)
    as_json = json.loads(tcplab("--url", url, "results", str(run_id), "-f", "json").stdout)
    assert as_json["flows"] == flows
    as_csv = pd.read_csv(io.StringIO(tcplab("--url", url, "results", str(run_id), "-f", "csv").stdout))
    as_parquet = pq.read_table(
        io.BytesIO(tcplab("--url", url, "results", str(run_id), "-f", "parquet").stdout_bytes)
    ).to_pandas()
    pd.testing.assert_frame_equal(as_csv, expected, check_dtype=False)
    pd.testing.assert_frame_equal(as_parquet, expected, check_dtype=False)
    assert "sbs" in tcplab("--url", url, "results", str(run_id)).stdout

    result = tcplab("--url", url, "results", str(uuid.uuid4()))
    assert result.exit_code == 1 and "no run or sweep has the id" in result.stderr
    result = tcplab("--url", url, "results", "not-an-id")
    assert result.exit_code == 2 and "not a run or sweep id" in result.stderr
    result = tcplab("--url", url, "results", sweep_id, "--metric", "no_such_metric", "-f", "json")
    assert result.exit_code == 2 and "metric" in result.stderr


def test_runs_cancel_and_sweep_file_errors(url: str, tmp_path: Path, session_seed: int) -> None:
    spec = tmp_path / "sweep.json"
    spec.write_text(json.dumps({**TINY_SWEEP, "seed": session_seed + 2, "replications": 3}))
    created = tcplab("--url", url, "sweep", str(spec))
    assert created.exit_code == 0, created.output
    sweep_id = created.stdout.strip()
    cancelled = tcplab("--url", url, "cancel", sweep_id)
    assert cancelled.exit_code == 0 and "cancelled" in cancelled.stderr

    runs = tcplab("--url", url, "runs", "--limit", "5", "--json")
    assert runs.exit_code == 0 and len(json.loads(runs.stdout)) == 5
    with Client(url) as lab:
        finished = lab.submit_run(preset=SHORT_RUN["preset"], overrides=SHORT_RUN["overrides"])
        lab.wait_run(finished["id"], progress=False, timeout=120)
    listed = json.loads(tcplab("--url", url, "runs", "--status", "succeeded", "--json").stdout)
    assert listed and {r["status"] for r in listed} == {"succeeded"}
    succeeded = finished["id"]
    assert "succeeded" in tcplab("--url", url, "runs", "--status", "succeeded").stdout
    result = tcplab("--url", url, "cancel", succeeded)
    assert result.exit_code == 1 and succeeded in result.stderr  # 409: the server's message
    assert "Traceback" not in result.output

    bad = tmp_path / "bad-sweep.yaml"
    bad.write_text(yaml.safe_dump({**TINY_SWEEP, "axes": [{"path": "flows[*].loss.m", "values": [-3]}]}))
    result = tcplab("--url", url, "sweep", str(bad))
    assert result.exit_code == 2 and "-3" in result.stderr
    not_a_mapping = tmp_path / "list.yaml"
    not_a_mapping.write_text("- 1\n- 2\n")
    result = tcplab("--url", url, "sweep", str(not_a_mapping))
    assert result.exit_code == 2 and "mapping" in result.stderr


# ---- models and presets ---------------------------------------------------------------------------------


def test_model_options_map_onto_the_models_parameters(url: str) -> None:
    result = tcplab("--url", url, "model", "newreno-sbs", "--p", "0.001", "--m", "4", "--rtt", "0.07")
    assert result.exit_code == 0, result.output
    assert "throughput_pkts_per_rtt" in result.stdout and "33.69" in result.stdout
    result = tcplab(
        "--url",
        url,
        "model",
        "newreno-impatient",
        "--p",
        "0.001,0.01",
        "--m=4",
        "--rtt_s",
        "0.07",
        "--rto",
        "0.2",
        "--json",
    )
    answer = json.loads(result.stdout)
    assert answer["shape"] == [2] and answer["inputs"]["rto_s"] == 0.2
    grid = tcplab(
        "--url",
        url,
        "model",
        "newreno-impatient",
        "--mode",
        "grid",
        "--p",
        "0.001,0.01",
        "--m",
        "2,8",
        "--rtt",
        "0.07",
        "--rto",
        "0.2",
    )
    assert grid.exit_code == 0 and grid.stdout.count("0.001") >= 2

    result = tcplab("--url", url, "model", "newreno-sbs", "--p", "0.001", "--m", "4", "--rtt", "-1")
    assert result.exit_code == 2 and "$.rtt_s:" in result.stderr
    result = tcplab("--url", url, "model", "newreno-sbs", "--q", "3")
    assert result.exit_code == 2 and "--rtt_s" in result.stderr
    result = tcplab("--url", url, "model", "nope", "--p", "1")
    assert result.exit_code == 1 and "unknown model 'nope'" in result.stderr
    assert "mathis" in tcplab("--url", url, "models").stdout


def test_presets(url: str) -> None:
    listed = tcplab("--url", url, "presets")
    assert listed.exit_code == 0 and "paper000-fig2a" in listed.stdout
    one = tcplab("--url", url, "presets", "paper000-fig2a")
    assert one.exit_code == 0 and "flows[*].loss.m" in one.stdout
    assert json.loads(tcplab("--url", url, "presets", "paper000-fig2a", "--json").stdout)["scenario"]
    missing = tcplab("--url", url, "presets", "nope")
    assert missing.exit_code == 1 and "nope" in missing.stderr


# ---- the installed command -----------------------------------------------------------------------------


def test_the_installed_tcplab_runs_a_yaml_scenario_and_waits(url: str, tmp_path: Path, session_seed: int) -> None:
    executable = Path(sys.executable).parent / "tcplab"
    assert executable.exists(), "make install puts tcplab into .venv/bin"
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text(yaml.safe_dump(small_scenario(session_seed + 3)))
    env = {**os.environ, "TCPLAB_URL": url}
    done = subprocess.run(
        [str(executable), "run", str(scenario), "--wait"],
        check=False,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    run_id = done.stdout.splitlines()[0]
    uuid.UUID(run_id)
    assert "newreno-sbs" in done.stdout
    with Client(url) as lab:
        assert lab.run(run_id)["status"] == "succeeded"

    refused = subprocess.run(
        [str(executable), "model", "mathis", "--p", "2", "--rtt", "0.1"],
        check=False,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert refused.returncode == 2 and "$.p:" in refused.stderr and "Traceback" not in refused.stderr
