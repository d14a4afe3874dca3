"""The exceptions of tcpsim, defined once here and raised by the compiled core.

Every refusal of the core is a ``ScenarioError`` (a ``ValueError``): catching it catches all of
them, and ``.kind`` tells them apart. ``LimitExceeded`` is the one subclass, for a run that
passed its own ``limits`` (events or wall seconds): the scenario was valid but the run was
stopped, so callers that retry or report differently can catch it first. A bug in the core
(a Rust panic) is an ``InternalError`` (a ``RuntimeError``, deliberately not a
``ValueError``): it is never the caller's fault.
"""

from __future__ import annotations

from typing import Literal

ErrorKind = Literal["parse", "invalid", "limit_exceeded"]


class ScenarioError(ValueError):
    """The core refused a scenario.

    ``str(error)`` is the full message, e.g.
    ``invalid scenario at $.flows[0].tcp.min_rto: unknown field `min_rto`, expected ...``.

    Attributes:
        path: JSON path of the offending field (``$`` is the whole document, e.g.
            ``$.flows[0].tcp.min_rto_s``); ``None`` when the error is not about one field.
        kind: ``"parse"`` (not JSON, or not the scenario's shape: unknown field, wrong type,
            missing field, unknown ``type`` tag), ``"invalid"`` (a value out of range, an
            unknown variant or node name, values inconsistent with each other) or
            ``"limit_exceeded"`` (see ``LimitExceeded``).
    """

    __module__ = "tcpsim"  # shown in tracebacks as tcpsim.ScenarioError; pickles by that name

    path: str | None
    kind: ErrorKind

    def __init__(self, message: str, path: str | None = None, kind: ErrorKind = "invalid") -> None:
        super().__init__(message)
        self.path = path
        self.kind = kind


class LimitExceeded(ScenarioError):
    """A run passed one of its ``limits`` (``max_events`` or ``max_wall_s``) and was stopped."""

    __module__ = "tcpsim"

    def __init__(self, message: str, path: str | None = None, kind: ErrorKind = "limit_exceeded") -> None:
        super().__init__(message, path, kind)


class Stopped(Exception):
    """The run was stopped through its ``StopToken`` (the caller's own request: a cancel, a
    worker shutting down). Neither the scenario's fault nor the core's: not a ``ScenarioError``,
    but with the same ``path`` (always None) and ``kind`` (``"stopped"``)."""

    __module__ = "tcpsim"

    path: str | None
    kind: str

    def __init__(self, message: str, path: str | None = None, kind: str = "stopped") -> None:
        super().__init__(message)
        self.path = path
        self.kind = kind


class InternalError(RuntimeError):
    """The core failed in a way no input should cause (a bug): please report it."""

    __module__ = "tcpsim"
