"""Type stubs of the compiled module ``tcpsim._core`` (simulator/python/src/lib.rs)."""

from collections.abc import Sequence
from typing import Any, Final

__version__: Final[str]
"""The core's version (the Rust crate's); results carry it as ``core_version``."""

VARIANTS: Final[dict[str, str]]
"""Congestion-control variant name -> one-line description."""
SACK_VARIANTS: Final[list[str]]
"""The variants that recover with SACK unless ``tcp.sack`` is false: those ``tcp.rack`` serves."""
TCP_PROFILES: Final[dict[str, dict[str, object]]]
"""TCP profile name -> the TcpConfig fields it sets."""

class StopToken:
    """Stops a run in progress from another thread: ``run(scenario, stop=token)``, then
    ``token.stop()``; the run raises ``tcpsim.Stopped`` within a few thousand events."""

    def __init__(self) -> None: ...
    def stop(self) -> None:
        """Ask the runs holding this token to stop. Idempotent; safe from any thread."""
    @property
    def stopped(self) -> bool:
        """Whether ``stop()`` was called."""

def run(scenario: str | dict[str, Any], *, stop: StopToken | None = None, columns: bool = False) -> dict[str, Any]:
    """Run a scenario and return the result (``core_version``, ``seed``, ``measured_from_s``,
    ``measured_to_s``, ``flows``, ``links``, ``fairness``, optional ``traces``, and the
    machine-dependent ``stats``). With ``stop``, ``stop.stop()`` from another thread ends the run
    with ``tcpsim.Stopped``.

    Without ``columns`` the result is the core's JSON read by ``json.loads``: ``flows`` a list of
    dicts, one per flow, and every trace series a list (``None`` where a value is undefined).

    With ``columns=True`` it is built directly from the core's result, with no JSON text:
    ``flows`` is a dict of columns (same keys, same order), each a numpy array with one value per
    flow — float64 with NaN exactly where the records have ``None``, int64 for counters — or, for
    ``name``, ``type`` and ``variant``, a list (``None`` for a UDP flow's variant); every trace
    series (``time_s``, a flow's ``cwnd``, ``ssthresh``, ``throughput_bps`` and ``delay_s``, a link's ``queue``) is a numpy array
    (float64 with NaN for ``None``; ``queue`` int64) in the same nesting as the records form.
    ``links``, ``fairness``, ``stats`` and the scalars are as without ``columns``.
    ``tcpsim.to_records`` turns it back into the records form, bit for bit. Needs numpy:
    without it, raises ``ModuleNotFoundError`` before the run starts.

    Raises ``tcpsim.ScenarioError`` (a ``ValueError``) for a bad scenario, ``tcpsim.LimitExceeded``
    (a ``ScenarioError``) when the run passes its ``limits``, ``TypeError`` when ``scenario`` is
    neither a str nor a dict (or the dict holds something ``json.dumps`` cannot write), and
    ``tcpsim.InternalError`` (a ``RuntimeError``) if the core itself fails (a bug).
    """

def scenario_schema() -> dict[str, Any]:
    """The scenario format as JSON Schema (draft 2020-12), generated from the core's serde types:
    every field, its type, enum values and default (a fresh dict on every call). Checks across
    fields (warm-up below duration, RED thresholds in order, ...) are not in it."""

def validate(scenario: str | dict[str, Any]) -> None:
    """Check a scenario completely without running it; raise like ``run``."""

def normalize(scenario: str | dict[str, Any], *, canonical: bool = False) -> dict[str, Any]:
    """Check a scenario completely (as ``validate``) and return it as the core reads it:
    re-serialised with every default filled in. Fields whose default is "absent" (``variant``,
    ``loss``, ``stop_s``, ``name``, …) stay absent; numbers of float fields come back as floats
    (``45`` -> ``45.0``). With ``canonical=True``, every integral float below 2**53 comes back
    as an int (``45.0`` -> ``45``) and the keys sorted: the form tcplab hashes, built by the
    binding directly (no JSON text parsed in Python). Raises like ``validate``.
    """

def cli(argv: Sequence[str]) -> int:
    """Run the ``tcpsim`` command line with ``argv`` (program name first); return the exit code."""
