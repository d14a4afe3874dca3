"""services.presets: paper 003 (Lai & Yao, ns) as presets.

Every preset builds, passes the core's validation, carries Tables 2-4 and the §4 comments, and
a short run behaves as the paper's setup implies.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import tcpsim
from services.presets import PRESETS, build_scenario, get_preset
from services.presets.paper003 import VARIANTS, access_rtt_ms
from services.presets.published import DATA_DIR, read_json
from services.scenarios import ScenarioInvalid, get_path, validate_scenario

PUBLISHED = Path(__file__).resolve().parents[3] / "shared" / "papers" / "published"
P003 = [
    "paper003-fig5-link-errors",
    "paper003-table2-distinct-delays",
    "paper003-table3-new-arrival",
    "paper003-table4-reno-interop",
]


def run(name: str, overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    _, canonical = validate_scenario(build_scenario(name, overrides))
    return tcpsim.run(canonical)


def goodput(result: dict[str, Any], prefix: str) -> float:
    flows = [f for f in result["flows"] if f["name"].startswith(prefix)]
    return sum(f["goodput_bps"] for f in flows) / len(flows)


def test_the_presets_are_registered_in_the_papers_order_with_ns2s_tcp_profile():
    assert [n for n in PRESETS if n.startswith("paper003-")] == P003
    assert {get_preset(n).tcp_profile for n in P003} == {"ns2"}


@pytest.mark.parametrize("name", P003)
def test_every_preset_is_described_referenced_validates_and_has_its_parameters(name):
    p = get_preset(name)
    assert p.title and "leaves open" in p.description and "Fig. 4" in p.description
    assert p.reference.paper == "003" and p.reference.where.startswith("§4.")
    assert p.published is not None and p.published.findings and p.published.source.startswith("paper 003")
    assert all(c["where"].startswith("§4") for c in p.published.values["conclusions"])
    _, canonical = validate_scenario(p.scenario)
    assert tcpsim.normalize(canonical) == canonical
    built = p.build()
    for param in p.parameters:
        paths = param.expands_to or (param.name,)
        assert all(get_path(built, path) is not None for path in paths), param.name
        if param.is_path:
            assert get_path(built, param.name) == param.default, param.name
    for flow in built["flows"]:
        # 512-byte packets (§4); ns's initial ssthresh = window_.
        assert flow["tcp"]["mss_bytes"] == 512
        assert flow["tcp"]["initial_ssthresh_pkts"] == flow["tcp"]["max_window_pkts"]


def test_the_tables_are_the_published_file_and_the_findings_cover_section_4():
    if PUBLISHED.is_dir():
        assert (DATA_DIR / "003_tables.json").read_bytes() == (PUBLISHED / "003_tables.json").read_bytes()
    t2 = {t.name: t for t in get_preset("paper003-table2-distinct-delays").published.tables}
    reno = next(r for r in t2["Table 2, n=2"].rows if r["algorithm"] == "Reno")
    assert reno == {"algorithm": "Reno", "short": 15649, "long": 695, "uf_percent": 182.99}
    t3 = get_preset("paper003-table3-new-arrival").published.tables
    assert [t.name for t in t3] == ["Table 3, n=1", "Table 3, n=2", "Table 3, n=3"]
    t4 = get_preset("paper003-table4-reno-interop").published.tables[1]
    assert next(r for r in t4.rows if r["algorithm"] == "Vegas") == {
        "algorithm": "Vegas",
        "reno": 5696.5,
        "other": 2982.0,
    }
    ranking = get_preset("paper003-fig5-link-errors").published.values["ranking"]
    assert ranking[0] == ["Vegas"] and ranking[-1] == ["Reno"]
    assert {n for g in ranking for n in g} == set(VARIANTS) - {"Tahoe"}
    ids = [c["id"] for c in read_json("003_findings.json")["conclusions"]]
    assert len(ids) == len(set(ids)) == 12


def test_the_preset_parameters_expand_and_refuse_what_does_not_fit():
    built = build_scenario("paper003-table2-distinct-delays", {"variant": "fack", "connections": 4})
    assert [(f["variant"], f["count"]) for f in built["flows"]] == [("fack", 2), ("fack", 2)]
    assert [f["rtt_ms"] for f in built["flows"]] == [access_rtt_ms(0.4), access_rtt_ms(40.0)] == [3.6, 162.0]
    for bad in ({"connections": 3}, {"variant": "bbr-ish"}):
        with pytest.raises(ScenarioInvalid):
            build_scenario("paper003-table2-distinct-delays", bad)


def test_link_errors_lower_throughput_and_sack_repairs_what_reno_times_out_on():
    clean = run("paper003-fig5-link-errors", {"duration_s": 30.0, "topology.dumbbell.bottleneck.loss.rate": 0.0})
    errors = {
        v: run(
            "paper003-fig5-link-errors",
            {"duration_s": 30.0, "flows[0].variant": v, "topology.dumbbell.bottleneck.loss.rate": 0.02},
        )
        for v in ("reno", "sack")
    }
    assert goodput(errors["reno"], "tcp") < 0.8 * goodput(clean, "tcp")
    assert sum(f["timeouts"] for f in errors["reno"]["flows"]) > sum(f["timeouts"] for f in errors["sack"]["flows"])


def test_reno_starves_the_long_connection_and_pseudo_rate_shares():
    reno = run("paper003-table2-distinct-delays", {"duration_s": 20.0})
    pseudo = run("paper003-table2-distinct-delays", {"duration_s": 20.0, "variant": "pseudo-rate"})
    assert goodput(reno, "long") < 0.3 * goodput(reno, "short")
    assert reno["fairness"]["uf_percent"] > 100
    assert pseudo["fairness"]["uf_percent"] < 50


def test_the_new_connection_starts_at_10_s_and_only_10_to_50_s_is_measured():
    result = run("paper003-table3-new-arrival", {"duration_s": 20.0})
    assert result["measured_from_s"] == 10.0
    assert goodput(result, "new") > 0 and goodput(result, "old") > 0
    before = run("paper003-table3-new-arrival", {"duration_s": 9.9, "warmup_s": 0.0})
    assert next(f for f in before["flows"] if f["name"] == "new")["packets_sent"] == 0


def test_reno_takes_most_of_the_link_from_vegas_through_ns_default_buffer():
    result = run(
        "paper003-table4-reno-interop",
        {"duration_s": 30.0, "flows[1].variant": "vegas", "topology.dumbbell.bottleneck.queue.limit_pkts": 50},
    )
    assert goodput(result, "reno") > 3 * goodput(result, "other")
