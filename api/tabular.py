"""Tables as HTTP responses: the same rows as JSON, CSV or Parquet (`?format=`).

Every plot on the dashboards is drawn from an endpoint that returns its rows this way, so
what a researcher downloads is exactly what the page plotted.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Mapping, Sequence
from enum import StrEnum
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from fastapi import Query, Response
from fastapi.responses import JSONResponse


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
    TableFormat.csv: "text/csv; charset=utf-8",
    TableFormat.parquet: "application/vnd.apache.parquet",
}


def columns_of(rows: Sequence[Mapping[str, Any]], first: Sequence[str] = ()) -> list[str]:
    """Every key of the rows, `first` first, then in order of first appearance."""
    seen = dict.fromkeys(first)
    for row in rows:
        seen.update(dict.fromkeys(row))
    return list(seen)


def _cell(value: Any) -> Any:
    """CSV and Parquet cells: lists and dicts (axis values such as `[1, 2]`) as JSON text,
    non-finite floats as empty."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, list | dict | tuple):
        return json.dumps(value, sort_keys=True)
    return value


def _csv_bytes(rows: Sequence[Mapping[str, Any]], columns: list[str]) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow(["" if (c := _cell(row.get(name))) is None else c for name in columns])
    return out.getvalue().encode()


def _parquet_bytes(rows: Sequence[Mapping[str, Any]], columns: list[str]) -> bytes:
    data = {name: [_cell(row.get(name)) for row in rows] for name in columns}
    arrays = {}
    for name, values in data.items():
        kinds = {type(v) for v in values if v is not None}
        # A column of ints and floats (an axis of 1, 2.5) is a float column, not an error.
        if kinds and kinds <= {int, float} and float in kinds:
            values = [None if v is None else float(v) for v in values]
        elif len(kinds) > 1:
            values = [None if v is None else str(v) for v in values]
        arrays[name] = pa.array(values)
    buffer = io.BytesIO()
    pq.write_table(pa.table(arrays) if arrays else pa.table({}), buffer)
    return buffer.getvalue()


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


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
        return JSONResponse(_finite({**(body or {}), "rows": list(rows)}))
    columns = columns_of(rows, first_columns)
    content = _csv_bytes(rows, columns) if fmt == TableFormat.csv else _parquet_bytes(rows, columns)
    return Response(
        content,
        media_type=_MEDIA_TYPES[fmt],
        headers={"Content-Disposition": f'attachment; filename="{filename}.{fmt.value}"'},
    )
