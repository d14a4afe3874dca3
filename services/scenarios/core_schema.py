"""The core's own description of the scenario format, read through the binding.

`tcpsim.scenario_schema()` is JSON Schema generated from the core's serde types
(`simulator/core/src/scenario.rs`, schemars): the one source of every field, enum and default.
The service takes its plain string enumerations (variants, RTT sampling, TCP profiles, trace
kinds, ...) from it, so a value added to the core needs no edit here, and
`tests/services/test_scenario_drift.py` walks it beside the Pydantic models of
`services.scenarios.schema` to fail on any field, requiredness, type, tag or default that drifts.
"""

from __future__ import annotations

from typing import Any

import tcpsim

__all__ = ["CORE_SCHEMA", "definition", "resolve", "strings", "without_null"]

CORE_SCHEMA: dict[str, Any] = tcpsim.scenario_schema()
"""The scenario's JSON Schema as the installed core generates it (`tcpsim schema` prints it)."""


def resolve(node: dict[str, Any]) -> dict[str, Any]:
    """The node a `$ref` points to (`#/$defs/<Name>`), or the node itself."""
    while "$ref" in node:
        node = definition(node["$ref"].rsplit("/", 1)[-1])
    return node


def definition(name: str) -> dict[str, Any]:
    """A named type of the core's schema (`QueueSpec`, `TcpConfig`, ...)."""
    try:
        return CORE_SCHEMA["$defs"][name]
    except KeyError:
        raise LookupError(f"the core's scenario schema has no type {name!r}") from None


def without_null(node: dict[str, Any]) -> dict[str, Any]:
    """The non-null alternative of an optional field (`["number", "null"]`, `anyOf [X, null]`)."""
    node = resolve(node)
    if isinstance(node.get("type"), list) and "null" in node["type"]:
        rest = [t for t in node["type"] if t != "null"]
        node = {**node, "type": rest[0] if len(rest) == 1 else rest}
        if "enum" in node:
            node["enum"] = [v for v in node["enum"] if v is not None]
    options = node.get("anyOf")
    if options and any(o.get("type") == "null" for o in options):
        rest = [o for o in options if o.get("type") != "null"]
        if len(rest) == 1:
            return without_null(rest[0])
    return node


def strings(node: dict[str, Any]) -> tuple[str, ...]:
    """The values of a string enumeration, in the core's order: serde's unit variants come as
    `enum`, or as `oneOf` of `const`s (and `enum`s) when they carry doc comments."""
    node = without_null(node)
    if "enum" in node:
        return tuple(node["enum"])
    if "const" in node:
        return (node["const"],)
    if "oneOf" in node:
        return tuple(value for option in node["oneOf"] for value in strings(option))
    raise LookupError(f"not a string enumeration: {node}")
