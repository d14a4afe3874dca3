"""The SDK against the launched service (``python -m infra.launch``: real PostgreSQL, Redis and
a worker): runs, sweeps, results in every form, comparisons, models, presets, typed errors."""

from __future__ import annotations

import io
import uuid

import pandas as pd
import pyarrow.parquet as pq
import pytest

from tcplab_client import (
    Client,
    Conflict,
    InvalidInput,
    NotFound,
    TcplabError,
    Unavailable,
    WaitTimeout,
)
from tests.client.helpers import SHORT_RUN, TINY_SWEEP, small_scenario
from tests.support import free_port


def test_a_preset_run_submitted_waited_for_and_read_as_dict_and_frame(lab: Client) -> None:
    run = lab.submit_run(preset=SHORT_RUN["preset"], overrides=SHORT_RUN["overrides"])
    assert run["status"] in ("queued", "succeeded")
    assert run["preset"] == "paper000-fig2a"

    final = lab.wait_run(run["id"], progress=False, timeout=120)
    assert final["status"] == "succeeded", final
    assert lab.run(run["id"])["status"] == "succeeded"

    result = lab.result(run["id"])
    assert [f["name"] for f in result["flows"]] == ["sbs", "imp"]
    frame = lab.result_frame(run["id"])
    assert list(frame["name"]) == ["sbs", "imp"]
    assert list(frame.columns) == list(result["flows"][0])
    for record, flow in zip(frame.to_dict("records"), result["flows"], strict=True):
        assert {k: v for k, v in record.items() if not pd.isna(v)} == {k: v for k, v in flow.items() if v is not None}

    assert any(r["id"] == run["id"] for r in lab.runs(limit=50))
    # The same submission again is answered from the stored result.
    again = lab.submit_run(preset=SHORT_RUN["preset"], overrides=SHORT_RUN["overrides"])
    assert again["cached"] is True and again["status"] == "succeeded"
    assert again["cache_key"] == final["cache_key"]


def test_a_scenario_run_with_the_progress_spinner(
    lab: Client, session_seed: int, capsys: pytest.CaptureFixture
) -> None:
    run = lab.submit_run(small_scenario(session_seed + 7))
    final = lab.wait_run(run["id"], progress=True, timeout=120)
    assert final["status"] == "succeeded"
    assert lab.result(run["id"])["flows"][0]["variant"] == "newreno-sbs"


def test_a_sweep_its_summary_as_json_frame_csv_and_parquet_and_its_comparisons(lab: Client) -> None:
    sweep = lab.submit_sweep(TINY_SWEEP)
    assert sweep["points"] == 2 and sweep["created"]["runs"] == 4
    final = lab.wait_sweep(sweep["id"], progress=True, timeout=180)
    assert final["status"] == "done"
    assert final["progress"]["succeeded"] == 4, final["progress"]
    assert lab.sweep(sweep["id"])["status"] == "done"
    assert any(s["id"] == sweep["id"] for s in lab.sweeps(limit=50))
    assert len(lab.sweep_points(sweep["id"])) == 2
    assert len(lab.sweep_runs(sweep["id"])) == 4

    metric = "throughput_pkts_per_rtt"
    body = lab.sweep_summary(sweep["id"], metric=metric)
    rows = body["rows"]
    assert len(rows) == 4  # 2 points × 2 flow groups
    assert {(r["flows[*].loss.m"], r["flow"]) for r in rows} == {(2, "sbs"), (2, "imp"), (8, "sbs"), (8, "imp")}
    assert all(r["count"] == 2 for r in rows)

    from_json = pd.DataFrame(rows)
    frame = lab.sweep_summary(sweep["id"], metric=metric, format="frame")
    from_csv = pd.read_csv(io.StringIO(lab.sweep_summary(sweep["id"], metric=metric, format="csv")))
    from_parquet = pq.read_table(
        io.BytesIO(lab.sweep_summary(sweep["id"], metric=metric, format="parquet"))
    ).to_pandas()
    columns = list(frame.columns)
    assert set(columns) == set(from_json.columns)
    for other in (from_json[columns], from_csv[columns], from_parquet[columns]):
        pd.testing.assert_frame_equal(frame.reset_index(drop=True), other.reset_index(drop=True), check_dtype=False)

    only_sbs = lab.sweep_summary(sweep["id"], metric=[metric, "timeouts"], flow="sbs")["rows"]
    assert {r["flow"] for r in only_sbs} == {"sbs"} and {r["metric"] for r in only_sbs} == {metric, "timeouts"}

    models = lab.compare_models(sweep_id=sweep["id"], models=["newreno-sbs"])
    assert models["comparison"] == "models" and {r["model"] for r in models["rows"]} == {"newreno-sbs"}
    ratios = lab.compare_ratios(sweep_id=sweep["id"], flow_a="sbs", flow_b="imp")
    assert len(ratios["rows"]) == 2 and all(r["pairs"] == 2 for r in ratios["rows"])
    by_axis = lab.compare_ratios(sweep_id=sweep["id"], axis="flows[*].loss.m", baseline=2, other=8, format="frame")
    assert len(by_axis) == 2  # one row per flow group
    paper = lab.compare_paper(sweep["id"])
    assert paper["comparison"] == "paper" and [r["m"] for r in paper["rows"]] == [2, 8]
    one_run = lab.compare_models(run_id=lab.sweep_runs(sweep["id"])[0]["run_id"], format="csv")
    assert one_run.splitlines()[0].split(",")[:1] == ["flow"] or "newreno-sbs" in one_run

    # Extension simulates only the new runs; resubmission simulates nothing.
    extended = lab.extend_sweep(sweep["id"], replications=3)
    assert extended["created"]["runs"] == 2
    assert lab.wait_sweep(sweep["id"], progress=False, timeout=180)["progress"]["succeeded"] == 6
    assert lab.submit_sweep(TINY_SWEEP)["created"]["enqueued"] == 0


