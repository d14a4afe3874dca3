"""Tables as HTTP responses: the same rows as JSON, CSV or Parquet (`?format=`).

Every plot on the dashboards is drawn from an endpoint that returns its rows this way, so
what a researcher downloads is exactly what the page plotted.

Every response is streamed: rows are written a few thousand cells at a time, so a response
never holds its whole body. `table_response` writes rows the caller has in memory;
`stream_table` writes column batches the caller reads piece by piece (a run's traces), so
the memory a download takes does not grow with the table.

CSV cells that a spreadsheet would run as a formula (text starting with =, +, -, @, a tab or
a carriage return) get a leading single quote (OWASP's advice on CSV injection); numbers
stay numbers.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from enum import StrEnum
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from fastapi import Query, Response
from fastapi.responses import StreamingResponse


class TableFormat(StrEnum):
    json = "json"
    csv = "csv"
    parquet = "parquet"


FORMAT_QUERY = Query(
    TableFormat.json,
    alias="format",
    description="json (the rows inside the JSON body), csv or parquet (the rows alone, as a download)",
)

_MEDIA_TYPES = {
    TableFormat.json: "application/json",
    TableFormat.csv: "text/csv; charset=utf-8",
    TableFormat.parquet: "application/vnd.apache.parquet",
}

BATCH_CELLS = 1 << 15
"""Cells rendered at once: what a response holds besides its source's own piece."""
ROW_GROUP_CELLS = 1 << 18
"""Cells per Parquet row group of a streamed table (2 MB of float64)."""

Column = Sequence[Any] | np.ndarray
"""One column of a batch: a list, or a numpy array (NaN as null)."""


def columns_of(rows: Sequence[Mapping[str, Any]], first: Sequence[str] = ()) -> list[str]:
    """Every key of the rows, `first` first, then in order of first appearance."""
    seen = dict.fromkeys(first)
    for row in rows:
        seen.update(dict.fromkeys(row))
    return list(seen)


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def csv_text(value: Any) -> Any:
    """A CSV cell a spreadsheet shows as text, never runs: text starting with =, +, -, @, a
    tab or a carriage return gets a leading ' (OWASP, CSV injection), unless it is a plain
    number such as "-2.5". Numbers (-2.5 itself) pass unchanged."""
    if isinstance(value, str) and value.startswith(_FORMULA_START) and not _NUMBER.fullmatch(value):
        return "'" + value
    return value


def _cell(value: Any) -> Any:
    """CSV and Parquet cells: lists and dicts (axis values such as `[1, 2]`) as JSON text,
    non-finite floats as empty."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, list | dict | tuple):
        return json.dumps(value, sort_keys=True)
    return value


_INT64_MAX = (1 << 63) - 1


def _parquet_bytes(rows: Sequence[Mapping[str, Any]], columns: list[str]) -> bytes:
    data = {name: [_cell(row.get(name)) for row in rows] for name in columns}
    arrays = {}
    for name, values in data.items():
        kinds = {type(v) for v in values if v is not None}
        # A column of ints and floats (an axis of 1, 2.5) is a float column, not an error.
        kind = None
        if kinds and kinds <= {int, float} and float in kinds:
            values = [None if v is None else float(v) for v in values]
        elif len(kinds) > 1:
            values = [None if v is None else str(v) for v in values]
        elif kinds == {int} and max(v for v in values if v is not None) > _INT64_MAX:
            kind = pa.uint64()  # a u64 (a seed) past int64: pyarrow would refuse to infer it
        arrays[name] = pa.array(values, type=kind)
    buffer = io.BytesIO()
    pq.write_table(pa.table(arrays) if arrays else pa.table({}), buffer)
    return buffer.getvalue()


def finite(value: Any) -> Any:
    """`value` with every NaN and infinity (in lists and dicts too) as None."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite(v) for v in value]
    return value


def finite_list(column: Column) -> list[Any]:
    """A column as Python values, NaN and infinities as None."""
    if isinstance(column, np.ndarray):
        values = column.tolist()
        if column.dtype.kind != "f" or np.isfinite(column).all():
            return values
        return [v if math.isfinite(v) else None for v in values]
    return [finite(v) for v in column]


