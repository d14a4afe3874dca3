"""The judging of the papers' conclusions, on observations built by hand: a conclusion holds
when the numbers say what the paper says, and flips when they are swapped; an experiment
without observations leaves its conclusions not run."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from services.presets.paper002 import CBR_RATE, SECOND_VARIANT, VARIANT
from services.presets.published import read_json
from services.reproductions import PAPERS, get_paper
from services.reproductions.local import observations_of
from services.reproductions.paper004 import judge
from services.sweeps import Observation


def obs(flow: str, values: dict[str, Any], replication: int = 0, **metrics: float) -> Observation:
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
        metrics=metrics,
    )


def exp2(goodput: dict[tuple[str, str], tuple[float, float]]) -> list[Observation]:
    out = []
    for (a, b), (g1, g2) in goodput.items():
        at = {VARIANT: a, SECOND_VARIANT: b}
        out += [obs("first", at, goodput_bps=g1, drops=0), obs("second", at, goodput_bps=g2, drops=0)]
    return out


def verdicts(paper: str, observations: dict[str, list[Observation]]) -> dict[str, str]:
    return {j.id: j.verdict for j in get_paper(paper).evaluate(observations).conclusions}


EQUAL = {("reno", "reno"): (4e6, 4e6), ("newreno-sbs", "reno"): (4e6, 4e6), ("vegas", "vegas"): (4e6, 4e6)}


@given(
    low=st.tuples(st.floats(1e5, 1e7), st.floats(1e5, 1e7)), high=st.tuples(st.floats(1e5, 1e7), st.floats(1e5, 1e7))
)
def test_vegas_loses_to_newreno_exactly_when_newreno_gets_more_at_both_levels(low, high) -> None:
    found = verdicts(
        "002",
        {
            "exp2-low": exp2({**EQUAL, ("newreno-sbs", "vegas"): low}),
            "exp2-high": exp2({**EQUAL, ("newreno-sbs", "vegas"): high}),
        },
    )["exp2-vegas-loses-to-newreno"]
    loses = low[0] > low[1] and high[0] > high[1]
    most_low = low[0] / max(low[1], 1) > high[0] / max(high[1], 1)
    assert found == ("agree" if loses and most_low else "partly" if loses else "disagree")


def test_newreno_beating_reno_flips_with_the_numbers() -> None:
    def judged(newreno: float, reno: float) -> str:
        return verdicts("002", {"exp2-high": exp2({("newreno-sbs", "reno"): (newreno, reno)})})[
            "exp2-newreno-beats-reno-high"
        ]

    assert (judged(2.3e5, 1.8e5), judged(1.8e5, 2.3e5)) == ("agree", "disagree")


def test_newreno_highest_under_congestion_needs_congestion() -> None:
    def exp1(drops: int, newreno: float) -> list[Observation]:
        return [
            obs(
                "tcp",
                {VARIANT: v, CBR_RATE: 9.0},
                goodput_bps=newreno if v == "newreno-sbs" else 1e6,
                drops=drops,
                timeouts=0,
                mean_rtt_s=0.02,
            )
            for v in ("tahoe", "reno", "newreno-sbs", "vegas")
        ]

    assert verdicts("002", {"exp1": exp1(3, 2e6)})["exp1-newreno-highest-throughput"] == "agree"
    assert verdicts("002", {"exp1": exp1(3, 5e5)})["exp1-newreno-highest-throughput"] == "disagree"
    assert verdicts("002", {"exp1": exp1(0, 2e6)})["exp1-newreno-highest-throughput"] == "no_data"


def _results(means: dict[str, list[float]]) -> dict[str, dict[str, Any]]:
    out = {}
    for v, xs in means.items():
        runs = [{"download_time_s": x} for x in xs]
        mean = sum(xs) / len(xs)
        out[v] = {"runs": runs, "download_time_s": mean, "download_time_s_hw": 0.0}
    return out


BEST = {"id": "x", "claim": "best", "variant": "reno", "metric": "download_time_s", "text": "", "where": ""}


def test_a_best_claim_agrees_when_significant_and_is_partly_within_noise() -> None:
    others = {"tahoe": [110, 111, 112], "sack": [110, 111, 112], "newreno-sbs": [110, 111, 112]}
    assert judge(BEST, _results({"reno": [100, 101, 102], **others}))[0] == "agree"
    assert judge(BEST, _results({"reno": [120, 121, 122], **others}))[0] == "disagree"
    # Lower in the mean, but the paired differences straddle zero: the paper's way, not significant.
    assert judge(BEST, _results({"reno": [100, 115, 110.5], **others}))[0] == "partly"
    assert judge(BEST, _results({"reno": [110, 111, 112], **others}))[0] == "disagree"  # a tie: no difference


def test_a_download_that_did_not_finish_is_no_data() -> None:
    results = _results({"reno": [1.0], "tahoe": [1.0], "sack": [1.0], "newreno-sbs": [1.0]})
    results["reno"]["download_time_s"] = None
    assert judge(BEST, results)[0] == "no_data"


@pytest.mark.parametrize("paper", sorted(PAPERS))
def test_without_observations_every_conclusion_is_not_run_and_there_are_no_tables(paper) -> None:
    evaluation = get_paper(paper).evaluate({})
    assert evaluation.tables == []
    assert evaluation.conclusions and {j.verdict for j in evaluation.conclusions} == {"not_run"}
    assert all(j.row()["reason"] is None for j in evaluation.conclusions)


def test_paper002_judges_each_published_conclusion_once() -> None:
    ids = [j.id for j in get_paper("002").evaluate({}).conclusions]
    assert sorted(ids) == sorted(c["id"] for c in read_json("002_published.json")["conclusions"])


def test_each_experiment_is_a_valid_sweep_of_its_preset() -> None:
    from services.sweeps import SweepSpec, grid_points, plan_point
    from services.sweeps.grid import axis_values

    for paper in PAPERS.values():
        for e in paper.experiments:
            spec = SweepSpec.model_validate(e.spec())
            points = grid_points(axis_values(spec), spec.combine)
            assert len(points) * spec.replications == e.runs
            plan_point(spec, points[0])  # the core accepts it


def test_every_axis_a_reproduction_sweeps_is_a_parameter_its_preset_declares() -> None:
    from services.presets import get_preset

    undeclared = [
        (paper.number, e.key, e.preset, axis["path"])
        for paper in PAPERS.values()
        for e in paper.experiments
        for axis in e.axes
        if get_preset(e.preset).parameter(axis["path"]) is None
    ]
    assert undeclared == [], "(paper, experiment, preset, axis path) not among the preset's parameters"


def test_a_runs_flows_become_one_observation_per_group() -> None:
    canonical = {"seed": 3, "flows": [{"name": "bg", "count": 2, "variant": "reno"}, {"name": "cbr", "type": "udp"}]}
    result = {"flows": [{"goodput_bps": 1.0}, {"goodput_bps": 3.0}, {"goodput_bps": 5.0}]}
    found = observations_of(result, canonical, values={"x": 1})
    assert [(o.flow, o.metrics["goodput_bps"], o.values) for o in found] == [
        ("bg", 2.0, {"x": 1}),
        ("cbr", 5.0, {"x": 1}),
    ]


def test_a_papers_published_column_and_a_reproductions_column_are_one_type() -> None:
    from services.presets import Column, PublishedColumn, get_preset
    from services.reproductions.model import Column as ReproductionColumn

    assert PublishedColumn is Column is ReproductionColumn
    (table,) = [t for t in get_preset("paper000-table2-droptail").published.tables if t.name == "Table II"]
    first = table.columns[0]
    assert isinstance(first, ReproductionColumn) and first.meaning == first.label and first.label
