"""simulator/validation/ns3_crosscheck.py stays runnable, without ever running ns-3 here.

The cross-check itself (docs/validation/ns3-crosscheck.md) takes ~12 minutes of ns-3; these
tests check, in well under a second each, what would silently break it: the scenarios it
builds must be ones the core accepts, every variant must map onto an ns-3 configuration the
peer script's options accept, and the TCP settings must stay aligned on both sides.
"""

from __future__ import annotations

import copy
import functools
import importlib.util
import sys
import warnings
from pathlib import Path

import pytest

import tcpsim

ROOT = Path(__file__).resolve().parents[1]
VALIDATION = ROOT / "simulator" / "validation"
PEER_SCRIPT = ROOT.parent / "shared" / "peers" / "ns3" / "dumbbell.py"

# The ns-3.44 TypeIds the peer README lists (`dumbbell.py --list-variants`).
NS3_CONGESTION_OPS = {
    "TcpBbr", "TcpBic", "TcpCubic", "TcpDctcp", "TcpHighSpeed", "TcpHtcp", "TcpHybla", "TcpIllinois",
    "TcpLedbat", "TcpLinuxReno", "TcpLp", "TcpNewReno", "TcpScalable", "TcpVegas", "TcpVeno",
    "TcpWestwoodPlus", "TcpYeah",
}  # fmt: skip
NS3_RECOVERY_OPS = {"TcpClassicRecovery", "TcpPrrRecovery"}


def load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


xc = load("ns3_crosscheck", VALIDATION / "ns3_crosscheck.py")
probe = load("ns3_dumbbell_probe", VALIDATION / "ns3_dumbbell_probe.py")


