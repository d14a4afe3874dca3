"""The DCTCP study (services/presets/study_dctcp.py, services/reproductions/study_dctcp.py): its
presets, its judges on rows made to agree or not, and the whole study run through the core,
judged."""

from __future__ import annotations

from typing import Any

import pytest

import tcpsim
from services.presets import build_scenario, get_preset
from services.presets.study_dctcp import BUFFERS, CLAIMS, INCAST_COUNTS, KS, SENDER, SENDER_COUNT, VARIANT, K
from services.reproductions import get_paper
from services.reproductions.local import simulate_paper
from services.reproductions.model import AGREE, DISAGREE, NO_DATA, NOT_RUN, PARTLY
from services.reproductions.study_dctcp import (
    LABEL,
    judge_buffer,
    judge_classic_ecn,
    judge_full_throughput,
    judge_incast_no_worse,
    judge_incast_stalls,
    judge_mixed,
)
from services.scenarios import ScenarioInvalid, validate_scenario

STUDY = get_paper("dctcp")


def test_the_study_is_two_presets_without_a_paper_whose_sources_are_cited() -> None:
    for name in ("study-dctcp", "study-dctcp-incast"):
        preset = get_preset(name)
        assert preset.reference.paper is None
        assert "RFC 8257" in preset.reference.citation and "Alizadeh" in preset.reference.citation
        assert preset.tcp_profile == "linux"
        # Linux runs RACK-TLP, and so does the linux profile; without it the incast times out
        # (docs/simulator.md "ECN").
        assert all(f["tcp"]["rack"] for f in tcpsim.normalize(preset.scenario)["flows"])
    assert {c["experiment"] for c in CLAIMS} == {e.key for e in STUDY.experiments}
    assert STUDY.label == "dctcp" and STUDY.presets == ["study-dctcp", "study-dctcp-incast"]


@pytest.mark.parametrize(
    ("sender", "variant", "ecn"), [("dctcp", "dctcp", True), ("cubic-ecn", "cubic", True), ("cubic", "cubic", False)]
)
def test_sender_sets_both_flows_variant_and_ecn_and_the_core_takes_it(sender: str, variant: str, ecn: bool) -> None:
    scenario = build_scenario("study-dctcp", {SENDER: sender, K: 12})
    _, canonical = validate_scenario(scenario)
    assert [(f["variant"], f["tcp"]["ecn"]) for f in canonical["flows"]] == [(variant, ecn)] * 2
    assert canonical["topology"]["dumbbell"]["bottleneck"]["queue"]["ecn_threshold_pkts"] == 12


@pytest.mark.parametrize(("key", "bad"), [(SENDER, "reno"), (SENDER, None), (SENDER_COUNT, 0), (SENDER_COUNT, 2.5)])
def test_a_sender_or_a_number_of_senders_that_is_not_one_is_refused_by_name(key: str, bad: Any) -> None:
    name = "study-dctcp-incast" if key == SENDER_COUNT else "study-dctcp"
    with pytest.raises(ScenarioInvalid) as e:
        build_scenario(name, {key: bad})
    assert e.value.errors[0].path == f"$.{key}"


def test_each_incast_sender_is_its_own_flow_whichever_order_the_variant_is_given_in() -> None:
    for overrides in ({SENDER_COUNT: 4, VARIANT: "cubic"}, {VARIANT: "cubic", SENDER_COUNT: 4}):
        _, canonical = validate_scenario(build_scenario("study-dctcp-incast", overrides))
        flows = canonical["flows"]
        assert [f["name"] for f in flows] == ["s0", "s1", "s2", "s3"]
        assert {f["variant"] for f in flows} == {"cubic"} and {f["app"]["bytes"] for f in flows} == {64_000}
        assert not any(f["tcp"]["ecn"] for f in flows)  # plain CUBIC, the paper's TCP


# ---- the judges, on rows made to agree or not ------------------------------------------------------


