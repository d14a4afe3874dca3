"""Experiment management from the SDK and `tcplab` against the launched service (real
PostgreSQL, Redis and worker): tag, note, find by tag, name and parameter, archive and
restore, delete after a confirmation, two sweeps side by side. The service's database lives
for the session: every test tags and names its own things with the session's seed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import Result
from typer.testing import CliRunner

from tcplab_client import Client
from tcplab_client.cli import app
from tcplab_client.errors import InvalidInput, NotFound
from tests.client.helpers import SHORT, small_scenario
from tests.support import LaunchedService

runner = CliRunner()


def tcplab(*args: str, input: str | None = None) -> Result:
    return runner.invoke(app, list(args), input=input, catch_exceptions=False)


@pytest.fixture
def url(launched_service: LaunchedService, isolated_config: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """The launched service's URL and admin token in TCPLAB_URL and TCPLAB_TOKEN, for the commands."""
    monkeypatch.setenv("TCPLAB_URL", launched_service.base_url)
    monkeypatch.setenv("TCPLAB_TOKEN", launched_service.token)
    return launched_service.base_url


def test_the_sdk_tags_finds_archives_and_deletes_a_run(lab: Client, session_seed: int) -> None:
    mark = f"sdk-{session_seed}"
    run = lab.wait_run(lab.submit_run(small_scenario(session_seed, duration_s=2.0))["id"], progress=False, timeout=120)
    assert run["status"] == "succeeded"
    assert lab.tag_run(run["id"], mark, "keep") == [mark, "keep"]
    assert lab.untag_run(run["id"], "keep") == [mark]
    assert lab.note_run(run["id"], "the 2-s baseline")["note"] == "the 2-s baseline"
    with pytest.raises(InvalidInput) as bad:
        lab.tag_run(run["id"], "two words")
    assert bad.value.errors[0].path == "$.add_tags[0]"

    assert [r["id"] for r in lab.find_runs(tags=[mark])] == [run["id"]]
    assert [
        r["id"] for r in lab.find_runs(tags=[mark], params={"duration_s": 2, "flows[0].variant": "newreno-sbs"})
    ] == [run["id"]]
    assert lab.find_runs(tags=[mark], params={"duration_s": 3}) == []
    assert [r["id"] for r in lab.find_runs(tags=[mark], params=["duration_s=2.0"])] == [run["id"]]

    lab.archive_run(run["id"])
    assert lab.find_runs(tags=[mark]) == []
    assert [r["id"] for r in lab.find_runs(tags=[mark], archived=True)] == [run["id"]]
    lab.archive_run(run["id"], False)
    assert lab.delete_run(run["id"])["runs"] == 1
    with pytest.raises(NotFound):
        lab.run(run["id"])


def test_tag_note_runs_archive_and_delete_from_the_command_line(url: str, lab: Client, session_seed: int) -> None:
    mark = f"cli-{session_seed}"
    sweep = lab.submit_sweep(
        {
            "name": f"cli sweep {session_seed}",
            "scenario": small_scenario(session_seed, duration_s=2.0),
            "axes": [{"path": "flows[0].loss.m", "values": [2, 4]}],
            "replications": 1,
        }
    )
    result = tcplab("tag", sweep["id"], mark, "fig2")
    assert result.exit_code == 0, result.output
    assert result.stdout.split() == [mark, "fig2"]
    assert tcplab("tag", sweep["id"], "--remove", "fig2").stdout.split() == [mark]
    assert tcplab("tag", sweep["id"]).stdout.split() == [mark]
    bad = tcplab("tag", sweep["id"], "no,commas")
    assert bad.exit_code == 2 and "$.add_tags[0]" in bad.stderr

    assert tcplab("note", sweep["id"], "-", input="m = 2 and 4\nfor the poster\n").exit_code == 0
    assert tcplab("note", sweep["id"]).stdout == "m = 2 and 4\nfor the poster\n"

    listed = tcplab("sweeps", "--tag", mark, "--param", "flows[0].loss.m=4", "--json")
    assert [s["id"] for s in json.loads(listed.stdout)] == [sweep["id"]]
    assert json.loads(tcplab("sweeps", "--tag", mark, "--param", "flows[0].loss.m=3", "--json").stdout) == []
    assert [s["id"] for s in json.loads(tcplab("sweeps", "--name", f"SWEEP {session_seed}", "--json").stdout)] == [
        sweep["id"]
    ]
    table = tcplab("sweeps", "--tag", mark)
    assert mark in table.stdout and sweep["id"] in table.stdout
    runs = json.loads(tcplab("runs", "--name", f"cli sweep {session_seed}", "--json").stdout)
    assert len(runs) == 2  # a sweep's runs go by its name

    lab.wait_sweep(sweep["id"], progress=False, timeout=120)
    assert [s["id"] for s in json.loads(tcplab("sweeps", "--tag", mark, "--status", "done", "--json").stdout)] == [
        sweep["id"]
    ]
    assert lab.find_sweeps(tags=[mark], status="running") == []
    assert tcplab("archive", sweep["id"]).exit_code == 0
    assert json.loads(tcplab("sweeps", "--tag", mark, "--json").stdout) == []
    assert [s["id"] for s in json.loads(tcplab("sweeps", "--tag", mark, "--archived", "true", "--json").stdout)] == [
        sweep["id"]
    ]
    assert tcplab("archive", "--restore", sweep["id"]).exit_code == 0

    kept = tcplab("delete", sweep["id"], input="n\n")
    assert kept.exit_code == 1 and "and their results for good?" in kept.stderr
    assert lab.sweep(sweep["id"])["id"] == sweep["id"]
    gone = tcplab("delete", sweep["id"], input="y\n")
    assert gone.exit_code == 0 and f"deleted sweep {sweep['id']}: 2 runs" in gone.stderr
    missing = tcplab("delete", "--yes", sweep["id"])
    assert missing.exit_code == 1 and "no run or sweep has the id" in missing.stderr


