"""The tcpsim Python package: the binding of the Rust core (simulator/python)."""

from __future__ import annotations

import copy
import json
import math
import pickle
import subprocess
import sys
import threading
import time
import tomllib
from collections import OrderedDict
from pathlib import Path

import numpy as np
import pytest

import tcpsim
from services.presets import build_scenario, list_presets
from services.scenarios import canonical_dict
from services.settings import get_settings
from services.traces.builtin import builtin_by_hash
from services.traces.files import with_trace_files
from services.traces.refs import link_traces

ROOT = Path(__file__).resolve().parents[1]
TCPSIM_SCRIPT = Path(sys.executable).parent / "tcpsim"

# Three simulated seconds, two flows, random loss and random start times: ~5 ms of work.
SCENARIO = {
    "name": "binding-test",
    "duration_s": 3,
    "warmup_s": 1,
    "seed": 7,
    "topology": {
        "dumbbell": {
            "bottleneck": {
                "rate_mbps": 10,
                "delay_ms": 5,
                "queue": {"type": "droptail", "limit_pkts": 50},
            }
        }
    },
    "flows": [
        {"name": "a", "variant": "newreno-sbs", "rtt_ms": 40, "loss": {"type": "uniform", "rate": 0.01}},
        {"name": "b", "variant": "reno", "rtt_ms": {"uniform": [30, 80]}, "start_s": {"uniform": [0, 0.5]}},
    ],
}


def scenario(**changes: object) -> dict:
    s = copy.deepcopy(SCENARIO)
    s.update(changes)
    return s


def without_stats(result: dict) -> dict:
    """A result without its machine-dependent part (wall time, events per second)."""
    return {k: v for k, v in result.items() if k != "stats"}


# --- run ------------------------------------------------------------------------------------


def test_run_returns_a_plain_dict_with_one_entry_per_flow():
    result = tcpsim.run(SCENARIO)
    assert isinstance(result, dict)
    assert [f["name"] for f in result["flows"]] == ["a", "b"]
    assert result["flows"][0]["variant"] == "newreno-sbs"
    assert result["flows"][0]["goodput_bps"] > 0
    assert result["core_version"] == tcpsim.__version__
    assert result["stats"]["simulated_s"] == 3
    json.dumps(result)  # only JSON types


def test_a_dict_and_its_json_string_give_the_same_result():
    from_dict = tcpsim.run(SCENARIO)
    from_text = tcpsim.run(json.dumps(SCENARIO, indent=2))
    assert without_stats(from_dict) == without_stats(from_text)


def test_a_dict_subclass_is_accepted():
    assert without_stats(tcpsim.run(OrderedDict(SCENARIO))) == without_stats(tcpsim.run(SCENARIO))


def test_the_same_scenario_and_seed_give_identical_results():
    assert without_stats(tcpsim.run(SCENARIO)) == without_stats(tcpsim.run(copy.deepcopy(SCENARIO)))


def test_a_different_seed_gives_a_different_result():
    first = tcpsim.run(scenario(seed=7))
    second = tcpsim.run(scenario(seed=8))
    assert first["seed"] == 7 and second["seed"] == 8
    assert first["flows"] != second["flows"]


# --- validate and errors --------------------------------------------------------------------


def test_a_link_whose_rate_delay_and_loss_change_over_time_runs_through_the_binding():
    """Issue 18: a 1 s blackout, then half the rate; a longer route; a loss probability over time."""
    bottleneck = {
        "delay_ms": 5,
        "schedule": {
            "rate_mbps": {"points": [[0, 10], [1, 0], [2, 5]]},
            "extra_delay_ms": {"points": [[0, 0], [1, 30]], "shape": "linear"},
        },
        "loss": {"type": "schedule", "rate": {"points": [[0, 0], [2.5, 0.01], [3, 0]]}},
    }
    s = scenario(
        warmup_s=0,
        topology={"dumbbell": {"bottleneck": bottleneck}},
        flows=[{"name": "a", "variant": "cubic", "rtt_ms": 40}],
        outputs={"trace_interval_s": 0.25, "trace": ["throughput"]},
    )
    tcpsim.validate(s)
    r = tcpsim.run(s)
    link = next(x for x in r["links"] if x["name"] == "bottleneck")
    # Over [0, 3] s: 10 Mb/s for 1 s, none for 1 s, 5 Mb/s for 1 s.
    assert link["rate_bps"] == 5_000_000
    assert link["loss_drops"] > 0
    throughput = dict(zip(r["traces"]["time_s"], r["traces"]["flows"][0]["throughput_bps"], strict=True))
    assert [throughput[t] for t in (1.5, 1.75, 2.0)] == [0.0, 0.0, 0.0]
    assert throughput[3.0] > 0


