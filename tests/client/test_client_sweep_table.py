"""A sweep as one tidy table through the SDK (`sweep_table`, `sweep_dataset`) and the CLI
(`tcplab sweep table`), against the launched service (real PostgreSQL, Redis and worker)."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from tcplab_client import Client
from tcplab_client.cli import app
from tests.client.helpers import TINY_SWEEP

runner = CliRunner()


@pytest.fixture
def finished_sweep(lab: Client) -> str:
    sweep = lab.submit_sweep(TINY_SWEEP)
    assert lab.wait_sweep(sweep["id"], progress=False, timeout=240)["progress"]["succeeded"] == 4
    return sweep["id"]


def test_the_sdk_hands_a_sweep_over_as_a_tidy_frame_a_parquet_file_and_an_xarray_dataset(
    lab: Client, finished_sweep: str, tmp_path: Path
) -> None:
    path = tmp_path / "table.parquet"
    frame = lab.sweep_table(finished_sweep, to_parquet=path)
    # Fig. 2's two groups (sbs, imp), two shared links and the run, for 2 points × 2 replications.
    assert len(frame) == 4 * 5
    assert list(frame.columns[:10]) == [
        "run_id",
        "point",
        "replication",
        "seed",
        "level",
        "name",
        "type",
        "variant",
        "app",
        "loss_m",
    ]
    assert set(frame["loss_m"]) == {2, 8}
    assert frame.groupby("level").size().to_dict() == {"flow": 8, "link": 8, "run": 4}
    assert (
        frame["throughput_pkts_per_rtt"].dtype == "float64"
        and frame[frame.level == "flow"]["throughput_pkts_per_rtt"].gt(0).all()
    )
    assert frame[frame.name == "bottleneck"]["p99_queue_delay_s"].gt(0).all()
    pd.testing.assert_frame_equal(pd.read_parquet(path), frame)

    ds = lab.sweep_dataset(finished_sweep)
    assert dict(ds["throughput_pkts_per_rtt"].sizes) == {"loss_m": 2, "replication": 2, "flow": 2}
    assert dict(ds["p95_queue_delay_s"].sizes) == {"loss_m": 2, "replication": 2, "link": 2}
    assert dict(ds["jain"].sizes) == {"loss_m": 2, "replication": 2}
    assert sorted(ds["flow"].values) == ["imp", "sbs"] and sorted(ds["link"].values) == ["bottleneck", "bottleneck-rev"]
    assert ds["loss_m"].attrs["path"] == "flows[*].loss.m"
    assert ds["seed"].dims == ("replication",) and len(set(ds["seed"].values)) == 2
    one = frame[(frame.name == "sbs") & (frame.loss_m == 8) & (frame.replication == 1)][
        "throughput_pkts_per_rtt"
    ].item()
    assert ds["throughput_pkts_per_rtt"].sel(loss_m=8, replication=1, flow="sbs").item() == one


def test_tcplab_sweep_table_writes_parquet_and_tcplab_sweep_file_still_submits(
    lab: Client, finished_sweep: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, launched_service
) -> None:
    monkeypatch.setenv("TCPLAB_URL", launched_service.base_url)
    monkeypatch.setenv("TCPLAB_TOKEN", launched_service.token)
    out = tmp_path / "t.parquet"
    result = runner.invoke(
        app, ["sweep", "table", finished_sweep, "--format", "parquet", "-o", str(out)], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    assert len(pd.read_parquet(out)) == 4 * 5
    csv_text = runner.invoke(app, ["sweep", "table", finished_sweep], catch_exceptions=False).output
    assert csv_text.splitlines()[0].startswith("run_id,point,replication,seed,level,name")

    spec = tmp_path / "sweep.json"
    spec.write_text(json.dumps(TINY_SWEEP))
    submitted = runner.invoke(app, ["sweep", str(spec)], catch_exceptions=False)
    assert submitted.exit_code == 0, submitted.output
    again = str(
        uuid.UUID(submitted.output.strip().splitlines()[0])
    )  # printed its id, as `tcplab sweep FILE` always has
    assert again != finished_sweep and lab.sweep(again)["progress"]["total"] == 4
    bad = runner.invoke(app, ["sweep", "table", "not-a-uuid"])
    assert bad.exit_code != 0 and "not a run or sweep id" in bad.output
