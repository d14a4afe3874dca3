"""Paper 003's judging on hand-built observations: each comment holds when the numbers say what
the paper says and flips when they are swapped; every comment is judged once per experiment."""

from __future__ import annotations

import uuid

from services.presets.paper003 import CONNECTIONS, ERROR_RATE, EVERY_VARIANT, FIRST_VARIANT, SECOND_VARIANT, VARIANTS
from services.presets.published import read_json
from services.reproductions import get_paper
from services.reproductions.paper003 import (
    EXPERIMENTS,
    judge_gaps,
    judge_ranking,
    paired,
    rank_pairs,
)
from services.sweeps import Observation

RANKING = read_json("003_findings.json")["conclusions"][0]["ranking"]
PAPER_ORDER = [n for group in RANKING for n in group]


def obs(flow: str, values: dict, replication: int, goodput: float) -> Observation:
    return Observation(
        sweep_id=None,
        point=0,
        values=values,
        replication=replication,
        run_id=uuid.uuid4(),
        seed=1,
        flow=flow,
        variant=None,
        type="tcp",
        metrics={"goodput_bps": goodput, "timeouts": 0.0},
    )


def verdicts(observations: dict[str, list[Observation]]) -> dict[tuple[str, str], str]:
    return {(j.id, j.experiment): j.verdict for j in get_paper("003").evaluate(observations).conclusions}


def per_seed(levels: dict[str, float], noise: tuple[float, ...] = (0.0, 1.0, -1.0, 0.5)) -> dict[str, list[float]]:
    return {n: [x + e for e in noise] for n, x in levels.items()}


def test_the_ranking_agrees_in_the_papers_order_and_flips_when_reversed() -> None:
    levels = {}
    for i, group in enumerate(RANKING):
        for n in group:
            levels[n] = 500.0 - 20 * i  # within a group: equal, so ≈
    assert judge_ranking(RANKING, per_seed(levels))[0] == "agree"
    reversed_levels = {n: 1000.0 - x for n, x in levels.items()}
    verdict, ours, numbers = judge_ranking(RANKING, per_seed(reversed_levels))
    assert verdict == "disagree" and numbers["right"] == 0 and "the other way" in ours
    # One algorithm out of place (SSDR last) leaves most pairs the paper's way: partly.
    verdict, ours, numbers = judge_ranking(RANKING, per_seed({**levels, "SSDR": 300.0}))
    assert verdict == "partly" and ["SSDR", "Reno"] in numbers["wrong"] and "SSDR / FACK" in ours


def test_the_ranking_has_24_ordered_and_4_similar_pairs() -> None:
    ordered, similar = rank_pairs(RANKING)
    assert len(ordered) == 24 and ("Vegas", "Reno") in ordered and ("NewReno", "Reno") in ordered
    assert sorted(similar) == sorted(
        [("Pseudo-Rate", "Rate-Halving"), ("SSDR", "FACK"), ("SSDR", "SACK"), ("FACK", "SACK")]
    )


def test_a_paired_difference_within_noise_is_noise() -> None:
    assert paired([10, 11, 12], [9, 10, 11]) == "more"
    assert paired([9, 10, 11], [10, 11, 12]) == "less"
    assert paired([10, 14, 6], [10, 10, 10]) == "noise"


def test_gaps_widen_only_when_the_spread_grows() -> None:
    assert judge_gaps({0.001: 0.05, 0.01: 0.1, 0.05: 0.3})[0] == "agree"
    assert judge_gaps({0.001: 0.05, 0.01: 0.4, 0.05: 0.3})[0] == "partly"
    assert judge_gaps({0.001: 0.3, 0.01: 0.2, 0.05: 0.1})[0] == "disagree"


def fig5(mt: dict[str, float]) -> list[Observation]:
    return [
        obs("tcp", {FIRST_VARIANT: VARIANTS[n], ERROR_RATE: rate}, r, mt.get(n, 4e5) * (1 - 10 * rate) + r)
        for n in VARIANTS
        for rate in (0.0, 0.01, 0.05)
        for r in range(3)
    ]


