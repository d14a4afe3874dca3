"""tcpsim: tcplab's packet-level TCP congestion-control simulator, from Python.

The simulator is the Rust crate ``tcpsim-core``; this package is its thin binding::

    import tcpsim

    result = tcpsim.run({
        "duration_s": 5,
        "topology": {"dumbbell": {"bottleneck": {"rate_mbps": 10, "delay_ms": 5}}},
        "flows": [{"variant": "reno", "rtt_ms": 40}],
    })
    result["flows"][0]["goodput_bps"]

``run``, ``validate`` and ``normalize`` take a scenario as a dict or a JSON string, release the
GIL while the core works, and raise ``ScenarioError`` (a ``ValueError``) naming the offending
field's JSON path. ``run(scenario, stop=StopToken())`` can be stopped from another thread
(``token.stop()``: the run raises ``Stopped`` within a few thousand events). ``normalize`` returns the scenario as the core reads it, every default filled
in (``canonical=True``: integral floats as ints, keys sorted — the form tcplab hashes). ``VARIANTS`` maps each congestion-control variant to a one-line description (``SACK_VARIANTS`` lists those that recover with SACK); ``TCP_PROFILES`` each TCP profile (``"tcp": {"profile": "ns2"}``) to the fields it sets.
``scenario_schema()`` is the scenario format as JSON Schema, generated from the core's types.

``run(scenario, columns=True)`` builds the result directly from the core's (no JSON text in
between) and gives the per-flow table as columns and the traces' series as numpy arrays::

    result = tcpsim.run(scenario, columns=True)
    result["flows"]["goodput_bps"]          # numpy float64 array, one value per flow
    result["flows"]["name"]                 # list of str ("type" and "variant" too)
    result["traces"]["flows"][0]["cwnd"]    # numpy float64 array (with outputs.trace_interval_s)

Float columns and series are float64 with NaN exactly where ``run(scenario)`` has ``None`` (an
undefined ratio, an infinite ssthresh); integers are int64; links, fairness and stats are the
same dicts as without ``columns``. ``to_records(result)`` gives back what ``run(scenario)``
returns, bit for bit. ``columns=True`` needs numpy (``ModuleNotFoundError`` without it).
"""

from tcpsim._columns import to_records
from tcpsim._core import (
    SACK_VARIANTS,
    TCP_PROFILES,
    VARIANTS,
    StopToken,
    __version__,
    normalize,
    run,
    scenario_schema,
    validate,
)
from tcpsim._errors import ErrorKind, InternalError, LimitExceeded, ScenarioError, Stopped

__all__ = [
    "SACK_VARIANTS",
    "TCP_PROFILES",
    "VARIANTS",
    "ErrorKind",
    "InternalError",
    "LimitExceeded",
    "ScenarioError",
    "StopToken",
    "Stopped",
    "__version__",
    "normalize",
    "run",
    "scenario_schema",
    "to_records",
    "validate",
]
