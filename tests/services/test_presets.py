"""services.presets: paper 000's experiments as ready scenarios, with their published numbers."""

from __future__ import annotations

import csv
import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

import tcpsim
from services.presets import PRESETS, UnknownPreset, build_scenario, get_preset, list_presets
from services.presets.paper000 import background_scenario, fig2_scenario, split_background
from services.presets.published import DATA_DIR
from services.scenarios import ScenarioInvalid, cache_key, expand, get_path, validate_scenario

ROOT = Path(__file__).resolve().parents[2]
PUBLISHED = ROOT.parent / "shared" / "papers" / "published"
NAMES = ["paper000-fig2a", "paper000-fig2b", "paper000-table2-droptail", "paper000-fig3-red"]
CORE = tcpsim.__version__


def flow(scenario: dict[str, Any], name: str) -> dict[str, Any]:
    return next(f for f in scenario["flows"] if f["name"] == name)


def test_the_presets_come_paper_by_paper_in_the_papers_order_paper_000s_first_then_the_studies():
    papers = [p.reference.paper for p in list_presets()]
    numbered = [p for p in papers if p is not None]
    assert papers == numbered + [None] * (len(papers) - len(numbered))  # the studies (no paper) last
    assert numbered == sorted(numbered)
    assert list(PRESETS)[: len(NAMES)] == NAMES
    assert [p.name for p in list_presets()] == list(PRESETS)


@pytest.mark.parametrize("name", NAMES)
def test_every_preset_is_described_referenced_and_carries_published_numbers(name):
    p = get_preset(name)
    assert p.title and len(p.description) > 400
    assert "leaves open" in p.description  # says what we had to choose
    assert p.reference.paper == "000" and "ICC 2006" in p.reference.citation and p.reference.where.startswith("§IV")
    assert p.published is not None and p.published.findings and p.published.setup
    assert p.published.source.startswith("paper 000")
    assert p.scenario["name"] == name


@pytest.mark.parametrize("name", NAMES)
def test_every_preset_validates_in_the_core_and_runs_for_two_seconds(name):
    model, canonical = validate_scenario(get_preset(name).scenario)
    assert canonical["duration_s"] == 1000 and canonical["warmup_s"] == 250
    short = build_scenario(name, {"duration_s": 2})
    assert short["warmup_s"] == 0.5  # a quarter of the new duration, as the paper's 250 of 1000 s
    _, canonical = validate_scenario(short)
    result = tcpsim.run(canonical)
    assert result["measured_from_s"] == 0.5 and result["measured_to_s"] == 2
    sbs, imp = flow(result, "sbs"), flow(result, "imp")
    assert (sbs["variant"], imp["variant"]) == ("newreno-sbs", "newreno-impatient")
    assert sbs["packets_sent"] > 0 and imp["packets_sent"] > 0


@pytest.mark.parametrize("name", NAMES)
def test_the_preset_scenario_is_a_fresh_copy(name):
    p = get_preset(name)
    s = p.scenario
    s["flows"].clear()
    assert p.scenario["flows"]


@pytest.mark.parametrize("name", NAMES)
def test_every_parameter_is_an_override_that_exists_and_holds_its_default(name):
    p = get_preset(name)
    built = p.build()
    for param in p.parameters:
        assert param.meaning
        if param.is_path:
            values = get_path(built, param.name)
            assert all(v == param.default for v in (values if "[*]" in param.name else [values])), param.name
            assert expand(built, param.name)
            # Overriding it with its default changes nothing.
            assert cache_key(p.build({param.name: param.default}), CORE) == cache_key(built, CORE)
        else:
            for path in param.expands_to:
                get_path(built, path)
        if param.paper_range is not None:
            low, high = param.paper_range
            assert low <= param.default <= high, param.name


# ---- Fig. 2 --------------------------------------------------------------------------------------


