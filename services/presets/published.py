"""The papers' published numbers, read from the data files shipped with the presets.

The files in `data/` are copies of `papers/published/` (transcriptions of the papers' tables
and stated findings): the numbers are never retyped in code, only read from there.
"""

from __future__ import annotations

import csv
import json
from functools import cache
from pathlib import Path
from typing import Any

__all__ = ["DATA_DIR", "read_csv", "read_json"]

DATA_DIR = Path(__file__).resolve().parent / "data"


@cache
def read_json(name: str) -> dict[str, Any]:
    """A JSON data file, parsed (cached: treat it as read-only)."""
    with (DATA_DIR / name).open(encoding="utf-8") as f:
        return json.load(f)


def _number(text: str) -> int | float:
    try:
        return int(text)
    except ValueError:
        return float(text)


@cache
def read_csv(name: str) -> tuple[tuple[str, ...], tuple[dict[str, int | float], ...]]:
    """A CSV data file of numbers: (header, rows as dicts), integers where the text is one."""
    with (DATA_DIR / name).open(encoding="utf-8", newline="") as f:
        reader = csv.reader(f)
        header = tuple(next(reader))
        rows = tuple({k: _number(v) for k, v in zip(header, row, strict=True)} for row in reader if row)
    return header, rows
