"""simulator/validation/ns3_aqm_crosscheck.py stays runnable and honest, without running ns-3 here.

Its ns-3 side takes most of an hour; these tests check what would silently spoil it: the ns-3
commands must parse (the probe's options and the peer's), every queue disc attribute set must be
one ns-3.44 has (results/ns3-aqm-facts.json, read from the binary), the parameters must be the
same numbers on both sides, the drop reasons must split as documented, and the stored reference
must hold the runs the matrix names, each run with the buffer and queue of its case.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import sys
import warnings
from pathlib import Path

import pytest

import tcpsim

ROOT = Path(__file__).resolve().parents[1]
VALIDATION = ROOT / "simulator" / "validation"
# Beside the repository (../shared), or beside the folder of a git worktree (../../shared).
PEER_SCRIPT = next(
    (
        p
        for p in (d / "shared" / "peers" / "ns3" / "dumbbell.py" for d in (ROOT.parent, ROOT.parent.parent))
        if p.exists()
    ),
    ROOT.parent / "shared" / "peers" / "ns3" / "dumbbell.py",
)
FACTS = json.loads((VALIDATION / "results" / "ns3-aqm-facts.json").read_text())


def load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


sys.path.insert(0, str(VALIDATION))
aqm = load("ns3_aqm_crosscheck", VALIDATION / "ns3_aqm_crosscheck.py")
probe = load("ns3_aqm_probe", VALIDATION / "ns3_aqm_probe.py")
CASES = aqm.matrix(aqm.VARIANTS, aqm.FLOWS, aqm.BUFFERS, list(aqm.QUEUES))


@functools.cache
def peer_module():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return load("ns3_peer_dumbbell", PEER_SCRIPT)


def split(cmd: list[str]) -> tuple[list[str], list[str]]:
    k = cmd.index("--")
    return cmd[:k], cmd[k + 1 :]


def ns3_attrs(queue: str) -> dict[str, str]:
    return dict(aqm.QUEUES[queue]["ns3"]["attrs"])


@pytest.mark.parametrize("case", CASES, ids=[c["key"] for c in CASES])
def test_every_case_maps_onto_a_command_the_probe_and_the_peer_parse(case):
    s = aqm.build_scenario(case)
    cmd, _ = aqm.ns3_command(case, s)
    own, peer_args = split(cmd)
    a = probe.parse_own(["--peer-script", "dumbbell.py", *own])
    assert a.queue == aqm.QUEUES[case["queue"]]["ns3"]["queue"]
    assert a.ecn == bool(aqm.QUEUES[case["queue"]]["ns3"].get("ecn"))
    if not PEER_SCRIPT.exists():
        pytest.skip("the ns-3 peer is not beside the repository")
    pa = peer_module().parse_args([*peer_args, "--qdisc", "pfifo"])
    assert (pa.flows, pa.queue_pkts, pa.bottleneck_mbps) == (case["flows"], case["buffer"], aqm.RATE_MBPS)
    assert (pa.sim_seconds, pa.warmup_seconds) == (aqm.DURATION_S, aqm.WARMUP_S)


@pytest.mark.parametrize("queue", [q for q in aqm.QUEUES if q != "droptail"])
def test_every_queue_disc_attribute_set_is_one_ns3_has(queue):
    qtype = probe.QDISC_TYPES[aqm.QUEUES[queue]["ns3"]["queue"]]
    names = {a["name"] for a in FACTS["types"][qtype]["attributes"]}
    assert set(ns3_attrs(queue)) <= names, set(ns3_attrs(queue)) - names


def test_the_parameters_are_the_same_numbers_on_both_sides():
    def ms(v: str) -> float:
        assert v.endswith("ms"), v
        return float(v[:-2])

    codel, a = aqm.QUEUES["codel"]["ours"], ns3_attrs("codel")
    assert (codel["target_ms"], codel["interval_ms"]) == (ms(a["Target"]), ms(a["Interval"]))
    fq, a = aqm.QUEUES["fq_codel"]["ours"], ns3_attrs("fq_codel")
    assert (fq["target_ms"], fq["interval_ms"], fq["flows"]) == (ms(a["Target"]), ms(a["Interval"]), int(a["Flows"]))
    assert fq["quantum_bytes"] == aqm.QUEUES["fq_codel"]["ns3"]["quantum"]
    pie, a = aqm.QUEUES["pie"]["ours"], ns3_attrs("pie")
    assert (pie["target_ms"], pie["t_update_ms"], pie["max_burst_ms"]) == (
        ms(a["QueueDelayReference"]), ms(a["Tupdate"]), ms(a["MaxBurstAllowance"]))  # fmt: skip
    assert (pie["alpha"], pie["beta"]) == (float(a["A"]), float(a["B"]))
    assert pie["derandomize"] == (a["UseDerandomization"] == "true")
    for q in ("red", "red-ecn"):
        red, a = aqm.QUEUES[q]["ours"], ns3_attrs(q)
        assert (red["min_th_pkts"], red["max_th_pkts"]) == (float(a["MinTh"]), float(a["MaxTh"]))
        assert red["max_p"] == pytest.approx(1 / float(a["LInterm"]))
        assert (red["weight"], red["mean_pkt_bytes"]) == (float(a["QW"]), int(a["MeanPktSize"]))
        assert red["gentle"] == (a["Gentle"] == "true")
        # tcpsim spreads drops by pb / (1 - count pb): ns-3's formula with Wait off.
        assert a["Wait"] == "false"


@pytest.mark.parametrize("queue", list(aqm.QUEUES))
def test_each_scenario_runs_in_tcpsim_or_says_what_tcpsim_lacks(queue):
    s = aqm.build_scenario({"key": "t", "variant": "cubic", "flows": 4, "buffer": 100, "queue": queue})
    lack = aqm.tcpsim_lacks(s)
    if lack is None:
        tcpsim.validate(s)
        assert s["topology"]["dumbbell"]["bottleneck"]["queue"]["limit_pkts"] == 100
    else:
        assert lack.startswith(f"tcpsim lacks queue {aqm.QUEUES[queue]['ours']['type']}")
    if queue in ("droptail", "red"):
        assert lack is None


def test_ns3_drop_reasons_split_into_a_full_buffer_and_the_aqm_choice():
    def summary(qdisc: str, drops: dict) -> dict:
        o = {
            "qdisc_type": f"ns3::{qdisc}",
            "drops_window": drops, "drops_window_total": sum(drops.values()), "marks_window": {}, "marks_window_total": 0,
            "queue_delay_ms": {"n": 0}, "qdisc_sojourn_ms": {"n": 0}, "per_flow_goodput_mbps": [1.0],
            "aggregate_goodput_mbps": 1.0, "jain_fairness": 1.0, "mean_queue_pkts": 1.0, "qdisc_mean_queue_pkts": 0.5,
            "link_utilization": 1.0,
            "run_wall_s": 1.0,
        }  # fmt: skip
        return aqm.summarize_ns3(o)

    fq = summary("FqCoDelQueueDisc", {"Overlimit drop": 3, "(Dropped by child queue disc) Target exceeded drop": 5})
    assert (fq["overflow_drops"], fq["aqm_drops"]) == (3, 5)
    pie = summary("PieQueueDisc", {"Forced drop": 2, "Unforced drop": 7})
    assert (pie["overflow_drops"], pie["aqm_drops"]) == (2, 7)
    fifo = summary("FifoQueueDisc", {"Queue disc limit exceeded": 4})
    assert (fifo["overflow_drops"], fifo["aqm_drops"]) == (4, 0)
    # RED's "Forced drop" is its average past max_th, not a full buffer (its internal queue's drop).
    red = summary("RedQueueDisc", {"Forced drop": 2, "Unforced drop": 7, "Dropped by internal queue": 1})
    assert (red["overflow_drops"], red["aqm_drops"]) == (1, 9)


def test_the_stored_ns3_reference_holds_each_run_with_its_own_case():
    ref = aqm.load_reference(aqm.REFERENCE)
    assert ref["runs"], "no stored ns-3 runs"
    for key, run in ref["runs"].items():
        c = run["case"]
        assert key == aqm.key_of(c["variant"], c["flows"], c["buffer"], c["queue"], c.get("seed", 1))
        raw = run["raw"]
        assert raw["seed"] == c.get("seed", 1)
        assert (raw["flows"], raw["queue_pkts"]) == (c["flows"], c["buffer"])
        assert raw["qdisc_type"] == probe.QDISC_TYPES[aqm.QUEUES[c["queue"]]["ns3"]["queue"]]
        assert raw["ecn"] == bool(aqm.QUEUES[c["queue"]]["ns3"].get("ecn"))
        assert raw["qdisc_attributes"]["MaxSize"] == f"{c['buffer']}p"
        assert len(raw["per_flow_goodput_mbps"]) == c["flows"]
        # The queue disc ran with the attributes the case set (ns-3 prints times as "+5e+06ns").
        q = aqm.QUEUES[c["queue"]]["ns3"]
        for name, value in q["attrs"].items():
            ran = raw["qdisc_attributes"][name]
            if value.endswith("ms") and ran.endswith("ns"):  # FQ-CoDel keeps its times as strings
                assert float(ran.lstrip("+").removesuffix("ns")) == pytest.approx(float(value[:-2]) * 1e6), name
            else:
                assert ran == value, name
        if q.get("quantum"):
            assert raw["qdisc_attributes"]["(quantum, SetQuantum)"] == str(q["quantum"])


def test_dctcp_runs_tcp_dctcp_against_ns3_red_marking_at_the_same_k_on_the_instantaneous_queue():
    (case,) = [c for c in CASES if c["queue"] == "dctcp" and c["flows"] == 4 and c["buffer"] == 100]
    s = aqm.build_scenario(case)
    cmd, _ = aqm.ns3_command(case, s)
    q, a = s["topology"]["dumbbell"]["bottleneck"]["queue"], ns3_attrs("dctcp")
    assert s["flows"][0]["variant"] == "dctcp" and cmd[cmd.index("--variant") + 1] == "TcpDctcp"
    assert q["ecn_threshold_pkts"] == int(a["MinTh"]) == int(a["MaxTh"]) == aqm.DCTCP_K
    assert (a["QW"], a["UseHardDrop"], a["Gentle"]) == ("1", "false", "false")
    assert not [c for c in CASES if c["queue"] == "dctcp" and c["variant"] != "sack"], "one pairing runs it"


def test_every_ecn_case_holds_the_window_through_the_cwr_round_as_ns3_does_and_no_other_case_sets_it():
    held = {}
    for case in CASES:
        core = tcpsim.normalize(json.dumps(aqm.build_scenario(case)))
        tcp = core["flows"][0]["tcp"]
        held[case["queue"]] = held.get(case["queue"], set()) | {
            (tcp["ecn"] or case["queue"] == "dctcp", tcp["ecn_reduction_holds_window"])
        }
    assert held["red-ecn"] == held["dctcp"] == {(True, True)}
    assert all(v == {(False, False)} for q, v in held.items() if q not in ("red-ecn", "dctcp")), held


def test_cubic_grows_its_reno_friendly_estimate_as_ns3s_tcp_cubic_does_and_no_other_variant_is_touched():
    for case in CASES:
        tcp = tcpsim.normalize(json.dumps(aqm.build_scenario(case)))["flows"][0]["tcp"]
        want = "linux" if case["variant"] == "cubic" and case["queue"] != "dctcp" else "rfc9438"
        assert tcp["cubic"]["reno_friendly"] == want, case["key"]
    assert {c["variant"] for c in CASES} >= {"cubic", "sack"}
