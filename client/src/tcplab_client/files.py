"""Scenario and sweep files: YAML or JSON, by extension (`.yaml`, `.yml`, `.json`), by content
for stdin (`-`) or any other name; and `--set path=value` assignments."""

from __future__ import annotations

import copy
import json
import re
import sys
from pathlib import Path
from typing import Any

import yaml

from tcplab_client.errors import TcplabError


class BadFile(TcplabError):
    """A file that cannot be read or parsed, or a malformed `--set`: bad input (exit 2)."""


def parse_text(text: str, *, fmt: str | None = None, name: str = "<stdin>") -> Any:
    """JSON when `fmt` is "json" or (unknown `fmt`) the text starts with `{` or `[`; else YAML
    (a superset of JSON, so a JSON file misnamed .yaml still reads)."""
    if fmt is None:
        fmt = "json" if text.lstrip().startswith(("{", "[")) else "yaml"
    try:
        if fmt == "json":
            return json.loads(text)
        return yaml.safe_load(text)
    except json.JSONDecodeError as exc:
        raise BadFile(f"{name} is not valid JSON: {exc}") from None
    except yaml.YAMLError as exc:
        raise BadFile(f"{name} is not valid YAML: {' '.join(str(exc).split())}") from None


def load_file(path: str | Path) -> Any:
    """A YAML or JSON document from a file, or stdin for `-`."""
    if str(path) == "-":
        return parse_text(sys.stdin.read(), name="<stdin>")
    p = Path(path)
    try:
        text = p.read_text()
    except FileNotFoundError:
        raise BadFile(f"no such file: {p}") from None
    except (IsADirectoryError, PermissionError, UnicodeDecodeError) as exc:
        raise BadFile(f"cannot read {p}: {exc}") from None
    suffix = p.suffix.lower()
    fmt = "json" if suffix == ".json" else "yaml" if suffix in (".yaml", ".yml") else None
    return parse_text(text, fmt=fmt, name=str(p))


def load_mapping(path: str | Path) -> dict[str, Any]:
    data = load_file(path)
    if not isinstance(data, dict):
        raise BadFile(f"{path} must hold a mapping (an object), not {type(data).__name__}")
    return data


def parse_assignment(text: str) -> tuple[str, Any]:
    """`path=value` → (path, value); the value is read as YAML (`5` an int, `0.5` a float,
    `true`, `[1, 2]`, `{type: red}`, anything else a string)."""
    path, sep, raw = text.partition("=")
    path = path.strip()
    if not sep or not path:
        raise BadFile(f"--set {text!r}: expected path=value, e.g. flows[*].loss.m=4")
    try:
        value = yaml.safe_load(raw) if raw.strip() else ""
    except yaml.YAMLError:
        value = raw
    return path, value


_STEP = re.compile(r"\.?([^.\[\]]+)|\[(\d+|\*)\]")


def _steps(path: str) -> list[str | int]:
    text = path.removeprefix("$")
    steps: list[str | int] = []
    pos = 0
    while pos < len(text):
        match = _STEP.match(text, pos)
        if not match:
            raise BadFile(f"--set: cannot read the path {path!r} at {text[pos:]!r}")
        name, index = match.groups()
        steps.append(name if name is not None else ("*" if index == "*" else int(index)))
        pos = match.end()
    if not steps:
        raise BadFile(f"--set: empty path {path!r}")
    return steps


def set_path(document: Any, path: str, value: Any) -> None:
    """Sets `path` (`duration_s`, `flows[0].loss.m`, `flows[*].variant`) in a scenario, in
    place, creating missing mappings on the way."""
    steps = _steps(path)

    def walk(node: Any, rest: list[str | int]) -> None:
        step, more = rest[0], rest[1:]
        if step == "*":
            if not isinstance(node, list):
                raise BadFile(f"--set {path}: [*] needs a list")
            if more:
                for item in node:
                    walk(item, more)
            else:
                node[:] = [copy.deepcopy(value) for _ in node]
            return
        if isinstance(step, int):
            if not isinstance(node, list) or step >= len(node):
                raise BadFile(f"--set {path}: no element [{step}]")
        elif not isinstance(node, dict):
            raise BadFile(f"--set {path}: {step!r} is not inside a mapping")
        if not more:
            node[step] = value
            return
        if isinstance(step, str) and step not in node:
            node[step] = {}
        walk(node[step], more)

    walk(document, steps)
