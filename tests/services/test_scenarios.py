"""services.scenarios: the schema against the core's, canonical JSON and cache keys,
validation errors and their JSON paths, override paths."""

from __future__ import annotations

import copy
import json
import math
import re
import typing
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

import tcpsim
from services.presets import list_presets
from services.scenarios import (
    PathError,
    Scenario,
    ScenarioInvalid,
    apply_overrides,
    cache_key,
    canonical_dict,
    canonical_json,
    expand,
    get_path,
    schema,
    set_path,
    validate_scenario,
)
from services.scenarios.canonical import dumps
from services.scenarios.errors import json_path
from services.scenarios.paths import WILDCARD, format_path, parse_path
from services.scenarios.schema import TRACE_FILES_REFUSED
from services.traces.builtin import builtin_trace
from services.traces.refs import link_traces

CORE = tcpsim.__version__
FAST = settings(max_examples=30, deadline=None)


def _dumbbell(**bottleneck: Any) -> dict[str, Any]:
    return {"dumbbell": {"bottleneck": {"rate_mbps": 10, "delay_ms": 5, **bottleneck}}}


MINIMAL: dict[str, Any] = {"duration_s": 5, "topology": _dumbbell(), "flows": [{"rtt_ms": 40}]}
# The same, every default spelled out, so every field is a path that exists.
MINIMAL_FULL: dict[str, Any] = tcpsim.normalize(MINIMAL)

