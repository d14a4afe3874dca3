"""The Pydantic scenario models cannot drift from the core's serde types.

The core generates its scenario format as JSON Schema (`tcpsim.scenario_schema()`, schemars).
This walks every Pydantic model of `services.scenarios.schema` beside it, from `Scenario` down,
and lists every difference: a field only one side has, requiredness, the JSON type, an integer
range the core cannot hold, a union's tags, an enumeration's values, a default. One test, so a
change to the core that is not mirrored fails here naming the field path.
"""

from __future__ import annotations

import copy
import types
import typing
from typing import Any

import annotated_types
import pytest
from pydantic import BaseModel, TypeAdapter

from services.scenarios import schema
from services.scenarios.core_schema import CORE_SCHEMA, definition, resolve, strings, without_null

_ABSENT = object()
_INTEGER_FORMATS = {"uint32": (0, 2**32 - 1), "uint64": (0, 2**64 - 1), "int32": (-(2**31), 2**31 - 1)}
_SCALARS = {bool: "boolean", int: "integer", float: "number", str: "string"}


def _unwrap(annotation: Any) -> tuple[Any, list[Any]]:
    """The annotation without `Annotated` layers, and their metadata (outermost first)."""
    metadata: list[Any] = []
    while typing.get_origin(annotation) is typing.Annotated:
        annotation, *meta = typing.get_args(annotation)
        metadata.extend(meta)
    return annotation, metadata


def _members(annotation: Any) -> list[Any]:
    """A union's members without None and without the service's own extensions of the format
    (`schema.SERVICE_EXTENSIONS`, resolved before the core reads a scenario), nested unions
    flattened; any other annotation alone."""
    bare, _ = _unwrap(annotation)
    if typing.get_origin(bare) in (typing.Union, types.UnionType):
        return [
            m
            for member in typing.get_args(bare)
            if member is not type(None) and _unwrap(member)[0] not in schema.SERVICE_EXTENSIONS
            for m in _members(member)
        ]
    return [annotation]


def _bounds(metadata: list[Any]) -> tuple[float | None, float | None]:
    """The inclusive integer range Pydantic enforces, from `Field(ge=..., le=...)` metadata."""
    low = high = None
    for item in metadata:
        for constraint in getattr(item, "metadata", [item]):
            if isinstance(constraint, annotated_types.Ge):
                low = constraint.ge
            elif isinstance(constraint, annotated_types.Gt):
                low = constraint.gt + 1
            elif isinstance(constraint, annotated_types.Le):
                high = constraint.le
            elif isinstance(constraint, annotated_types.Lt):
                high = constraint.lt - 1
    return low, high


def _option_key(core: dict[str, Any]) -> Any:
    """How a union's alternative is told apart: its `type` tag, its property names, or its JSON type."""
    core = without_null(core)
    properties = core.get("properties")
    if properties is not None:
        tag = properties.get("type", {}).get("const")
        return tag if tag is not None else frozenset(properties)
    return core.get("type")


def _member_key(member: Any) -> Any:
    member, _ = _unwrap(member)
    if isinstance(member, type) and issubclass(member, BaseModel):
        tag = member.model_fields.get("type")
        if tag is not None:
            return typing.get_args(tag.annotation)[0]
        return frozenset(f.alias or name for name, f in member.model_fields.items())
    return _SCALARS.get(member, repr(member))


def _check_value(
    annotation: Any, core: dict[str, Any], path: str, problems: list[str], metadata: tuple[Any, ...] = ()
) -> None:
    """`metadata`: the constraints Pydantic moved off a field's annotation (`FieldInfo.metadata`)."""
    members = _members(annotation)
    core = without_null(core)
    alternatives = core.get("oneOf") or core.get("anyOf")
    if len(members) > 1 or (alternatives and not all("const" in a or "enum" in a for a in alternatives)):
        if not alternatives:
            problems.append(f"{path}: a union here, not in the core")
            return
        ours = {_member_key(m): m for m in members}
        theirs = {_option_key(a): a for a in alternatives}
        if set(ours) != set(theirs):
            problems.append(
                f"{path}: alternatives {sorted(map(str, ours))} here, {sorted(map(str, theirs))} in the core"
            )
        for key in set(ours) & set(theirs):
            _check_value(
                ours[key], theirs[key], f"{path}<{key if isinstance(key, str) else '|'.join(sorted(key))}>", problems
            )
        return
    member, inner = _unwrap(members[0])
    _, outer = _unwrap(annotation)
    constraints = [*metadata, *outer, *inner]
    if isinstance(member, type) and issubclass(member, BaseModel):
        _check_model(member, core, path, problems)
    elif typing.get_origin(member) is typing.Literal:
        values = typing.get_args(member)
        if "const" in core or "enum" in core or "oneOf" in core:
            if values != strings(core):
                problems.append(f"{path}: values {values} here, {strings(core)} in the core")
        else:
            problems.append(f"{path}: a literal {values} here, {core.get('type')} in the core")
    elif typing.get_origin(member) is list:
        if core.get("type") != "array":
            problems.append(f"{path}: a list here, {core.get('type')} in the core")
            return
        (item,) = typing.get_args(member)
        _check_value(item, core["items"], f"{path}[]", problems)
    elif member in _SCALARS:
        expected = _SCALARS[member]
        if core.get("type") != expected:
            problems.append(f"{path}: {expected} here, {core.get('type')} in the core")
        elif expected == "integer":
            low, high = _bounds(constraints)
            core_low, core_high = _INTEGER_FORMATS.get(core.get("format", ""), (None, None))
            if core_low is not None and (low is None or low < core_low or high is None or high > core_high):
                problems.append(
                    f"{path}: accepts [{low}, {high}] here, the core's {core['format']} holds [{core_low}, {core_high}]"
                )
    else:
        problems.append(f"{path}: cannot compare {member!r}")


