"""Canonical JSON of a scenario, and the cache key of a run.

Two scenarios that mean the same run must give the same text, whatever their key order, the
defaults they spell out or leave out, and whether a number was written `1` or `1.0`:

1. the core reads the scenario and writes it back with every default filled in
   (`tcpsim.normalize`, the simulator's own reading, so no default can differ from the one
   that will run);
2. numbers are normalised: a float with an integral value is written as an integer (`45.0`
   -> `45`, `-0.0` -> `0`), any other float in its shortest round-trip form;
3. the result is dumped with sorted keys, compact separators and ASCII only.

A run's cache key hashes that text with the core version (see `cache_key`): the same key is
never simulated twice.

A link's trace named in the service (`"trace": {"name": N}`) is resolved first, by a
`TraceFiles` function the caller gives, to a local file holding its content, which the core
validates; the canonical scenario then holds the content's address in its place,
`{"file": "sha256:<hex>"}` (services/traces/refs.py). The scenario and its key depend on the
trace's content, never on its name or a path; the worker swaps each address for a file
holding that content just before the core runs (services/traces/files.py).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

import tcpsim
from services.scenarios.errors import FieldError, ScenarioInvalid, from_core_error
from services.scenarios.schema import TRACE_FILES_REFUSED, Scenario
from services.traces.builtin import builtin_trace_file
from services.traces.refs import TraceFiles, link_traces, trace_address

__all__ = [
    "CACHE_KEY_VERSION",
    "cache_key",
    "canonical_dict",
    "canonical_json",
    "dumps",
    "key_of_canonical",
    "SeedTemplate",
]

CACHE_KEY_VERSION = "tcplab-run-key/1"
"""Changes whenever the way keys are computed changes, so old and new keys never collide."""

# Free text the core ignores: it does not change a run's result, so it does not change its key.
_IGNORED_BY_THE_CORE = ("name", "description")


def dumps(value: Any) -> str:
    """Sorted keys, no spaces, ASCII: the one JSON spelling of `value` (numbers as given)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False)


def _as_input(scenario: dict[str, Any] | Scenario, traces: TraceFiles) -> tuple[dict[str, Any], dict[str, str]]:
    """The scenario for `normalize`, and the trace files it names -> their content addresses."""
    data = scenario.model_dump(mode="json", exclude_none=True) if isinstance(scenario, Scenario) else scenario
    if not any(True for _ in link_traces(data)):
        return data, {}
    data = json.loads(dumps(data))  # a copy, so the caller's scenario keeps its names
    return data, _resolve_trace_names(data, traces)


def _resolve_trace_names(data: Any, traces: TraceFiles) -> dict[str, str]:
    """Each link's `{"name": N, "reverse_name"?: M}` becomes `{"file": <N's file>, ...}` for the
    core to validate; returns each file's content address, which the canonical scenario holds
    in its place. The core reads a link's `trace.file` from its own disk: a scenario that did
    not come through the models must not carry a path of its own either."""
    addresses: dict[str, str] = {}
    refused: list[FieldError] = []
    for path, trace in link_traces(data):
        if not isinstance(trace, dict) or "file" in trace or "reverse_file" in trace or "name" not in trace:
            refused.append(FieldError(path=path, reason=TRACE_FILES_REFUSED, source="schema", kind="value_error"))
            continue
        resolved: dict[str, str] = {}
        for key, core_key in (("name", "file"), ("reverse_name", "reverse_file")):
            if key not in trace:
                continue
            name = trace[key]
            found = traces(name) if isinstance(name, str) else None
            if found is None:
                refused.append(
                    FieldError(
                        path=f"{path}.{key}",
                        reason=f"no trace named {name!r}: upload it (PUT /v1/traces/{{name}}) or name a built-in "
                        "one (GET /v1/traces)",
                        source="schema",
                        kind="unknown_trace",
                    )
                )
                continue
            sha256, file = found
            resolved[core_key] = str(file)
            addresses[str(file)] = trace_address(sha256)
        trace.clear()
        trace.update(resolved)
    if refused:
        raise ScenarioInvalid(refused)
    return addresses


def _addressed(canonical: dict[str, Any], addresses: dict[str, str]) -> dict[str, Any]:
    """The core's reading with each trace file replaced by its content's address."""
    for _, trace in link_traces(canonical):
        for key in ("file", "reverse_file"):
            if key in trace:
                trace[key] = addresses[trace[key]]
    return canonical