# Hand-written scenarios that between them set every field of the format explicitly (checked by
# test_the_hand_written_scenarios_set_every_field_of_the_schema), plus minimal ones that leave
# every default to the models.
HAND_WRITTEN: list[dict[str, Any]] = [
    MINIMAL,
    {
        "name": "every dumbbell field",
        "description": "all of it",
        "duration_s": 20.5,
        "warmup_s": 2,
        "seed": 18446744073709551615,
        "topology": {
            "dumbbell": {
                "bottleneck": {
                    "rate_mbps": 12.5,
                    "delay_ms": 4,
                    "schedule": {"extra_delay_ms": {"points": [[0, 0], [10, 20]], "shape": "linear"}},
                    "queue": {
                        "type": "red",
                        "limit_pkts": 90,
                        "min_th_pkts": 10,
                        "max_th_pkts": 70.5,
                        "max_p": 0.2,
                        "weight": 0.01,
                        "gentle": False,
                        "mean_pkt_bytes": 500,
                        "ecn": True,
                        "rules": "ns",
                    },
                    "loss": {"type": "uniform", "rate": 0.001},
                    "reverse_loss": {
                        "type": "gilbert_elliott",
                        "p_good_to_bad": 0.01,
                        "p_bad_to_good": 0.3,
                        "loss_good": 0.001,
                        "loss_bad": 0.5,
                    },
                },
                "access": {"rate_mbps": 100, "queue": {"type": "droptail", "limit_pkts": 300}},
            }
        },
        "flows": [
            {
                "name": "everything",
                "count": 3,
                "type": "tcp",
                "variant": "vegas",
                "rtt_ms": {"uniform": [20, 80.5]},
                "start_s": {"uniform": [0, 1]},
                "stop_s": 15,
                "app": {"type": "ftp", "bytes": 1_000_000},
                "tcp": {
                    "mss_bytes": 1460,
                    "header_bytes": 52,
                    "initial_cwnd_pkts": 10,
                    "initial_ssthresh_pkts": 64,
                    "max_window_pkts": 500,
                    "delayed_ack": True,
                    "delack_timeout_s": 0.2,
                    "sack": True,
                    "dupack_threshold": 4,
                    "initial_rto_s": 1,
                    "min_rto_s": 0.5,
                    "max_rto_s": 64,
                    "rtt_gain": 0.1,
                    "rttvar_gain": 0.2,
                    "rttvar_k": 3,
                    "timer_granularity_s": 0.001,
                    "rtt_sampling": "timestamps",
                    "pacing": {"ss_ratio": 1.5, "ca_ratio": 1.1},
                    "hystart": {
                        "min_rtt_thresh_ms": 3,
                        "max_rtt_thresh_ms": 20,
                        "min_rtt_divisor": 6,
                        "n_rtt_sample": 6,
                        "css_growth_divisor": 3,
                        "css_rounds": 4,
                        "min_window_pkts": 8,
                    },
                    "ecn": True,
                    "ecn_reduction_holds_window": True,
                    "limited_transmit": True,
                    "profile": "linux",
                    "limited_transmit_after_timeout": True,
                    "recover_guard": "ack_passes_recover",
                    "integer_ssthresh": True,
                    "repeated_timeout_ssthresh": "halve",
                    "fack_recovery": "ns2_fack",
                    "recovery_keeps_half_window": True,
                    "sack_recovery": "ns2_sack1",
                    "vegas": {"alpha": 2, "beta": 4, "gamma": 1.5},
                    "cubic": {"c": 0.6, "beta": 0.8, "reno_friendly": "linux"},
                    "ssdr": {"grain": 3, "depth": 1},
                    "pseudo_rate": {"queue_pkts": 3},
                    "scalable": {"a": 0.02, "b": 0.2, "legacy_b": 0.25},
                    "veno": {"reno_growth": True},
                    "hybla": {"rtt0_ms": 50},
                    "ledbat": {"target_ms": 25, "gain": 0.5},
                    "lp": {"threshold": 0.2, "inference_rtts": 2},
                    "yeah": {
                        "alpha": 60,
                        "gamma": 2,
                        "delta": 2,
                        "epsilon": 2,
                        "phy": 4,
                        "rho": 8,
                        "zeta": 25,
                        "stcp_ai_factor": 50,
                    },
                    "bbr": {
                        "ack_aggregation": {
                            "gain": 1.5,
                            "window_rounds": 6,
                            "max_s": 0.2,
                            "epoch_reset_pkts": 4.096,
                            "whole_second_epochs": True,
                        },
                        "long_term_bw": {
                            "min_rounds": 5,
                            "loss_thresh": 0.25,
                            "bw_ratio": 0.2,
                            "bw_diff_bps": 8000,
                            "max_rounds": 40,
                        },
                        "lost_deduction": False,
                        "idle_restart": True,
                        "probe_bw_extra_pkts": 2,
                        "pacing_margin": 0.01,
                        "send_quantum_pkts": 1,
                    },
                },
                "loss": {
                    "type": "bernoulli_events",
                    "p": 0.01,
                    "m": 3,
                    "spare_retransmissions": False,
                    "event_span_s": 0.05,
                    "spacing": "periodic",
                },
            },
            {
                "name": "web",
                "rtt_ms": 100,
                "start_s": 0.5,
                "app": {
                    "type": "http",
                    "mean_file_bytes": 20000,
                    "shape": 1.5,
                    "mean_think_s": 1,
                    "request_bytes": 200,
                    "request_timeout_s": 2,
                },
                "loss": {"type": "scheduled", "packets": [3, 5, 8]},
            },
            {
                "name": "cbr",
                "type": "udp",
                "rtt_ms": 60,
                "app": {"type": "cbr", "rate_mbps": 1.5, "packet_bytes": 500},
                "loss": {"type": "outage", "start_s": 5, "end_s": 6, "rate": 0.5},
            },
            {"name": "outage-default", "rtt_ms": 60, "loss": {"type": "outage", "start_s": 1, "end_s": 2}},
        ],
        "outputs": {
            "trace_interval_s": 0.5,
            "trace": ["cwnd", "queue"],
            "trace_flows": ["web"],
            "trace_links": ["bottleneck"],
            "max_trace_points": 10000,
        },
        "limits": {"max_events": 10_000_000, "max_wall_s": 60},
    },
    {
        "duration_s": 10,
        "topology": {
            "graph": {
                "nodes": ["a", "r", "b"],
                "links": [
                    {
                        "name": "a-r",
                        "from": "a",
                        "to": "r",
                        "rate_mbps": 100,
                        "delay_ms": 1,
                        "queue": {"type": "droptail", "limit_pkts": 50, "ecn_threshold_pkts": 20},
                        "loss": {"type": "uniform", "rate": 0.0001},
                        "reverse_loss": {"type": "uniform", "rate": 0.0001},
                    },
                    {
                        "from": "r",
                        "to": "b",
                        "delay_ms": 10,
                        "schedule": {"rate_mbps": {"points": [[0, 10], [3, 0], [4, 10]]}},
                        "queue": {"type": "red", "limit_pkts": 30},
                    },
                ],
            }
        },
        "flows": [
            {
                "name": "ab",
                "from": "a",
                "to": "b",
                "variant": "sack",
                "tcp": {"rack": True},
                "loss": {"type": "schedule", "rate": {"points": [[0, 0], [5, 0.01]]}},
            },
            {"name": "ba", "from": "b", "to": "a", "variant": "tahoe", "start_s": 1},
        ],
    },
    # An 802.11 network, every field set: one station at a fixed SNR, one fading.
    {
        "duration_s": 5,
        "topology": {
            "graph": {
                "nodes": ["server", "ap", "laptop", "phone"],
                "links": [{"from": "server", "to": "ap", "rate_mbps": 100, "delay_ms": 5}],
                "wifi": [
                    {
                        "name": "wlan",
                        "ap": "ap",
                        "stations": [
                            {"node": "laptop", "snr_db": 30},
                            {
                                "node": "phone",
                                "snr_db": {"points": [[0, 25], [2, 5], [3, 25]], "shape": "linear"},
                            },
                        ],
                        "standard": "802.11g",
                        "rate_mbps": 54,
                        "retry_limit": 4,
                        "cw_after_drop": "keep",
                        "short_slot": False,
                        "queue": {"type": "droptail", "limit_pkts": 200},
                    }
                ],
            }
        },
        "flows": [
            {"name": "laptop", "from": "server", "to": "laptop"},
            {"name": "phone", "from": "server", "to": "phone", "variant": "cubic"},
        ],
    },
    {
        "duration_s": 1,
        "topology": {
            "graph": {"nodes": ["x", "y"], "links": [{"from": "x", "to": "y", "rate_mbps": 1, "delay_ms": 0}]}
        },
        "flows": [{"from": "x", "to": "y"}],
    },
    # The active queue managements, every field set (and each with its defaults elsewhere).
    {
        "duration_s": 5,
        "topology": {
            "graph": {
                "nodes": ["a", "r", "s", "b"],
                "links": [
                    {
                        "from": "a",
                        "to": "r",
                        "rate_mbps": 100,
                        "delay_ms": 1,
                        "queue": {"type": "codel", "limit_pkts": 500, "target_ms": 2.5, "interval_ms": 50, "ecn": True},
                    },
                    {
                        "from": "r",
                        "to": "s",
                        "rate_mbps": 20,
                        "delay_ms": 5,
                        "queue": {
                            "type": "pie",
                            "limit_pkts": 300,
                            "target_ms": 20,
                            "t_update_ms": 30,
                            "alpha": 0.0625,
                            "beta": 0.625,
                            "max_burst_ms": 100,
                            "derandomize": True,
                            "ecn": True,
                        },
                    },
                    {
                        "from": "s",
                        "to": "b",
                        "rate_mbps": 10,
                        "delay_ms": 5,
                        "queue": {
                            "type": "fq_codel",
                            "limit_pkts": 2000,
                            "flows": 64,
                            "quantum_bytes": 300,
                            "target_ms": 10,
                            "interval_ms": 200,
                            "ecn": False,
                        },
                    },
                    {
                        "from": "b",
                        "to": "a",
                        "rate_mbps": 50,
                        "delay_ms": 5,
                        "queue": {
                            "type": "dualpi2",
                            "limit_pkts": 5000,
                            "target_ms": 20,
                            "t_update_ms": 16,
                            "alpha": 0.16,
                            "beta": 3.2,
                            "coupling": 1.5,
                            "ramp_min_ms": 1,
                            "ramp_range_ms": 0,
                            "ramp_min_pkts": 2,
                            "classic_weight": 0.05,
                        },
                    },
                ],
            }
        },
        "flows": [
            {"from": "a", "to": "b", "variant": "cubic"},
            {"from": "b", "to": "a", "start_s": 1},
            {"from": "b", "to": "a", "variant": "dctcp", "tcp": {"l4s": True}},
            {
                "from": "b",
                "to": "a",
                "variant": "prague",
                "tcp": {"prague": {"rtt_virt_ms": 10, "rtt_transition_rounds": 2}},
            },
        ],
    },
    {
        "duration_s": 5,
        "topology": {"dumbbell": {"bottleneck": {"rate_mbps": 10, "delay_ms": 10, "queue": {"type": "pie"}}}},
        "flows": [{"rtt_ms": 40}],
    },
    *(
        {
            "duration_s": 5,
            "topology": {"dumbbell": {"bottleneck": {"rate_mbps": 10, "delay_ms": 10, "queue": {"type": q}}}},
            "flows": [{"rtt_ms": 40}],
        }
        for q in ("codel", "fq_codel", "dualpi2")
    ),
    # Each TCP profile alone (its settings fill the rest), and one with a field of our own.
    *(
        {"duration_s": 5, "topology": _dumbbell(), "flows": [{"rtt_ms": 40, "tcp": {"profile": p}}]}
        for p in ("ns2", "ns3", "linux", "opnet")
    ),
    {
        "duration_s": 5,
        "topology": _dumbbell(),
        "flows": [{"rtt_ms": 40, "tcp": {"profile": "ns2", "max_window_pkts": 64}}],
    },
    # The linux profile's RACK-TLP serves a SACK variant, not one whose SACK is off.
    {
        "duration_s": 5,
        "topology": _dumbbell(),
        "flows": [
            {"rtt_ms": 40, "variant": "cubic", "tcp": {"profile": "linux"}},
            {"rtt_ms": 40, "variant": "cubic", "tcp": {"profile": "linux", "sack": False}},
            {"rtt_ms": 40, "variant": "reno", "tcp": {"profile": "linux"}},
        ],
    },
]

# The core's format only: a preset whose link follows a built-in trace by name (the service's
# extension) is checked with SERVICE_ONLY below.
PRESET_SCENARIOS = [
    pytest.param(p.scenario, id=p.name) for p in list_presets() if not any(True for _ in link_traces(p.scenario))
]
ALL = [*(pytest.param(s, id=f"hand-written-{i}") for i, s in enumerate(HAND_WRITTEN)), *PRESET_SCENARIOS]


def typed(value: Any) -> str:
    """JSON text that keeps int and float apart (and booleans apart from numbers)."""
    return json.dumps(value, sort_keys=True)


