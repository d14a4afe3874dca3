"""services.presets: papers 002 (ns-2, six-node topology) and 004 (OPNET downloads) as presets.

Every preset builds, passes the core's validation, carries its parameters and the paper's
numbers and conclusions, and a short run behaves as the paper's setup implies.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import tcpsim
from services.presets import PRESETS, build_scenario, get_preset
from services.presets.paper002 import BOTTLENECK, ns2_red_queue
from services.presets.paper004 import ATTENUATION_S, FADE_SNR, one_loss_packet, opnet_tcp
from services.presets.published import DATA_DIR
from services.scenarios import cache_key, expand, get_path, validate_scenario

ROOT = Path(__file__).resolve().parents[2]
PUBLISHED = ROOT.parent / "shared" / "papers" / "published"
CORE = tcpsim.__version__
P002 = [
    "paper002-exp1-congestion",
    "paper002-exp2-fairness-low",
    "paper002-exp2-fairness-high",
    "paper002-exp3-droptail",
    "paper002-exp3-red",
]
P004 = [
    "paper004-table2-wireless-attenuation",
    "paper004-table2-wireless-80211",
    "paper004-wired-one-loss",
    "paper004-wired-two-losses",
    "paper004-table3-wired-random-loss",
]


def run(name: str, overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    scenario = build_scenario(name, overrides)
    scenario.pop("outputs", None)
    _, canonical = validate_scenario(scenario)
    return tcpsim.run(canonical)


def flow(result: dict[str, Any], name: str) -> dict[str, Any]:
    return next(f for f in result["flows"] if f["name"] == name)


def test_each_papers_presets_are_registered_in_the_papers_order_with_its_simulators_tcp_profile():
    """Paper 002 ran ns-2, paper 004 OPNET Modeler."""
    assert [n for n in PRESETS if n.startswith("paper002-")] == P002
    assert [n for n in PRESETS if n.startswith("paper004-")] == P004
    assert {get_preset(n).tcp_profile for n in P002} == {"ns2"}
    assert {get_preset(n).tcp_profile for n in P004} == {"opnet"}


@pytest.mark.parametrize("name", P002 + P004)
def test_every_preset_is_described_referenced_and_carries_the_papers_conclusions(name):
    p = get_preset(name)
    paper = name[5:8]
    assert p.title and len(p.description) > 600 and "leaves open" in p.description
    assert p.reference.paper == paper and p.reference.where.startswith("§")
    assert p.published is not None and p.published.setup and p.published.findings
    assert p.published.source.startswith(f"paper {paper}")
    conclusions = p.published.values["conclusions"]
    assert conclusions and all(c["id"] and c["text"] and c["where"].startswith("§") for c in conclusions)
    assert p.scenario["name"] == name


@pytest.mark.parametrize("name", P002 + P004)
def test_every_preset_validates_in_the_core(name):
    model, canonical = validate_scenario(get_preset(name).scenario)
    assert tcpsim.normalize(canonical) == canonical
    assert "graph" in canonical["topology"]


@pytest.mark.parametrize("name", P002 + P004)
def test_every_parameter_is_an_override_that_exists_and_holds_its_default(name):
    p = get_preset(name)
    built = p.build()
    for param in p.parameters:
        assert param.meaning
        if param.is_path:
            value = get_path(built, param.name)
            assert value == param.default, param.name
            assert expand(built, param.name)
            assert cache_key(p.build({param.name: param.default}), CORE) == cache_key(built, CORE)
        else:
            assert [get_path(built, path) for path in param.expands_to]
        if param.paper_range is not None:
            low, high = param.paper_range
            assert low <= param.default <= high, param.name


# ---- paper 002 -------------------------------------------------------------------------------


def test_the_six_node_topology_has_ten_megabit_links_and_the_papers_endpoints():
    s = get_preset("paper002-exp2-fairness-low").scenario
    graph = s["topology"]["graph"]
    assert graph["nodes"] == ["n1", "n2", "n3", "n4", "n5", "n6"]
    assert [(link["from"], link["to"]) for link in graph["links"]] == [
        ("n1", "n2"),
        ("n5", "n2"),
        ("n2", "n3"),
        ("n3", "n4"),
        ("n3", "n6"),
    ]
    assert all(link["rate_mbps"] == 10 for link in graph["links"])
    first, second, cbr = s["flows"]
    assert (first["from"], first["to"], second["from"], second["to"]) == ("n1", "n4", "n5", "n6")
    assert (cbr["type"], cbr["from"], cbr["to"], cbr["app"]) == (
        "udp",
        "n2",
        "n3",
        {"type": "cbr", "rate_mbps": 1.0, "packet_bytes": 1000},
    )
    high = get_preset("paper002-exp2-fairness-high").scenario["flows"][2]["app"]
    assert (high["rate_mbps"], high["packet_bytes"]) == (10.0, 10000)


def test_paper_002_carries_its_stated_numbers():
    low = {t.name: t.rows[0] for t in get_preset("paper002-exp2-fairness-low").published.tables}
    assert low["NewReno/Vegas"] == {"first": 0.98, "second": 0.15, "drops": 0}
    high = {t.name: t.rows[0] for t in get_preset("paper002-exp2-fairness-high").published.tables}
    assert high["Reno/Reno"] == {"first": 0.2, "second": 0.2, "drops": 23}
    values = get_preset("paper002-exp1-congestion").published.values
    assert values["first_drops_at_cbr_mbps"] == {"Tahoe": 7, "Reno": 7, "NewReno": 7}
    assert values["never_drops"] == ["Vegas"]
    assert values["at_cbr_2mbps"]["latency_s"]["Vegas"] == 0.005
    exp3 = get_preset("paper002-exp3-red")
    assert exp3.published.values["buffers_pkts"] == [100, 300]
    assert exp3.parameter("flows[1].start_s").default == 4.0


def test_the_red_preset_has_ns2s_automatic_parameters_for_a_10_megabit_link():
    queue = get_preset("paper002-exp3-red").scenario["topology"]["graph"]["links"][BOTTLENECK]["queue"]
    assert queue == ns2_red_queue(100)
    assert (queue["min_th_pkts"], queue["max_th_pkts"], queue["mean_pkt_bytes"]) == (6.25, 18.75, 500)
    assert queue["weight"] == pytest.approx(1 - 2.718281828 ** (-1 / 2500), rel=1e-6)
    assert get_preset("paper002-exp3-droptail").scenario["topology"]["graph"]["links"][BOTTLENECK]["queue"] == {
        "type": "droptail",
        "limit_pkts": 100,
    }


def test_more_cbr_load_lowers_the_tcp_flows_throughput():
    goodput = [
        flow(run("paper002-exp1-congestion", {"flows[1].app.rate_mbps": rate, "duration_s": 3.0}), "tcp")["goodput_bps"]
        for rate in (1.0, 5.0, 9.0)
    ]
    assert goodput[0] > goodput[1] > goodput[2] > 0
    # With 1 Mb/s of CBR the TCP flow fills most of the rest of the 10 Mb/s link.
    assert goodput[0] > 8e6


def test_vegas_never_drops_where_reno_does():
    reno = flow(run("paper002-exp1-congestion", {"flows[1].app.rate_mbps": 10.0, "duration_s": 3.0}), "tcp")
    vegas = flow(
        run(
            "paper002-exp1-congestion", {"flows[1].app.rate_mbps": 10.0, "flows[0].variant": "vegas", "duration_s": 3.0}
        ),
        "tcp",
    )
    assert reno["drops"] > 0 and vegas["drops"] == 0


def test_newreno_takes_most_of_the_link_from_vegas_at_low_congestion():
    result = run("paper002-exp2-fairness-low", {"duration_s": 3.0})
    assert flow(result, "first")["goodput_bps"] > 3 * flow(result, "second")["goodput_bps"]
    same = run(
        "paper002-exp2-fairness-low", {"duration_s": 3.0, "flows[0].variant": "reno", "flows[1].variant": "reno"}
    )
    a, b = flow(same, "first")["goodput_bps"], flow(same, "second")["goodput_bps"]
    assert abs(a - b) <= 0.02 * max(a, b)


def test_the_cbr_of_experiment_3_starts_at_4_s_and_red_keeps_the_queue_shorter():
    before = run("paper002-exp3-droptail", {"duration_s": 3.99})
    assert flow(before, "cbr")["packets_sent"] == 0 and flow(before, "tcp")["goodput_bps"] > 9e6
    after = {
        q: run(f"paper002-exp3-{q}", {"duration_s": 6.0, "warmup_s": 4.0, "flows[1].app.rate_mbps": 10.0})
        for q in ("droptail", "red")
    }
    queue = {
        q: next(link for link in r["links"] if link["name"] == "n2-n3")["mean_queue_pkts"] for q, r in after.items()
    }
    assert queue["red"] < queue["droptail"]
    assert flow(after["droptail"], "cbr")["packets_sent"] > 0


# ---- paper 004 -------------------------------------------------------------------------------


def test_the_opnet_parameter_table_is_in_every_flow():
    table = json.loads((DATA_DIR / "004_tables.json").read_text())["tcp_parameters"]
    for name in P004:
        tcp = get_preset(name).build()["flows"][0]["tcp"]
        assert tcp["profile"] == get_preset(name).tcp_profile == "opnet"
        assert {k: tcp[k] for k in opnet_tcp()} == opnet_tcp()
        assert (tcp["initial_rto_s"], tcp["min_rto_s"], tcp["max_rto_s"]) == (1.0, 0.5, 64.0)
        assert (tcp["rtt_gain"], tcp["rttvar_gain"], tcp["rttvar_k"]) == (0.125, 0.25, 4.0)
        assert tcp["dupack_threshold"] == table["duplicate_ack_threshold"] == 3
        assert tcp["initial_cwnd_pkts"] == 1 and tcp["delayed_ack"] is True
        assert tcp["max_window_pkts"] * tcp["mss_bytes"] <= table["receive_buffer_bytes"]
        assert get_preset(name).published.values["tcp_parameters"] == table


def test_paper_004_carries_tables_2_and_3_from_the_data_file():
    data = json.loads((DATA_DIR / "004_tables.json").read_text())
    (table2,) = get_preset("paper004-table2-wireless-attenuation").published.tables
    assert table2.rows == (data["table2_wireless_download_response_time_s"],)
    (table3,) = get_preset("paper004-table3-wired-random-loss").published.tables
    assert table3.rows == (data["table3_wired_0.05pct_loss_download_response_time_s"],)
    assert table3.rows[0]["SACK"] == 164 and [c.name for c in table3.columns] == ["Tahoe", "Reno", "SACK", "NewReno"]
    (table2_80211,) = get_preset("paper004-table2-wireless-80211").published.tables
    assert table2_80211 == table2, "the 802.11 preset reruns the same experiment"
    conclusion_of = dict(zip(P004, (0, 0, 1, 2, 3), strict=True))  # both wireless presets: the first
    for name, index in conclusion_of.items():
        assert get_preset(name).published.findings[0] == data["conclusions"][index]


def test_the_wired_presets_are_10_mb_over_1_5_megabit_with_the_papers_losses():
    k = one_loss_packet()
    assert k == 4469  # 107/164 of 6850 segments
    for name, loss in (
        ("paper004-wired-one-loss", {"type": "scheduled", "packets": [k]}),
        ("paper004-wired-two-losses", {"type": "scheduled", "packets": [k, k + 1]}),
        ("paper004-table3-wired-random-loss", {"type": "uniform", "rate": 0.0005}),
    ):
        s = get_preset(name).scenario
        assert s["flows"][0]["loss"] == loss and s["flows"][0]["app"] == {"type": "ftp", "bytes": 10_000_000}
        rates = [link["rate_mbps"] for link in s["topology"]["graph"]["links"]]
        assert rates == [10, 1.5, 1.5, 10]
    built = build_scenario("paper004-wired-one-loss", {"cloud_latency_ms": 600})
    assert [link["delay_ms"] for link in built["topology"]["graph"]["links"]] == [0, 300, 300, 0]


def test_the_wireless_preset_loses_packets_only_during_the_attenuation():
    s = get_preset("paper004-table2-wireless-attenuation").scenario
    loss = s["flows"][0]["loss"]
    assert (loss["type"], loss["start_s"], loss["end_s"]) == ("outage", *ATTENUATION_S) == ("outage", 333.0, 414.0)
    assert s["flows"][0]["app"] == {"type": "ftp", "bytes": 50_000_000}
    # Shorter: the attenuation at 2-4 s of a 4 MB download.
    short = {
        "flows[0].app.bytes": 4_000_000,
        "flows[0].loss.start_s": 2.0,
        "flows[0].loss.end_s": 4.0,
        "duration_s": 120.0,
    }
    lossy = flow(run("paper004-table2-wireless-attenuation", short), "ftp")
    clean = flow(run("paper004-table2-wireless-attenuation", {**short, "flows[0].loss.rate": 0.0}), "ftp")
    assert lossy["drops"] > 0 and clean["drops"] == 0
    assert lossy["download_time_s"] > clean["download_time_s"]


def wlan(result: dict[str, Any]) -> dict[str, Any]:
    """The 802.11 MAC's counts on the access point's link to the client (the data direction)."""
    return next(link for link in result["links"] if link["name"] == "wlan-client")["wifi"]


def test_the_80211_preset_fades_the_clients_signal_only_during_the_attenuation():
    s = get_preset("paper004-table2-wireless-80211").scenario
    (wifi,) = s["topology"]["graph"]["wifi"]
    assert (wifi["ap"], wifi["standard"], wifi["rate_mbps"]) == ("base-station", "802.11b", 1.0)
    start, end = ATTENUATION_S
    assert wifi["stations"] == [
        {"node": "client", "snr_db": {"points": [[0.0, 10.0], [start, -4.0], [end, 10.0]], "shape": "step"}}
    ]
    assert "loss" not in s["flows"][0], "the MAC, not a loss module, loses the packets"
    deeper = build_scenario("paper004-table2-wireless-80211", {FADE_SNR: -6})
    assert deeper["topology"]["graph"]["wifi"][0]["stations"][0]["snr_db"]["points"][1] == [start, -6.0]
    with pytest.raises(ValueError, match=FADE_SNR):
        build_scenario("paper004-table2-wireless-80211", {FADE_SNR: "deep"})


def test_over_80211_the_mac_hides_a_light_fade_from_tcp_and_gives_up_frames_in_a_deep_one():
    """The absolute time needs no tuning: 50 MB over 802.11b at 1 Mb/s take about Table 2's
    480-496 s with no fade. A -3 dB fade costs retries but no TCP loss; at -4 dB the MAC gives
    frames up after 7 attempts, and TCP retransmits each of them."""
    clear = run("paper004-table2-wireless-80211", {FADE_SNR: 10.0})
    light = run("paper004-table2-wireless-80211", {FADE_SNR: -3.0})
    deep = run("paper004-table2-wireless-80211")
    assert 475 < flow(clear, "ftp")["download_time_s"] < 496
    assert wlan(clear)["retry_drops"] == 0 and flow(clear, "ftp")["retransmits"] == 0
    assert wlan(light)["mac_retries"] > wlan(clear)["mac_retries"] + 100
    assert wlan(light)["retry_drops"] == 0 and flow(light, "ftp")["retransmits"] == 0
    # A frame given up after its data arrived (only its MAC ACKs failed) is no loss to TCP.
    lost = flow(deep, "ftp")["drops"]
    assert 10 < lost <= wlan(deep)["retry_drops"] and flow(deep, "ftp")["retransmits"] >= lost
    assert (
        flow(deep, "ftp")["download_time_s"]
        > flow(light, "ftp")["download_time_s"]
        > flow(clear, "ftp")["download_time_s"]
    )


@pytest.mark.parametrize("variant", ["reno", "newreno-sbs", "sack"])
def test_one_scheduled_loss_is_one_fast_retransmit_and_no_timeout(variant):
    f = flow(run("paper004-wired-one-loss", {"flows[0].variant": variant, "duration_s": 120.0}), "ftp")
    assert (f["drops"], f["fast_retransmits"], f["timeouts"], f["retransmits"]) == (1, 1, 0, 1)
    assert f["downloads"] == 1 and 53 < f["download_time_s"] < 60  # 10 MB at 1.5 Mb/s


def test_two_losses_in_a_window_cost_reno_a_timeout_but_not_newreno_or_sack():
    got = {
        v: flow(run("paper004-wired-two-losses", {"flows[0].variant": v, "duration_s": 120.0}), "ftp")
        for v in ("reno", "newreno-sbs", "sack")
    }
    assert got["reno"]["timeouts"] == 1
    assert got["newreno-sbs"]["timeouts"] == got["sack"]["timeouts"] == 0
    assert got["reno"]["download_time_s"] > got["sack"]["download_time_s"]


@pytest.mark.skipif(not PUBLISHED.is_dir(), reason="the shared papers folder is not here")
def test_the_004_data_file_is_an_unchanged_copy_of_the_published_one():
    assert (DATA_DIR / "004_tables.json").read_bytes() == (PUBLISHED / "004_tables.json").read_bytes()


def test_the_002_data_file_lists_every_conclusion_the_presets_use():
    data = json.loads((DATA_DIR / "002_published.json").read_text())
    ids = {c["id"] for c in data["conclusions"]}
    used = {c["id"] for name in P002 for c in get_preset(name).published.values["conclusions"]}
    assert used == ids


def test_the_opnet_tcp_profile_is_paper_004s_table_as_its_preset_reads_it():
    assert opnet_tcp() == tcpsim.TCP_PROFILES["opnet"]