@functools.cache
def peer_module():
    """The peer's dumbbell.py, for its parse_args only (ns-3 is imported in its main())."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # its docstring's "\\ " escape
        return load("ns3_peer_dumbbell", PEER_SCRIPT)


def option(args: list[str], name: str) -> str:
    return args[args.index(name) + 1]


def test_it_covers_every_variant_ns3_has():
    assert xc.DEFAULT_VARIANTS == ["newreno", "sack", "vegas", "cubic", "bbr"]
    # ns-3's other congestion controls, each paired with tcpsim's of the same name (DCTCP needs
    # ECN marking queues: the AQM cross-check's).
    paired = {v["ns3"] for v in xc.VARIANTS.values()}
    assert NS3_CONGESTION_OPS - paired <= {"TcpLinuxReno", "TcpDctcp"}
    for key, v in xc.VARIANTS.items():
        assert v["ours"] in tcpsim.VARIANTS, key
        assert v["ns3"] in NS3_CONGESTION_OPS, key
        assert v["recovery"] in NS3_RECOVERY_OPS, key
        assert v["sack"] in ("on", "off"), key
    for key, e in xc.EXTRAS.items():
        assert e["variant"] in xc.VARIANTS, key
        assert e.get("recovery", "TcpClassicRecovery") in NS3_RECOVERY_OPS, key


@pytest.mark.parametrize("shape", sorted(xc.SHAPES))
@pytest.mark.parametrize("variant", sorted(xc.VARIANTS))
def test_the_scenarios_are_ones_the_core_accepts(variant, shape):
    s = xc.build_scenario(variant, shape, seed=3)
    tcpsim.validate(s)
    f = s["flows"][0]
    assert f["variant"] == xc.VARIANTS[variant]["ours"]
    assert f["count"] == xc.SHAPES[shape]["flows"]
    assert s["seed"] == 3
    # SACK on exactly where ns-3 runs with it.
    assert f["tcp"]["sack"] == (xc.VARIANTS[variant]["sack"] == "on")


@pytest.mark.parametrize("variant", sorted(xc.VARIANTS))
def test_both_sides_get_the_same_dumbbell_and_tcp_settings(variant):
    shape = "4x10M"
    sh = xc.SHAPES[shape]
    s = xc.build_scenario(variant, shape, seed=1)
    cmd, notes = xc.ns3_command(s, variant)
    assert notes == []  # nothing of the scenario left without an ns-3 equivalent
    peer = cmd[cmd.index("--") + 1 :]
    tcp = s["flows"][0]["tcp"]
    assert option(peer, "--variant") == xc.VARIANTS[variant]["ns3"]
    assert option(peer, "--recovery") == xc.VARIANTS[variant]["recovery"]
    assert option(peer, "--sack") == xc.VARIANTS[variant]["sack"]
    assert int(option(peer, "--flows")) == sh["flows"]
    assert float(option(peer, "--bottleneck-mbps")) == sh["rate_mbps"]
    assert int(option(peer, "--queue-pkts")) == sh["queue_pkts"]
    assert float(option(peer, "--rtt-ms")) == xc.RTT_MS
    assert float(option(peer, "--access-delay-ms")) == 0.5
    assert float(option(peer, "--sim-seconds")) == sh["duration_s"]
    assert float(option(peer, "--warmup-seconds")) == sh["warmup_s"]
    # The settings the reference dumbbell aligned with ns-3's defaults.
    assert int(option(peer, "--segment-size")) == tcp["mss_bytes"] == 1000
    assert tcp["header_bytes"] == 54 and option(peer, "--timestamps") == "on"
    assert int(option(peer, "--initial-cwnd")) == tcp["initial_cwnd_pkts"] == 10
    assert float(option(peer, "--min-rto-ms")) == tcp["min_rto_s"] * 1000 == 1000
    assert tcp["initial_rto_s"] == 1.0  # ns-3's initial RTO
    assert option(peer, "--delack-count") == "1" and not tcp.get("delayed_ack", False)
    assert tcp["limited_transmit"] is True and tcp["rtt_sampling"] == "timestamps"


def test_cubic_runs_without_hystart_in_ns3_and_vegas_thresholds_match_ns3s_integer_rule():
    cmd, _ = xc.ns3_command(xc.build_scenario("cubic", "4x10M", 1), "cubic")
    assert "ns3::TcpCubic::HyStart=false" in cmd[: cmd.index("--")]
    cmd, _ = xc.ns3_command(xc.build_scenario("cubic", "4x10M", 1), "cubic", "cubic/hystart")
    assert "ns3::TcpCubic::HyStart=true" in cmd[: cmd.index("--")]
    # ns-3: diff = cwnd - floor(cwnd * base / rtt) with Alpha 2, Beta 4, Gamma 1 (segments).
    vegas = xc.build_scenario("vegas", "4x10M", 1)["flows"][0]["tcp"]["vegas"]

    def ns3_decision(cwnd: int, base: float, rtt: float) -> str:
        d = cwnd - int(cwnd * base / rtt)
        return "up" if d < 2 else "down" if d > 4 else "hold"

    def ours(cwnd: int, base: float, rtt: float) -> str:
        d = cwnd * (rtt - base) / rtt
        return "up" if d < vegas["alpha"] else "down" if d > vegas["beta"] else "hold"

    # They differ only when exactly one segment is queued (ns-3 grows, ours holds).
    for cwnd in range(12, 80):
        for queued in (0.3, 0.7, 1.5, 2.5, 3.5, 3.9, 4.5, 6.5, 10.5):
            rtt = 0.05 * cwnd / (cwnd - queued)
            assert ns3_decision(cwnd, 0.05, rtt) == ours(cwnd, 0.05, rtt), (cwnd, queued)


def test_bbr_runs_with_ns3s_switches_the_same_as_the_cores_ns3_profile_sets():
    for s in (xc.build_scenario("bbr", "4x10M", 1), xc.build_highbdp_scenario("bbr", "1x100M-100ms", 1)):
        bbr = s["flows"][0]["tcp"]["bbr"]
        assert bbr["ack_aggregation"]["epoch_reset_pkts"] == 4096 / 1000  # ns-3's 4096 bytes
        assert "long_term_bw" not in bbr  # ns-3's TcpBbr has no long-term sampling
    # The core's preset (`BbrParams::ns3`, the ns3 profile's 536-byte segments) is the same.
    profile = tcpsim.TCP_PROFILES["ns3"]["bbr"]
    assert xc.ns3_bbr(536) == profile
    normal = tcpsim.normalize(xc.build_scenario("bbr", "4x10M", 1))["flows"][0]["tcp"]["bbr"]
    assert normal == xc.ns3_bbr(1000)


def test_scalable_runs_with_ns3s_rule_the_same_as_the_cores_ns3_and_linux_profiles_set():
    tcp = xc.build_scenario("scalable", "4x10M", 1)["flows"][0]["tcp"]
    assert tcp["scalable"] == xc.NS3_SCALABLE == {"a": 0.02, "b": 0.125, "legacy_b": 0.125}
    assert tcpsim.TCP_PROFILES["ns3"]["scalable"] == xc.NS3_SCALABLE
    assert tcpsim.TCP_PROFILES["linux"]["scalable"] == xc.NS3_SCALABLE


def test_veno_runs_with_ns3s_reno_growth_as_the_cores_ns3_profile_sets_and_linuxs_does_not():
    assert xc.build_scenario("veno", "8x15M", 2)["flows"][0]["tcp"]["veno"] == xc.NS3_VENO == {"reno_growth": True}
    assert tcpsim.TCP_PROFILES["ns3"]["veno"] == xc.NS3_VENO
    assert "veno" not in tcpsim.TCP_PROFILES["linux"]


def test_stored_ns3_runs_are_reused_only_for_the_same_command(tmp_path):
    s = xc.build_scenario("bbr", "4x10M", 1)
    cmd, _ = xc.ns3_command(s, "bbr")
    runs = [
        {"label": "bbr", "ns3_command": cmd, "ns3": {"aggregate_mbps": 9.0}},
        {"label": "bbr", "ns3_command": cmd[:-1], "ns3": {"aggregate_mbps": 1.0}},
        {"label": "bbr", "ns3_command": cmd, "ns3": {"error": "timeout"}},
    ]
    path = tmp_path / "earlier.json"
    path.write_text(xc.json.dumps({"runs": runs}))
    kept = xc.stored_ns3_runs(path)
    assert [r["ns3"] for r in kept if r["ns3_command"] == cmd] == [{"aggregate_mbps": 9.0}]


@pytest.mark.skipif(not PEER_SCRIPT.exists(), reason="the ns-3 peer lives in ../shared beside the repository")
@pytest.mark.parametrize(
    ("variant", "extra"),
    [(v, None) for v in sorted(xc.VARIANTS)] + [(e["variant"], k) for k, e in sorted(xc.EXTRAS.items())],
)
def test_the_peer_script_accepts_every_command(variant, extra):
    peer = peer_module()
    cmd, _ = xc.ns3_command(xc.build_scenario(variant, "8x15M", 2), variant, extra)
    sets, rest = cmd[: cmd.index("--")], cmd[cmd.index("--") + 1 :]
    a = peer.parse_args(rest)
    assert a.variant == xc.VARIANTS[variant]["ns3"] and a.seed == 2 and a.qdisc == "none"
    for name_value in sets[1::2]:
        name, _, value = name_value.partition("=")
        assert name.startswith("ns3::") and name.count("::") == 2 and value


def test_the_probe_types_attribute_values_and_the_comparison_arithmetic():
    assert probe.typed("false") is False and probe.typed("True") is True
    assert probe.typed("4") == 4 and probe.typed("0.7") == 0.7 and probe.typed("1ms") == "1ms"
    run = {"per_flow_mbps": [1.0, 3.0], "aggregate_mbps": 4.0, "jain": 0.8, "mean_queue_pkts": 10.0, "drops": 5}
    m = xc.seed_mean([run, dict(run, aggregate_mbps=6.0, mean_queue_pkts=None)])
    assert m["aggregate_mbps"] == 5.0 and m["flow_min_mbps"] == 1.0 and m["mean_queue_pkts"] == 10.0
    assert xc.diff(11.0, 10.0, "pct") == pytest.approx(10.0)
    assert xc.within("aggregate_mbps", 9.9) and not xc.within("mean_queue_pkts", -10.5)
    assert xc.within("jain", xc.diff(0.95, 1.0, "abs")) and xc.within("drops", 50.0) is None


def test_our_side_runs_and_reports_what_the_table_needs():
    s = copy.deepcopy(xc.build_scenario("sack", "4x10M", 1))
    s["duration_s"], s["warmup_s"] = 4, 1
    r = xc.run_ours(s)
    assert len(r["per_flow_mbps"]) == 4 and 0 < r["aggregate_mbps"] <= 10
    assert r["mean_queue_pkts"] >= 0 and 0 < r["jain"] <= 1 and r["drops"] >= 0


@pytest.mark.parametrize("shape", sorted(xc.HIGHBDP))
@pytest.mark.parametrize("variant", xc.HIGHBDP_VARIANTS)
def test_the_high_bdp_cases_map_onto_the_same_path_window_and_start(variant, shape):
    sh = xc.HIGHBDP[shape]
    s = xc.build_scenario(variant, shape, seed=1)
    tcpsim.validate(s)
    cmd, notes = xc.ns3_command(s, variant)
    assert notes == []
    peer = cmd[cmd.index("--") + 1 :]
    if PEER_SCRIPT.exists():
        peer_module().parse_args(peer)
    f, tcp = s["flows"][0], s["flows"][0]["tcp"]
    rtt = sh["rtt_ms"]
    assert float(option(peer, "--rtt-ms")) == f["rtt_ms"] == rtt
    assert float(option(peer, "--access-delay-ms")) == 0.5
    # One BDP of 1000-byte segments, and a receive window far above cwnd on both sides.
    assert int(option(peer, "--queue-pkts")) == sh["queue_pkts"] == round(sh["rate_mbps"] * 1e6 * rtt / 1e3 / 8 / 1000)
    assert int(option(peer, "--buffer-bytes")) == xc.HIGHBDP_BUFFER_BYTES
    assert tcp["max_window_pkts"] * tcp["mss_bytes"] >= xc.HIGHBDP_BUFFER_BYTES > 2 * sh["queue_pkts"] * 1000
    # ns-3 starts at 0 and sends its first segment after the handshake; ours starts then.
    assert float(option(peer, "--start-spread-s")) == 0 and f["start_s"] == rtt / 1000
    assert float(option(peer, "--warmup-seconds")) == s["warmup_s"] == 0
    assert float(option(peer, "--sim-seconds")) == s["duration_s"] == sh["duration_s"]


def test_the_high_bdp_verdict():
    ns3 = {"aggregate_mbps": 80.0, "timeouts": 1}
    v = xc.highbdp_verdict
    assert v("sack", "1x100M-100ms", {"aggregate_mbps": 87.9, "timeouts": 1}, ns3) == "within 10 %"
    assert v("sack", "1x100M-100ms", {"aggregate_mbps": 88.1, "timeouts": 1}, ns3) == "outside 10 % (goodput)"
    assert v("sack", "1x100M-100ms", {"aggregate_mbps": 80.0, "timeouts": 0}, ns3) == "outside 10 % (timeouts)"
    # A listed ns-3 deviation names its section; it never turns a failure into a pass.
    known = v("cubic", "1x100M-100ms", {"aggregate_mbps": 95.0, "timeouts": 0}, ns3)
    assert known.startswith("differs (goodput and timeouts): ns-3's deviation") and "§" in known
    assert v("cubic", "1x100M-100ms", {"aggregate_mbps": 80.0, "timeouts": 1}, ns3) == "within 10 %"
    assert (
        v("bbr", "1x100M-100ms", {"aggregate_mbps": 80.0, "timeouts": 1}, {"aggregate_mbps": None, "timeouts": None})
        == "no ns-3 result"
    )
    a = xc.parse_args(["--cases", "highbdp"])
    assert a.variants == xc.HIGHBDP_VARIANTS and a.shapes == [next(iter(xc.HIGHBDP))] and a.seeds == [1]
    a = xc.parse_args([])
    assert a.variants == xc.DEFAULT_VARIANTS and a.shapes == list(xc.SHAPES) and a.seeds == [1, 2]
    assert xc.parse_args(["--variants", "sack,family"]).variants == ["sack", *xc.FAMILY]


def test_an_extra_with_tcpsims_own_mechanism_runs_it_and_one_without_reuses_its_variants_run():
    """PRR and HyStart are in tcpsim now: their extras compare like with like; PRR with SACK off
    is not, so newreno/prr stays against the plain newreno-sbs run."""
    plain = xc.build_scenario("sack", "4x10M", 1)
    prr = xc.build_scenario("sack", "4x10M", 1, "sack/prr")
    assert "sack_recovery" not in plain["flows"][0]["tcp"] and prr["flows"][0]["tcp"]["sack_recovery"] == "prr"
    hystart = xc.build_scenario("cubic", "8x15M", 2, "cubic/hystart")["flows"][0]["tcp"]["hystart"]
    assert hystart == {"css_rounds": 0, "min_window_pkts": 16}
    assert xc.build_scenario("newreno", "4x10M", 1, "newreno/prr") == xc.build_scenario("newreno", "4x10M", 1)
    cmd, _ = xc.ns3_command(prr, "sack", "sack/prr")
    assert cmd[cmd.index("--recovery") + 1] == "TcpPrrRecovery"