# ---- the schema mirrors the core ---------------------------------------------------------------


@pytest.mark.parametrize("scenario", ALL)
def test_the_models_dump_a_scenario_exactly_as_the_core_normalizes_it(scenario):
    ours = Scenario.model_validate(scenario).model_dump(mode="json", exclude_none=True)
    assert typed(ours) == typed(tcpsim.normalize(scenario))


@pytest.mark.parametrize("scenario", ALL)
def test_a_dump_of_the_models_is_itself_a_fixed_point_of_both(scenario):
    ours = Scenario.model_validate(scenario).model_dump(mode="json", exclude_none=True)
    assert typed(Scenario.model_validate(ours).model_dump(mode="json", exclude_none=True)) == typed(ours)
    assert typed(tcpsim.normalize(ours)) == typed(ours)


def _models() -> list[type[BaseModel]]:
    return [
        obj
        for obj in vars(schema).values()
        if isinstance(obj, type)
        and issubclass(obj, BaseModel)
        and obj.__module__ == schema.__name__
        and not obj.__name__.startswith("_")
    ]


def _fields_set(model: BaseModel, found: set[tuple[str, str]]) -> None:
    for name in model.model_fields_set:
        found.add((type(model).__name__, name))
    for name in type(model).model_fields:
        value = getattr(model, name)
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, BaseModel):
                _fields_set(item, found)


# Fields of the core's format the service refuses (a link's trace names a file on the server's
# disk): no valid scenario sets them, and test_a_trace_file_is_refused_* checks they are refused.
REFUSED_FIELDS = {("LinkTrace", "file"), ("LinkTrace", "reverse_file")}

# The service's extensions of the format (schema.SERVICE_EXTENSIONS): a link that follows a
# stored trace by name (the built-in LTE traces here), which the core cannot read as it stands.
SERVICE_ONLY: list[dict[str, Any]] = [
    {
        "duration_s": 2,
        "topology": {
            "dumbbell": {
                "bottleneck": {
                    "trace": {"name": "TMobile-LTE-short.down", "reverse_name": "TMobile-LTE-short.up"},
                    "delay_ms": 10,
                    "queue": {"type": "droptail", "limit_pkts": 400},
                }
            }
        },
        "flows": [{"variant": "cubic", "rtt_ms": 40}],
    },
    {
        "duration_s": 2,
        "topology": {
            "graph": {
                "nodes": ["a", "b"],
                "links": [{"from": "a", "to": "b", "trace": {"name": "Verizon-LTE-short.down"}, "delay_ms": 5}],
            }
        },
        "flows": [{"from": "a", "to": "b"}],
    },
]


def test_the_hand_written_scenarios_set_every_field_of_the_schema():
    found: set[tuple[str, str]] = set()
    for scenario in [*HAND_WRITTEN, *SERVICE_ONLY]:
        _fields_set(Scenario.model_validate(scenario), found)
    every = {(m.__name__, f) for m in _models() for f in m.model_fields}
    assert every - found == REFUSED_FIELDS


def _with_trace_file(tmp_path, where: str) -> dict[str, Any]:
    """MINIMAL with a valid trace file on the bottleneck or on a graph's link, in place of its rate:
    a scenario the core itself would run."""
    trace = tmp_path / "one-per-ms.down"
    trace.write_text("1\n")
    link = {"trace": {"file": str(trace), "reverse_file": str(trace)}, "delay_ms": 5}
    if where == "bottleneck":
        return {**MINIMAL, "topology": {"dumbbell": {"bottleneck": link}}}
    graph = {
        "nodes": ["a", "b"],
        "links": [{"from": "a", "to": "b", "rate_mbps": 1, "delay_ms": 1}, {"from": "b", "to": "a", **link}],
    }
    return {"duration_s": 5, "topology": {"graph": graph}, "flows": [{"from": "a", "to": "b"}]}


@pytest.mark.parametrize(
    ("where", "path"),
    [("bottleneck", "$.topology.dumbbell.bottleneck.trace"), ("graph", "$.topology.graph.links[1].trace")],
)
def test_a_trace_file_is_refused_by_the_models_before_the_core_reads_it(tmp_path, where, path):
    scenario = _with_trace_file(tmp_path, where)
    tcpsim.validate(scenario)  # the core would read the file and accept it
    with pytest.raises(ScenarioInvalid) as info:
        validate_scenario(scenario)
    (error,) = info.value.errors
    assert (error.path, error.source) == (path, "schema")
    assert "not accepted by the service" in error.reason and "server's disk" in error.reason


@pytest.mark.parametrize("where", ["bottleneck", "graph"])
def test_a_trace_file_is_refused_by_the_canonical_form_and_the_cache_key_without_the_models(tmp_path, where):
    scenario = _with_trace_file(tmp_path, where)
    for refuses in (canonical_dict, lambda s: cache_key(s, tcpsim.__version__)):
        with pytest.raises(ScenarioInvalid) as info:
            refuses(scenario)
        assert [e.reason for e in info.value.errors] == [TRACE_FILES_REFUSED]


@pytest.mark.parametrize(
    "scenario",
    [
        *SERVICE_ONLY,
        *(p.scenario for p in list_presets() if any(True for _ in link_traces(p.scenario))),
    ],
)
def test_a_named_trace_is_canonical_as_the_core_reads_its_file_with_the_contents_address_in_its_place(
    scenario, tmp_path
):
    canonical = canonical_dict(scenario)
    link = (canonical["topology"].get("dumbbell") or {}).get("bottleneck") or canonical["topology"]["graph"]["links"][0]
    named = (scenario["topology"].get("dumbbell") or {}).get("bottleneck") or scenario["topology"]["graph"]["links"][0]
    as_files = copy.deepcopy(scenario)
    files = (as_files["topology"].get("dumbbell") or {}).get("bottleneck") or as_files["topology"]["graph"]["links"][0]
    files["trace"] = {}
    for key, core_key in (("name", "file"), ("reverse_name", "reverse_file")):
        if key in named["trace"]:
            text = builtin_trace(named["trace"][key])
            assert text is not None and link["trace"][core_key] == f"sha256:{text.sha256}"
            (tmp_path / core_key).write_text(text.text)
            files["trace"][core_key] = str(tmp_path / core_key)
    core = tcpsim.normalize(as_files, canonical=True)
    core_link = (core["topology"].get("dumbbell") or {}).get("bottleneck") or core["topology"]["graph"]["links"][0]
    core_link["trace"] = link["trace"]
    assert core == canonical


def _core_expected(mutate) -> list[str]:
    """The values the core lists in its 'unknown variant ..., expected ...' error."""
    bad = copy.deepcopy(MINIMAL)
    mutate(bad)
    with pytest.raises(tcpsim.ScenarioError) as info:
        tcpsim.validate(bad)
    message = str(info.value)
    assert "unknown variant" in message, message
    return re.findall(r"`([^`]+)`", message.split("expected", 1)[1])


def _literal_tags(union: Any) -> tuple[str, ...]:
    """The `type` literals of a tagged union's members, in order."""
    while typing.get_origin(union) is typing.Annotated:
        union = typing.get_args(union)[0]
    return tuple(typing.get_args(m.model_fields["type"].annotation)[0] for m in typing.get_args(union))


def test_the_variants_are_the_cores():
    assert schema.VARIANTS == tuple(tcpsim.VARIANTS)
    assert schema.DEFAULT_VARIANT in schema.VARIANTS