def test_cancel_a_sweep_and_a_finished_run(lab: Client, session_seed: int) -> None:
    spec = {**TINY_SWEEP, "seed": session_seed, "replications": 3}
    sweep = lab.submit_sweep(spec)
    cancelled = lab.cancel_sweep(sweep["id"])
    assert cancelled["status"] == "cancelled"
    assert cancelled["progress"]["queued"] == 0

    run = lab.submit_run(preset=SHORT_RUN["preset"], overrides=SHORT_RUN["overrides"])
    lab.wait_run(run["id"], progress=False, timeout=120)
    with pytest.raises(Conflict) as info:
        lab.cancel_run(run["id"])
    assert info.value.status == 409 and run["id"] in info.value.message


def test_models_and_presets(lab: Client) -> None:
    answer = lab.model("newreno-sbs", p=0.001, m=4, rtt_s=0.07)
    assert answer["model"] == "newreno-sbs" and answer["shape"] == []
    assert answer["outputs"]["throughput_pkts_per_rtt"] == pytest.approx(33.69, rel=1e-3)
    grid = lab.model("newreno-impatient", mode="grid", p=[0.001, 0.01], m=[2, 4, 8], rtt_s=0.07, rto_s=0.2)
    assert grid["shape"] == [2, 3]
    assert {m["name"] for m in lab.models()} >= {"newreno-sbs", "pftk-full", "mathis"}

    names = [p["name"] for p in lab.presets()]
    assert "paper000-fig2a" in names
    preset = lab.preset("paper000-fig2a")
    assert preset["scenario"]["flows"][0]["name"] == "sbs"


def test_typed_errors_carry_the_servers_message(lab: Client) -> None:
    missing = str(uuid.uuid4())
    with pytest.raises(NotFound) as not_found:
        lab.run(missing)
    assert not_found.value.status == 404 and missing in str(not_found.value)
    with pytest.raises(NotFound):
        lab.sweep(missing)
    with pytest.raises(NotFound, match="unknown model 'nope'"):
        lab.model("nope", p=0.1)
    with pytest.raises(NotFound, match="nope"):
        lab.preset("nope")

    bad = small_scenario(1)
    bad["flows"][0]["rtt_ms"] = -5
    with pytest.raises(InvalidInput) as invalid:
        lab.submit_run(bad)
    error = invalid.value
    assert error.status == 422 and isinstance(error, TcplabError)
    assert any(e.path == "$.scenario.flows[0].rtt_ms" for e in error.errors), error.errors
    assert error.detail and all("msg" in d for d in error.detail)
    assert "$.scenario.flows[0].rtt_ms: " in str(error)

    with pytest.raises(InvalidInput) as model_invalid:
        lab.model("newreno-sbs", p=0.001, m=4, rtt_s=-1)
    assert [e.path for e in model_invalid.value.errors] == ["$.rtt_s"]
    assert str(model_invalid.value).startswith("$.rtt_s: ")

    with pytest.raises(InvalidInput) as query_invalid:
        lab.sweep_summary(missing, metric="no_such_metric")
    assert "no_such_metric" in str(query_invalid.value)

    with pytest.raises(InvalidInput, match="preset"):
        lab.submit_run(preset="no-such-preset")

    plain = {
        "scenario": small_scenario(2, duration_s=2),
        "axes": [{"path": "duration_s", "values": [2]}],
        "replications": 1,
    }
    with pytest.raises(Conflict, match="paper000-fig2a"):  # the message lists the presets that have them
        lab.compare_paper(lab.submit_sweep(plain)["id"])


def test_a_server_that_is_not_there_is_unavailable() -> None:
    with Client(f"http://127.0.0.1:{free_port()}") as nobody:
        with pytest.raises(Unavailable, match="cannot reach tcplab"):
            nobody.health()
        with pytest.raises(Unavailable):
            nobody.wait_run(str(uuid.uuid4()), progress=False, timeout=0.5)


def test_waiting_gives_up_after_the_timeout(lab: Client, session_seed: int) -> None:
    # 40 runs of about 50 ms of core time each cannot all finish in 0.3 s on the test's worker.
    spec = {
        "preset": "paper000-fig2a",
        "overrides": {"duration_s": 100, "warmup_s": 0.5},
        "axes": [{"path": "flows[*].loss.m", "range": {"start": 1, "stop": 20}}],
        "replications": 2,
        "seed": session_seed + 1,
    }
    sweep = lab.submit_sweep(spec)
    try:
        with pytest.raises(WaitTimeout, match="still"):
            lab.wait_sweep(sweep["id"], progress=False, timeout=0.3)
    finally:
        lab.cancel_sweep(sweep["id"])