def _dumped_default(field: Any) -> Any:
    if field.is_required():
        return _ABSENT
    value = field.get_default(call_default_factory=True)
    if value is None:
        return _ABSENT  # serde leaves an absent Option out, and so does its schema
    return TypeAdapter(field.annotation).dump_python(value, mode="json", by_alias=True, exclude_none=True)


def _check_model(model: type[BaseModel], core: dict[str, Any], path: str, problems: list[str]) -> None:
    core = resolve(core)
    theirs = core.get("properties", {})
    ours = {field.alias or name: field for name, field in model.model_fields.items()}
    for name in sorted(set(ours) - set(theirs)):
        problems.append(f"{path}.{name}: here, not in the core")
    for name in sorted(set(theirs) - set(ours)):
        problems.append(f"{path}.{name}: in the core, not here")
    required = {name for name, field in ours.items() if field.is_required()}
    if required != set(core.get("required", [])):
        problems.append(f"{path}: required {sorted(required)} here, {sorted(core.get('required', []))} in the core")
    if core.get("additionalProperties", True) is not False or model.model_config.get("extra") != "forbid":
        problems.append(f"{path}: unknown fields must be refused on both sides")
    for name in sorted(set(ours) & set(theirs)):
        ours_default, theirs_default = _dumped_default(ours[name]), theirs[name].get("default", _ABSENT)
        if ours_default != theirs_default and not (ours_default is _ABSENT and theirs_default is None):
            shown = ["absent" if d is _ABSENT else d for d in (ours_default, theirs_default)]
            problems.append(f"{path}.{name}: default {shown[0]!r} here, {shown[1]!r} in the core")
        _check_value(ours[name].annotation, theirs[name], f"{path}.{name}", problems, tuple(ours[name].metadata))


def _drift() -> list[str]:
    problems: list[str] = []
    _check_model(schema.Scenario, CORE_SCHEMA, "scenario", problems)
    return problems


def test_the_pydantic_models_match_the_cores_schema_field_for_field():
    assert _drift() == []


def test_no_service_extension_shadows_a_form_the_core_reads():
    """A service-only union member (a trace by name) must not look like any of the core's
    definitions: if the core gained the same form, the service's would stop being an extension."""
    core_forms = {frozenset(d.get("properties", {})) for d in CORE_SCHEMA.get("definitions", {}).values()}
    core_forms |= {frozenset(d.get("properties", {})) for d in CORE_SCHEMA.get("$defs", {}).values()}
    assert core_forms, "the core's schema lists its definitions"
    for extension in schema.SERVICE_EXTENSIONS:
        fields = frozenset(f.alias or n for n, f in extension.model_fields.items())
        assert fields not in core_forms, extension.__name__


def _red(defs: dict[str, Any]) -> dict[str, Any]:
    return next(o for o in defs["QueueSpec"]["oneOf"] if o["properties"]["type"]["const"] == "red")


@pytest.mark.parametrize(
    ("edit", "named"),
    [
        pytest.param(lambda d: _red(d)["properties"]["max_p"].update(default=0.2), "max_p: default", id="a-default"),
        pytest.param(lambda d: d["TcpConfig"]["properties"].pop("mss_bytes"), "tcp.mss_bytes: here, not", id="a-field"),
        pytest.param(
            lambda d: d["LinkParams"]["properties"].update(jitter_ms={"type": "number", "default": 0.0}),
            "jitter_ms: in the core",
            id="a-new-field",
        ),
        pytest.param(lambda d: d["LinkParams"]["required"].remove("delay_ms"), "required", id="requiredness"),
        pytest.param(
            lambda d: d["QueueSpec"]["oneOf"].append(
                {"type": "object", "properties": {"type": {"const": "sfq"}}, "additionalProperties": False}
            ),
            "alternatives",
            id="a-queue",
        ),
        pytest.param(
            lambda d: d["FlowSpec"]["properties"]["variant"]["enum"].append("westwood"), "values", id="a-variant"
        ),
        pytest.param(
            lambda d: d["TcpConfig"]["properties"]["dupack_threshold"].update(type="number"),
            "integer here, number",
            id="a-type",
        ),
        pytest.param(
            lambda d: d["AccessParams"]["properties"]["rate_mbps"].update(default=100.0),
            "default",
            id="a-nested-default",
        ),
    ],
)
def test_a_change_on_the_core_side_alone_is_reported_by_path(edit, named, monkeypatch):
    """The walk can fail: the core's schema edited as a core change would, the models not."""
    defs = copy.deepcopy(CORE_SCHEMA["$defs"])
    edit(defs)
    monkeypatch.setitem(CORE_SCHEMA, "$defs", defs)
    problems = _drift()
    assert any(named in p for p in problems), problems


def test_a_graph_link_has_exactly_the_dumbbell_links_fields_plus_its_ends():
    """Rust cannot flatten LinkParams into GraphLink without losing `deny_unknown_fields` and the
    error's path, so the core writes both structs; this keeps them one set of fields."""
    link, graph_link = definition("LinkParams")["properties"], definition("GraphLink")["properties"]
    assert set(graph_link) - set(link) == {"name", "from", "to"}

    def shape(node: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in node.items() if k != "description"}

    assert {k: shape(v) for k, v in graph_link.items() if k in link} == {k: shape(v) for k, v in link.items()}