def test_validate_accepts_the_test_scenario_and_the_reference_scenario():
    assert tcpsim.validate(SCENARIO) is None
    reference = ROOT / "simulator" / "scenarios" / "reference-dumbbell.json"
    assert tcpsim.validate(reference.read_text()) is None


def _bottleneck(s: dict) -> dict:
    return s["topology"]["dumbbell"]["bottleneck"]


@pytest.mark.parametrize(
    ("mutate", "path", "kind", "words"),
    [
        pytest.param(
            lambda s: s["flows"][0].update(tcp={"min_rto": 1.0}),
            "$.flows[0].tcp.min_rto",
            "parse",
            "unknown field",
            id="unknown-field",
        ),
        pytest.param(
            lambda s: _bottleneck(s).update(rate_mbps="fast"),
            "$.topology.dumbbell.bottleneck.rate_mbps",
            "parse",
            "invalid type",
            id="wrong-type",
        ),
        pytest.param(
            lambda s: _bottleneck(s).update(rate_mbps=-1),
            "$.topology.dumbbell.bottleneck.rate_mbps",
            "invalid",
            "must be > 0",
            id="negative-rate",
        ),
        pytest.param(
            lambda s: s["flows"][1].update(variant="cubic-ish"),
            "$.flows[1].variant",
            "invalid",
            "unknown variant",
            id="unknown-variant",
        ),
        pytest.param(
            lambda s: s.update(warmup_s=3),
            "$.warmup_s",
            "invalid",
            "duration_s",
            id="warmup-not-below-duration",
        ),
        pytest.param(
            lambda s: s.update(duration_s=float("nan")),
            "$.duration_s",
            "parse",
            "",
            id="nan",
        ),
        pytest.param(lambda s: s.pop("topology"), "$", "parse", "topology", id="missing-field"),
    ],
)
def test_a_bad_scenario_raises_a_scenario_error_naming_the_field(mutate, path, kind, words):
    bad = copy.deepcopy(SCENARIO)
    mutate(bad)
    for call in (tcpsim.validate, tcpsim.normalize, tcpsim.run):
        with pytest.raises(tcpsim.ScenarioError) as info:
            call(bad)
        error = info.value
        assert isinstance(error, ValueError)
        assert not isinstance(error, tcpsim.LimitExceeded)
        assert error.path == path
        assert error.kind == kind
        assert path in str(error) and words in str(error)


@pytest.mark.parametrize("text", ["", "{", "null", "[]", '"scenario"', "1e999", "{} trailing"])
def test_text_that_is_not_a_scenario_raises_a_parse_error(text):
    for call in (tcpsim.validate, tcpsim.normalize):
        with pytest.raises(tcpsim.ScenarioError) as info:
            call(text)
        assert info.value.kind == "parse"
        assert info.value.path is not None and info.value.path.startswith("$")


def test_a_run_past_its_event_limit_raises_limit_exceeded():
    with pytest.raises(tcpsim.LimitExceeded) as info:
        tcpsim.run(scenario(limits={"max_events": 10}))
    error = info.value
    assert isinstance(error, tcpsim.ScenarioError) and isinstance(error, ValueError)
    assert error.kind == "limit_exceeded"
    assert error.path is None
    assert "limit" in str(error)
    # The limit only stops the run: the scenario itself is valid.
    tcpsim.validate(scenario(limits={"max_events": 10}))


