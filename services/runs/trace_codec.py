"""How a result's traces are stored: one series per list of the core's traces (the sample
times first), cut into chunks of `chunk_samples` samples, each chunk the values as little-endian
float64 (NaN for null) or int64, zlib-compressed. Chunks are sized so that one chunk of every
series holds about `CHUNK_POINTS` values (a reader holds one such block at a time).

This is the stored format: migration 0005 writes it from the JSONB traces of before (and reads
it back on downgrade); changing it needs a migration of its own.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

CHUNK_POINTS = 1 << 18
"""Values in one chunk of every series together (2 MB as float64)."""
F8, I8 = np.dtype("<f8"), np.dtype("<i8")
_DTYPES = {"f8": F8, "i8": I8}
_ITEMS = (("flow", "flows"), ("link", "links"))


@dataclass(frozen=True)
class Series:
    """One stored series: the sample times (`kind` "time"), or a flow's or a link's quantity."""

    kind: str
    name: str | None
    quantity: str
    dtype: str

    @property
    def column(self) -> str:
        """Its column in the trace table: `time_s`, `<flow>.cwnd`, `<link>.queue`."""
        return self.quantity if self.kind == "time" else f"{self.name}.{self.quantity}"

    def public(self) -> dict[str, Any]:
        return {"column": self.column, "kind": self.kind, "name": self.name, "quantity": self.quantity}


def _array(values: Sequence[Any] | np.ndarray) -> tuple[str, np.ndarray]:
    """A series as int64 when every value is an int, else float64 with null as NaN. A numpy
    array (`tcpsim.run(..., columns=True)`: float64 with NaN for null, or int64) is kept as it is."""
    if isinstance(values, np.ndarray):
        if values.dtype.kind in "iu":
            return "i8", values.astype(I8, copy=False)
        return "f8", values.astype(F8, copy=False)
    a = np.asarray(values)
    if a.dtype.kind in "iu":
        return "i8", a.astype(I8)
    return "f8", np.asarray(values, dtype=F8)


def chunk_samples_for(series: int) -> int:
    """Samples per chunk of a trace of `series` series (the sample times included)."""
    return max(1, CHUNK_POINTS // max(1, series))


def series_of(traces: Mapping[str, Any]) -> Iterator[tuple[str, str | None, str, Sequence[Any] | np.ndarray]]:
    """(kind, name, quantity, values) of every series of the core's traces, in stored order."""
    times = traces.get("time_s")
    yield "time", None, "time_s", [] if times is None else times
    for kind, key in _ITEMS:
        for item in traces.get(key) or []:
            yield from item_series(kind, item)


def item_series(
    kind: str, item: Mapping[str, Any]
) -> Iterator[tuple[str, str | None, str, Sequence[Any] | np.ndarray]]:
    """The series of one flow (`kind` "flow") or link ("link") of the core's traces."""
    return ((kind, item["name"], q, v) for q, v in item.items() if q != "name" and isinstance(v, list | np.ndarray))


def items_of(traces: Mapping[str, Any]) -> dict[str, list[str]]:
    """The traced flows' and links' names, in order (a flow may have no series)."""
    return {key: [item["name"] for item in traces.get(key) or []] for _, key in _ITEMS}


def encode_series(values: Sequence[Any] | np.ndarray, samples: int, chunk_samples: int) -> tuple[str, list[bytes]]:
    """One series' dtype and chunks."""
    if len(values) != samples:
        raise ValueError(f"a trace series has {len(values)} values for {samples} sample times")
    dtype, array = _array(values)
    return dtype, [zlib.compress(array[i : i + chunk_samples].tobytes(), 6) for i in range(0, samples, chunk_samples)]


def encode(traces: Mapping[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The `traces` row's columns (less `result_id`) and the chunk rows (`chunk`, `series`,
    `data`) of the core's traces."""
    everything = list(series_of(traces))
    samples = len(everything[0][3])
    chunk_samples = chunk_samples_for(len(everything))
    series, chunks = [], []
    for number, (kind, name, quantity, values) in enumerate(everything):
        dtype, data = encode_series(values, samples, chunk_samples)
        series.append({"kind": kind, "name": name, "quantity": quantity, "dtype": dtype})
        chunks += [{"chunk": c, "series": number, "data": d} for c, d in enumerate(data)]
    return {"samples": samples, "chunk_samples": chunk_samples, "series": series, "items": items_of(traces)}, chunks


def decode(data: bytes, dtype: str) -> np.ndarray:
    return np.frombuffer(zlib.decompress(data), dtype=_DTYPES[dtype])


def assemble(
    series: Sequence[Mapping[str, Any]], items: Mapping[str, Sequence[str]], values: Sequence[np.ndarray]
) -> dict[str, Any]:
    """The core's traces again from the stored layout and each series' whole values."""
    lists = [
        v.tolist() if s["dtype"] == "i8" else [None if x != x else x for x in v.tolist()]
        for s, v in zip(series, values, strict=True)
    ]
    of: dict[tuple[str, str], dict[str, Any]] = {}
    for s, v in zip(series[1:], lists[1:], strict=True):
        of.setdefault((s["kind"], s["name"]), {})[s["quantity"]] = v
    traces: dict[str, Any] = {"time_s": lists[0]}
    for kind, key in _ITEMS:
        traces[key] = [{"name": name, **of.get((kind, name), {})} for name in items.get(key, ())]
    return traces
