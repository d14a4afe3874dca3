"""Throw malformed input at the core: the only outcomes may be a result or a ScenarioError.

Never a crash of the interpreter, never a Rust panic (that would surface as
``tcpsim.InternalError``), never another exception type. Runs carry small limits so every
example stays fast; a run stopped by them is a ``LimitExceeded``, which is a ``ScenarioError``.
"""

from __future__ import annotations

import copy
import json
import math
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import tcpsim

FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
LIMITS = {"max_events": 20_000, "max_wall_s": 0.5}

# Valid scenarios touching every part of the format: the starting points of the mutations.
SEEDS: list[dict[str, Any]] = [
    {
        "duration_s": 2,
        "warmup_s": 0.5,
        "seed": 3,
        "topology": {
            "dumbbell": {
                "bottleneck": {
                    "rate_mbps": 5,
                    "delay_ms": 10,
                    "queue": {"type": "red", "limit_pkts": 60, "max_p": 0.1, "weight": 0.002, "gentle": True},
                    "loss": {"type": "uniform", "rate": 0.001},
                },
                "access": {"rate_mbps": 100, "queue": {"type": "droptail", "limit_pkts": 200}},
            }
        },
        "flows": [
            {
                "name": "sbs",
                "variant": "newreno-sbs",
                "rtt_ms": 60,
                "tcp": {"min_rto_s": 0.2, "initial_cwnd_pkts": 2, "delayed_ack": True},
                "loss": {"type": "bernoulli_events", "p": 0.01, "m": 3},
            },
            {
                "name": "imp",
                "count": 2,
                "variant": "newreno-impatient",
                "rtt_ms": {"uniform": [20, 100]},
                "start_s": {"uniform": [0, 0.3]},
                "app": {"type": "ftp", "bytes": 200_000},
            },
        ],
        "outputs": {"trace_interval_s": 0.1, "trace": ["cwnd", "ssthresh", "queue"], "max_trace_points": 5000},
    },
    {
        "duration_s": 2,
        "seed": 5,
        "topology": {
            "graph": {
                "nodes": ["a", "b", "c"],
                "links": [
                    {
                        "from": "a",
                        "to": "b",
                        "delay_ms": 2,
                        "schedule": {
                            "rate_mbps": {"points": [[0, 10], [0.5, 0], [0.8, 4]], "shape": "linear"},
                            "extra_delay_ms": {"points": [[0, 0], [1, 15]]},
                        },
                    },
                    {
                        "name": "core",
                        "from": "b",
                        "to": "c",
                        "rate_mbps": 2,
                        "delay_ms": 20,
                        "queue": {"type": "droptail", "limit_pkts": 20},
                        "loss": {"type": "scheduled", "packets": [5, 9]},
                        "reverse_loss": {"type": "gilbert_elliott", "p_good_to_bad": 0.01, "p_bad_to_good": 0.3},
                    },
                ],
            }
        },
        "flows": [
            {"name": "s", "variant": "sack", "from": "a", "to": "c", "tcp": {"sack": True}},
            {
                "name": "v",
                "variant": "vegas",
                "from": "a",
                "to": "c",
                "stop_s": 1.5,
                "tcp": {"vegas": {"alpha": 1, "beta": 3, "gamma": 1}},
            },
            {"name": "t", "variant": "tahoe", "from": "c", "to": "a"},
        ],
    },
    {
        "duration_s": 3,
        "warmup_s": 1,
        "seed": 9,
        "topology": {
            "dumbbell": {
                "bottleneck": {
                    "rate_mbps": 4,
                    "delay_ms": 5,
                    "loss": {"type": "outage", "start_s": 1, "end_s": 1.5},
                }
            }
        },
        "flows": [
            {
                "name": "cbr",
                "type": "udp",
                "rtt_ms": 30,
                "app": {"type": "cbr", "rate_mbps": 1, "packet_bytes": 500},
                "loss": {"type": "schedule", "rate": {"points": [[0, 0], [2, 0.3]], "shape": "linear"}},
            },
            {
                "name": "web",
                "variant": "reno",
                "rtt_ms": 50,
                "app": {"type": "http", "mean_file_bytes": 20_000, "shape": 1.5, "mean_think_s": 0.2},
            },
        ],
    },
]

# Words of the format, so that swapped strings often hit a tag or a name the core knows.
WORDS = [
    "tcp", "udp", "ftp", "cbr", "http", "droptail", "red", "uniform", "bernoulli_events",
    "scheduled", "outage", "schedule", "step", "linear", "gilbert_elliott", "dumbbell", "graph", "cwnd", "ssthresh", "queue",
    "codel", "pie", "fq_codel", "dualpi2", "l4s",
    "a", "b", "c", "core", "sbs", *tcpsim.VARIANTS,
]  # fmt: skip

NASTY_NUMBERS = [
    0, -0.0, -1, 1, 0.5, 1e-300, 5e-324, 1e300, 1.7976931348623157e308, 2**31, 2**32, 2**53 + 1,
    2**63 - 1, 2**63, 2**64, 2**64 + 1, -(2**63), 10**40, math.nan, math.inf, -math.inf,
]  # fmt: skip