def canonical_dict(scenario: dict[str, Any] | Scenario, traces: TraceFiles = builtin_trace_file) -> dict[str, Any]:
    """The scenario as the core reads it (every default filled in), numbers normalised, each
    named trace resolved by `traces` to its content's address (by default: the built-in
    traces only; a user's own through `services.traces.service.trace_files`).

    Raises `ScenarioInvalid` when a trace name is unknown or the core refuses the scenario.
    """
    try:
        # Integral floats below 2^53 come back as ints: `1.0` and `1` are the same scenario
        # (tests/services/test_scenarios.py holds the rule and checks the binding against it).
        data, addresses = _as_input(scenario, traces)
        return _addressed(tcpsim.normalize(data, canonical=True), addresses)
    except tcpsim.ScenarioError as e:
        raise from_core_error(e) from None


def canonical_json(scenario: dict[str, Any] | Scenario) -> str:
    """The canonical JSON text of a scenario (see the module docstring).

    Key order, spelled-out defaults and `1` against `1.0` do not change it; any change to a
    value the core reads does. Raises `ScenarioInvalid` when the core refuses the scenario.
    """
    return dumps(canonical_dict(scenario))


def cache_key(scenario: dict[str, Any] | Scenario, core_version: str) -> str:
    """The key of a run: sha256 (hex) of the canonical scenario and the core version.

    The seed is part of the scenario (`seed`, 1 when absent), so it is inside the canonical
    JSON and changes the key with no separate argument; a scenario without a seed and the same
    scenario with `"seed": 1` are the same run and share a key. `name` and `description` are
    left out: the core ignores them, so a preset run and the same scenario written by hand
    share a result. `outputs` (traces) and `limits` stay in: they change what a run returns.

    Pass the version of the core that will run it (`tcpsim.__version__`): results are only
    bit-identical for the same core version.
    """
    return key_of_canonical(canonical_dict(scenario), core_version)


def key_of_canonical(canonical: dict[str, Any], core_version: str) -> str:
    """`cache_key` for a scenario already in canonical form (`canonical_dict`)."""
    body = {k: v for k, v in canonical.items() if k not in _IGNORED_BY_THE_CORE}
    text = f"{CACHE_KEY_VERSION}\ncore {core_version}\n{dumps(body)}"
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# A value no scenario holds, put where the seed goes: the text around it is the same for every
# seed, since keys are sorted and the seed is a top-level key.
_SEED_MARK = "\x00tcplab-seed\x00"
_SEED_TEXT = f'"seed":{dumps(_SEED_MARK)}'


def _around_the_seed(value: Mapping[str, Any]) -> tuple[str, str]:
    """`dumps({**value, "seed": s})` is `head + str(s) + tail` for every int `s`."""
    text = dumps({**value, "seed": _SEED_MARK})
    head, sep, tail = text.partition(_SEED_TEXT)
    if not sep or _SEED_TEXT in tail:
        raise ValueError("the seed's place in the scenario text is not unique")
    return head + '"seed":', tail


class SeedTemplate:
    """One canonical scenario under many seeds (a sweep point's replications), written and
    keyed without rebuilding it per seed: `key(s)` is `key_of_canonical({**canonical, "seed":
    s}, core_version)`, character for character, for any int seed `s` (JSON writes an int as
    `str(s)`); only the text around the seed is built and hashed once. `unseeded` is JSON text
    of the canonical scenario without its seed (what a sweep point stores for its runs), cut
    from the same text rather than written again."""

    __slots__ = ("_hashed_head", "_key_tail", "unseeded")

    def __init__(self, canonical: Mapping[str, Any], core_version: str) -> None:
        body = {k: v for k, v in canonical.items() if k not in _IGNORED_BY_THE_CORE}
        head, self._key_tail = _around_the_seed(body)
        self._hashed_head = hashlib.sha256(f"{CACHE_KEY_VERSION}\ncore {core_version}\n{head}".encode())
        # The body's text with `"seed":` and its value cut out (a comma before it, or after it
        # when it is the first key), and the free text the key leaves out put first (stored as
        # JSONB, whose value does not depend on key order).
        if head.endswith(',"seed":'):
            body_text = head[: -len(',"seed":')] + self._key_tail
        else:
            body_text = head[: -len('"seed":')] + self._key_tail.removeprefix(",")
        free = {k: canonical[k] for k in _IGNORED_BY_THE_CORE if k in canonical}
        self.unseeded = (
            "{" + dumps(free)[1:-1] + ("," if body_text != "{}" else "") + body_text[1:] if free else body_text
        )

    def key(self, seed: int) -> str:
        digest = self._hashed_head.copy()
        digest.update(f"{int(seed)}{self._key_tail}".encode())
        return digest.hexdigest()
