"""How a scenario refers to a trace's content: in a canonical scenario a link's `trace.file`
holds `sha256:<hex>`, the content's address, never a path or a name; the worker swaps it for a
file holding that content (services/traces/files.py)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

__all__ = ["TraceFiles", "link_traces", "trace_address", "trace_hash_of"]

TraceFiles = Callable[[str], "tuple[str, Path] | None"]
"""A trace's name -> the sha256 of its content and a local file holding it; None for a name
the caller may not use."""

_ADDRESS = re.compile(r"sha256:([0-9a-f]{64})\Z")


def trace_address(sha256: str) -> str:
    """What a canonical scenario's `trace.file` holds for a trace's content."""
    return f"sha256:{sha256}"


def trace_hash_of(file: str) -> str | None:
    """The content hash a canonical `trace.file` addresses, or None for any other string."""
    match = _ADDRESS.match(file)
    return match.group(1) if match else None


def link_traces(data: Any) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every link's `trace` object in a scenario (as JSON data), with its path."""
    topology = data.get("topology") if isinstance(data, Mapping) else None
    if not isinstance(topology, Mapping):
        return
    dumbbell, graph = topology.get("dumbbell"), topology.get("graph")
    links: list[tuple[str, Any]] = []
    if isinstance(dumbbell, Mapping):
        links.append(("$.topology.dumbbell.bottleneck", dumbbell.get("bottleneck")))
    if isinstance(graph, Mapping) and isinstance(graph.get("links"), list):
        links += [(f"$.topology.graph.links[{i}]", link) for i, link in enumerate(graph["links"])]
    for path, link in links:
        if isinstance(link, Mapping) and "trace" in link:
            yield f"{path}.trace", link["trace"]