def _row_batches(batches: Iterable[Sequence[Column]], width: int) -> Iterator[list[list[Any]]]:
    """Column batches as lists of columns of at most BATCH_CELLS cells together."""
    step = max(1, BATCH_CELLS // max(1, width))
    for batch in batches:
        size = len(batch[0]) if batch else 0
        for start in range(0, size, step):
            yield [finite_list(c[start : start + step]) for c in batch]


def json_text(value: Any) -> str:
    """JSON as JSONResponse writes it (compact, UTF-8 text, never NaN)."""
    return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def _json_head(body: Mapping[str, Any], key: str) -> bytes:
    """`body` as JSON up to the opening bracket of the list under `key`."""
    head = json_text(finite(dict(body)))
    return (head[:-1] + ("," if len(head) > 2 else "") + json_text(key) + ":[").encode()


def json_chunks(
    body: Mapping[str, Any], columns: Sequence[str], batches: Iterable[Sequence[Column]], *, key: str = "rows"
) -> Iterator[bytes]:
    """`body` with the rows under `key` (an object per row), as JSON text in pieces."""
    yield _json_head(body, key)
    separator = ""
    for lists in _row_batches(batches, len(columns)):
        rows = [dict(zip(columns, values, strict=True)) for values in zip(*lists, strict=True)]
        if rows:
            yield (separator + json_text(rows)[1:-1]).encode()
            separator = ","
    yield b"]}"


def csv_chunks(columns: Sequence[str], batches: Iterable[Sequence[Column]]) -> Iterator[bytes]:
    """A header line, then the rows (null as empty), text cells neutralised (`csv_text`)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")  # RFC 4180; a lone CR in a cell is then quoted

    def drain() -> bytes:
        text = out.getvalue()
        out.seek(0)
        out.truncate()
        return text.encode()

    writer.writerow([csv_text(c) for c in columns])
    yield drain()
    for lists in _row_batches(batches, len(columns)):
        writer.writerows(
            [["" if (c := _cell(v)) is None else csv_text(c) for v in values] for values in zip(*lists, strict=True)]
        )
        yield drain()


class _Sink:
    """A write-only file for pyarrow whose bytes are taken away as they come (`take`)."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []
        self.position = 0
        self.closed = False

    def write(self, data: bytes) -> int:
        self.parts.append(bytes(data))
        self.position += len(data)
        return len(data)

    def tell(self) -> int:
        return self.position

    def flush(self) -> None:
        pass

    def close(self) -> None:
        self.closed = True

    def writable(self) -> bool:
        return True

    def take(self) -> bytes:
        data = b"".join(self.parts)
        self.parts.clear()
        return data


def parquet_chunks(columns: Sequence[str], batches: Iterable[Sequence[Column]]) -> Iterator[bytes]:
    """Column batches of numpy arrays (NaN as null) as one Parquet file, a row group of about
    ROW_GROUP_CELLS cells at a time."""
    sink, writer, pending, cells = _Sink(), None, [], 0
    for batch in batches:
        table = pa.table([pa.array(c, from_pandas=True) for c in batch], names=list(columns))
        if writer is None:
            writer = pq.ParquetWriter(sink, table.schema)
        pending.append(table)
        cells += table.num_rows * len(columns)
        if cells >= ROW_GROUP_CELLS:
            writer.write_table(pa.concat_tables(pending))
            pending, cells = [], 0
            yield sink.take()
    if writer is None:  # no rows: the columns, as float64
        writer = pq.ParquetWriter(sink, pa.schema([(c, pa.float64()) for c in columns]))
    if pending:
        writer.write_table(pa.concat_tables(pending))
    writer.close()
    yield sink.take()


def _download(chunks: Iterator[bytes], fmt: TableFormat, filename: str | None) -> StreamingResponse:
    headers = {} if filename is None else {"Content-Disposition": f'attachment; filename="{filename}.{fmt.value}"'}
    return StreamingResponse(chunks, media_type=_MEDIA_TYPES[fmt], headers=headers)


def stream_table(
    columns: Sequence[str],
    batches: Iterable[Sequence[Column]],
    fmt: TableFormat,
    filename: str,
    *,
    body: Mapping[str, Any] | None = None,
) -> StreamingResponse:
    """A table read piece by piece: `batches` yield one sequence (or numpy array) per column,
    all of one length. JSON: `body` with the rows under "rows" (NaN as null). CSV/Parquet: the
    rows alone, as an attachment named `filename` + the extension (Parquet wants numpy arrays)."""
    if fmt == TableFormat.json:
        return _download(json_chunks(body or {}, columns, batches), fmt, None)
    if fmt == TableFormat.csv:
        return _download(csv_chunks(columns, batches), fmt, filename)
    return _download(parquet_chunks(columns, batches), fmt, filename)


def table_response(
    rows: Sequence[Mapping[str, Any]],
    fmt: TableFormat,
    filename: str,
    *,
    body: Mapping[str, Any] | None = None,
    first_columns: Sequence[str] = (),
) -> Response:
    """JSON: `body` with the rows under "rows" (NaN as null). CSV/Parquet: the rows alone, as
    an attachment named `filename` + the extension."""
    if fmt == TableFormat.json:
        return _download(_json_rows(body or {}, rows), fmt, None)
    columns = columns_of(rows, first_columns)
    if fmt == TableFormat.csv:
        return _download(csv_chunks(columns, _batches_of_rows(rows, columns)), fmt, filename)
    return Response(
        _parquet_bytes(rows, columns),
        media_type=_MEDIA_TYPES[fmt],
        headers={"Content-Disposition": f'attachment; filename="{filename}.{fmt.value}"'},
    )


def _json_rows(body: Mapping[str, Any], rows: Sequence[Mapping[str, Any]]) -> Iterator[bytes]:
    """`body` with `rows` under "rows", each row as it is (its keys, NaN as null)."""
    yield _json_head(body, "rows")
    step = max(1, BATCH_CELLS // max(1, len(rows[0]) if rows else 1))
    for start in range(0, len(rows), step):
        yield (("," if start else "") + json_text(finite(list(rows[start : start + step])))[1:-1]).encode()
    yield b"]}"


def _batches_of_rows(rows: Sequence[Mapping[str, Any]], columns: Sequence[str]) -> Iterator[list[list[Any]]]:
    step = max(1, BATCH_CELLS // max(1, len(columns)))
    for start in range(0, len(rows), step):
        part = rows[start : start + step]
        yield [[row.get(c) for row in part] for c in columns]