def test_a_stop_token_ends_a_long_run_from_another_thread_within_moments():
    import threading
    import time

    hours = scenario(duration_s=36_000)  # minutes of work unless stopped
    token = tcpsim.StopToken()
    signalled: list[float] = []

    def stop_soon() -> None:
        time.sleep(0.2)
        signalled.append(time.monotonic())
        token.stop()

    threading.Thread(target=stop_soon).start()
    with pytest.raises(tcpsim.Stopped, match="simulated time") as info:
        tcpsim.run(hours, stop=token)
    assert (info.value.kind, info.value.path) == ("stopped", None)
    latency = time.monotonic() - signalled[0]
    assert token.stopped and latency < 0.5, latency
    assert not issubclass(tcpsim.Stopped, ValueError)  # not the scenario's fault


def test_a_stop_token_never_stopped_changes_nothing():
    plain, watched = tcpsim.run(scenario()), tcpsim.run(scenario(), stop=tcpsim.StopToken())
    plain.pop("stats"), watched.pop("stats")
    assert watched == plain


@pytest.mark.parametrize("value", [None, 3, 2.5, b"{}", ["duration_s"], ("x",), object()])
def test_anything_but_a_str_or_a_dict_raises_type_error(value):
    for call in (tcpsim.run, tcpsim.validate, tcpsim.normalize):
        with pytest.raises(TypeError, match="dict or a JSON string"):
            call(value)


def test_scenario_errors_survive_pickling_with_their_path_and_kind():
    with pytest.raises(tcpsim.ScenarioError) as info:
        tcpsim.validate(scenario(warmup_s=5))
    copy_ = pickle.loads(pickle.dumps(info.value))
    assert type(copy_) is tcpsim.ScenarioError
    assert (str(copy_), copy_.path, copy_.kind) == (str(info.value), "$.warmup_s", "invalid")


def test_the_exception_classes_are_the_documented_hierarchy():
    assert issubclass(tcpsim.ScenarioError, ValueError)
    assert issubclass(tcpsim.LimitExceeded, tcpsim.ScenarioError)
    assert issubclass(tcpsim.InternalError, RuntimeError)
    assert not issubclass(tcpsim.InternalError, ValueError)


# --- normalize ------------------------------------------------------------------------------


def test_normalize_fills_in_every_default_and_leaves_absent_options_absent():
    normal = tcpsim.normalize(SCENARIO)
    assert normal["warmup_s"] == 1 and normal["seed"] == 7 and normal["name"] == "binding-test"
    assert normal["limits"] == {}
    assert normal["outputs"] == {"trace": ["cwnd", "ssthresh", "queue"], "max_trace_points": 200000}
    dumbbell = normal["topology"]["dumbbell"]
    assert dumbbell["access"] == {"rate_mbps": 1000.0, "queue": {"type": "droptail", "limit_pkts": 1000}}
    a, b = normal["flows"]
    assert a["tcp"]["min_rto_s"] == 0.2 and a["tcp"]["mss_bytes"] == 1000
    assert a["tcp"]["rtt_sampling"] == "per_rtt" and a["tcp"]["vegas"] == {"alpha": 1.0, "beta": 3.0, "gamma": 1.0}
    assert a["loss"] == {"type": "uniform", "rate": 0.01}
    assert (a["count"], a["type"], a["app"], a["start_s"]) == (1, "tcp", {"type": "ftp"}, 0.0)
    assert b["rtt_ms"] == {"uniform": [30.0, 80.0]}
    # Options whose default is "absent" stay absent rather than null.
    assert "loss" not in b and "stop_s" not in a and "sack" not in a["tcp"]
    assert "loss" not in dumbbell["bottleneck"] and "trace_interval_s" not in normal["outputs"]


def test_normalize_gives_floats_for_float_fields_and_integers_for_integer_fields():
    normal = tcpsim.normalize(SCENARIO)
    assert isinstance(normal["duration_s"], float) and normal["duration_s"] == 3.0
    assert isinstance(normal["topology"]["dumbbell"]["bottleneck"]["rate_mbps"], float)
    assert isinstance(normal["seed"], int) and isinstance(normal["flows"][0]["tcp"]["mss_bytes"], int)


def test_normalize_is_idempotent_and_does_not_touch_its_input():
    original = copy.deepcopy(SCENARIO)
    normal = tcpsim.normalize(SCENARIO)
    assert SCENARIO == original
    assert tcpsim.normalize(normal) == normal
    assert tcpsim.normalize(json.dumps(SCENARIO)) == normal