@pytest.mark.parametrize(
    ("ours", "mutate"),
    [
        pytest.param(schema.LOSS_TYPES, lambda s: s["flows"][0].update(loss={"type": "?"}), id="loss"),
        pytest.param(
            schema.QUEUE_TYPES,
            lambda s: s["topology"]["dumbbell"]["bottleneck"].update(queue={"type": "?"}),
            id="queue",
        ),
        pytest.param(schema.APP_TYPES, lambda s: s["flows"][0].update(app={"type": "?"}), id="app"),
        pytest.param(schema.FLOW_TYPES, lambda s: s["flows"][0].update(type="?"), id="flow-type"),
        pytest.param(schema.RTT_SAMPLING, lambda s: s["flows"][0].update(tcp={"rtt_sampling": "?"}), id="rtt-sampling"),
        pytest.param(
            schema.RECOVER_GUARDS, lambda s: s["flows"][0].update(tcp={"recover_guard": "?"}), id="recover-guard"
        ),
        pytest.param(schema.TCP_PROFILES, lambda s: s["flows"][0].update(tcp={"profile": "?"}), id="tcp-profile"),
        pytest.param(
            schema.SACK_RECOVERIES, lambda s: s["flows"][0].update(tcp={"sack_recovery": "?"}), id="sack-recovery"
        ),
        pytest.param(
            schema.FACK_RECOVERIES, lambda s: s["flows"][0].update(tcp={"fack_recovery": "?"}), id="fack-recovery"
        ),
        pytest.param(
            schema.EVENT_SPACINGS,
            lambda s: s["flows"][0].update(loss={"type": "bernoulli_events", "p": 0.01, "m": 1, "spacing": "?"}),
            id="event-spacing",
        ),
        pytest.param(
            schema.REPEATED_TIMEOUT_SSTHRESH,
            lambda s: s["flows"][0].update(tcp={"repeated_timeout_ssthresh": "?"}),
            id="repeated-timeout",
        ),
        pytest.param(schema.TRACE_KINDS, lambda s: s.update(outputs={"trace": ["?"]}), id="trace"),
        pytest.param(schema.TOPOLOGY_KINDS, lambda s: s.update(topology={"?": {}}), id="topology"),
    ],
)
def test_every_enumeration_lists_exactly_the_cores_values(ours, mutate):
    assert list(ours) == _core_expected(mutate)


def test_the_enumeration_constants_are_the_models_tags():
    assert _literal_tags(schema.LossSpec) == schema.LOSS_TYPES
    assert _literal_tags(schema.QueueSpec) == schema.QUEUE_TYPES
    assert _literal_tags(schema.AppSpec) == schema.APP_TYPES


def _union_tags(annotation: Any) -> frozenset[str] | None:
    """The tags Pydantic puts in `loc` for a field of this annotation, if it is a tagged union."""
    args = typing.get_args(annotation)
    if typing.get_origin(annotation) is typing.Annotated:
        inner, *meta = args
        for m in meta:
            if getattr(m, "discriminator", None) == "type":
                return frozenset(_literal_tags(inner))
            if type(m).__name__ == "Discriminator":
                return frozenset(
                    a.tag
                    for member in typing.get_args(inner)
                    for a in typing.get_args(member)[1:]
                    if type(a).__name__ == "Tag"
                )
        return _union_tags(inner)
    for arg in args:
        found = _union_tags(arg)
        if found:
            return found
    return None


def test_union_tags_lists_every_tagged_union_field_of_the_models():
    found: dict[str, frozenset[str]] = {}
    for model in _models():
        for name, info in model.model_fields.items():
            annotation = info.annotation
            if info.discriminator == "type":
                tags = frozenset(_literal_tags(annotation))
            else:
                tags = _union_tags(annotation) or _union_tags(
                    typing.Annotated[annotation, *info.metadata] if info.metadata else annotation
                )
            if tags:
                assert found.setdefault(name, tags) == tags, name
    assert found == schema.UNION_TAGS


def test_the_json_schema_documents_units_and_defaults():
    s = Scenario.model_json_schema()
    tcp = s["$defs"]["TcpConfig"]["properties"]
    assert tcp["min_rto_s"]["default"] == 0.2 and "seconds" in tcp["min_rto_s"]["description"]
    link = s["$defs"]["LinkParams"]["properties"]
    assert "Mb/s" in link["rate_mbps"]["description"] and link["rate_mbps"]["anyOf"][0]["exclusiveMinimum"] == 0
    assert s["$defs"]["BernoulliEventsLoss"]["properties"]["p"]["maximum"] == 1
    assert s["$defs"]["FlowSpec"]["properties"]["variant"]["anyOf"][0]["enum"] == list(tcpsim.VARIANTS)
    assert "from" in s["$defs"]["GraphLink"]["properties"]
    assert s["additionalProperties"] is False


# ---- canonical JSON and cache keys --------------------------------------------------------------


def _shuffled(value: Any, rnd) -> Any:
    if isinstance(value, dict):
        items = list(value.items())
        rnd.shuffle(items)
        return {k: _shuffled(v, rnd) for k, v in items}
    if isinstance(value, list):
        return [_shuffled(v, rnd) for v in value]
    return value


@pytest.mark.parametrize("scenario", ALL)
def test_canonical_json_is_sorted_compact_and_the_core_reading(scenario):
    text = canonical_json(scenario)
    assert text == dumps(json.loads(text))
    outside_strings = re.sub(r'"(?:[^"\\]|\\.)*"', '""', text)
    assert not re.search(r"\s", outside_strings) and text.isascii()
    assert json.loads(text) == normalise_numbers(tcpsim.normalize(scenario))
    assert canonical_json(json.loads(text)) == text


@settings(max_examples=30, deadline=None)
@given(st.randoms(use_true_random=False), st.sampled_from(range(len(HAND_WRITTEN))))
def test_key_order_does_not_change_the_canonical_json_or_the_key(rnd, i):
    scenario = HAND_WRITTEN[i]
    shuffled = _shuffled(scenario, rnd)
    assert canonical_json(shuffled) == canonical_json(scenario)
    assert cache_key(shuffled, CORE) == cache_key(scenario, CORE)


def _floats_as_written(value: Any, as_float: bool) -> Any:
    """Every integral float as an int (as_float=False) or every float field's int as a float."""
    if isinstance(value, dict):
        return {k: _floats_as_written(v, as_float) for k, v in value.items()}
    if isinstance(value, list):
        return [_floats_as_written(v, as_float) for v in value]
    if isinstance(value, float) and not as_float and value.is_integer():
        return int(value)
    return value


@pytest.mark.parametrize("scenario", ALL)
def test_one_and_one_point_zero_and_spelled_out_defaults_give_the_same_key(scenario):
    full = tcpsim.normalize(scenario)  # floats for every float field, every default present
    ints = _floats_as_written(full, as_float=False)  # 45.0 -> 45 wherever integral
    assert typed(ints) != typed(full)  # the two really are written differently
    key = cache_key(scenario, CORE)
    assert cache_key(full, CORE) == key
    assert cache_key(ints, CORE) == key
    assert canonical_json(full) == canonical_json(ints) == canonical_json(scenario)


