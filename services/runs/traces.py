"""A result's traces read in bounded pieces, whatever their size.

The core returns its traces as `{"time_s": [...], "flows": [{"name", "cwnd": [...],
"ssthresh": [...]}], "links": [{"name", "queue": [...]}]}`; they are stored as compressed
chunks of one series each (services/runs/trace_codec.py: 9 M points take ~2 MB, against ~6 MB
as JSONB and 240 MB as the JSON table), so a reader holds one chunk of each series at a time.

Readers (all streaming from the database):
- `blocks`: the table's rows [start, stop) block by block, any subset of series;
- `downsample`: the same rows cut into buckets, each bucket two rows holding every series'
  minimum and maximum over it (what a plot of that many pixels shows);
- `series_values`: one series after another (the core's own JSON shape);
- `window`: sample indices from an offset and limit and/or a time range.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from itertools import groupby

import numpy as np
from sqlalchemy.orm import Session, sessionmaker

from services.db.models import Trace
from services.db.session import session_scope
from services.errors import InvalidInputError
from services.runs import repository as repo
from services.runs import trace_codec
from services.runs.service import succeeded_run
from services.runs.trace_codec import I8, Series, decode
from services.users import Identity


@dataclass(frozen=True)
class Layout:
    """What a stored trace holds: `samples` sample times, its series (time first), and the
    traced flows and links in the core's order (a flow may have no series: `trace: ["queue"]`)."""

    result_id: uuid.UUID
    samples: int
    chunk_samples: int
    series: tuple[Series, ...]
    flows: tuple[str, ...]
    links: tuple[str, ...]

    @classmethod
    def of(cls, trace: Trace) -> Layout:
        return cls(
            result_id=trace.result_id,
            samples=trace.samples,
            chunk_samples=trace.chunk_samples,
            series=tuple(Series(**s) for s in trace.series),
            flows=tuple(trace.items.get("flows", ())),
            links=tuple(trace.items.get("links", ())),
        )

    def columns(self, wanted: Sequence[str] | None, *, path: str = "$.series") -> list[int]:
        """The series of the table's columns `wanted` (all when None), time first, each once;
        InvalidInputError naming an unknown column."""
        if wanted is None:
            return list(range(len(self.series)))
        index = {s.column: i for i, s in enumerate(self.series)}
        chosen = [0]
        for i, column in enumerate(wanted):
            if column not in index:
                known = ", ".join(s.column for s in self.series)
                raise InvalidInputError(
                    f"no series {column!r} in this trace; one of {known}", path=f"{path}[{i}]", kind="unknown_series"
                )
            if index[column] not in chosen:
                chosen.append(index[column])
        return chosen


# ------------------------------------------------------------------------------ reading


def layout_of(session: Session, run_id: uuid.UUID, viewer: Identity) -> Layout | None:
    """The layout of a succeeded run's traces (None when it recorded none); NotFoundError for
    a run `viewer` may not see, ConflictError while it has no result."""
    run = succeeded_run(session, run_id, viewer)
    assert run.result_id is not None  # succeeded_run raises ConflictError when it is None
    trace = repo.trace_of(session, run.result_id)
    return None if trace is None else Layout.of(trace)


def window(
    session: Session, layout: Layout, *, offset: int = 0, from_s: float | None = None, to_s: float | None = None
) -> range:
    """The sample indices from `offset` on whose time is within [from_s, to_s] (a `limit`
    is a slice of it: `window(...)[:limit]`)."""
    start, stop = min(offset, layout.samples), layout.samples
    if from_s is None and to_s is None:
        return range(start, stop)
    # The sample times ascend: the first at or after from_s, the first after to_s.
    first, last = (0 if from_s is None else None), layout.samples
    for base, (times,) in _chunks(lambda: nullcontext(session), layout, [0], range(layout.samples)):
        if (
            first is None
            and from_s is not None
            and (i := int(np.searchsorted(times, from_s, side="left"))) < len(times)
        ):
            first = base + i
        if to_s is not None and (j := int(np.searchsorted(times, to_s, side="right"))) < len(times):
            last = base + j
            break
        if to_s is None and first is not None:
            break
    start = max(start, layout.samples if first is None else first)
    return range(start, max(start, last))


