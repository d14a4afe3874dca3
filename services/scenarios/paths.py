"""JSON paths into scenario dicts: read and replace values for overrides and sweep axes.

A path is a chain of steps: `duration_s`, `flows[0].loss.m`, `flows[*].variant`,
`topology.dumbbell.bottleneck.queue.type`. A step is

- a key, `.name` (the first one without the dot); keys that are not identifiers (letters,
  digits, `_`, `-`) are quoted: `["a b"]`;
- a list index, `[3]`;
- every element of a list, `[*]`.

The core's error paths (`$.flows[0].tcp.min_rto_s`) are accepted too: a leading `$` / `$.` is
ignored, so an error can be pasted back as an override key.

What exists: every step but the last must reach an existing value of the right kind (a key of
an object, an index within a list); the last step may name a key an object does not have yet
(setting an optional field such as `flows[0].stop_s`), never an index past a list's end. A
wildcard applies to every element, and the rest of the path must exist in each of them. The
result is not checked against the scenario schema here: `validate_scenario` does that next,
and names an unknown field by its path.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator, Mapping
from typing import Any, Final

__all__ = [
    "WILDCARD",
    "PathError",
    "apply_overrides",
    "expand",
    "format_path",
    "get_path",
    "parse_path",
    "set_path",
]


class _Wildcard:
    __slots__ = ()

    def __repr__(self) -> str:
        return "WILDCARD"


WILDCARD: Final = _Wildcard()
"""The `[*]` step."""

Step = str | int | _Wildcard

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_\-]*")
_IDENTIFIER_FULL = re.compile(r"[A-Za-z_][A-Za-z0-9_\-]*\Z")


class PathError(ValueError):
    """A path that does not parse, or does not exist in the scenario.

    `path` is the path as given; `at` is the part of it that was reached before the problem
    (for a wildcard path, with the element's index filled in: `flows[1].loss`).
    """

    def __init__(self, path: str, reason: str, at: str | None = None) -> None:
        self.path = path
        self.reason = reason
        self.at = at
        where = f" (at {at})" if at and at != path else ""
        super().__init__(f"{path}: {reason}{where}")


def parse_path(path: str) -> tuple[Step, ...]:
    """The steps of `path`; `PathError` if it does not parse."""
    if not isinstance(path, str):
        raise PathError(repr(path), "a path is a string")
    text = path
    if text.startswith("$"):
        text = text[1:]
        if text.startswith("."):
            text = text[1:]
    steps: list[Step] = []
    i = 0
    first = True
    while i < len(text):
        c = text[i]
        if c == "[":
            close = _bracket(path, text, i)
            inner = text[i + 1 : close]
            if inner == "*":
                steps.append(WILDCARD)
            elif inner.startswith('"'):
                steps.append(_unquote(path, inner))
            elif inner.isdigit() and inner.isascii():
                steps.append(int(inner))
            else:
                raise PathError(path, f"[{inner}] is not an index, [*] or a quoted key")
            i = close + 1
        else:
            if c == ".":
                if first:
                    raise PathError(path, "a path does not start with '.'")
                i += 1
            elif not first:
                raise PathError(path, f"expected '.' or '[' at character {i + 1}")
            m = _IDENTIFIER.match(text, i)
            if not m:
                raise PathError(path, f"expected a key at character {i + 1}")
            steps.append(m.group())
            i = m.end()
        first = False
    if not steps:
        raise PathError(path, "an empty path")
    return tuple(steps)


def _bracket(path: str, text: str, start: int) -> int:
    """Index of the `]` closing the bracket at `start` (quotes may hold `]`)."""
    i = start + 1
    if i < len(text) and text[i] == '"':
        i += 1
        while i < len(text):
            if text[i] == "\\":
                i += 2
                continue
            if text[i] == '"':
                break
            i += 1
        i += 1
    close = text.find("]", i)
    if close < 0:
        raise PathError(path, "an unclosed '['")
    return close


def _unquote(path: str, inner: str) -> str:
    if len(inner) < 2 or not inner.endswith('"'):
        raise PathError(path, f"[{inner}] is not a quoted key")
    out = []
    i = 1
    while i < len(inner) - 1:
        c = inner[i]
        if c == "\\":
            if i + 1 >= len(inner) - 1:
                raise PathError(path, f"[{inner}] ends in a lone backslash")
            out.append(inner[i + 1])
            i += 2
            continue
        if c == '"':
            raise PathError(path, f"[{inner}] has an unescaped quote")
        out.append(c)
        i += 1
    return "".join(out)


def format_path(steps: tuple[Step, ...] | list[Step]) -> str:
    """The path text of `steps` (without `$`): the inverse of `parse_path`."""
    out: list[str] = []
    for n, step in enumerate(steps):
        if isinstance(step, _Wildcard):  # WILDCARD, its only instance
            out.append("[*]")
        elif isinstance(step, int):
            out.append(f"[{step}]")
        elif _IDENTIFIER_FULL.match(step):
            out.append(step if n == 0 else f".{step}")
        else:
            out.append('["' + step.replace("\\", "\\\\").replace('"', '\\"') + '"]')
    return "".join(out)


def _steps(path: str | tuple[Step, ...]) -> tuple[str, tuple[Step, ...]]:
    if isinstance(path, tuple):
        return format_path(path), path
    return path, parse_path(path)


def _kind(value: Any) -> str:
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, list):
        return "a list"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return type(value).__name__


def _walk(
    doc: Any, path: str, steps: tuple[Step, ...], *, allow_new_last: bool
) -> Iterator[tuple[tuple[Step, ...], Any, Step]]:
    """Every (concrete steps, parent container, last step) that `steps` reaches in `doc`."""

    def go(node: Any, i: int, done: tuple[Step, ...]) -> Iterator[tuple[tuple[Step, ...], Any, Step]]:
        step = steps[i]
        last = i == len(steps) - 1
        at = format_path(done) or "$"
        if step is WILDCARD:
            if not isinstance(node, list):
                raise PathError(path, f"[*] needs a list, {at} is {_kind(node)}", at)
            for k in range(len(node)):
                if last:
                    yield (*done, k), node, k
                else:
                    yield from go(node[k], i + 1, (*done, k))
            return
        if isinstance(step, int):
            if not isinstance(node, list):
                raise PathError(path, f"[{step}] needs a list, {at} is {_kind(node)}", at)
            if step >= len(node):
                raise PathError(
                    path, f"{format_path((*done, step))} does not exist: {at} has {len(node)} element(s)", at
                )
        else:
            if not isinstance(node, dict):
                raise PathError(path, f"{at} is {_kind(node)}, it has no field {step!r}", at)
            if step not in node and not (last and allow_new_last):
                raise PathError(path, f"{format_path((*done, step))} does not exist", at)
        if last:
            yield (*done, step), node, step
        else:
            yield from go(node[step], i + 1, (*done, step))

    yield from go(doc, 0, ())


def expand(doc: Any, path: str | tuple[Step, ...]) -> list[str]:
    """The concrete paths (no wildcards) that `path` names in `doc`; `PathError` if missing."""
    text, steps = _steps(path)
    return [format_path(concrete) for concrete, _, _ in _walk(doc, text, steps, allow_new_last=False)]


def get_path(doc: Any, path: str | tuple[Step, ...]) -> Any:
    """The value at `path`; with a wildcard, the list of values, one per element.

    `PathError` (naming the path) when it does not exist.
    """
    text, steps = _steps(path)
    values = [parent[last] for _, parent, last in _walk(doc, text, steps, allow_new_last=False)]
    if any(s is WILDCARD for s in steps):
        return values
    return values[0]


def _set_in_place(doc: Any, path: str | tuple[Step, ...], value: Any) -> None:
    text, steps = _steps(path)
    targets = list(_walk(doc, text, steps, allow_new_last=True))  # every target checked first
    for _, parent, last in targets:
        parent[last] = copy.deepcopy(value)


def set_path(doc: Mapping[str, Any], path: str | tuple[Step, ...], value: Any) -> dict[str, Any]:
    """A copy of `doc` with `value` at `path` (at every element for a wildcard).

    `doc` is not changed, and the copy shares no mutable part with `doc` or `value`.
    """
    out = copy.deepcopy(dict(doc))
    _set_in_place(out, path, value)
    return out


def apply_overrides(doc: Mapping[str, Any], overrides: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of `doc` with every `{path: value}` of `overrides` set, in the order given.

    Nothing is changed unless every path exists (as the module docstring defines it): the first
    one that does not raises `PathError` naming it. Later paths see earlier ones' values, so
    `{"flows[0].loss": {...}, "flows[0].loss.m": 5}` works.
    """
    out = copy.deepcopy(dict(doc))
    for path, value in overrides.items():
        _set_in_place(out, path, value)
    return out