def test_the_normalized_scenario_runs_to_the_same_result():
    assert without_stats(tcpsim.run(tcpsim.normalize(SCENARIO))) == without_stats(tcpsim.run(SCENARIO))


def test_normalize_refuses_what_only_the_full_check_finds():
    # Parses fine; only the plan (the same check as validate) sees the flow name used twice.
    twice = scenario(flows=[{"name": "x", "rtt_ms": 40}, {"name": "x", "rtt_ms": 40}])
    with pytest.raises(tcpsim.ScenarioError) as info:
        tcpsim.normalize(twice)
    assert (info.value.path, info.value.kind) == ("$.flows[1].name", "invalid")


# --- the GIL --------------------------------------------------------------------------------


def _long_scenario(duration_s: float) -> dict:
    return {
        "duration_s": duration_s,
        "seed": 1,
        "topology": {"dumbbell": {"bottleneck": {"rate_mbps": 20, "delay_ms": 10}}},
        "flows": [{"name": "bulk", "count": 16, "variant": "reno", "rtt_ms": {"uniform": [20, 100]}}],
    }


def test_the_gil_is_released_while_simulating():
    # A run long enough to see (0.2 s or more, whatever the machine's speed).
    duration_s = 10.0
    while True:
        started = time.perf_counter()
        tcpsim.run(_long_scenario(duration_s))
        alone = time.perf_counter() - started
        if alone >= 0.2 or duration_s >= 10_000:
            break
        duration_s *= 2 if alone > 0.05 else 8
    assert alone >= 0.05, "the calibration run is too short to tell anything"

    window: dict[str, float] = {}

    def simulate() -> None:
        window["start"] = time.perf_counter()
        tcpsim.run(_long_scenario(duration_s))
        window["end"] = time.perf_counter()

    worker = threading.Thread(target=simulate)
    ticks = []
    worker.start()
    while worker.is_alive():
        ticks.append(time.perf_counter())  # needs the GIL
        time.sleep(0.001)
    worker.join()

    # Had the run kept the GIL, this thread could not have ticked between its start and end.
    start, end = window["start"], window["end"]
    margin = 0.2 * (end - start)
    inside = [t for t in ticks if start + margin < t < end - margin]
    assert len(inside) >= 5, f"main thread ticked {len(inside)} times during a {end - start:.2f} s run"


# --- version and variants -------------------------------------------------------------------


def _rust_core_version() -> str:
    workspace = tomllib.loads((ROOT / "simulator" / "Cargo.toml").read_text())
    core = tomllib.loads((ROOT / "simulator" / "core" / "Cargo.toml").read_text())
    version = core["package"]["version"]
    if isinstance(version, dict):  # version.workspace = true
        version = workspace["workspace"]["package"]["version"]
    return version


def test_the_version_is_the_rust_core_version():
    assert tcpsim.__version__ == _rust_core_version()


def test_variants_maps_every_name_to_a_description_and_each_one_runs():
    assert {"reno", "newreno-sbs", "newreno-impatient"} <= set(tcpsim.VARIANTS)
    for name, about in tcpsim.VARIANTS.items():
        assert isinstance(about, str) and about
        flows = [{"name": "f", "variant": name, "rtt_ms": 40}]
        result = tcpsim.run(scenario(duration_s=2, warmup_s=0, flows=flows))
        assert result["flows"][0]["variant"] == name


# --- the console script ---------------------------------------------------------------------


def _tcpsim(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(TCPSIM_SCRIPT), *args], input=stdin, capture_output=True, text=True, timeout=60)


def test_the_console_script_runs_a_scenario_file(tmp_path):
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps(SCENARIO))
    done = _tcpsim("run", str(path))
    assert done.returncode == 0, done.stderr
    assert without_stats(json.loads(done.stdout)) == without_stats(tcpsim.run(SCENARIO))

    reseeded = _tcpsim("run", str(path), "--seed", "8", "--pretty")
    assert reseeded.returncode == 0, reseeded.stderr
    assert json.loads(reseeded.stdout)["seed"] == 8


def test_the_console_script_reads_standard_input():
    done = _tcpsim("validate", "-", stdin=json.dumps(SCENARIO))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("ok: 2 flow(s)")