def normalise_numbers(value: Any) -> Any:
    """The canonical form's rule for numbers: every integral float (|x| < 2^53, exactly
    representable) as an int. `tcpsim.normalize(..., canonical=True)` applies it in the
    binding; this is what it is checked against."""
    if isinstance(value, bool) or not isinstance(value, float | dict | list | tuple):
        return value
    if isinstance(value, dict):
        return {k: normalise_numbers(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [normalise_numbers(v) for v in value]
    return int(value) if math.isfinite(value) and value.is_integer() and abs(value) < 2**53 else value


def _keys_sorted(value: Any) -> bool:
    if isinstance(value, dict):
        return list(value) == sorted(value) and all(_keys_sorted(v) for v in value.values())
    return all(_keys_sorted(v) for v in value) if isinstance(value, list) else True


# Numbers at the edges of "integral": -0.0, 2^53 (stays a float), the largest rtt, the smallest
# float, a u64 seed, a large int.
EDGE_NUMBERS = {
    **MINIMAL,
    "duration_s": 1e6,
    "warmup_s": -0.0,
    "seed": 2**64 - 1,
    "limits": {"max_wall_s": 2.0**53, "max_events": 2**60},
    "flows": [{"rtt_ms": 999999.0, "start_s": 5e-324}, {"rtt_ms": 20.5, "start_s": 9999.5}],
}


@pytest.mark.parametrize("scenario", [*ALL, pytest.param(EDGE_NUMBERS, id="edge-numbers")])
def test_the_bindings_canonical_form_is_the_python_rule_applied_to_normalize(scenario):
    """`normalize(canonical=True)` builds in Rust what `normalise_numbers(normalize(...))` gives,
    ints and floats where they were (compared as typed JSON text), keys sorted."""
    try:
        expected = normalise_numbers(tcpsim.normalize(scenario))
    except tcpsim.ScenarioError as e:
        with pytest.raises(tcpsim.ScenarioError, match=re.escape(str(e))):
            tcpsim.normalize(scenario, canonical=True)
        return
    canonical = tcpsim.normalize(scenario, canonical=True)
    assert typed(canonical) == typed(expected)
    assert _keys_sorted(canonical)


def test_numbers_are_normalised_without_losing_precision():
    assert normalise_numbers({"a": 1.0, "b": -0.0, "c": 0.1, "d": True, "e": [2.0, 2**60], "f": 1e300}) == {
        "a": 1,
        "b": 0,
        "c": 0.1,
        "d": True,
        "e": [2, 2**60],
        "f": 1e300,
    }
    assert isinstance(normalise_numbers(True), bool)
    value = {"a": [1.0, -0.0, 2.5, True, False, None, "x", (3.0, 4)], "b": {"c": 2.0**60, "d": float(2**52)}, "e": 7}
    assert normalise_numbers(value) == {
        "a": [1, 0, 2.5, True, False, None, "x", [3, 4]],
        "b": {"c": 2.0**60, "d": 2**52},
        "e": 7,
    }
    assert type(normalise_numbers({"x": True})["x"]) is bool and type(normalise_numbers([1.0])[0]) is int


CHANGES: list[tuple[str, Any]] = [
    ("seed", 2),
    ("duration_s", 6),
    ("warmup_s", 0.5),
    ("topology.dumbbell.bottleneck.rate_mbps", 10.000001),
    ("topology.dumbbell.bottleneck.delay_ms", 4),
    ("topology.dumbbell.bottleneck.queue", {"type": "red", "limit_pkts": 100}),
    ("topology.dumbbell.bottleneck.queue", {"type": "codel"}),
    ("topology.dumbbell.bottleneck.queue", {"type": "fq_codel"}),
    ("topology.dumbbell.access.rate_mbps", 100),
    ("flows[0].variant", "newreno-impatient"),
    ("flows[0].rtt_ms", 41),
    ("flows[0].rtt_ms", {"uniform": [40, 40]}),
    ("flows[0].count", 2),
    ("flows[0].tcp.min_rto_s", 1),
    ("flows[0].tcp.sack", False),
    ("flows[0].tcp.cubic.beta", 0.75),
    ("flows[0].tcp.ssdr.depth", 3),
    ("flows[0].tcp.pseudo_rate.queue_pkts", 2.5),
    ("flows[0].tcp.scalable.b", 0.2),
    ("flows[0].tcp.scalable.legacy_b", 0.125),
    ("flows[0].tcp.veno.reno_growth", True),
    ("flows[0].tcp.hybla.rtt0_ms", 50),
    ("flows[0].tcp.ledbat.target_ms", 25),
    ("flows[0].tcp.lp.threshold", 0.2),
    ("flows[0].tcp.yeah.alpha", 60),
    ("flows[0].tcp.bbr.idle_restart", True),
    ("flows[0].loss", {"type": "uniform", "rate": 0}),
    ("outputs.trace_interval_s", 1),
    ("limits.max_events", 10**9),
]


@pytest.mark.parametrize(("path", "value"), CHANGES)
def test_any_real_change_changes_the_key(path, value):
    changed = set_path(MINIMAL_FULL, path, value)
    assert cache_key(changed, CORE) != cache_key(MINIMAL, CORE)


def test_every_change_gives_a_distinct_key():
    keys = {cache_key(set_path(MINIMAL_FULL, path, value), CORE) for path, value in CHANGES}
    assert len(keys) == len(CHANGES)


def test_the_seed_is_part_of_the_key_and_an_absent_seed_is_seed_1():
    assert cache_key({**MINIMAL, "seed": 1}, CORE) == cache_key(MINIMAL, CORE)
    keys = {cache_key({**MINIMAL, "seed": seed}, CORE) for seed in range(1, 21)}
    assert len(keys) == 20


def test_the_core_version_is_part_of_the_key():
    assert cache_key(MINIMAL, "0.1.0") != cache_key(MINIMAL, "0.1.1")
    assert re.fullmatch(r"[0-9a-f]{64}", cache_key(MINIMAL, CORE))


def test_name_and_description_are_free_text_outside_the_key_but_inside_canonical_json():
    named = {**MINIMAL, "name": "x", "description": "y"}
    assert cache_key(named, CORE) == cache_key(MINIMAL, CORE)
    assert canonical_json(named) != canonical_json(MINIMAL)


def test_a_model_and_its_dict_have_the_same_canonical_form():
    model = Scenario.model_validate(HAND_WRITTEN[1])
    assert canonical_json(model) == canonical_json(HAND_WRITTEN[1])
    assert cache_key(model, CORE) == cache_key(HAND_WRITTEN[1], CORE)


def test_canonical_json_of_a_scenario_the_core_refuses_raises_scenario_invalid():
    with pytest.raises(ScenarioInvalid) as info:
        canonical_dict({**MINIMAL, "warmup_s": 5})
    assert [(e.path, e.source) for e in info.value.errors] == [("$.warmup_s", "core")]


# ---- validation errors ---------------------------------------------------------------------------


def _mutated(mutate) -> dict[str, Any]:
    bad = copy.deepcopy(HAND_WRITTEN[1])
    mutate(bad)
    return bad


def _bottleneck(s):
    return s["topology"]["dumbbell"]["bottleneck"]


SCHEMA_ERRORS = [
    pytest.param(
        lambda s: s["flows"][0]["tcp"].update(min_rto=1),
        "$.flows[0].tcp.min_rto",
        "extra_forbidden",
        id="unknown-field",
    ),
    pytest.param(
        lambda s: _bottleneck(s).update(rate_mbps="fast"),
        "$.topology.dumbbell.bottleneck.rate_mbps",
        "float_type",
        id="wrong-type",
    ),
    pytest.param(
        lambda s: _bottleneck(s).update(rate_mbps=-1),
        "$.topology.dumbbell.bottleneck.rate_mbps",
        "greater_than",
        id="negative-rate",
    ),
    pytest.param(
        lambda s: s["flows"][0]["loss"].update(p=1.5),
        "$.flows[0].loss.p",
        "less_than_equal",
        id="probability-above-one",
    ),
    pytest.param(lambda s: s["flows"][0]["loss"].update(m=0), "$.flows[0].loss.m", "greater_than_equal", id="m-zero"),
    pytest.param(
        lambda s: s["flows"][0].update(variant="cubic-ish"), "$.flows[0].variant", "literal_error", id="unknown-variant"
    ),
    pytest.param(
        lambda s: s["flows"][1]["loss"].update(type="bernoulli"),
        "$.flows[1].loss.type",
        "union_tag_invalid",
        id="unknown-loss-type",
    ),
    pytest.param(
        lambda s: _bottleneck(s)["queue"].update(limit_pkts=0),
        "$.topology.dumbbell.bottleneck.queue.limit_pkts",
        "greater_than_equal",
        id="queue-limit-zero",
    ),
    pytest.param(
        lambda s: _bottleneck(s).update(queue={"type": "codel", "target_ms": 0}),
        "$.topology.dumbbell.bottleneck.queue.target_ms",
        "greater_than_equal",
        id="codel-target-zero",
    ),
    pytest.param(
        lambda s: _bottleneck(s).update(queue={"type": "pie", "t_update_ms": 1e-4}),
        "$.topology.dumbbell.bottleneck.queue.t_update_ms",
        "greater_than_equal",
        id="pie-update-below-a-microsecond",
    ),
    pytest.param(
        lambda s: _bottleneck(s).update(queue={"type": "dualpi2", "classic_weight": 1.5}),
        "$.topology.dumbbell.bottleneck.queue.classic_weight",
        "less_than_equal",
        id="dualpi2-classic-weight-above-one",
    ),
    pytest.param(
        lambda s: _bottleneck(s).update(queue={"type": "fq_codel", "flows": 0}),
        "$.topology.dumbbell.bottleneck.queue.flows",
        "greater_than_equal",
        id="fq-codel-no-flows",
    ),
    pytest.param(
        lambda s: _bottleneck(s)["reverse_loss"].update(loss_bad=2),
        "$.topology.dumbbell.bottleneck.reverse_loss.loss_bad",
        "less_than_equal",
        id="reverse-loss",
    ),
    pytest.param(
        lambda s: s["flows"][0]["rtt_ms"].update(uniform=[20, -1]),
        "$.flows[0].rtt_ms.uniform[1]",
        "greater_than_equal",
        id="uniform-bound",
    ),
    pytest.param(
        lambda s: s["flows"][0].update(start_s=-1), "$.flows[0].start_s", "greater_than_equal", id="negative-start"
    ),
    pytest.param(
        lambda s: s["flows"][0]["tcp"].update(mss_bytes=1460.0),
        "$.flows[0].tcp.mss_bytes",
        "int_type",
        id="float-for-an-integer",
    ),
    pytest.param(
        lambda s: s["flows"][0]["tcp"].update(delayed_ack=1),
        "$.flows[0].tcp.delayed_ack",
        "bool_type",
        id="number-for-a-boolean",
    ),
    pytest.param(
        lambda s: s["flows"][1]["app"].update(shape=1), "$.flows[1].app.shape", "greater_than", id="pareto-shape"
    ),
    pytest.param(
        lambda s: s["flows"][1]["loss"].update(packets=[1, 0]),
        "$.flows[1].loss.packets[1]",
        "greater_than_equal",
        id="scheduled-packet-zero",
    ),
    pytest.param(lambda s: s.update(seed=-1), "$.seed", "greater_than_equal", id="negative-seed"),
    pytest.param(lambda s: s.update(duration_s=float("nan")), "$.duration_s", "finite_number", id="nan"),
    pytest.param(
        lambda s: s["outputs"].update(trace=["rtt"]), "$.outputs.trace[0]", "literal_error", id="unknown-trace"
    ),
    pytest.param(lambda s: s.update(flows=[]), "$.flows", "too_short", id="no-flows"),
    pytest.param(
        lambda s: s["flows"][0]["tcp"].update(min_rto_s=1e-7),
        "$.flows[0].tcp.min_rto_s",
        "greater_than_equal",
        id="timer-below-a-microsecond",
    ),
    pytest.param(
        lambda s: s["outputs"].update(trace_interval_s=1e-7),
        "$.outputs.trace_interval_s",
        "greater_than_equal",
        id="trace-interval-below-a-microsecond",
    ),
    pytest.param(
        lambda s: s["flows"][0]["tcp"].update(cubic={"beta": 1.0}),
        "$.flows[0].tcp.cubic.beta",
        "less_than",
        id="cubic-beta-one",
    ),
    pytest.param(
        lambda s: s["flows"][0]["tcp"].update(bbr={"pacing_margin": 1.0}),
        "$.flows[0].tcp.bbr.pacing_margin",
        "less_than",
        id="bbr-pacing-margin-one",
    ),
    pytest.param(
        lambda s: s["flows"][0]["tcp"].update(bbr={"ack_aggregation": {"window_rounds": 0}}),
        "$.flows[0].tcp.bbr.ack_aggregation.window_rounds",
        "greater_than_equal",
        id="bbr-aggregation-window-zero",
    ),
    pytest.param(
        lambda s: s["flows"][0]["tcp"].update(cubic={"c": 0}),
        "$.flows[0].tcp.cubic.c",
        "greater_than",
        id="cubic-c-zero",
    ),
    pytest.param(
        lambda s: s["flows"][0]["tcp"].update(ssdr={"grain": 0}),
        "$.flows[0].tcp.ssdr.grain",
        "greater_than_equal",
        id="ssdr-grain-zero",
    ),
    pytest.param(
        lambda s: s["flows"][0]["tcp"].update(ssdr={"depth": 31}),
        "$.flows[0].tcp.ssdr.depth",
        "less_than_equal",
        id="ssdr-depth-too-deep",
    ),
    pytest.param(
        lambda s: s["flows"][0]["tcp"].update(pseudo_rate={"queue_pkts": -1.0}),
        "$.flows[0].tcp.pseudo_rate.queue_pkts",
        "greater_than",
        id="pseudo-rate-queue-negative",
    ),
    pytest.param(
        lambda s: s["flows"][0]["tcp"].update(ledbat={"target_ms": 0}),
        "$.flows[0].tcp.ledbat.target_ms",
        "greater_than",
        id="ledbat-target-zero",
    ),
    pytest.param(
        lambda s: s["flows"][0]["tcp"].update(scalable={"b": 1.0}),
        "$.flows[0].tcp.scalable.b",
        "less_than",
        id="scalable-b-one",
    ),
    pytest.param(
        lambda s: s["flows"][0]["tcp"].update(yeah={"gamma": 0}),
        "$.flows[0].tcp.yeah.gamma",
        "greater_than_equal",
        id="yeah-gamma-zero",
    ),
]


@pytest.mark.parametrize(("mutate", "path", "kind"), SCHEMA_ERRORS)
def test_the_schema_names_the_field_as_the_core_would(mutate, path, kind):
    bad = _mutated(mutate)
    with pytest.raises(ScenarioInvalid) as info:
        validate_scenario(bad)
    assert [(e.path, e.source, e.kind) for e in info.value.errors] == [(path, "schema", kind)]
    assert path in str(info.value)
    # The core, given the same input, names the same field (it refuses NaN as unparseable JSON
    # at the field, and an empty flow list at $.flows too).
    with pytest.raises(tcpsim.ScenarioError) as core:
        tcpsim.validate(bad)
    assert core.value.path == path


def test_the_schema_reports_every_problem_at_once():
    def mutate(s):
        s["flows"][0]["loss"]["m"] = 0
        s["flows"][2]["app"]["rate_mbps"] = 0
        s["topology"]["dumbbell"]["access"]["speed"] = 1

    with pytest.raises(ScenarioInvalid) as info:
        validate_scenario(_mutated(mutate))
    assert sorted(e.path for e in info.value.errors) == [
        "$.flows[0].loss.m",
        "$.flows[2].app.rate_mbps",
        "$.topology.dumbbell.access.speed",
    ]


@pytest.mark.parametrize(
    ("mutate", "path", "reason"),
    [
        pytest.param(lambda s: s.pop("topology"), "$.topology", "missing field `topology`", id="missing"),
        pytest.param(
            lambda s: s["flows"][0]["loss"].pop("type"), "$.flows[0].loss", "missing field `type`", id="missing-tag"
        ),
        pytest.param(lambda s: s.update(topology={}), "$.topology", "dumbbell", id="empty-topology"),
        pytest.param(
            lambda s: s["flows"][0]["rtt_ms"].update(extra=1),
            "$.flows[0].rtt_ms.extra",
            "unknown field",
            id="extra-key-in-a-distribution",
        ),
        pytest.param(
            lambda s: s["flows"][0].update({"odd key": 1}), '$.flows[0]["odd key"]', "unknown field", id="quoted-key"
        ),
    ],
)
def test_schema_errors_the_core_words_differently_still_name_the_field(mutate, path, reason):
    with pytest.raises(ScenarioInvalid) as info:
        validate_scenario(_mutated(mutate))
    (error,) = info.value.errors
    assert (error.path, error.source) == (path, "schema")
    assert reason in error.reason


CORE_ERRORS = [
    pytest.param(lambda s: s.update(warmup_s=30), "$.warmup_s", "duration_s", id="warmup-not-below-duration"),
    pytest.param(
        lambda s: s["flows"][1].update(rtt_ms=5),
        "$.flows[1].rtt_ms",
        "twice the bottleneck delay",
        id="rtt-below-twice-the-delay",
    ),
    pytest.param(lambda s: s["flows"][1].update(name="cbr"), "$.flows[2].name", "used twice", id="duplicate-name"),
    pytest.param(
        lambda s: _bottleneck(s)["queue"].update(max_th_pkts=5),
        "$.topology.dumbbell.bottleneck.queue.max_th_pkts",
        "above min_th_pkts",
        id="red-thresholds",
    ),
    pytest.param(
        lambda s: s["flows"][1].update(type="udp"), "$.flows[1].app", "UDP flows carry a cbr app", id="udp-without-cbr"
    ),
    pytest.param(
        lambda s: s["flows"][3]["loss"].update(end_s=0.5),
        "$.flows[3].loss.end_s",
        "start_s",
        id="outage-ends-before-it-starts",
    ),
    pytest.param(
        lambda s: s["flows"][0]["tcp"].update(min_rto_s=100),
        "$.flows[0].tcp.max_rto_s",
        "min_rto_s",
        id="min-rto-above-max",
    ),
    pytest.param(
        lambda s: (
            _bottleneck(s).pop("rate_mbps")
            and _bottleneck(s).update(schedule={"rate_mbps": {"points": [[0, 10], [1, 0]]}})
        ),
        "$.topology.dumbbell.bottleneck.schedule.rate_mbps.points[1][1]",
        "the last rate must be above 0",
        id="rate-schedule-ending-in-a-blackout",
    ),
    pytest.param(
        lambda s: _bottleneck(s).update(schedule={"rate_mbps": {"points": [[0, 10]]}}),
        "$.topology.dumbbell.bottleneck.schedule.rate_mbps",
        "not both",
        id="rate-and-rate-schedule",
    ),
    pytest.param(
        lambda s: _bottleneck(s)["schedule"].update(extra_delay_ms={"points": [[0, 1], [2, -1]]}),
        "$.topology.dumbbell.bottleneck.schedule.extra_delay_ms.points[1][1]",
        "between 0 and",
        id="negative-extra-delay",
    ),
    pytest.param(
        lambda s: s["flows"][0].update(loss={"type": "schedule", "rate": {"points": [[0, 0], [3, 1.5]]}}),
        "$.flows[0].loss.rate.points[1][1]",
        "between 0 and 1",
        id="loss-probability-above-one",
    ),
    pytest.param(
        lambda s: s["flows"][0].update(variant="sack") or s["flows"][0]["tcp"].update(sack=False),
        "$.flows[0].tcp.sack",
        "sack off",
        id="sack-variant-without-sack",
    ),
]


@pytest.mark.parametrize(("mutate", "path", "words"), CORE_ERRORS)
def test_what_only_the_core_can_check_comes_back_with_the_cores_path(mutate, path, words):
    with pytest.raises(ScenarioInvalid) as info:
        validate_scenario(_mutated(mutate))
    (error,) = info.value.errors
    assert (error.path, error.source, error.kind) == (path, "core", "invalid")
    assert words in error.reason
    assert not error.reason.startswith("invalid scenario at")


def test_a_valid_scenario_gives_the_model_and_the_canonical_dict():
    model, canonical = validate_scenario(HAND_WRITTEN[1])
    assert isinstance(model, Scenario)
    assert canonical == json.loads(canonical_json(HAND_WRITTEN[1]))
    assert canonical["flows"][1]["tcp"]["min_rto_s"] == 0.2  # a default, filled in
    assert validate_scenario(model)[1] == canonical


@pytest.mark.parametrize("value", [None, [], "{}", 3])
def test_anything_but_an_object_is_refused_at_the_root(value):
    with pytest.raises(ScenarioInvalid) as info:
        validate_scenario(value)
    assert info.value.errors[0].path == "$"


def test_scenario_invalid_is_a_value_error_with_its_errors_as_plain_dicts():
    with pytest.raises(ValueError) as info:
        validate_scenario({**MINIMAL, "warmup_s": 9})
    assert info.value.as_list() == [
        {"path": "$.warmup_s", "reason": info.value.errors[0].reason, "source": "core", "kind": "invalid"}
    ]


@pytest.mark.parametrize(
    ("loc", "path"),
    [
        ((), "$"),
        (("duration_s",), "$.duration_s"),
        (("flows", 0, "loss", "bernoulli_events", "m"), "$.flows[0].loss.m"),
        (
            ("topology", "dumbbell", "dumbbell", "bottleneck", "queue", "red", "max_p"),
            "$.topology.dumbbell.bottleneck.queue.max_p",
        ),
        (("flows", 2, "rtt_ms", "uniform", "uniform", 0), "$.flows[2].rtt_ms.uniform[0]"),
        (("flows", 2, "start_s", "fixed"), "$.flows[2].start_s"),
        # An unknown key named like a tag inside a tagged object is kept.
        (("flows", 0, "app", "http", "http"), "$.flows[0].app.http"),
        (("flows", 0, "a.b"), '$.flows[0]["a.b"]'),
    ],
)
def test_pydantic_locations_become_core_style_paths(loc, path):
    assert json_path(loc) == path


# ---- override paths ---------------------------------------------------------------------------


def test_paths_read_and_write_the_documented_examples():
    s = list_presets()[0].build()
    assert get_path(s, "duration_s") == 1000
    assert get_path(s, "flows[0].loss.m") == 10
    assert get_path(s, "flows[*].variant") == ["newreno-sbs", "newreno-impatient"]
    assert get_path(s, "topology.dumbbell.bottleneck.queue.type") == "droptail"
    assert get_path(s, "$.flows[1].tcp.min_rto_s") == 0.2
    changed = apply_overrides(s, {"flows[*].loss.m": 20, "topology.dumbbell.bottleneck.queue.type": "red"})
    assert get_path(changed, "flows[*].loss.m") == [20, 20]
    assert get_path(s, "flows[*].loss.m") == [10, 10]
    assert expand(s, "flows[*].loss.p") == ["flows[0].loss.p", "flows[1].loss.p"]


@pytest.mark.parametrize(
    ("path", "words"),
    [
        ("flows[5].loss.m", "flows[5] does not exist"),
        ("flows[0].loss.x.y", "flows[0].loss.x does not exist"),
        ("duration_s.x", "duration_s is a number"),
        ("flows.x", "flows is a list"),
        ("topology[0]", "topology is an object"),
        ("duration_s[*]", "[*] needs a list"),
    ],
)
def test_a_path_that_does_not_exist_is_an_error_naming_it(path, words):
    s = list_presets()[0].build()
    before = copy.deepcopy(s)
    with pytest.raises(PathError) as info:
        apply_overrides(s, {"seed": 5, path: 1})
    assert path in str(info.value) and words in str(info.value)
    assert s == before


def test_a_wildcard_path_must_exist_in_every_element():
    s = {"flows": [{"loss": {"m": 1}}, {"name": "b"}]}
    with pytest.raises(PathError) as info:
        apply_overrides(s, {"flows[*].loss.m": 3})
    assert info.value.at == "flows[1]" and "flows[1].loss does not exist" in str(info.value)


def test_the_last_key_may_be_new_so_an_optional_field_can_be_set():
    s = list_presets()[2].build()
    assert "stop_s" not in s["flows"][0]
    assert apply_overrides(s, {"flows[0].stop_s": 500})["flows"][0]["stop_s"] == 500


@pytest.mark.parametrize(
    "path", ["", "$", ".a", "a.", "a..b", "a[", "a[x]", "a[-1]", "a b", "a[1]b", '["unclosed]', '["a\\"]']
)
def test_a_path_that_does_not_parse_is_an_error(path):
    with pytest.raises(PathError):
        parse_path(path)


def test_parse_understands_indices_wildcards_quotes_and_the_root():
    assert parse_path("flows[*].loss.m") == ("flows", WILDCARD, "loss", "m")
    assert parse_path("$.flows[10]") == ("flows", 10)
    assert parse_path('a["b.c"]["d\\"e"]') == ("a", "b.c", 'd"e')
    assert parse_path("[0].x") == (0, "x")


# Documents of JSON values with identifier keys and awkward ones.
KEYS = st.one_of(st.from_regex(r"[a-z_][a-z0-9_\-]{0,6}", fullmatch=True), st.text(max_size=5))
LEAVES = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=5))
DOCS = st.recursive(
    LEAVES,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(KEYS, inner, max_size=4)),
    max_leaves=12,
)
OBJECTS = st.dictionaries(KEYS, DOCS, min_size=1, max_size=5)


