"""The bufferbloat study (services/presets/study_bufferbloat.py, services/reproductions/
study_bufferbloat.py): its preset, its judges on rows made to agree or not, and the whole study
run through the core, judged."""

from __future__ import annotations

from typing import Any

import pytest

from services.presets import build_scenario, get_preset
from services.presets.study_bufferbloat import BDP_PKTS, BUFFER_BDP, BUFFERS_BDP, CLAIMS, QUEUE
from services.reproductions import get_paper
from services.reproductions.local import simulate_paper
from services.reproductions.model import AGREE, DISAGREE, NO_DATA, NOT_RUN, PARTLY
from services.reproductions.study_bufferbloat import (
    LABEL,
    judge_droptail_grows,
    judge_fq,
    judge_share,
)
from services.scenarios import ScenarioInvalid, validate_scenario

STUDY = get_paper("bufferbloat")


def test_the_study_is_a_preset_without_a_paper_whose_sources_are_cited() -> None:
    preset = get_preset("study-bufferbloat")
    assert preset.reference.paper is None
    assert "RFC 8289" in preset.reference.citation and "Cardwell" in preset.reference.citation
    assert preset.tcp_profile == "linux"
    assert {c["experiment"] for c in CLAIMS} == {e.key for e in STUDY.experiments}
    assert STUDY.label == "bufferbloat" and get_paper("003").label == "paper003"


@pytest.mark.parametrize("queue", ["droptail", "codel", "fq_codel", "pie"])
def test_buffer_bdp_sets_the_limit_of_whichever_queue_is_chosen(queue: str) -> None:
    scenario = build_scenario("study-bufferbloat", {QUEUE: queue, BUFFER_BDP: 4})
    model, _ = validate_scenario(scenario)
    bottleneck = scenario["topology"]["dumbbell"]["bottleneck"]["queue"]
    assert bottleneck["type"] == queue and bottleneck["limit_pkts"] == round(4 * BDP_PKTS)
    assert model is not None


@pytest.mark.parametrize("bad", [0, -1, "deep", True, 1e6])
def test_a_buffer_that_is_not_a_positive_number_of_bdps_is_refused_by_name(bad: Any) -> None:
    with pytest.raises(ScenarioInvalid) as e:
        build_scenario("study-bufferbloat", {BUFFER_BDP: bad})
    assert e.value.errors[0].path == "$.buffer_bdp"
    assert "bandwidth-delay products" in e.value.errors[0].reason


def _rows(queue: str, values: dict[int, dict[str, float]]) -> list[dict[str, Any]]:
    return [{"queue": LABEL[queue], "buffer_bdp": b, **values[b]} for b in BUFFERS_BDP]


def test_a_drop_tail_delay_that_does_not_grow_with_the_buffer_disagrees() -> None:
    flat = _rows("droptail", {b: {"p99_delay_ms": 40.0} for b in BUFFERS_BDP})
    assert judge_droptail_grows({"cubic": flat})[0] == DISAGREE
    growing = _rows("droptail", {b: {"p99_delay_ms": 40.0 * b} for b in BUFFERS_BDP})
    assert judge_droptail_grows({"cubic": growing})[0] == AGREE
    half_full = _rows("droptail", {b: {"p99_delay_ms": 10.0 * b} for b in BUFFERS_BDP})
    assert judge_droptail_grows({"cubic": half_full})[0] == PARTLY


def test_bbrs_share_is_judged_at_the_shallowest_and_deepest_buffer() -> None:
    def mixed(shallow: float, deep: float) -> dict[str, list[dict[str, Any]]]:
        shares = {1: shallow, 2: 0.5, 4: 0.5, 8: deep}
        return {"mixed": _rows("droptail", {b: {"second_share": s} for b, s in shares.items()})}

    assert judge_share(mixed(0.9, 0.3))[0] == AGREE
    assert judge_share(mixed(0.7, 0.6))[0] == PARTLY
    assert judge_share(mixed(0.3, 0.7))[0] == DISAGREE


def test_fq_codel_fairness_counts_the_buffers_where_jain_holds() -> None:
    jain = {1: 0.99, 2: 0.99, 4: 0.7, 8: 0.99}
    rows = _rows("fq_codel", {b: {"jain": j} for b, j in jain.items()})
    assert judge_fq({"mixed": rows})[0] == PARTLY
    rows = _rows("fq_codel", {b: {"jain": 0.5} for b in BUFFERS_BDP})
    assert judge_fq({"mixed": rows})[0] == DISAGREE
    # A sweep of the preset along other buffers has no row at the study's: no data, not a verdict.
    assert judge_fq({"mixed": [{"queue": "FQ-CoDel", "buffer_bdp": 3, "jain": 1.0}]})[0] == NO_DATA


def test_the_whole_study_runs_through_the_core_and_every_claim_is_judged_from_link_and_run_levels() -> None:
    observations = simulate_paper(STUDY, {"duration_s": 30.0})
    levels = {o.type for obs in observations.values() for o in obs}
    assert levels == {"tcp", "link", "run"}
    evaluation = STUDY.evaluate(observations)
    verdicts = {j.id: j.verdict for j in evaluation.conclusions}
    assert set(verdicts) == {c["id"] for c in CLAIMS} and NOT_RUN not in verdicts.values()
    assert [t.key for t in evaluation.tables] == ["same-cubic", "same-bbr", "mixed"]
    assert all(len(t.rows) == 16 for t in evaluation.tables)
    cubic = {(r["queue"], r["buffer_bdp"]): r for r in evaluation.tables[0].rows}
    # The physics the claims rest on, checked directly: a full Drop-Tail buffer delays by about
    # its size in round trips, CoDel's delay does not follow the buffer.
    assert cubic[("Drop-Tail", 8)]["p99_delay_ms"] > 4 * cubic[("Drop-Tail", 1)]["p99_delay_ms"]
    assert cubic[("CoDel", 8)]["p99_delay_ms"] < 0.2 * cubic[("Drop-Tail", 8)]["p99_delay_ms"]
    assert verdicts["droptail-delay-grows-with-buffer"] == AGREE
    assert verdicts["fq-codel-isolates-flows"] == AGREE