def _chunks(
    open_session: Callable[[], AbstractContextManager[Session]], layout: Layout, series: Sequence[int], rows: range
) -> Iterator[tuple[int, list[np.ndarray]]]:
    """(first sample, one array per series) for every chunk overlapping `rows`, cut to them.

    Each query reads about CHUNK_POINTS values (as many chunks as that makes for `series`) in
    a session of its own, closed before anything is yielded: a reader that is slow to take
    the rows (a slow client) holds no connection meanwhile."""
    size = layout.chunk_samples
    if not rows:
        return
    wanted = range(rows.start // size, (rows.stop - 1) // size + 1)
    per_query = max(1, trace_codec.CHUNK_POINTS // max(1, size * len(series)))
    position = {s: i for i, s in enumerate(series)}
    for first in range(wanted.start, wanted.stop, per_query):
        with open_session() as session:
            fetched = repo.trace_chunks(
                session, layout.result_id, series=series, chunks=range(first, min(first + per_query, wanted.stop))
            )
        for chunk, group in groupby(fetched, key=lambda row: row[0]):
            arrays = [np.empty(0)] * len(series)
            for _, number, data in group:
                arrays[position[number]] = decode(data, layout.series[number].dtype)
            base = chunk * size
            lo, hi = max(rows.start, base) - base, min(rows.stop, base + size) - base
            yield base + lo, [a[lo:hi] for a in arrays]


def blocks(
    factory: sessionmaker[Session], layout: Layout, series: Sequence[int], rows: range
) -> Iterator[list[np.ndarray]]:
    """The table's rows `rows` of `series`, one array per series, a chunk at a time, in
    sessions of their own (a streamed response outlives the request's session)."""
    for _, arrays in _chunks(lambda: session_scope(factory), layout, series, rows):
        yield arrays


def series_values(factory: sessionmaker[Session], layout: Layout) -> Iterator[tuple[int, np.ndarray]]:
    """Every series whole, one after another: (series, a chunk of its values) in order."""
    for number in range(len(layout.series)):
        for _, (values,) in _chunks(lambda: session_scope(factory), layout, [number], range(layout.samples)):
            yield number, values


# -------------------------------------------------------------------------- downsampling


def buckets_of(count: int, points: int) -> int:
    """How many buckets `count` samples become when at most `points` rows may be drawn
    (0: no downsampling, the samples fit)."""
    return 0 if count <= points else points // 2


def downsample(
    pieces: Iterable[list[np.ndarray]], count: int, points: int, dtypes: Sequence[str], *, batch: int = 1024
) -> Iterator[list[np.ndarray]]:
    """At most `points` rows of a table whose first column is the time.

    The `count` rows that `pieces` yield in order are cut into `points // 2` buckets of
    consecutive samples (bucket b is rows [b·count // B, (b+1)·count // B)); each bucket
    becomes two rows at its first and last sample times, holding every other column's minimum
    and maximum over the bucket in the order they occur (nulls are skipped; null when the
    bucket has none). A line through these rows covers exactly what a line through every
    sample covers in each bucket. Fewer than `points` rows pass unchanged.
    """
    total = buckets_of(count, points)
    if total == 0:
        yield from pieces
        return
    ints = [i for i, d in enumerate(dtypes) if d == "i8" and i > 0]
    bounds = [b * count // total for b in range(total + 1)]
    out: list[list[np.ndarray]] = []  # per emitted bucket: [t_first, t_last, first values, second values]
    bucket, seen, state = 0, 0, None  # state: t_first, t_last, lo, lo_at, hi, hi_at

    def flush() -> list[np.ndarray]:
        times = np.array([t for b in out for t in b[:2]])
        values = np.empty((len(dtypes) - 1, 2 * len(out)))
        for k, b in enumerate(out):
            values[:, 2 * k], values[:, 2 * k + 1] = b[2], b[3]
        columns = [times] + list(values)
        for i in ints:
            columns[i] = columns[i].astype(I8)
        out.clear()
        return columns

    for arrays in pieces:
        n = len(arrays[0])
        start = 0
        while start < n:
            end = start + min(n - start, bounds[bucket + 1] - seen)
            piece = np.array([a[start:end] for a in arrays[1:]], dtype=float).reshape(len(arrays) - 1, end - start)
            lo_at, hi_at = _extremes(piece)
            rows = np.arange(len(piece))
            lo, hi = piece[rows, lo_at], piece[rows, hi_at]
            lo_at, hi_at = lo_at + seen, hi_at + seen
            if state is None:
                state = [arrays[0][start], arrays[0][end - 1], lo, lo_at, hi, hi_at]
            else:
                state[1] = arrays[0][end - 1]
                lower = (lo < state[2]) | (np.isnan(state[2]) & ~np.isnan(lo))
                higher = (hi > state[4]) | (np.isnan(state[4]) & ~np.isnan(hi))
                state[2], state[3] = np.where(lower, lo, state[2]), np.where(lower, lo_at, state[3])
                state[4], state[5] = np.where(higher, hi, state[4]), np.where(higher, hi_at, state[5])
            seen += end - start
            start = end
            if seen == bounds[bucket + 1]:
                t0, t1, lo, lo_at, hi, hi_at = state
                first = lo_at <= hi_at
                out.append([t0, t1, np.where(first, lo, hi), np.where(first, hi, lo)])
                bucket, state = bucket + 1, None
                if len(out) == batch:
                    yield flush()
    if out:
        yield flush()


def _extremes(piece: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row of `piece`: where its minimum and maximum first occur, nulls (NaN) skipped
    (an all-null row points at a null)."""
    nan = np.isnan(piece)
    return np.argmin(np.where(nan, np.inf, piece), axis=1), np.argmax(np.where(nan, -np.inf, piece), axis=1)
