"""Tags and notes: what a run or sweep may be labelled with (checked here, bounded in the
database too: migration 0014)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from services.errors import InvalidInputError

MAX_TAGS = 32
MAX_TAG_LENGTH = 64
MAX_NOTE_LENGTH = 10_000
TAG = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:=/+-]*\Z")
"""A letter or digit, then letters, digits and `_ . : = / + -`: `baseline`, `buffer=2bdp`,
`paper:000`, `v1.2` — no spaces or commas, so a tag is one word on a command line."""


def check_tags(tags: Sequence[str], *, path: str = "$.tags") -> list[str]:
    """The tags, each checked, duplicates dropped (first place kept); InvalidInputError (422)
    naming the offending element (`$.tags[2]`) and the reason otherwise."""
    out: list[str] = []
    for i, tag in enumerate(tags):
        where = f"{path}[{i}]"
        if not isinstance(tag, str) or not tag:
            raise InvalidInputError("a tag is a non-empty string", path=where, kind="tag_empty")
        if len(tag) > MAX_TAG_LENGTH:
            raise InvalidInputError(
                f"a tag is at most {MAX_TAG_LENGTH} characters (this one has {len(tag)})",
                path=where,
                kind="tag_too_long",
            )
        if not TAG.match(tag):
            raise InvalidInputError(
                f"{tag!r}: a tag starts with a letter or digit and has only letters, digits and _ . : = / + -",
                path=where,
                kind="tag_charset",
            )
        if tag not in out:
            out.append(tag)
    return out


def merged_tags(
    current: Sequence[str], *, replace: Sequence[str] | None, add: Sequence[str], remove: Sequence[str]
) -> list[str]:
    """`current` (or `replace`) plus `add` less `remove`, in order; at most MAX_TAGS."""
    tags = check_tags(replace, path="$.tags") if replace is not None else list(current)
    for tag in check_tags(add, path="$.add_tags"):
        if tag not in tags:
            tags.append(tag)
    gone = set(check_tags(remove, path="$.remove_tags"))
    tags = [t for t in tags if t not in gone]
    if len(tags) > MAX_TAGS:
        field = "$.tags" if replace is not None and not add else "$.add_tags"
        raise InvalidInputError(
            f"at most {MAX_TAGS} tags (this would make {len(tags)})", path=field, kind="too_many_tags"
        )
    return tags


def check_note(note: str | None) -> str | None:
    """The note, empty as none; InvalidInputError past MAX_NOTE_LENGTH characters."""
    if note is not None and len(note) > MAX_NOTE_LENGTH:
        raise InvalidInputError(
            f"a note is at most {MAX_NOTE_LENGTH} characters (this one has {len(note)})",
            path="$.note",
            kind="note_too_long",
        )
    return note or None
