"""Fast admission computes, for a sweep's points and replications, exactly what the per-run path
computed: the cache key of each replication (`SeedTemplate.key` against `key_of_canonical` of
`with_seed`), its point's stored scenario (`SeedTemplate.unseeded`), and each point's scenario
(`plan_points` against `plan_point`, errors included). No database: these are pure functions."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

import tcpsim
from services.presets import build_scenario
from services.scenarios import ScenarioInvalid, key_of_canonical, validate_scenario
from services.scenarios.canonical import SeedTemplate
from services.sweeps import SweepSpec
from services.sweeps.grid import (
    _point_builder,
    axis_values,
    grid_points,
    plan_point,
    plan_points,
    replication_seed,
    with_seed,
)
from tests.services.test_schedules import tiny_template

TINY = tiny_template()["scenario"]

SEEDS = [0, 1, 2, 9, 10, 2**53, 2**63 - 1, 2**64 - 1, *(replication_seed(7, r) for r in range(20))]


def canonicals() -> list[dict[str, Any]]:
    """A preset with its name and description, a scenario without them, one with a nested
    object that has a `seed` key of its own (a trace option) if the schema allows it."""
    out = [validate_scenario(build_scenario("paper000-fig2a", {"duration_s": 20}))[1]]
    out.append(validate_scenario(TINY)[1])
    out.append(validate_scenario({**TINY, "name": 'quote " and \\ back', "description": "é ∑ \u0000"})[1])
    out.append(validate_scenario(build_scenario("paper000-table2-droptail", {"background_flows": 8}))[1])
    return out


@pytest.mark.parametrize("case", range(4))
def test_a_replications_key_is_the_per_run_key_for_every_seed(case: int) -> None:
    canonical = canonicals()[case]
    template = SeedTemplate(canonical, tcpsim.__version__)
    for seed in SEEDS:
        assert template.key(seed) == key_of_canonical(with_seed(canonical, seed), tcpsim.__version__)


def test_keys_follow_the_core_version_and_the_scenario() -> None:
    canonical = canonicals()[1]
    assert SeedTemplate(canonical, "0.0.0").key(1) == key_of_canonical(with_seed(canonical, 1), "0.0.0")
    assert SeedTemplate(canonical, "0.0.0").key(1) != SeedTemplate(canonical, tcpsim.__version__).key(1)
    other = {**canonical, "duration_s": canonical["duration_s"] + 1}
    assert SeedTemplate(other, "v").key(1) != SeedTemplate(canonical, "v").key(1)


@pytest.mark.parametrize("case", range(4))
def test_a_points_stored_scenario_with_a_replications_seed_is_that_replications_scenario(case: int) -> None:
    canonical = canonicals()[case]
    unseeded = json.loads(SeedTemplate(canonical, tcpsim.__version__).unseeded)
    assert "seed" not in unseeded
    for seed in SEEDS:
        assert {**unseeded, "seed": seed} == with_seed(canonical, seed)


@pytest.mark.parametrize(
    "canonical",
    [
        {},
        {"seed": 3},
        {"a": 1},
        {"z": [1, {"seed": 2}]},
        {"a": 1, "seed": 4, "z": 2},
        {"name": "n"},
        {"name": "n", "z": 1},
        {"description": "d", "name": "n", "seed": 5, "a": None},
    ],
)
def test_the_unseeded_text_cuts_the_seed_wherever_it_sorts(canonical: dict[str, Any]) -> None:
    assert json.loads(SeedTemplate(canonical, "v").unseeded) == {k: v for k, v in canonical.items() if k != "seed"}


# ---- planning every point: plan_points against plan_point ------------------------------------------


def spec(**body: Any) -> SweepSpec:
    base: dict[str, Any] = {"preset": "paper000-fig2a", "overrides": {"duration_s": 20}}
    return SweepSpec.model_validate({**base, **body})


SPECS = {
    "one axis of a preset": spec(axes=[{"path": "flows[*].loss.m", "values": [1, 2, 8, 30]}]),
    "two axes, product": spec(
        axes=[{"path": "flows[*].loss.m", "values": [1, 8]}, {"path": "flows[0].loss.p", "values": [0.001, 0.002, 0.5]}]
    ),
    "two axes, zipped": spec(
        axes=[
            {"path": "flows[1].rtt_ms", "values": [40, 80]},
            {"path": "$.flows[*].variant", "values": ["sack", "reno"]},
        ],
        combine="zip",
    ),
    "an axis over a whole object": spec(
        axes=[
            {
                "path": "flows[0].loss",
                "values": [{"type": "uniform", "rate": 0.01}, {"type": "bernoulli_events", "p": 0.001, "m": 4}],
            }
        ]
    ),
    "an axis then a path inside it": spec(
        axes=[
            {"path": "flows[0].tcp", "values": [{"mss_bytes": 500}, {"mss_bytes": 1460, "delayed_ack": True}]},
            {"path": "flows[0].tcp.initial_cwnd_pkts", "values": [1, 4]},
        ]
    ),
    "an optional field not yet set": spec(axes=[{"path": "flows[0].stop_s", "values": [10, 15]}]),
    "a preset parameter (expanded by the preset)": SweepSpec.model_validate(
        {
            "preset": "paper000-table2-droptail",
            "overrides": {"duration_s": 10},
            "axes": [{"path": "background_flows", "values": [4, 8]}],
        }
    ),
    "the duration (the warm-up follows it)": spec(axes=[{"path": "duration_s", "values": [30, 40]}]),
    "an override's own key": spec(
        overrides={"duration_s": 20, "flows[*].loss.m": 3}, axes=[{"path": "flows[*].loss.m", "values": [5, 6]}]
    ),
    "a scenario base": SweepSpec.model_validate(
        {
            "scenario": TINY,
            "axes": [
                {"path": "flows[0].loss.p", "values": [0.01, 0.02]},
                {"path": "topology.dumbbell.bottleneck.rate_mbps", "values": [5, 20]},
            ],
        }
    ),
}


@pytest.mark.parametrize("name", list(SPECS))
def test_every_point_is_planned_as_plan_point_plans_it(name: str) -> None:
    sweep = SPECS[name]
    values = grid_points(axis_values(sweep), sweep.combine)
    assert list(plan_points(sweep, values)) == [plan_point(sweep, v) for v in values]


def test_planning_leaves_the_base_and_the_axis_values_unchanged() -> None:
    loss = {"type": "uniform", "rate": 0.01}
    sweep = spec(
        axes=[{"path": "flows[*].loss", "values": [loss]}, {"path": "flows[*].loss.rate", "values": [0.1, 0.2]}]
    )
    values = grid_points(axis_values(sweep), sweep.combine)
    base = build_scenario("paper000-fig2a", {"duration_s": 20})
    first, second = plan_points(sweep, values)
    assert [f["loss"]["rate"] for f in first.canonical["flows"]] == [0.1, 0.1]
    assert [f["loss"]["rate"] for f in second.canonical["flows"]] == [0.2, 0.2]
    assert values[0]["flows[*].loss"] == loss == {"type": "uniform", "rate": 0.01}
    assert build_scenario("paper000-fig2a", {"duration_s": 20}) == base


def errors_of(sweep: SweepSpec, planner: Any) -> list[Any]:
    values = grid_points(axis_values(sweep), sweep.combine)
    with pytest.raises(ScenarioInvalid) as caught:
        list(planner(sweep, values))
    return caught.value.errors


@pytest.mark.parametrize(
    "axes",
    [
        [{"path": "flows[*].loss.m", "values": [1, -3]}],
        [{"path": "flows[*].nothing.here", "values": [1]}],
        [{"path": "flows[5].loss.m", "values": [1]}],
        [{"path": "flows[0].loss.m.deeper", "values": [1]}],
        [{"path": "warmup_s", "values": [1, 500]}],
        [{"path": "flows[*].rtt_ms", "values": [70, 1]}],
    ],
)
def test_a_refused_point_gives_the_errors_plan_point_gives(axes: list[dict[str, Any]]) -> None:
    sweep = spec(axes=axes)
    assert errors_of(sweep, plan_points) == errors_of(sweep, lambda s, vs: [plan_point(s, v) for v in vs])


def test_many_random_points_plan_alike() -> None:
    rng = random.Random(12)
    sweep = spec(
        axes=[
            {"path": "flows[*].loss.m", "values": sorted(rng.sample(range(1, 200), 15))},
            {"path": "flows[1].rtt_ms", "values": [70, 90.5, 120]},
            {"path": "topology.dumbbell.bottleneck.queue.limit_pkts", "values": [50, 100]},
        ]
    )
    values = grid_points(axis_values(sweep), sweep.combine)
    assert list(plan_points(sweep, values)) == [plan_point(sweep, v) for v in values]


SLOW_ON_PURPOSE = {
    "a preset parameter (expanded by the preset)",
    "the duration (the warm-up follows it)",
    "an override's own key",
}


@pytest.mark.parametrize("name", list(SPECS))
def test_the_base_is_built_once_unless_an_axis_needs_the_preset_again(name: str) -> None:
    sweep = SPECS[name]
    builder = _point_builder(sweep)
    if name in SLOW_ON_PURPOSE:
        assert builder is None
    else:
        assert builder is not None
        assert all(builder(v) is not None for v in grid_points(axis_values(sweep), sweep.combine))
