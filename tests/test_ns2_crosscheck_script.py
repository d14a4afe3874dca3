"""simulator/validation/ns2_crosscheck.py stays runnable, without running ns-2 here.

The cross-check (docs/validation/ns2-crosscheck.md) needs ns-2.35 installed; these tests check
what would silently break it: every scenario it builds is one the core accepts, it asks ns-2
and tcpsim for the same run (path, window, drops, limited transmit), its Tcl script knows
every key it passes and builds every variant, and the verdict holds packets sent to the
documented slack, no more.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

import tcpsim

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "simulator" / "validation" / "ns2_crosscheck.py"
TCL = ROOT / "simulator" / "validation" / "ns2" / "det.tcl"

spec = importlib.util.spec_from_file_location("ns2_crosscheck", SCRIPT)
xc = importlib.util.module_from_spec(spec)
sys.modules["ns2_crosscheck"] = xc
spec.loader.exec_module(xc)


def keys(cmd: list[str]) -> dict[str, str]:
    return dict(arg.split("=", 1) for arg in cmd[2:])


@pytest.mark.parametrize("variant", xc.VARIANTS)
@pytest.mark.parametrize("ns2_ways", [True, False])
def test_every_scenario_is_one_the_core_accepts(variant, ns2_ways):
    sc = xc.scenario(variant, 30, 3000, 12, singledup=True, ns2_ways=ns2_ways)
    full = tcpsim.normalize(sc)
    tcp = full["flows"][0]["tcp"]
    assert tcp["max_window_pkts"] == 30 and tcp["limited_transmit"] is True
    assert (tcp["recover_guard"], tcp["integer_ssthresh"], tcp["repeated_timeout_ssthresh"]) == (
        ("ack_passes_recover", True, "halve") if ns2_ways else ("ack_reaches_recover", False, "hold")
    )
    # ns-2's timers either way: the comparison is about the behaviour, not the timer settings.
    assert (tcp["min_rto_s"], tcp["timer_granularity_s"], tcp["initial_rto_s"]) == (0.2, 0.01, 3.0)


def test_both_simulators_are_asked_for_the_same_run():
    sc = xc.scenario("newreno-impatient", 60, 1500, 3, singledup=False, ns2_ways=True)
    args = keys(xc.ns2_command("ns", "newreno-impatient", 60, 1500, 3, singledup=False))
    bott = sc["topology"]["dumbbell"]["bottleneck"]
    flow = sc["flows"][0]
    assert (float(args["bw"]), float(args["bdelay"]), int(args["queue"])) == (
        bott["rate_mbps"],
        bott["delay_ms"],
        bott["queue"]["limit_pkts"],
    )
    assert (float(args["rtt"]), int(args["window"]), float(args["dur"])) == (
        flow["rtt_ms"],
        flow["tcp"]["max_window_pkts"],
        sc["duration_s"],
    )
    # Both lists count data packets from 1 at the flow's first link.
    assert args["drops"] == "1501,1502,1503" and flow["loss"]["packets"] == [1501, 1502, 1503]
    assert (args["variant"], args["singledup"]) == ("newreno-impatient", "0")
    assert flow["tcp"]["limited_transmit"] is False and flow["start_s"] == 0


def test_the_tcl_script_knows_every_key_and_builds_every_variant_it_is_given():
    tcl = TCL.read_text()
    block = tcl.split("array set opt {", 1)[1].split("\n}\n", 1)[0]
    defaults = set(re.findall(r"^\s+(\w+)\s", block, re.M))
    assert set(keys(xc.ns2_command("ns", "sack", 30, 3000, 1, True))) <= defaults
    for v in xc.VARIANTS:
        assert re.search(rf"^\s+{re.escape(v)}\s+{{", tcl, re.M), v


def test_the_verdict_holds_retransmissions_and_timeouts_exactly_and_packets_sent_to_the_slack():
    ns2 = {"sent": 3747, "delivered": 3713, "retransmits": 6, "timeouts": 1}
    # Delivered is measured at different ends (acknowledged at the sender, arrived at the
    # receiver): shown, never judged.
    same = dict(ns2, sent=3747 - xc.END_SLACK, delivered=3713 + 30)
    assert xc.verdict(same, ns2) == "agree"
    assert xc.verdict(dict(same, sent=3747 + xc.END_SLACK + 1), ns2) == "differs: sent"
    assert xc.verdict(dict(same, retransmits=7, timeouts=2), ns2) == "differs: retransmits, timeouts"


def test_an_unknown_variant_is_refused_naming_the_ones_ns2_has(capsys):
    with pytest.raises(SystemExit):
        xc.parse_args(["--variants", "cubic"])
    assert "cubic" in capsys.readouterr().err


def test_a_dry_run_prints_every_command_and_scenario_without_ns2(capsys):
    assert (
        xc.main(["--suite", "det", "--variants", "reno", "--windows", "30", "--m", "1,2", "--k", "3000", "--dry-run"])
        == 0
    )
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 4 and "det.tcl" in lines[0] and '"reno"' in lines[1]


AGG_TCL = ROOT / "simulator" / "validation" / "ns2" / "dumbbell.tcl"


@pytest.mark.parametrize("variant", xc.AGG_VARIANTS)
def test_every_aggregate_scenario_is_one_the_core_accepts_and_asks_ns2_for_the_same_run(variant):
    sc = xc.aggregate_scenario(variant, 8, 0.001, 3, singledup=True, ns2_ways=True)
    full = tcpsim.normalize(sc)
    flow = full["flows"][0]
    args = keys(xc.aggregate_command("ns", variant, 8, 0.001, 3, singledup=True))
    bott = sc["topology"]["dumbbell"]["bottleneck"]
    assert (int(args["flows"]), args["variant"], int(args["seed"])) == (flow["count"], variant, full["seed"])
    assert float(args["uniform"]) == bott["loss"]["rate"] == 0.001
    assert (float(args["bw"]), float(args["bdelay"]), int(args["queue"])) == (
        bott["rate_mbps"],
        bott["delay_ms"],
        bott["queue"]["limit_pkts"],
    )
    assert (float(args["dur"]), float(args["warm"])) == (sc["duration_s"], sc["warmup_s"])
    assert flow["tcp"]["profile"] == "ns2" and flow["tcp"]["limited_transmit"] is True


def test_the_aggregate_tcl_script_knows_every_key_it_is_given():
    block = AGG_TCL.read_text().split("array set opt {", 1)[1].split("\n}\n", 1)[0]
    defaults = set(re.findall(r"^\s+(\w+)\s", block, re.M))
    assert set(keys(xc.aggregate_command("ns", "sack", 64, 0.0, 1, True))) <= defaults


def test_the_aggregate_verdict_holds_the_mean_to_two_percent():
    assert xc.aggregate_verdict(14.42, 14.42 * 1.019) == "agree"
    assert xc.aggregate_verdict(14.42, 14.42 * 0.979).startswith("differs: +")
    assert xc.aggregate_verdict(14.0, 0.0).startswith("differs")