def test_fig5_judges_the_ranking_from_observations() -> None:
    paper = {n: 5e5 - 2e4 * i for i, group in enumerate(RANKING) for n in group}
    assert verdicts({"fig5": fig5(paper)})[("throughput-ranking", "fig5")] == "agree"
    flipped = {n: 1e6 - x for n, x in paper.items()}
    assert verdicts({"fig5": fig5(flipped)})[("throughput-ranking", "fig5")] == "disagree"


def table4(ratio: dict[str, float], key_n=(2, 4)) -> list[Observation]:
    out = []
    for name in [n for n in VARIANTS if n not in ("Tahoe", "Reno")]:
        for n in key_n:
            at = {SECOND_VARIANT: VARIANTS[name], CONNECTIONS: n}
            for r in range(3):
                out += [obs("reno", at, r, 5e5 + r * 1e3), obs("other", at, r, 5e5 * ratio.get(name, 1.0) + r * 1e3)]
    return out


def test_reno_robbing_vegas_flips_with_the_numbers() -> None:
    robbed = verdicts({"table4": table4({"Vegas": 0.4, "Pseudo-Rate": 0.4})})
    assert robbed[("interop-reno-robs-avoidance", "table4")] == "agree"
    assert robbed[("interop-recovery-beats-reno", "table4")] == "disagree"  # all equal to Reno: no gain
    robbing = verdicts(
        {
            "table4-ns-buffer": table4(
                {"Vegas": 2.0, "Pseudo-Rate": 2.0, "NewReno": 1.2, "SACK": 1.2, "FACK": 1.2, "Rate-Halving": 1.2}
            )
        }
    )
    assert robbing[("interop-reno-robs-avoidance", "table4-ns-buffer")] == "disagree"
    assert robbing[("interop-recovery-beats-reno", "table4-ns-buffer")] == "agree"
    assert robbing[("interop-reno-robs-avoidance", "table4")] == "not_run"


def table2(short: dict[str, float], long: dict[str, float]) -> list[Observation]:
    return [
        obs(flow, {EVERY_VARIANT: VARIANTS[n], CONNECTIONS: c}, r, x[n] + r)
        for n in short
        for c in (2, 4)
        for r in range(3)
        for flow, x in (("short", short), ("long", long))
    ]


def test_fairness_comments_follow_uf() -> None:
    names = [n for n in VARIANTS if n != "Tahoe"]
    fair = {"Vegas": 0.8, "Pseudo-Rate": 0.9, "SACK": 0.4, "FACK": 0.4, "Rate-Halving": 0.4}
    found = verdicts({"table2": table2({n: 1e6 for n in names}, {n: 1e6 * fair.get(n, 0.1) for n in names})})
    assert {k[0]: v for k, v in found.items() if k[1] == "table2"} == {
        "fairness-bias-against-long": "agree",
        "fairness-sack-option-fairer": "agree",
        "fairness-avoidance-fairer": "agree",
        "fairness-pseudo-rate-best": "agree",
    }
    unfair = {"Vegas": 0.1, "Pseudo-Rate": 0.1, "Reno": 0.8, "NewReno": 0.8, "SSDR": 0.8}
    found = verdicts({"table2": table2({n: 1e6 for n in names}, {n: 1e6 * unfair.get(n, 0.4) for n in names})})
    assert found[("fairness-sack-option-fairer", "table2")] == "disagree"
    assert found[("fairness-avoidance-fairer", "table2")] == "disagree"
    assert found[("fairness-pseudo-rate-best", "table2")] == "disagree"


def test_every_comment_is_judged_once_per_experiment_that_measures_it() -> None:
    judged = get_paper("003").evaluate({}).conclusions
    by_experiment = {e.key.removesuffix("-ns-buffer") for e in EXPERIMENTS}
    ids = read_json("003_findings.json")["conclusions"]
    expected = sorted(
        (c["id"], e.key) for c in ids for e in EXPERIMENTS if e.key.removesuffix("-ns-buffer") == c["experiment"]
    )
    assert sorted((j.id, j.experiment) for j in judged) == expected
    assert by_experiment == {"fig5", "table2", "table3", "table4"}