def _k_rows(dctcp: dict[int, tuple[float, float]], ecn: dict[int, float]) -> dict[str, list[dict[str, Any]]]:
    """queue-vs-k rows: DCTCP's (utilisation, mean queue) and CUBIC+ECN's utilisation by K."""
    rows = [
        {"sender": LABEL["dctcp"], "k_pkts": k, "utilization": u, "mean_queue_pkts": q} for k, (u, q) in dctcp.items()
    ]
    rows += [
        {"sender": LABEL["cubic-ecn"], "k_pkts": k, "utilization": u, "mean_queue_pkts": k / 2} for k, u in ecn.items()
    ]
    return {"queue-vs-k": rows}


def test_dctcp_below_full_use_or_far_from_k_past_the_guideline_does_not_agree() -> None:
    good = {k: (1.0, 0.9 * k) for k in KS}
    assert judge_full_throughput(_k_rows(good, {}))[0] == AGREE
    idle = {**good, 24: (0.95, 20.0)}
    assert judge_full_throughput(_k_rows(idle, {}))[0] == PARTLY
    far = {k: (1.0, 3.0 * k) for k in KS}  # a queue three times K: not held near it
    assert judge_full_throughput(_k_rows(far, {}))[0] == DISAGREE
    # Below C·RTT/7 (K 4) the guideline promises nothing: an idle link there is no disagreement.
    assert judge_full_throughput(_k_rows({**good, 4: (0.5, 1.0)}, {}))[0] == AGREE
    assert judge_full_throughput(_k_rows({4: (1.0, 3.0)}, {}))[0] == NO_DATA


def test_classic_ecn_as_busy_as_dctcp_at_the_guideline_disagrees() -> None:
    dctcp = {k: (1.0, k) for k in KS}
    assert judge_classic_ecn(_k_rows(dctcp, {12: 0.93, 24: 0.98, 65: 1.0}))[0] == AGREE
    assert judge_classic_ecn(_k_rows(dctcp, {12: 0.99, 24: 1.0, 65: 1.0}))[0] == PARTLY
    assert judge_classic_ecn(_k_rows(dctcp, {12: 1.0, 24: 1.0, 65: 1.0}))[0] == DISAGREE
    assert judge_classic_ecn(_k_rows(dctcp, {}))[0] == NO_DATA


def _buffer_rows(dctcp: list[float], cubic: list[float]) -> dict[str, list[dict[str, Any]]]:
    rows = [
        {"sender": LABEL["dctcp"], "buffer_pkts": b, "p99_delay_us": d} for b, d in zip(BUFFERS, dctcp, strict=True)
    ]
    rows += [
        {"sender": LABEL["cubic"], "buffer_pkts": b, "p99_delay_us": c} for b, c in zip(BUFFERS, cubic, strict=True)
    ]
    return {"k-vs-buffer": rows}


def test_a_dctcp_queue_that_follows_the_buffer_disagrees() -> None:
    fills = [1.1 * b for b in BUFFERS]  # µs: a full buffer of 1.2 µs packets, nearly
    assert judge_buffer(_buffer_rows([80.0] * 4, fills))[0] == AGREE
    assert judge_buffer(_buffer_rows([0.9 * b for b in BUFFERS], fills))[0] == PARTLY
    assert judge_buffer(_buffer_rows([0.9 * b for b in BUFFERS], [80.0] * 4))[0] == DISAGREE
    assert judge_buffer({"k-vs-buffer": _buffer_rows([80.0] * 4, fills)["k-vs-buffer"][:4]})[0] == NO_DATA


def test_dctcp_taking_half_beside_classic_ecn_disagrees() -> None:
    def mixed(shares: list[float]) -> dict[str, list[dict[str, Any]]]:
        return {
            "mixed": [
                {"other": LABEL["cubic-ecn"], "k_pkts": k, "first_share": s, "jain": 1.0}
                for k, s in zip((12, 24, 65), shares, strict=True)
            ]
        }

    assert judge_mixed(mixed([0.9, 0.9, 0.9]))[0] == AGREE
    assert judge_mixed(mixed([0.9, 0.5, 0.9]))[0] == PARTLY
    assert judge_mixed(mixed([0.5, 0.5, 0.5]))[0] == DISAGREE
    assert judge_mixed({"mixed": []})[0] == NO_DATA


