"""The one error a scenario can fail with, whoever found the problem (Pydantic or the core).

Every error names the field by a JSON path in the core's style — `$` is the whole document,
then `.key` and `[index]`: `$.flows[0].tcp.min_rto_s` — so a researcher sees the same path
whether the service's schema or the simulator refused the value. The API turns
`ScenarioInvalid` into a 422 with `errors` as its body.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

from pydantic import ValidationError

from services.scenarios.schema import UNION_TAGS

__all__ = ["FieldError", "ScenarioInvalid", "from_core_error", "from_validation_error", "json_path"]

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_\-]*\Z")


@dataclass(frozen=True)
class FieldError:
    """One problem: where (`path`), why (`reason`), and who found it."""

    path: str
    """JSON path of the offending field, core style (`$.flows[0].loss.m`)."""
    reason: str
    """What is wrong, for people."""
    source: Literal["schema", "core", "overrides"]
    """`schema`: the service's Pydantic models; `core`: the simulator's own check;
    `overrides`: a preset override that does not apply (a path that does not exist)."""
    kind: str
    """Machine-readable class: Pydantic's error type (`greater_than_equal`, `extra_forbidden`,
    ...), the core's kind (`parse`, `invalid`) or `override`."""

    def as_dict(self) -> dict[str, str]:
        return asdict(self)


class ScenarioInvalid(ValueError):
    """A scenario was refused; `errors` lists every problem found (at least one).

    Pydantic reports all the problems it sees at once; the core stops at its first, so an
    error from the core comes alone (and only once the schema found nothing).
    """

    def __init__(self, errors: Sequence[FieldError]) -> None:
        if not errors:
            raise ValueError("ScenarioInvalid needs at least one error")
        self.errors: tuple[FieldError, ...] = tuple(errors)
        super().__init__("; ".join(f"{e.path}: {e.reason}" for e in self.errors))

    def as_list(self) -> list[dict[str, str]]:
        return [e.as_dict() for e in self.errors]


def _key(key: str) -> str:
    return f".{key}" if _IDENTIFIER.match(key) else '["' + key.replace("\\", "\\\\").replace('"', '\\"') + '"]'


def json_path(loc: Sequence[str | int]) -> str:
    """A Pydantic `loc` as a core-style JSON path.

    Pydantic puts the tag of a tagged union into `loc` after the field that holds the union
    (`("flows", 0, "loss", "bernoulli_events", "m")`); the document has no such level, so it is
    dropped: `$.flows[0].loss.m`. Keys that are not identifiers are quoted (`$["a b"]`).
    """
    out = ["$"]
    items = list(loc)
    i = 0
    while i < len(items):
        step = items[i]
        out.append(f"[{step}]" if isinstance(step, int) else _key(str(step)))
        tags = UNION_TAGS.get(step) if isinstance(step, str) else None
        if tags and i + 1 < len(items) and items[i + 1] in tags:
            i += 2
        else:
            i += 1
    return "".join(out)


def from_validation_error(error: ValidationError) -> ScenarioInvalid:
    """Every error Pydantic found, with core-style paths."""
    found: list[FieldError] = []
    for e in error.errors(include_url=False):
        loc = list(e["loc"])
        kind = e["type"]
        if kind == "union_tag_invalid":
            # The core names the tag field itself: `$.flows[0].loss.type: unknown variant ...`.
            loc.append("type")
        reason = e["msg"]
        if kind == "union_tag_not_found" and "'type'" in str(e.get("ctx", {}).get("discriminator", "")):
            reason = "missing field `type`"
        if kind in ("missing", "extra_forbidden") and loc:
            # Worded as the core words them.
            reason = f"{'missing' if kind == 'missing' else 'unknown'} field `{loc[-1]}`"
        found.append(FieldError(path=json_path(loc), reason=reason, source="schema", kind=kind))
    return ScenarioInvalid(found)


_CORE_PREFIX = re.compile(r"^invalid scenario at \S+: ")


def from_core_error(error: Any) -> ScenarioInvalid:
    """A `tcpsim.ScenarioError` (path, kind, message) as a `ScenarioInvalid`."""
    message = _CORE_PREFIX.sub("", str(error), count=1)
    path = getattr(error, "path", None) or "$"
    kind = getattr(error, "kind", None) or "invalid"
    return ScenarioInvalid([FieldError(path=path, reason=message, source="core", kind=kind)])