def test_the_console_script_validates_and_names_the_bad_field(tmp_path):
    good = tmp_path / "good.json"
    good.write_text(json.dumps(SCENARIO))
    done = _tcpsim("validate", str(good))
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.startswith("ok:")

    bad_scenario = copy.deepcopy(SCENARIO)
    bad_scenario["flows"][0]["tcp"] = {"min_rto": 1.0}
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(bad_scenario))
    for command in ("validate", "run"):
        done = _tcpsim(command, str(bad))
        assert done.returncode == 1
        assert done.stdout == ""
        assert "$.flows[0].tcp.min_rto" in done.stderr


def test_the_console_script_reports_a_missing_file_and_a_bad_command(tmp_path):
    missing = _tcpsim("run", str(tmp_path / "nope.json"))
    assert missing.returncode == 1 and "nope.json" in missing.stderr
    usage = _tcpsim("frobnicate")
    assert usage.returncode == 2 and "Usage" in usage.stderr


def test_the_console_script_lists_the_variants_and_its_version():
    done = _tcpsim("variants")
    assert done.returncode == 0
    assert [line.split()[0] for line in done.stdout.splitlines()] == list(tcpsim.VARIANTS)
    version = _tcpsim("--version")
    assert (version.returncode, version.stdout.strip()) == (0, f"tcpsim {tcpsim.__version__}")


def test_the_console_script_prints_the_scenario_schema_the_binding_returns():
    done = _tcpsim("schema")
    assert done.returncode == 0
    printed = json.loads(done.stdout)
    assert printed == tcpsim.scenario_schema()
    assert printed["title"] == "Scenario" and "TcpConfig" in printed["$defs"]