def _all_paths(doc: Any, prefix: tuple = ()) -> list[tuple]:
    out = []
    if isinstance(doc, dict):
        for k, v in doc.items():
            out.append((*prefix, k))
            out += _all_paths(v, (*prefix, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out.append((*prefix, i))
            out += _all_paths(v, (*prefix, i))
    return out


def _value_at(doc: Any, steps: tuple) -> Any:
    for s in steps:
        doc = doc[s]
    return doc


@FAST
@given(OBJECTS)
def test_every_path_of_a_document_formats_parses_and_reads_back(doc):
    for steps in _all_paths(doc):
        text = format_path(steps)
        assert parse_path(text) == steps
        assert parse_path("$." + text if not text.startswith("[") else "$" + text) == steps
        assert get_path(doc, text) == _value_at(doc, steps)


@FAST
@given(OBJECTS, st.data())
def test_set_changes_exactly_one_place_and_never_the_input(doc, data):
    steps = data.draw(st.sampled_from(_all_paths(doc)))
    value = data.draw(DOCS)
    before = copy.deepcopy(doc)
    changed = set_path(doc, format_path(steps), value)
    assert doc == before
    assert _value_at(changed, steps) == value
    # Putting the old value back restores the document: nothing else moved.
    assert set_path(changed, format_path(steps), _value_at(doc, steps)) == doc


@FAST
@given(OBJECTS, st.data())
def test_overrides_of_different_leaves_commute(doc, data):
    leaves = [p for p in _all_paths(doc) if not isinstance(_value_at(doc, p), dict | list)]
    if len(leaves) < 2:
        return
    a, b = data.draw(st.lists(st.sampled_from(leaves), min_size=2, max_size=2, unique=True))
    overrides = {format_path(a): "A", format_path(b): "B"}
    assert apply_overrides(doc, overrides) == apply_overrides(doc, dict(reversed(overrides.items())))


@FAST
@given(st.lists(st.fixed_dictionaries({"x": LEAVES, "y": LEAVES}), min_size=0, max_size=5), LEAVES)
def test_a_wildcard_sets_every_element_as_the_indices_would(items, value):
    doc = {"flows": items}
    by_index = apply_overrides(doc, {f"flows[{i}].x": value for i in range(len(items))})
    assert apply_overrides(doc, {"flows[*].x": value}) == by_index
    assert get_path(by_index, "flows[*].x") == [value] * len(items)


@FAST
@given(OBJECTS, LEAVES)
def test_the_result_shares_nothing_mutable_with_the_value(doc, value):
    key = next(iter(doc))
    holder = {"v": value}
    changed = apply_overrides(doc, {format_path((key,)): holder})
    changed[key]["v"] = "changed"
    assert holder == {"v": value}


def test_the_tcp_profiles_are_the_cores_and_a_field_given_beside_one_wins():
    assert set(schema.TCP_PROFILES) == set(tcpsim.TCP_PROFILES)
    scenario = {
        "duration_s": 5,
        "topology": _dumbbell(),
        "flows": [{"rtt_ms": 40, "tcp": {"profile": "ns2", "max_window_pkts": 64}}],
    }
    tcp = Scenario.model_validate(scenario).flows[0].tcp
    assert (tcp.profile, tcp.max_window_pkts, tcp.limited_transmit) == ("ns2", 64, True)
    assert tcp.recover_guard == tcpsim.TCP_PROFILES["ns2"]["recover_guard"] == "ack_passes_recover"