def test_delete_refuses_what_still_runs_unless_told_to_cancel_it_first(
    url: str, lab: Client, session_seed: int
) -> None:
    long = small_scenario(session_seed + 1, duration_s=30.0)
    sweep = lab.submit_sweep(
        {"scenario": long, "axes": [{"path": "flows[0].loss.m", "values": list(range(2, 40))}], "replications": 3}
    )
    refused = tcplab("delete", "--yes", sweep["id"])
    if refused.exit_code == 0:
        pytest.skip("the worker finished 114 runs before the delete: nothing left to refuse")
    assert refused.exit_code == 1 and "queued or running: cancel it first" in refused.stderr
    assert lab.sweep(sweep["id"])["id"] == sweep["id"]  # refused: nothing deleted
    done = tcplab("delete", "--yes", "--cancel", sweep["id"])
    assert done.exit_code == 0, done.stderr
    assert f"deleted sweep {sweep['id']}: 114 runs" in done.stderr
    with pytest.raises(NotFound):
        lab.sweep(sweep["id"])


def test_two_sweeps_side_by_side_from_the_sdk_and_the_command_line(url: str, lab: Client, session_seed: int) -> None:
    base = {"preset": "paper000-fig2a", "overrides": SHORT, "replications": 2}
    a = lab.submit_sweep(
        {
            **base,
            "name": f"a {session_seed}",
            "seed": session_seed,
            "axes": [{"path": "flows[*].loss.m", "values": [2, 8]}],
        }
    )
    b = lab.submit_sweep(
        {
            **base,
            "name": f"b {session_seed}",
            "seed": session_seed + 1,
            "axes": [{"path": "flows[*].loss.m", "values": [8]}],
        }
    )
    for s in (a, b):
        lab.wait_sweep(s["id"], progress=False, timeout=180)
    frame = lab.compare_sweeps(a["id"], b["id"], flow="sbs", format="frame")
    assert list(frame["flows[*].loss.m"]) == [2, 8] and frame["b_mean"].isna().tolist() == [True, False]
    body = lab.compare_sweeps(a["id"], b["id"], flow="sbs")
    assert body["rows"][1]["difference"] == pytest.approx(body["rows"][1]["b_mean"] - body["rows"][1]["a_mean"])
    shown = tcplab("compare", "sweeps", a["id"], b["id"], "--flow", "sbs")
    assert shown.exit_code == 0, shown.output
    assert f"a = a {session_seed}, b = b {session_seed}" in shown.stdout and "b / a" in shown.stdout
    csv = tcplab("compare", "sweeps", a["id"], b["id"], "-f", "csv")
    assert csv.stdout.splitlines()[0].startswith("flows[*].loss.m,flow,") and len(csv.stdout.splitlines()) == 1 + 4