def test_python_dash_m_tcpsim_is_the_same_command():
    done = subprocess.run([sys.executable, "-m", "tcpsim", "variants"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0
    assert done.stdout == _tcpsim("variants").stdout


# --- columns: the result's tables and traces as numpy arrays ---------------------------------


def _preset(name: str) -> dict:
    """Preset `name`, shortened to at most 4 simulated seconds, with traces every 10 ms."""
    s = build_scenario(name)
    duration = min(s["duration_s"], 4.0)
    s["warmup_s"] = min(s.get("warmup_s", 0.0), duration / 2)
    s["duration_s"] = duration
    s.setdefault("outputs", {})["trace_interval_s"] = 0.01
    if any(True for _ in link_traces(s)):  # a built-in trace by name: the core reads it from its file
        s = with_trace_files(canonical_dict(s), get_settings().effective_trace_cache_dir, _builtin_text)
    return s


def _builtin_text(sha256: str) -> str | None:
    trace = builtin_by_hash(sha256)
    return None if trace is None else trace.text


PRESET_NAMES = [p.name for p in list_presets()]

# A UDP flow, a flow with no loss (ssthresh infinite until its first loss: null in its trace),
# random loss, and an undefined download time: every kind of value the result holds.
MIXED = {
    "name": "mixed",
    "duration_s": 3,
    "warmup_s": 1,
    "seed": 11,
    "topology": {"dumbbell": {"bottleneck": {"rate_mbps": 10, "delay_ms": 5}}},
    "flows": [
        {"name": "lossy", "variant": "newreno-sbs", "rtt_ms": 40, "loss": {"type": "uniform", "rate": 0.02}},
        {"name": "clean", "variant": "cubic", "rtt_ms": 60, "start_s": 1.5},
        {"name": "cbr", "type": "udp", "rtt_ms": 30, "app": {"type": "cbr", "rate_mbps": 2, "packet_bytes": 500}},
    ],
    "outputs": {"trace_interval_s": 0.005, "trace": ["cwnd", "ssthresh", "queue", "throughput", "delay"]},
}


def _bits(value: object) -> str:
    """A result as text that tells apart every bit of every float (repr is exact), int from
    float, and the order of keys."""
    return json.dumps(value, allow_nan=False)


_ECN_FLOW_FIELDS = ("ecn_marks_received", "cwnd_reductions_ecn", "dctcp_alpha")


def _assert_columns_match_records(columns: dict, records: dict) -> None:
    """Every column of `columns` holds, value for value and bit for bit, what `records` holds."""
    table, rows = columns["flows"], records["flows"]
    assert isinstance(table, dict)
    assert all(list(row) == [k for k in table if k in row] for row in rows)
    for key, column in table.items():
        values = [row.get(key) for row in rows]
        if isinstance(column, list):
            # Strings, and the ECN fields a flow without ECN leaves out (None in the column).
            assert key in ("name", "type", "variant", *_ECN_FLOW_FIELDS)
            assert _bits(column) == _bits(values)
            continue
        assert isinstance(column, np.ndarray) and column.ndim == 1 and len(column) == len(rows)
        if column.dtype == np.int64:
            assert all(type(v) is int for v in values) and column.tolist() == values
        else:
            assert column.dtype == np.float64
            assert all(v is None or type(v) is float for v in values)
            expected = np.array([math.nan if v is None else v for v in values], dtype=np.float64)
            assert np.array_equal(np.isnan(column), [v is None for v in values])
            assert column.view(np.int64).tolist() == expected.view(np.int64).tolist()


def _without_stats(result: dict) -> dict:
    return {k: v for k, v in result.items() if k != "stats"}


@pytest.mark.parametrize("name", PRESET_NAMES)
def test_every_preset_gives_the_same_bits_as_columns_as_as_records_traces_included(name):
    s = _preset(name)
    records = tcpsim.run(s)
    columns = tcpsim.run(s, columns=True)
    assert "traces" in records and "traces" in columns
    _assert_columns_match_records(columns, records)
    back = tcpsim.to_records(columns)
    assert _bits(_without_stats(back)) == _bits(_without_stats(records))
    assert _without_stats(back) == _without_stats(records)
    assert list(back) == list(records)
    assert list(back["stats"]) == list(records["stats"])


def test_to_records_reproduces_the_json_result_exactly_with_a_udp_flow_and_null_values():
    records = tcpsim.run(MIXED)
    columns = tcpsim.run(MIXED, columns=True)
    assert [f["type"] for f in records["flows"]] == ["tcp", "tcp", "udp"]
    assert columns["flows"]["variant"] == ["newreno-sbs", "cubic", None]
    # The scenario holds nulls both in the table and in the traces, which must map to NaN.
    assert any(v is None for f in records["flows"] for v in f.values())
    assert any(v is None for f in records["traces"]["flows"] for v in f.get("ssthresh", []))
    assert any(v is None for f in records["traces"]["flows"] for v in f["delay_s"])  # nothing arrived yet
    back = tcpsim.to_records(columns)
    assert _bits(_without_stats(back)) == _bits(_without_stats(records))
    # The stats are measured anew each run; their keys and types are the same.
    assert {k: type(v) for k, v in back["stats"].items()} == {k: type(v) for k, v in records["stats"].items()}


def test_a_links_drops_by_reason_under_an_aqm_come_the_same_with_columns_and_stay_absent_under_drop_tail():
    aqm = copy.deepcopy(MIXED)
    aqm["topology"]["dumbbell"]["bottleneck"]["queue"] = {"type": "pie", "target_ms": 2}
    records = tcpsim.run(aqm)
    bottleneck = records["links"][0]
    assert list(bottleneck)[-2:] == ["overflow_drops", "aqm_drops"]
    assert bottleneck["overflow_drops"] + bottleneck["aqm_drops"] == bottleneck["queue_drops"] > 0
    access = [link for link in records["links"] if not link["name"].startswith("bottleneck")]
    assert access and all("aqm_drops" not in link for link in access)  # Drop-Tail
    back = tcpsim.to_records(tcpsim.run(aqm, columns=True))
    assert _bits(_without_stats(back)) == _bits(_without_stats(records))


def test_a_wifi_links_mac_counts_come_the_same_with_columns_and_stay_absent_on_wired_links():
    wifi = {
        "duration_s": 3,
        "warmup_s": 1,
        "topology": {
            "graph": {
                "nodes": ["server", "ap", "sta"],
                "links": [{"from": "server", "to": "ap", "rate_mbps": 100, "delay_ms": 2}],
                "wifi": [
                    {
                        "name": "wlan",
                        "ap": "ap",
                        "stations": [{"node": "sta", "snr_db": 22.5}],
                        "standard": "802.11g",
                        "rate_mbps": 54,
                    }
                ],
            }
        },
        "flows": [{"from": "server", "to": "sta"}],
    }
    records = tcpsim.run(wifi)
    links = {link["name"]: link for link in records["links"]}
    assert "wifi" not in links["server-ap"]
    down = links["wlan-sta"]["wifi"]
    assert list(down) == ["frames_sent", "mac_retries", "retry_drops", "collisions"]
    assert down["frames_sent"] > down["mac_retries"] > 0  # 22.5 dB: a lossy channel at 54 Mb/s
    back = tcpsim.to_records(tcpsim.run(wifi, columns=True))
    assert _bits(_without_stats(back)) == _bits(_without_stats(records))


def test_ecn_counters_come_the_same_with_columns_and_a_marking_queue_reports_its_marks():
    ecn = copy.deepcopy(MIXED)
    ecn["topology"]["dumbbell"]["bottleneck"]["queue"] = {
        "type": "codel",
        "target_ms": 1,
        "interval_ms": 10,
        "ecn": True,
    }
    ecn["flows"] = [{**flow, "tcp": {"ecn": True}} for flow in ecn["flows"] if flow.get("type") != "udp"]
    records = tcpsim.run(ecn)
    bottleneck = records["links"][0]
    assert bottleneck["ecn_marks"] > 0
    assert sum(flow["ecn_marks_received"] for flow in records["flows"]) > 0
    assert all(flow["cwnd_reductions_ecn"] >= 0 for flow in records["flows"])
    columns = tcpsim.run(ecn, columns=True)
    assert list(columns["flows"])[-2:] == ["ecn_marks_received", "cwnd_reductions_ecn"]
    back = tcpsim.to_records(columns)
    assert _bits(_without_stats(back)) == _bits(_without_stats(records))
    # A flow without ECN (and a UDP one) has no ECN keys in the records, None in the columns.
    mixed = copy.deepcopy(MIXED)
    mixed["flows"][0]["tcp"] = {"ecn": True}
    records = tcpsim.run(mixed)
    assert ["ecn_marks_received" in flow for flow in records["flows"]] == [True, False, False]
    columns = tcpsim.run(mixed, columns=True)
    assert columns["flows"]["cwnd_reductions_ecn"][1:] == [None, None]
    assert _bits(_without_stats(tcpsim.to_records(columns))) == _bits(_without_stats(records))


def test_a_dctcp_flow_reports_its_alpha_and_runs_ecn_without_tcp_ecn_through_a_droptail_marking_at_k():
    dctcp = copy.deepcopy(MIXED)
    dctcp["topology"]["dumbbell"]["bottleneck"]["queue"] = {
        "type": "droptail",
        "limit_pkts": 100,
        "ecn_threshold_pkts": 5,
    }
    dctcp["flows"][0]["variant"] = "dctcp"
    records = tcpsim.run(dctcp)
    assert records["links"][0]["ecn_marks"] > 0
    first, *others = records["flows"]
    assert 0.0 <= first["dctcp_alpha"] <= 1.0 and first["ecn_marks_received"] > 0
    assert all("dctcp_alpha" not in flow for flow in others)
    columns = tcpsim.run(dctcp, columns=True)
    assert columns["flows"]["dctcp_alpha"][1:] == [None, None]
    assert _bits(_without_stats(tcpsim.to_records(columns))) == _bits(_without_stats(records))


def test_trace_series_are_numpy_arrays_nan_where_the_records_have_none():
    records = tcpsim.run(MIXED)
    traces = tcpsim.run(MIXED, columns=True)["traces"]
    assert traces["time_s"].dtype == np.float64
    assert traces["time_s"].tolist() == records["traces"]["time_s"]
    assert [f["name"] for f in traces["flows"]] == [f["name"] for f in records["traces"]["flows"]]
    for got, want in zip(traces["flows"], records["traces"]["flows"], strict=True):
        assert list(got) == list(want)  # the same series, in the same order
        for series in ("cwnd", "ssthresh", "throughput_bps", "delay_s"):
            assert got[series].dtype == np.float64 and len(got[series]) == len(want[series])
            assert np.isnan(got[series]).tolist() == [v is None for v in want[series]]
            assert [None if v != v else v for v in got[series].tolist()] == want[series]
    for got, want in zip(traces["links"], records["traces"]["links"], strict=True):
        assert got["name"] == want["name"]
        assert got["queue"].dtype == np.int64 and got["queue"].tolist() == want["queue"]


def test_the_scalar_parts_of_a_columns_result_are_those_of_the_records_result():
    records, columns = tcpsim.run(SCENARIO), tcpsim.run(SCENARIO, columns=True)
    for key in ("core_version", "seed", "measured_from_s", "measured_to_s", "links", "fairness"):
        assert _bits(columns[key]) == _bits(records[key])
    assert "traces" not in columns  # none asked for: absent, as in the records
    assert list(columns) == list(records)


def test_only_the_trace_series_asked_for_are_there_with_columns():
    s = scenario(outputs={"trace_interval_s": 0.01, "trace": ["cwnd"]})
    records, columns = tcpsim.run(s), tcpsim.run(s, columns=True)
    assert [list(f) for f in columns["traces"]["flows"]] == [["name", "cwnd"]] * 2
    assert columns["traces"]["links"] == [] == records["traces"]["links"]
    assert _bits(_without_stats(tcpsim.to_records(columns))) == _bits(_without_stats(records))


def test_to_records_leaves_its_input_alone_and_copies_a_records_result():
    columns = tcpsim.run(MIXED, columns=True)
    goodput = columns["flows"]["goodput_bps"]
    tcpsim.to_records(columns)
    assert columns["flows"]["goodput_bps"] is goodput and isinstance(columns["traces"]["time_s"], np.ndarray)
    records = tcpsim.run(SCENARIO)
    again = tcpsim.to_records(records)
    assert again == records and again is not records


def test_the_same_scenario_gives_identical_columns():
    first, second = tcpsim.run(MIXED, columns=True), tcpsim.run(MIXED, columns=True)
    assert _bits(_without_stats(tcpsim.to_records(first))) == _bits(_without_stats(tcpsim.to_records(second)))


def test_errors_are_the_same_with_columns():
    bad = scenario(warmup_s=3)
    with pytest.raises(tcpsim.ScenarioError) as info:
        tcpsim.run(bad, columns=True)
    assert (info.value.path, info.value.kind) == ("$.warmup_s", "invalid")
    with pytest.raises(tcpsim.LimitExceeded):
        tcpsim.run(scenario(limits={"max_events": 10}), columns=True)
    with pytest.raises(TypeError, match="dict or a JSON string"):
        tcpsim.run(3, columns=True)
    with pytest.raises(TypeError):
        tcpsim.run(SCENARIO, True)  # columns is keyword-only, as stop is


def test_a_stop_token_ends_a_run_with_columns_and_an_unused_one_changes_nothing():
    token = tcpsim.StopToken()
    threading.Timer(0.2, token.stop).start()
    with pytest.raises(tcpsim.Stopped) as info:
        tcpsim.run(scenario(duration_s=36_000), stop=token, columns=True)
    assert (info.value.kind, info.value.path) == ("stopped", None)
    watched = tcpsim.run(MIXED, stop=tcpsim.StopToken(), columns=True)
    assert _bits(_without_stats(tcpsim.to_records(watched))) == _bits(_without_stats(tcpsim.run(MIXED)))


def test_columns_false_is_the_records_result_of_before():
    assert _without_stats(tcpsim.run(SCENARIO, columns=False)) == _without_stats(tcpsim.run(SCENARIO))
    assert isinstance(tcpsim.run(SCENARIO, columns=False)["flows"], list)


def test_columns_without_numpy_raise_module_not_found_before_running_and_records_still_work():
    # A fresh interpreter in which `import numpy` fails (the test's own has numpy loaded).
    code = """
import sys
sys.modules["numpy"] = None
import tcpsim
s = {"duration_s": 1, "topology": {"dumbbell": {"bottleneck": {"rate_mbps": 10, "delay_ms": 5}}},
     "flows": [{"variant": "reno", "rtt_ms": 40}]}
assert isinstance(tcpsim.run(s)["flows"], list)
try:
    tcpsim.run(dict(s, duration_s=36_000), columns=True)  # minutes of work, were it to start
except ModuleNotFoundError as e:
    print("refused:", e)
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("refused: tcpsim.run(..., columns=True) needs numpy"), done.stdout
    assert "panicked" not in done.stderr
