"""The records form of a result returned by ``run(scenario, columns=True)``.

``run(scenario, columns=True)`` gives the per-flow table as columns and the traces' series as
numpy arrays (float64 with NaN where the records have ``None``, int64 for integers, a list of
``str`` for names, types and variants). ``to_records`` turns that back into what
``run(scenario)`` returns, bit for bit: lists of Python floats and ints, ``None`` for NaN, one
dict per flow with its keys in the table's order.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["to_records"]


def _values(column: Any) -> Any:
    """A column or a series as the records have it: an array as a list of Python numbers (NaN
    as None); anything else (a list of str, a name) as it is."""
    tolist = getattr(column, "tolist", None)
    if tolist is None:
        return column
    values = tolist()
    if column.dtype.kind == "f":
        return [None if v != v else v for v in values]
    return values


_ABSENT_WHEN_NONE = frozenset({"ecn_marks_received", "cwnd_reductions_ecn", "dctcp_alpha"})
"""Flow keys the records leave out where a flow has none (only flows with ``tcp.ecn`` have
the first two, only DCTCP flows ``dctcp_alpha``): their column, present when any flow has them, is a list with ``None`` for the others."""


def _rows(table: Mapping[str, Any]) -> list[dict[str, Any]]:
    keys = list(table)
    columns = [_values(table[k]) for k in keys]
    return [
        {k: v for k, v in zip(keys, row, strict=True) if v is not None or k not in _ABSENT_WHEN_NONE}
        for row in zip(*columns, strict=True)
    ]


def _traces(traces: Mapping[str, Any]) -> dict[str, Any]:
    return {
        key: [{k: _values(v) for k, v in item.items()} for item in value] if isinstance(value, list) else _values(value)
        for key, value in traces.items()
    }


def to_records(result: Mapping[str, Any]) -> dict[str, Any]:
    """The result as ``run(scenario)`` returns it, from one that ``run(scenario, columns=True)``
    returned: a new dict, equal to the records form key for key and bit for bit (NaN becomes
    ``None``, arrays lists of Python floats and ints). A result already in the records form (its
    ``flows`` a list) comes back as a shallow copy."""
    records = dict(result)
    flows = result["flows"]
    if isinstance(flows, list):
        return records
    records["flows"] = _rows(flows)
    if "traces" in result:
        records["traces"] = _traces(result["traces"])
    return records