numbers = st.sampled_from(NASTY_NUMBERS) | st.integers() | st.floats()
strings = st.sampled_from(WORDS) | st.text(max_size=20)
scalars = st.none() | st.booleans() | numbers | strings
json_values = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(strings, children, max_size=4),
    max_leaves=12,
)


def check(outcome: Any) -> None:
    """Calls ``outcome()``; passes on a result dict or a well-formed ScenarioError."""
    try:
        result = outcome()
    except tcpsim.ScenarioError as error:
        event(f"outcome: {error.kind}")  # see pytest --hypothesis-show-statistics
        assert error.kind in ("parse", "invalid", "limit_exceeded")
        if error.kind == "limit_exceeded":
            assert isinstance(error, tcpsim.LimitExceeded) and error.path is None
        else:
            assert isinstance(error.path, str) and error.path.startswith("$"), error.path
        assert str(error)
    else:
        event("outcome: ok")
        assert result is None or (isinstance(result, dict) and "flows" in result)


def run_bounded(scenario: Any) -> Any:
    """Validates, then runs with small limits (a run is cut short, never long). A mutation may
    have turned the whole document into a list or a number: those go in as JSON text."""
    if not isinstance(scenario, dict):
        scenario = json.dumps(scenario)
    tcpsim.validate(scenario)
    if isinstance(scenario, dict):
        scenario = {**scenario, "limits": LIMITS}
    return tcpsim.run(scenario)


# --- arbitrary JSON -------------------------------------------------------------------------


@FUZZ
@given(json_values)
def test_any_json_value_as_text_is_a_result_or_a_scenario_error(value):
    text = json.dumps(value)  # NaN and Infinity come out as bare words: not JSON, to the core
    check(lambda: tcpsim.validate(text))


@FUZZ
@given(st.dictionaries(strings, json_values, max_size=6))
def test_any_dict_is_a_result_or_a_scenario_error(value):
    check(lambda: run_bounded(value))


@FUZZ
@given(st.text(max_size=200))
def test_any_text_is_a_result_or_a_scenario_error(text):
    check(lambda: tcpsim.validate(text))


# --- mutated valid scenarios ----------------------------------------------------------------


def paths(node: Any, prefix: tuple = ()) -> list[tuple]:
    """Every path into a JSON document, the root included."""
    found = [prefix]
    if isinstance(node, dict):
        for key, child in node.items():
            found += paths(child, (*prefix, key))
    elif isinstance(node, list):
        for i, child in enumerate(node):
            found += paths(child, (*prefix, i))
    return found


def replace(doc: Any, path: tuple, value: Any) -> Any:
    if not path:
        return value
    parent = doc
    for step in path[:-1]:
        parent = parent[step]
    parent[path[-1]] = value
    return doc


def delete(doc: Any, path: tuple) -> Any:
    if not path:
        return {}
    parent = doc
    for step in path[:-1]:
        parent = parent[step]
    del parent[path[-1]]
    return doc


def get(doc: Any, path: tuple) -> Any:
    for step in path:
        doc = doc[step]
    return doc


MUTATIONS = ["delete", "value", "number", "string", "unknown_key", "wrap", "duplicate", "empty", "tweak"]


def is_number(node: Any) -> bool:
    return isinstance(node, (int, float)) and not isinstance(node, bool)


@st.composite
def mutated_scenarios(draw: st.DrawFn) -> Any:
    doc = copy.deepcopy(draw(st.sampled_from(SEEDS)))
    for _ in range(draw(st.integers(1, 3))):
        mutation = draw(st.sampled_from(MUTATIONS))
        candidates = paths(doc)
        if mutation == "tweak":  # a number stays a number, of another size: ranges, not types
            candidates = [p for p in candidates if is_number(get(doc, p))] or candidates
        path = draw(st.sampled_from(candidates))
        node = get(doc, path)
        if mutation == "tweak" and is_number(node):
            doc = replace(doc, path, draw(numbers | st.sampled_from([node * 10**6, -node, node / 10**6])))
        elif mutation == "delete":
            doc = delete(doc, path)
        elif mutation == "value":
            doc = replace(doc, path, draw(json_values))
        elif mutation == "number":
            doc = replace(doc, path, draw(numbers))
        elif mutation == "string":
            doc = replace(doc, path, draw(strings))
        elif mutation == "unknown_key" and isinstance(node, dict):
            node[draw(strings)] = draw(scalars)
        elif mutation == "wrap":
            doc = replace(doc, path, [node])
        elif mutation == "duplicate" and isinstance(node, list) and node:
            node.extend(copy.deepcopy(node))
        elif mutation == "empty":
            doc = replace(doc, path, type(node)() if isinstance(node, (dict, list, str)) else None)
    return doc


@pytest.mark.parametrize("seed", range(len(SEEDS)))
def test_every_seed_scenario_is_valid_and_runs(seed):
    result = tcpsim.run(SEEDS[seed])
    assert result["flows"] and all(f["packets_sent"] > 0 for f in result["flows"])


@FUZZ
@given(mutated_scenarios())
def test_a_mutated_scenario_is_a_result_or_a_scenario_error(scenario):
    check(lambda: run_bounded(scenario))


@FUZZ
@given(mutated_scenarios())
def test_a_mutated_scenario_as_text_is_a_result_or_a_scenario_error(scenario):
    text = json.dumps(scenario)
    check(lambda: tcpsim.validate(text))
