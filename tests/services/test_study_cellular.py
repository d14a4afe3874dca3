"""The cellular study (services/presets/study_cellular.py, services/reproductions/
study_cellular.py): its presets over the built-in LTE traces, its judges on rows made to agree
or not, and the whole study run through the core, judged."""

from __future__ import annotations

from typing import Any

import pytest

from services.presets import build_scenario, get_preset
from services.presets.study_cellular import CARRIERS, CLAIMS, LINK, SCHEMES, SHARED_NAME, VARIANT
from services.reproductions import get_paper
from services.reproductions.local import simulate_paper
from services.reproductions.model import AGREE, DISAGREE, NO_DATA, NOT_RUN, PARTLY
from services.reproductions.study_cellular import (
    LABEL,
    capacity_mbps,
    judge_cubic_vs_vegas,
    judge_delay,
    judge_saturation,
    judge_sharing,
)
from services.scenarios import ScenarioInvalid, validate_scenario
from services.traces.builtin import builtin_trace

STUDY = get_paper("cellular")


def test_the_study_is_two_presets_over_the_built_in_traces_whose_sources_are_cited() -> None:
    for name in ("study-cellular", SHARED_NAME):
        preset = get_preset(name)
        assert preset.reference.paper is None and "Winstein" in preset.reference.citation
        assert "Pantheon" in preset.reference.citation and preset.tcp_profile == "linux"
    assert {c["experiment"] for c in CLAIMS} == {e.key for e in STUDY.experiments}
    assert STUDY.label == "cellular" and STUDY.levels


@pytest.mark.parametrize("carrier", CARRIERS)
def test_the_link_parameter_names_the_carriers_downlink_for_data_and_uplink_for_acks(carrier: str) -> None:
    _, canonical = validate_scenario(build_scenario("study-cellular", {LINK: carrier, VARIANT: "vegas"}))
    trace = canonical["topology"]["dumbbell"]["bottleneck"]["trace"]
    down, up = builtin_trace(f"{carrier}.down"), builtin_trace(f"{carrier}.up")
    assert down is not None and up is not None
    assert trace == {"file": f"sha256:{down.sha256}", "reverse_file": f"sha256:{up.sha256}"}
    assert [f["variant"] for f in canonical["flows"]] == ["vegas"]


def test_an_unknown_carrier_is_refused_by_name() -> None:
    with pytest.raises(ScenarioInvalid) as e:
        build_scenario("study-cellular", {LINK: "Sprint-LTE"})
    assert e.value.errors[0].path == "$.link" and "TMobile-LTE-short" in e.value.errors[0].reason


def test_a_traces_capacity_over_the_window_is_its_opportunities_there_payload_only() -> None:
    trace = builtin_trace("Verizon-LTE-short.down")
    assert trace is not None
    assert trace.capacity_bps(0, trace.span_ms / 1000) == pytest.approx(trace.mean_mbps * 1e6)
    # Two passes: the same mean; the study's window (5-60 s) of the 140 s trace: its own.
    assert trace.capacity_bps(0, 2 * trace.span_ms / 1000) == pytest.approx(trace.mean_mbps * 1e6)
    assert capacity_mbps("Verizon-LTE-short") == pytest.approx(trace.capacity_bps(5, 60) * 1460 / 1500 / 1e6)


def _alone(values: dict[tuple[str, str], dict[str, float]]) -> dict[str, list[dict[str, Any]]]:
    return {"alone": [{"trace": c, "scheme": LABEL[s], **v} for (c, s), v in values.items()]}


def test_cubic_short_of_the_traces_capacity_is_partly_then_disagrees() -> None:
    def rows(ratios: list[float]) -> dict[str, list[dict[str, Any]]]:
        return _alone({(c, "cubic"): {"of_capacity": r} for c, r in zip(CARRIERS, ratios, strict=True)})

    assert judge_saturation(rows([0.99, 0.97, 0.96]))[0] == AGREE
    assert judge_saturation(rows([0.99, 0.80, 0.96]))[0] == PARTLY
    assert judge_saturation(rows([0.6, 0.8, 0.9]))[0] == DISAGREE
    assert judge_saturation({"alone": []})[0] == NO_DATA


def test_delay_based_schemes_must_keep_the_queue_several_times_shorter_than_cubic() -> None:
    def rows(cubic: float, bbr: float, vegas: float) -> dict[str, list[dict[str, Any]]]:
        p95 = {"cubic": cubic, "bbr": bbr, "vegas": vegas}
        return _alone({(c, s): {"p95_queue_ms": p95[s]} for c in CARRIERS for s in SCHEMES})

    assert judge_delay(rows(3000, 300, 60))[0] == AGREE
    assert judge_delay(rows(3000, 1500, 60))[0] == DISAGREE  # BBR only halves it
    assert judge_delay(rows(300, 250, 200))[0] == DISAGREE


def test_vegas_above_cubic_in_throughput_disagrees() -> None:
    def rows(cubic: float, vegas: float) -> dict[str, list[dict[str, Any]]]:
        return _alone({(c, s): {"goodput_mbps": cubic if s == "cubic" else vegas} for c in CARRIERS for s in SCHEMES})

    assert judge_cubic_vs_vegas(rows(10, 5))[0] == AGREE
    assert judge_cubic_vs_vegas(rows(5, 10))[0] == DISAGREE


def test_sharing_is_judged_on_cubic_over_bbr_and_vegas_starved() -> None:
    def rows(cubic: float, bbr: float, vegas_share: float) -> dict[str, list[dict[str, Any]]]:
        return {
            "shared": [{"trace": c, "cubic_mbps": cubic, "bbr_mbps": bbr, "vegas_share": vegas_share} for c in CARRIERS]
        }

    assert judge_sharing(rows(9, 3, 0.01))[0] == AGREE
    assert judge_sharing(rows(3, 9, 0.01))[0] == DISAGREE
    assert judge_sharing(rows(9, 3, 0.3))[0] == DISAGREE


def test_the_whole_study_runs_through_the_core_over_the_shipped_traces_and_every_claim_agrees() -> None:
    observations = simulate_paper(STUDY)
    assert {o.type for obs in observations.values() for o in obs} == {"tcp", "link", "run"}
    evaluation = STUDY.evaluate(observations)
    verdicts = {j.id: j.verdict for j in evaluation.conclusions}
    assert set(verdicts) == {c["id"] for c in CLAIMS} and NOT_RUN not in verdicts.values()
    assert [t.key for t in evaluation.tables] == ["alone", "shared"]
    alone = {(r["trace"], r["scheme"]): r for r in evaluation.tables[0].rows}
    assert len(alone) == 9 and len(evaluation.tables[1].rows) == 3
    # The physics the claims rest on, checked directly (docs/validation/study-cellular.md).
    for carrier in CARRIERS:
        cubic, bbr, vegas = (alone[(carrier, LABEL[s])] for s in SCHEMES)
        assert 0.95 <= cubic["of_capacity"] <= 1.0
        assert cubic["p95_delay_ms"] > 1000 > bbr["p95_delay_ms"] > vegas["p95_delay_ms"]
        assert cubic["goodput_mbps"] > vegas["goodput_mbps"]
    assert set(verdicts.values()) == {AGREE}
