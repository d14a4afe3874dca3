"""Schedules through the SDK and `tcplab schedules …` against the launched service (its
worker simulates the firings; the schedules here never reach their cron time in a test, so
only "fire" fires them)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
import yaml
from click.testing import Result
from typer.testing import CliRunner

from tcplab_client import Client
from tcplab_client.cli import app
from tcplab_client.errors import InvalidInput, NotFound
from tests.client.helpers import small_scenario
from tests.support import LaunchedService

runner = CliRunner()
YEARLY = "0 3 1 1 *"  # never during a test


def tcplab(*args: str, input: str | None = None) -> Result:
    return runner.invoke(app, list(args), input=input, catch_exceptions=False)


@pytest.fixture
def url(launched_service: LaunchedService, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("TCPLAB_TOKEN", launched_service.token)
    return launched_service.base_url


def spec(seed: int, name: str, **changes: Any) -> dict[str, Any]:
    template = {
        "scenario": small_scenario(seed),
        "axes": [{"path": "flows[0].loss.m", "values": [2, 4]}],
        "replications": 2,
        "seed": seed,
    }
    return {"name": name, "cron": YEARLY, "template": template, **changes}


def test_the_sdk_creates_fires_follows_and_deletes_a_schedule(lab: Client, session_seed: int) -> None:
    made = lab.create_schedule(spec(session_seed, "sdk schedule"))
    sid = made["id"]
    assert made["enabled"] and "-01-01T03:00:00" in made["next_fire_at"] and made["owner"] == "admin"
    assert sid in {s["id"] for s in lab.schedules(mine=True)}
    assert any(s["builtin"] == "core-benchmark" and not s["enabled"] for s in lab.schedules())

    off = lab.disable_schedule(sid)
    assert not off["enabled"] and off["next_fire_at"] is None
    assert lab.enable_schedule(sid)["next_fire_at"] is not None
    assert lab.update_schedule(sid, name="renamed")["name"] == "renamed"

    for _ in range(2):
        sweep = lab.fire_schedule(sid)
        assert sweep["schedule_id"] == sid and sweep["created"]["runs"] == 4
        done = lab.wait_sweep(sweep["id"], progress=False, timeout=120)
        assert done["status"] == "done" and done["progress"]["succeeded"] == 4
    assert [s["schedule_id"] for s in lab.schedule_sweeps(sid)] == [sid, sid]

    body = lab.schedule_history(sid, metric="throughput_pkts_per_rtt")
    rows = body["rows"]
    assert len(rows) == 2 * 2  # two firings × two points × one group
    second = [r for r in rows if r["baseline_firings"] == 1]
    assert len(second) == 2 and all(r["shift"] is None and r["test"] == "exact" for r in second)
    frame = lab.schedule_history(sid, metric=["throughput_pkts_per_rtt", "mean_rtt_s"], format="frame")
    assert len(frame) == 8 and set(frame["metric"]) == {"throughput_pkts_per_rtt", "mean_rtt_s"}
    assert lab.schedule(sid)["firings"] == 2

    lab.delete_schedule(sid)
    with pytest.raises(NotFound):
        lab.schedule(sid)
    with pytest.raises(InvalidInput) as info:
        lab.create_schedule({**spec(session_seed, "bad"), "cron": "sometimes"})
    assert [e.path for e in info.value.errors] == ["$.cron"]


def test_the_command_line_manages_a_schedule_and_prints_its_history(
    url: str, tmp_path: Path, session_seed: int
) -> None:
    path = tmp_path / "nightly.yaml"
    path.write_text(yaml.safe_dump(spec(session_seed + 1, "cli schedule")))
    created = tcplab("--url", url, "schedules", "create", str(path))
    assert created.exit_code == 0, created.output
    sid = created.stdout.strip()
    assert "enabled, cron '0 3 1 1 *' (UTC), next firing" in created.stderr

    listed = tcplab("--url", url, "schedules", "list", "--mine", "--json")
    assert sid in {s["id"] for s in json.loads(listed.stdout)}
    table = tcplab("--url", url, "schedules", "list")
    assert "cli schedule" in table.stdout and "core benchmark" in table.stdout

    assert "disabled" in tcplab("--url", url, "schedules", "disable", sid).stderr
    assert "enabled" in tcplab("--url", url, "schedules", "enable", sid).stderr

    fired = tcplab("--url", url, "schedules", "fire", sid, "--wait", "--timeout", "120")
    assert fired.exit_code == 0, fired.output
    sweep_id = fired.stdout.strip().splitlines()[0]
    shown = tcplab("--url", url, "schedules", "show", sid, "--json")
    body = json.loads(shown.stdout)
    assert body["schedule"]["firings"] == 1 and body["sweeps"][0]["id"] == sweep_id
    assert sweep_id in tcplab("--url", url, "schedules", "show", sid).stdout

    history = tcplab("--url", url, "schedules", "history", sid)
    assert history.exit_code == 0, history.output
    assert "throughput_pkts_per_rtt" in history.stdout and "2 rows, 0 moved" in history.stderr
    out = tmp_path / "history.parquet"
    saved = tcplab(
        "--url", url, "schedules", "history", sid, "--format", "parquet", "-o", str(out), "--metric", "goodput_bps"
    )
    assert saved.exit_code == 0, saved.output
    rows = pq.read_table(io.BytesIO(out.read_bytes())).to_pylist()
    assert (
        len(rows) == 2
        and {r["metric"] for r in rows} == {"goodput_bps"}
        and all(r["sweep_id"] == sweep_id for r in rows)
    )
    as_csv = tcplab("--url", url, "schedules", "history", sid, "--format", "csv", "--flow", "core")
    assert as_csv.stdout.splitlines()[0].startswith("fired_for,sweep_id,point,point_key,flows[0].loss.m,flow")

    assert "deleted" in tcplab("--url", url, "schedules", "delete", sid).stderr
    gone = tcplab("--url", url, "schedules", "show", sid)
    assert gone.exit_code == 1 and "not found" in gone.stderr


def test_the_command_line_says_what_is_wrong(url: str, tmp_path: Path, session_seed: int) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({**spec(session_seed, "bad"), "cron": "0 3 * *"}))
    result = tcplab("--url", url, "schedules", "create", str(path))
    assert result.exit_code == 2 and "$.cron" in result.stderr and "5 fields" in result.stderr, result.output
    bad_template = {
        **spec(session_seed, "bad"),
        "template": {"preset": "nope", "axes": [{"path": "duration_s", "values": [5]}]},
    }
    path.write_text(json.dumps(bad_template))
    result = tcplab("--url", url, "schedules", "create", str(path))
    assert result.exit_code == 2 and "$.template.preset" in result.stderr
    result = tcplab("--url", url, "schedules", "fire", "not-an-id")
    assert result.exit_code == 2 and "not a schedule id" in result.stderr
