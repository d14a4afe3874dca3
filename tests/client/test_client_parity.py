"""CLI/SDK parity with the API (issue 15): paper 000's crossover and region map, the papers'
reproductions (`tcplab reproduce 002 --wait`), and the comparisons — each through the SDK and
the `tcplab` command (Typer's CliRunner) against the launched service."""

from __future__ import annotations

import io
import json
import uuid
from pathlib import Path

import pandas as pd
import pytest
from click.testing import Result
from typer.testing import CliRunner

from tcplab_client import Client
from tcplab_client.cli import app
from tests.client.helpers import TINY_SWEEP
from tests.support import LaunchedService

runner = CliRunner()


def tcplab(*args: str) -> Result:
    return runner.invoke(app, list(args), catch_exceptions=False)


@pytest.fixture
def url(launched_service: LaunchedService, isolated_config: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("TCPLAB_TOKEN", launched_service.token)
    return launched_service.base_url


# ---- models: crossover and regions -----------------------------------------------------------


def test_crossover_through_the_sdk_and_the_command_gives_the_servers_numbers(lab: Client, url: str) -> None:
    answer = lab.crossover(p=[0.0005, 0.001, 0.005], rtt_s=0.07, rto_s=0.35)
    assert answer["status"] == ["crossover"] * 3 and answer["m_star"] == [7, 7, 7]
    assert 21 < answer["m_t"][1] < 22 and answer["m_t_int"][1] == 22

    result = tcplab("--url", url, "crossover", "--p", "0.0005,0.001,0.005", "--rtt", "0.07", "--rto", "0.35")
    assert result.exit_code == 0, result.output
    assert "IMP from m" in result.stdout and f"{answer['m_t'][1]:.4g}" in result.stdout
    as_json = tcplab("--url", url, "crossover", "--p", "0.0005,0.001,0.005", "--rtt", "0.07", "--rto", "0.35", "--json")
    assert json.loads(as_json.stdout) == answer

    ranged = lab.crossover(p={"start": 1e-4, "stop": 1e-2, "num": 5, "scale": "log"}, rtt_s=0.07, rto_s=0.35)
    by_cli = json.loads(
        tcplab("--url", url, "crossover", "--p", "1e-4:1e-2:5:log", "--rtt", "0.07", "--rto", "0.35", "--json").stdout
    )
    assert by_cli == ranged and len(ranged["p"]) == 5


def test_regions_prints_one_mark_per_cell_and_the_counts_of_the_server(lab: Client, url: str) -> None:
    answer = lab.regions(p=[1e-4, 0.002, 0.1], m={"start": 1, "stop": 20, "num": 20}, rtt_s=0.07, rto_s=0.35)
    assert len(answer["labels"]) == 3 and all(len(row) == 20 for row in answer["labels"])
    assert sum(answer["counts"].values()) == 60

    result = tcplab(
        "--url", url, "regions", "--p", "1e-4,0.002,0.1", "--m", "1:20:20", "--rtt", "0.07", "--rto", "0.35"
    )
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    top = next(line for line in lines if "1.000e-04" in line)
    assert top.count("=") == 6 and top.count("S") == 14  # m < m* = 7 equal; SBS superior up to m = 20
    for label, count in answer["counts"].items():
        assert any(label in line and f" {count} " in line for line in lines), (label, count)

    bad = tcplab("--url", url, "regions", "--p", "0.001", "--m", "1:x:3", "--rtt", "0.07", "--rto", "0.35")
    assert bad.exit_code == 2 and "START:STOP:NUM" in bad.stderr
    refused = tcplab("--url", url, "regions", "--p", "0.001", "--m", "1,2", "--rtt", "-1", "--rto", "0.35")
    assert refused.exit_code == 2 and "rtt_s" in refused.stderr


# ---- reproductions ----------------------------------------------------------------------------


def test_reproduce_waits_with_progress_then_prints_the_conclusions_and_the_sdk_reads_them(
    lab: Client, url: str
) -> None:
    result = tcplab("--url", url, "reproduce", "002", "--experiment", "exp1", "--set", "duration_s=5", "--wait")
    assert result.exit_code == 0, result.output
    sweep_ids = [
        line for line in result.stdout.splitlines() if line.strip() and "-" in line and len(line.strip()) == 36
    ]
    assert len(sweep_ids) == 1
    sweep = lab.sweep(str(uuid.UUID(sweep_ids[0])))
    assert sweep["status"] == "done" and sweep["name"].startswith("paper002 reproduction ")
    assert "1 sweeps, 40 runs" in result.stderr and "40/40" in result.stderr
    assert "exp1-vegas-lower-throughput" in result.stdout and "verdict" in result.stdout

    state = lab.reproduction_status("002")
    assert state["status"] == "done" and state["runs_done"] == state["runs"] == 40
    body = lab.reproduction("paper002")
    judged = {r["id"]: r["verdict"] for r in body["rows"]}
    assert judged["exp1-vegas-lower-throughput"] in ("agree", "partly", "disagree")
    assert judged["exp2-vegas-loses-to-newreno"] == "not_run"
    assert f"{body['verdicts']['not_run']} not_run" in result.stderr
    frame = lab.reproduction("002", format="frame")
    assert list(frame["id"]) == list(judged)

    listed = tcplab("--url", url, "reproductions")
    assert listed.exit_code == 0 and f"done (40/40 runs, batch {state['batch']})" in listed.stdout
    table_key = body["tables"][0]["key"]
    one = tcplab("--url", url, "reproductions", "002", "--table", table_key, "-f", "csv")
    assert one.exit_code == 0 and len(pd.read_csv(io.StringIO(one.stdout))) == len(
        lab.reproduction_table("002", table_key)["rows"]
    )
    missing = tcplab("--url", url, "reproduce", "001")
    assert missing.exit_code == 1 and "001" in missing.stderr


# ---- comparisons ------------------------------------------------------------------------------


def test_compare_commands_show_the_comparisons_of_a_sweep_and_of_a_run(lab: Client, url: str) -> None:
    sweep = lab.submit_sweep(TINY_SWEEP)
    lab.wait_sweep(sweep["id"], progress=False, timeout=300)
    sid = sweep["id"]

    models = tcplab("--url", url, "compare", "models", sid, "--model", "newreno-sbs")
    assert models.exit_code == 0, models.output
    rows = lab.compare_models(sweep_id=sid, models=["newreno-sbs"])["rows"]
    assert "model pkts/RTT" in models.stdout and "flows[*].loss.m" in models.stdout
    assert sum(line.count("newreno-sbs") for line in models.stdout.splitlines()) == len(rows)
    csv = pd.read_csv(io.StringIO(tcplab("--url", url, "compare", "models", sid, "-f", "csv").stdout))
    assert set(csv["model"]) >= {"newreno-sbs", "newreno-impatient"} and "signed_error" in csv.columns

    ratios = tcplab("--url", url, "compare", "ratios", sid, "--flow-a", "sbs", "--flow-b", "imp")
    assert ratios.exit_code == 0, ratios.output
    body = lab.compare_ratios(sweep_id=sid, flow_a="sbs", flow_b="imp")
    assert "b = imp against a = sbs" in ratios.stdout
    assert all(r["verdict"] in ratios.stdout for r in body["rows"])
    assert "region: flows[*].loss.m" in ratios.stderr
    neither = tcplab("--url", url, "compare", "ratios", sid)
    assert neither.exit_code == 2 and "flow_a" in neither.stderr

    paper = tcplab("--url", url, "compare", "paper", sid, "-f", "json")
    assert paper.exit_code == 0 and json.loads(paper.stdout)["rows"] == lab.compare_paper(sid)["rows"]
    shown = tcplab("--url", url, "compare", "paper", sid)
    assert "(paper000-fig2a) beside the paper" in shown.stdout and "m_axis: flows[*].loss.m" in shown.stderr

    run_id = lab.sweep_runs(sid)[0]["run_id"]
    of_run = json.loads(tcplab("--url", url, "compare", "models", run_id, "-f", "json").stdout)
    assert of_run["run_id"] == run_id and of_run["sweep_id"] is None
    unknown = tcplab("--url", url, "compare", "models", str(uuid.uuid4()))
    assert unknown.exit_code == 1 and "no run or sweep has the id" in unknown.stderr


# ---- one command line for both NewReno models -------------------------------------------------


def test_rto_on_the_sbs_model_is_accepted_and_noted_as_unused_on_stderr(url: str) -> None:
    line = ["--p", "0.001", "--m", "4", "--rtt", "0.07", "--rto", "0.35"]
    sbs = tcplab("--url", url, "model", "newreno-sbs", *line)
    assert sbs.exit_code == 0, sbs.output
    assert "rto_s: not used by newreno-sbs" in sbs.stderr
    plain = tcplab("--url", url, "model", "newreno-sbs", *line[:-2])
    assert plain.stdout == sbs.stdout and "not used" not in plain.stderr
    imp = tcplab("--url", url, "model", "newreno-impatient", *line)
    assert imp.exit_code == 0 and "not used" not in imp.stderr and "timeout_regime" in imp.stdout
    wrong = tcplab("--url", url, "model", "mathis", *line)
    assert wrong.exit_code == 2 and "has no parameter --rto" in wrong.stderr
