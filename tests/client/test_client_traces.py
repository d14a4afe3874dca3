"""Link traces through the SDK and `tcplab traces …` against the launched service: upload a
Mahimahi file, list, show, download it back, run a scenario over it by name, delete; a bad
file is refused naming its line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import Result
from typer.testing import CliRunner

from tcplab_client import Client
from tcplab_client.cli import app
from tcplab_client.errors import InvalidInput, NotFound
from tests.support import LaunchedService

runner = CliRunner()
STEADY = "1\n1\n2\n2\n3\n3\n4\n4\n"  # two 1500-byte opportunities a millisecond: 24 Mb/s


def tcplab(*args: str) -> Result:
    return runner.invoke(app, list(args), catch_exceptions=False)


@pytest.fixture
def url(launched_service: LaunchedService, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("TCPLAB_TOKEN", launched_service.token)
    return launched_service.base_url


def test_the_sdk_uploads_a_trace_runs_over_it_by_name_and_deletes_it(lab: Client, session_seed: int) -> None:
    name = f"steady-{session_seed}"
    made = lab.upload_trace(name, STEADY)
    assert (made["name"], made["builtin"], made["lines"]) == (name, False, 8)
    assert made["mean_mbps"] == pytest.approx(24.0)
    assert lab.trace_content(name) == STEADY
    assert name in [t["name"] for t in lab.traces()]
    scenario = {
        "duration_s": 3.0,
        "warmup_s": 1.0,
        "seed": session_seed,
        "topology": {"dumbbell": {"bottleneck": {"trace": {"name": name}, "delay_ms": 5}}},
        "flows": [{"name": "bulk", "variant": "cubic", "rtt_ms": 20}],
    }
    run = lab.wait_run(lab.submit_run(scenario)["id"], timeout=120)
    assert run["status"] == "succeeded", run
    goodput = lab.result(run["id"])["flows"][0]["goodput_bps"]
    assert 0.8 * 24e6 * 1460 / 1500 < goodput <= 24e6 * 1460 / 1500  # the trace's payload capacity
    assert lab.delete_trace(name)["name"] == name
    with pytest.raises(NotFound):
        lab.trace(name)
    with pytest.raises(InvalidInput, match="line 2"):
        lab.upload_trace(name, "5\n3\n")


def test_the_command_uploads_lists_shows_downloads_and_deletes_a_trace(
    url: str, tmp_path: Path, session_seed: int
) -> None:
    name = f"cli-{session_seed}"
    file = tmp_path / "steady.trace"
    file.write_text(STEADY)
    up = tcplab("--url", url, "traces", "upload", name, str(file), "--json")
    assert up.exit_code == 0, up.output
    assert json.loads(up.stdout)["lines"] == 8
    listed = tcplab("--url", url, "traces", "list", "--json")
    assert {t["name"]: t["builtin"] for t in json.loads(listed.stdout)}[name] is False
    assert "TMobile-LTE-short.down" in tcplab("--url", url, "traces", "list").stdout
    shown = tcplab("--url", url, "traces", "show", name)
    assert "8 opportunities" in shown.stdout and "24 Mb/s" in shown.stdout
    back = tmp_path / "back.trace"
    assert tcplab("--url", url, "traces", "download", name, "-o", str(back)).exit_code == 0
    assert back.read_text() == STEADY
    assert tcplab("--url", url, "traces", "delete", name).exit_code == 0
    gone = tcplab("--url", url, "traces", "show", name)
    assert gone.exit_code != 0 and "trace" in gone.output
    missing = tcplab("--url", url, "traces", "upload", name, str(tmp_path / "nowhere"))
    assert missing.exit_code != 0 and "no such file" in missing.output
