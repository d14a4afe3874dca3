"""Traces as files for the core, which reads a link's trace from a path: one file per content
hash in a cache directory (`Settings.effective_trace_cache_dir`), written once per machine
(atomically: a temporary file renamed into place) and never by a name a user chose. The API
validates a scenario with these files and the worker runs it with them; the canonical
scenario holds only the content's address (`services.scenarios.canonical.trace_address`)."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sqlalchemy.orm import Session

from services.traces.refs import link_traces, trace_hash_of

__all__ = ["materialise", "scenario_for_the_core", "with_trace_files"]


def materialise(cache_dir: Path, sha256: str, text: str) -> Path:
    """The file holding `text` (whose hash is `sha256`), written if missing."""
    path = cache_dir / f"{sha256}.trace"
    if not path.exists():
        cache_dir.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=cache_dir, prefix=".tmp-", suffix=".trace")
        try:
            with os.fdopen(fd, "w", encoding="ascii") as out:
                out.write(text)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    return path


def with_trace_files(data: Any, cache_dir: Path, content: Callable[[str], str | None]) -> Any:
    """A canonical scenario (JSON data, changed in place and returned) with each trace address
    replaced by the path of a file holding that content (`content`: hash -> text, or None). An
    address whose content is stored nowhere any more (every trace with it deleted since the
    run was submitted) stays: the core then fails the run, naming the field and the address."""
    for _, trace in link_traces(data):
        for key in ("file", "reverse_file"):
            sha256 = trace_hash_of(trace.get(key, ""))
            if sha256 is None:
                continue
            file = cache_dir / f"{sha256}.trace"
            if not file.exists():
                text = content(sha256)
                if text is None:
                    continue
                file = materialise(cache_dir, sha256, text)
            trace[key] = str(file)
    return data


def scenario_for_the_core(session: Session, scenario_text: str, cache_dir: Path) -> str:
    """`with_trace_files` on a claimed run's JSON text, the content read from the database
    (any user's trace, or a built-in one); the text unchanged without traces."""
    if '"trace":{' not in scenario_text and '"trace": {' not in scenario_text:
        return scenario_text
    from services.traces.service import trace_content  # the service module imports this one

    return json.dumps(with_trace_files(json.loads(scenario_text), cache_dir, lambda h: trace_content(session, h)))
