"""The lab's built-in traces: the LTE traces of Sprout and Pantheon, shipped gzipped with the
code (services/presets/data/traces, GPLv3: SOURCE.md there), visible to every user under their
file names. They are code, not rows: nothing to seed or keep in step with a deployment, and a
preset over them validates without a database. Their names are taken for everyone (an upload
cannot shadow one), so a name in a scenario means one trace whoever reads it."""

from __future__ import annotations

import functools
import gzip
from pathlib import Path

from services.settings import get_settings
from services.traces.files import materialise
from services.traces.format import TraceText, parse_trace

__all__ = ["BUILTIN_DIR", "BUILTIN_NAMES", "builtin_by_hash", "builtin_trace_file", "builtin_trace"]

BUILTIN_DIR = Path(__file__).resolve().parent.parent / "presets" / "data" / "traces"
BUILTIN_NAMES: tuple[str, ...] = tuple(
    f"{carrier}.{direction}"
    for carrier in ("TMobile-LTE-short", "Verizon-LTE-short", "ATT-LTE-driving")
    for direction in ("down", "up")
)


@functools.cache
def builtin_trace(name: str) -> TraceText | None:
    """The built-in trace called `name` (read once per process), or None."""
    if name not in BUILTIN_NAMES:
        return None
    return parse_trace(gzip.decompress((BUILTIN_DIR / f"{name}.gz").read_bytes()))


def builtin_by_hash(sha256: str) -> TraceText | None:
    """The built-in trace with this content hash, or None."""
    return next((t for n in BUILTIN_NAMES if (t := builtin_trace(n)) is not None and t.sha256 == sha256), None)


def builtin_trace_file(name: str) -> tuple[str, Path] | None:
    """The built-in trace `name`'s content hash and file (in the settings' trace cache), or
    None: the trace names every caller may use (`services.scenarios`' default `TraceFiles`)."""
    text = builtin_trace(name)
    if text is None:
        return None
    return text.sha256, materialise(get_settings().effective_trace_cache_dir, text.sha256, text.text)