def _incast(dctcp: list[float | None], cubic: list[float | None]) -> dict[str, list[dict[str, Any]]]:
    rows = []
    for variant, slowest in (("dctcp", dctcp), ("cubic", cubic)):
        rows += [
            {
                "variant": LABEL[variant],
                "senders": n,
                "first_windows_pkts": 10 * n,
                "slowest_ms": s,
                "stalled": 0,
                "timeouts": 0,
            }
            for n, s in zip(INCAST_COUNTS, slowest, strict=True)
        ]
    return {"incast": rows}


def test_a_dctcp_incast_slower_than_cubics_disagrees() -> None:
    cubic = [0.3, 0.5, 2.0, 200.0, 201.0, 201.0]
    assert judge_incast_no_worse(_incast([0.3, 0.5, 1.0, 2.0, 201.0, 201.0], cubic))[0] == AGREE
    assert judge_incast_no_worse(_incast([0.3, 0.5, 40.0, 200.0, 201.0, 201.0], cubic))[0] == PARTLY
    assert judge_incast_no_worse(_incast([3.0, 5.0, 40.0, 400.0, 401.0, 401.0], cubic))[0] == DISAGREE
    assert judge_incast_no_worse(_incast([None] * 6, [None] * 6))[0] == NO_DATA


def test_an_incast_whose_first_windows_overflow_four_times_over_without_a_stall_disagrees() -> None:
    # N 48 and 64 (480 and 640 packets of first windows into 100) are judged; N 32 is not.
    assert judge_incast_stalls(_incast([0.3, 0.5, 2.0, 2.0, 201.0, 201.0], [0.3] * 6))[0] == AGREE
    assert judge_incast_stalls(_incast([0.3, 0.5, 2.0, 201.0, 5.0, 201.0], [0.3] * 6))[0] == PARTLY
    assert judge_incast_stalls(_incast([0.3, 0.5, 2.0, 201.0, 5.0, 5.0], [0.3] * 6))[0] == DISAGREE
    # A query that never completed is no verdict.
    assert judge_incast_stalls(_incast([0.3, 0.5, 2.0, 2.0, None, None], [0.3] * 6))[0] == NO_DATA


# ---- the whole study --------------------------------------------------------------------------------


def test_the_whole_study_runs_through_the_core_and_every_claim_is_judged_from_its_own_runs() -> None:
    observations = simulate_paper(STUDY)
    assert {o.type for obs in observations.values() for o in obs} == {"tcp", "link", "run"}
    evaluation = STUDY.evaluate(observations)
    verdicts = {j.id: j.verdict for j in evaluation.conclusions}
    assert set(verdicts) == {c["id"] for c in CLAIMS} and NOT_RUN not in verdicts.values()
    tables = {t.key: t for t in evaluation.tables}
    assert list(tables) == ["queue-vs-k", "k-vs-buffer", "mixed", "incast"]
    assert [len(t.rows) for t in tables.values()] == [8, 12, 6, 12]
    # The physics the claims rest on, checked directly: DCTCP's queue does not follow the buffer,
    # plain CUBIC's does; the marks reach the table through the port's link level.
    buffer = {(r["sender"], r["buffer_pkts"]): r for r in tables["k-vs-buffer"].rows}
    assert buffer[("DCTCP", 800)]["p99_delay_us"] < 0.2 * buffer[("CUBIC", 800)]["p99_delay_us"]
    assert buffer[("DCTCP", 800)]["marks"] > 0 and buffer[("CUBIC", 800)]["marks"] == 0
    incast = {(r["variant"], r["senders"]): r for r in tables["incast"].rows}
    # Alizadeh's Fig. 18: DCTCP's query completes in milliseconds where plain TCP's waits an RTO
    # (32 senders), until the first windows alone swamp the port (64).
    assert incast[("DCTCP", 4)]["slowest_ms"] < 5 and incast[("DCTCP", 32)]["slowest_ms"] < 5
    assert incast[("CUBIC", 32)]["slowest_ms"] >= 200 and incast[("DCTCP", 64)]["slowest_ms"] >= 200
    for claim in (
        "dctcp-full-throughput-above-c-rtt-over-7",
        "classic-ecn-needs-a-larger-k",
        "dctcp-queue-independent-of-buffer",
        "dctcp-beats-classic-ecn",
        "incast-stalls-once-first-windows-overflow",
    ):
        assert verdicts[claim] == AGREE, (claim, next(j.ours for j in evaluation.conclusions if j.id == claim))
