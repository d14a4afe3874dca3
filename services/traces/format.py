"""A Mahimahi trace's text, read strictly: one whole number of milliseconds per line (a
delivery opportunity for one 1500-byte packet), never decreasing, the last after 0 (mm-link's
and the core's rules, simulator/core/src/net/trace.rs), every value within the core's u32.

A trace is stored and hashed in one canonical spelling (the numbers as written without leading
zeros, `\\n` after each), so the same trace uploaded with CRLF line ends or a missing final
newline is the same content and the same run.
"""

from __future__ import annotations

import bisect
import hashlib
from dataclasses import dataclass

__all__ = ["OPPORTUNITY_BYTES", "TraceFormatError", "TraceText", "parse_trace"]

OPPORTUNITY_BYTES = 1500
"""Bytes one delivery opportunity carries (Mahimahi's MTU, as the core counts it)."""
_MAX_MS = 2**32 - 1  # the core keeps opportunity times as u32 milliseconds


class TraceFormatError(ValueError):
    """The text is not a trace: `reason` names the first bad line (1-based) or what is missing."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class TraceText:
    """A validated trace in its canonical spelling, with what a list shows about it."""

    text: str
    sha256: str
    """sha256 (hex) of `text`, UTF-8: the trace's identity in scenarios and cache keys."""
    lines: int
    """Delivery opportunities in one pass."""
    span_ms: int
    """The loop period: the last opportunity's millisecond."""

    def capacity_bps(self, start_s: float, end_s: float) -> float:
        """The mean capacity over [start_s, end_s) of a link that follows the trace from time 0,
        looping (bits a saturating flow could be given there: every opportunity full)."""
        if end_s <= start_s:
            raise ValueError("the window must end after it starts")
        ms = [int(x) for x in self.text.split()]

        def before(t_ms: float) -> int:
            """Opportunities at times < t_ms since 0 (pass k holds k * span + each line)."""
            passes, rest = divmod(t_ms, self.span_ms)
            return int(passes) * len(ms) + bisect.bisect_left(ms, rest)

        count = before(end_s * 1000) - before(start_s * 1000)
        return count * OPPORTUNITY_BYTES * 8 / (end_s - start_s)

    @property
    def mean_mbps(self) -> float:
        """The capacity a saturating flow can use, averaged over one pass (as the core's
        `Trace::mean_bps`): every opportunity full."""
        return self.lines * OPPORTUNITY_BYTES * 8 / (self.span_ms / 1000) / 1e6


def parse_trace(data: bytes) -> TraceText:
    """The trace in `data` (ASCII digits and line ends only), or TraceFormatError."""
    try:
        text = data.decode("ascii")
    except UnicodeDecodeError as e:
        raise TraceFormatError(f"byte {e.start}: a trace is ASCII text, one number per line") from None
    rows = text.split("\n")
    if rows and rows[-1] == "":
        rows.pop()  # the final newline
    values: list[int] = []
    last = 0
    for i, row in enumerate(rows, start=1):
        row = row.removesuffix("\r")
        if not row.isdigit() or not row.isascii():
            shown = row if len(row) <= 20 else row[:20] + "…"
            raise TraceFormatError(f"line {i}: expected a whole number of milliseconds (>= 0), got {shown!r}")
        value = int(row)
        if value > _MAX_MS:
            raise TraceFormatError(f"line {i}: {value} ms is past the largest time a trace may hold ({_MAX_MS} ms)")
        if value < last:
            raise TraceFormatError(f"line {i}: {value} ms is before the line above it ({last} ms)")
        values.append(value)
        last = value
    if not values:
        raise TraceFormatError("the trace has no delivery opportunities (no lines)")
    if last == 0:
        raise TraceFormatError("the trace lasts 0 ms: its last opportunity must be after 0 (mm-link's rule)")
    canonical = "\n".join(map(str, values)) + "\n"
    return TraceText(
        text=canonical,
        sha256=hashlib.sha256(canonical.encode("ascii")).hexdigest(),
        lines=len(values),
        span_ms=last,
    )