def _fig2_script():
    path = ROOT / "simulator" / "validation" / "fig2.py"
    spec = importlib.util.spec_from_file_location("fig2_script", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_fig2_scenario_is_the_one_the_validation_script_runs():
    assert _fig2_script().scenario is fig2_scenario


@pytest.mark.parametrize(
    ("name", "p", "m_range"), [("paper000-fig2a", 0.0005, (1, 40)), ("paper000-fig2b", 0.001, (1, 35))]
)
def test_the_fig2_presets_are_the_papers_setup_at_m_10(name, p, m_range):
    preset = get_preset(name)
    s = preset.scenario
    assert cache_key(s, CORE) == cache_key(fig2_scenario(p, 10), CORE)
    assert get_path(s, "flows[*].loss") == [{"type": "bernoulli_events", "p": p, "m": 10, "spacing": "periodic"}] * 2
    assert get_path(s, "flows[*].rtt_ms") == [70, 70]
    assert get_path(s, "topology.dumbbell.bottleneck.rate_mbps") == 45
    assert (s["duration_s"], s["warmup_s"]) == (1000, 250)
    assert preset.parameter("flows[*].loss.m").paper_range == m_range
    values = preset.published.values
    assert values["p"] == p and tuple(values["m_range"]) == m_range


def test_the_fig2_presets_carry_the_papers_regions_crossover_and_model_errors():
    data = json.loads((DATA_DIR / "000_fig2_and_regions.json").read_text())
    for panel, p_text in (("a", "0.0005"), ("b", "0.001")):
        published = get_preset(f"paper000-fig2{panel}").published
        assert {k: v for k, v in published.values.items() if k != "analytic_crossover_m_t"} == data[f"fig2{panel}"]
        assert published.values["analytic_crossover_m_t"] == data["analytic_crossover_m_t"][p_text]
        assert published.setup == data["fig2_setup"]
        text = " ".join(published.findings)
        assert f"m_t = {data['analytic_crossover_m_t'][p_text]}" in text
        assert f"from m = {data[f'fig2{panel}']['imp_superior_m_from']}" in text
        assert all(r in text for r in data["regions"])


def test_overriding_m_on_both_flows_and_the_seed():
    s = build_scenario("paper000-fig2a", {"flows[*].loss.m": 27, "seed": 3})
    assert get_path(s, "flows[*].loss.m") == [27, 27] and s["seed"] == 3
    assert cache_key(s, CORE) == cache_key(fig2_scenario(0.0005, 27, 3), CORE)


# ---- §IV-C: background traffic ---------------------------------------------------------------


@pytest.mark.parametrize(("name", "queue"), [("paper000-table2-droptail", "droptail"), ("paper000-fig3-red", "red")])
def test_the_background_presets_are_the_papers_setup_with_64_flows(name, queue):
    s = get_preset(name).scenario
    bottleneck = s["topology"]["dumbbell"]["bottleneck"]
    assert (bottleneck["rate_mbps"], bottleneck["queue"]["type"], bottleneck["queue"]["limit_pkts"]) == (15, queue, 150)
    assert bottleneck["delay_ms"] <= 10  # so that a 20 ms RTT is possible
    sbs, imp, ftp, http = s["flows"]
    assert (sbs["name"], sbs["variant"], sbs["rtt_ms"]) == ("sbs", "newreno-sbs", 50)
    assert (imp["name"], imp["variant"], imp["rtt_ms"]) == ("imp", "newreno-impatient", 50)
    assert (ftp["count"], http["count"]) == (16, 48)
    for bg in (ftp, http):
        assert bg["variant"] == "newreno-sbs" and bg["rtt_ms"] == {"uniform": [20, 460]}
        assert bg["tcp"]["max_window_pkts"] == 64
    assert ftp["app"] == {"type": "ftp"}
    assert http["app"] == {"type": "http", "mean_file_bytes": 48000, "shape": 1.2, "mean_think_s": 0.5}
    assert (s["duration_s"], s["warmup_s"]) == (1000, 250)
    assert s == background_scenario(bottleneck["queue"], 64, name=name) | {"description": s["description"]}


def test_red_thresholds_are_left_to_the_cores_default_of_a_third_and_two_thirds():
    queue = get_preset("paper000-fig3-red").build()["topology"]["dumbbell"]["bottleneck"]["queue"]
    assert "min_th_pkts" not in queue and "max_th_pkts" not in queue
    # The core refuses a maximum threshold at or below its default minimum of limit / 3 = 50.
    with pytest.raises(ScenarioInvalid) as info:
        validate_scenario(build_scenario("paper000-fig3-red", {"topology.dumbbell.bottleneck.queue.max_th_pkts": 50}))
    assert "min_th_pkts (50)" in info.value.errors[0].reason


@pytest.mark.parametrize(
    ("total", "ftp", "http"),
    [(4, 1, 3), (64, 16, 48), (180, 45, 135), (256, 64, 192), (2, 1, 1), (5, 1, 4), (6, 2, 4), (7, 2, 5)],
)
def test_background_flows_sets_both_group_counts(total, ftp, http):
    assert split_background(total) == (ftp, http)
    s = build_scenario("paper000-table2-droptail", {"background_flows": total})
    assert (s["flows"][2]["count"], s["flows"][3]["count"]) == (ftp, http)


def test_every_background_size_of_table_ii_is_a_quarter_ftp_exactly():
    for total in get_preset("paper000-table2-droptail").parameter("background_flows").paper_values:
        ftp, http = split_background(total)
        assert ftp * 4 == total and ftp + http == total


@pytest.mark.parametrize("value", [1, 0, -4, 2.5, True, "64", None, 100_001])
def test_a_bad_background_flows_is_refused_by_name(value):
    with pytest.raises(ScenarioInvalid) as info:
        build_scenario("paper000-fig3-red", {"background_flows": value})
    (error,) = info.value.errors
    assert (error.path, error.source) == ("$.background_flows", "overrides")


def test_an_explicit_count_wins_over_background_flows():
    s = build_scenario("paper000-table2-droptail", {"flows[3].count": 10, "background_flows": 8})
    assert (s["flows"][2]["count"], s["flows"][3]["count"]) == (2, 10)


def test_an_explicit_warmup_is_kept_when_the_duration_changes():
    s = build_scenario("paper000-table2-droptail", {"duration_s": 100, "warmup_s": 10})
    assert (s["duration_s"], s["warmup_s"]) == (100, 10)
    assert build_scenario("paper000-table2-droptail", {"seed": 4})["warmup_s"] == 250
    assert build_scenario("paper000-fig2a", {"$.duration_s": 40})["warmup_s"] == 10  # a core-style path
    assert build_scenario("paper000-fig2a", {"duration_s": 40, "$.warmup_s": 0})["warmup_s"] == 0


def test_an_override_path_that_does_not_exist_is_refused_by_its_path():
    with pytest.raises(ScenarioInvalid) as info:
        build_scenario("paper000-table2-droptail", {"flows[0].loss.m": 3})
    (error,) = info.value.errors
    assert error.path == "$.flows[0].loss.m" and error.source == "overrides"
    assert "flows[0].loss does not exist" in error.reason


def test_an_override_the_core_refuses_is_found_by_validation_with_its_path():
    s = build_scenario("paper000-fig2b", {"duration_s": 100, "warmup_s": 100})
    with pytest.raises(ScenarioInvalid) as info:
        validate_scenario(s)
    assert info.value.errors[0].path == "$.warmup_s"


def test_an_unknown_preset_is_a_lookup_error_listing_the_known_ones():
    with pytest.raises(UnknownPreset) as info:
        build_scenario("paper999")
    assert isinstance(info.value, LookupError) and "paper000-fig2a" in str(info.value)


def test_the_table2_preset_carries_table_ii_row_by_row_from_the_data_file():
    (table,) = get_preset("paper000-table2-droptail").published.tables
    with (DATA_DIR / "000_table2_sbs_droptail.csv").open(newline="") as f:
        rows = list(csv.DictReader(f))
    assert [c.name for c in table.columns] == list(rows[0])
    assert len(table.rows) == len(rows) == 15
    for ours, theirs in zip(table.rows, rows, strict=True):
        assert {k: float(v) for k, v in ours.items()} == {k: float(v) for k, v in theirs.items()}
    assert table.rows[7]["background_flows"] == 64
    assert get_preset("paper000-fig3-red").published.tables == ()


def test_both_background_presets_carry_the_section_iv_c_findings():
    data = json.loads((DATA_DIR / "000_fig2_and_regions.json").read_text())
    for name in ("paper000-table2-droptail", "paper000-fig3-red"):
        published = get_preset(name).published
        assert list(published.findings) == data["fig3_findings"]
        assert published.setup == data["fig3_setup"]


@pytest.mark.skipif(not PUBLISHED.is_dir(), reason="the shared papers folder is not here")
@pytest.mark.parametrize("name", ["000_fig2_and_regions.json", "000_table2_sbs_droptail.csv"])
def test_the_data_files_are_unchanged_copies_of_the_published_ones(name):
    assert (DATA_DIR / name).read_bytes() == (PUBLISHED / name).read_bytes()


def test_docs_presets_md_describes_every_preset_and_parameter():
    text = (ROOT / "docs" / "presets.md").read_text()
    for p in list_presets():
        assert f"`{p.name}`" in text, p.name
        for param in p.parameters:
            assert f"`{param.name}`" in text, (p.name, param.name)


@pytest.mark.parametrize("name", NAMES)
def test_paper_000s_presets_use_ns2s_tcp_profile(name):
    """The paper ran ns-2; each paper's own tests check the simulator it used."""
    assert get_preset(name).tcp_profile == "ns2"


def test_every_preset_runs_every_tcp_flow_with_its_one_tcp_profile():
    for preset in list_presets():
        _, canonical = validate_scenario(preset.build())
        tcp_flows = [f for f in canonical["flows"] if f.get("type", "tcp") == "tcp"]
        assert tcp_flows and {f["tcp"]["profile"] for f in tcp_flows} == {preset.tcp_profile}, preset.name


def test_a_preset_whose_flows_name_no_tcp_profile_is_refused_when_it_is_defined():
    base = get_preset("paper000-fig2a")
    template = base.scenario
    del template["flows"][1]["tcp"]["profile"]
    with pytest.raises(ValueError, match="paper000-fig2a.*same TCP profile"):
        type(base)(
            name=base.name,
            title=base.title,
            description=base.description,
            reference=base.reference,
            parameters=base.parameters,
            published=base.published,
            template=template,
        )
