"""The square-root law: Mathis, Semke, Mahdavi, Ott 1997.

M. Mathis, J. Semke, J. Mahdavi, T. Ott, "The Macroscopic Behavior of the TCP Congestion
Avoidance Algorithm", ACM SIGCOMM Computer Communication Review 27(3), July 1997:

    T = (MSS / RTT) · C / √p,   C = √(3 / (2b))

(bytes per second; C ≈ 1.22 for b = 1, an ACK per segment, 0.87 for b = 2, delayed ACKs). In
packets: C / (R √p) packets/s, C / √p packets per round trip. Periodic losses in congestion
avoidance only: no timeouts, no window limit.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from services.models.common import (
    MSS,
    RENO_FAMILY,
    RTT,
    THROUGHPUT_OUTPUTS,
    Bound,
    Model,
    loss_event_rate,
    scalar_or_array,
)
from services.models.pftk import B

REFERENCE = (
    'M. Mathis, J. Semke, J. Mahdavi, T. Ott, "The Macroscopic Behavior of the TCP Congestion Avoidance '
    'Algorithm", ACM SIGCOMM CCR 27(3), 1997'
)

P = loss_event_rate(
    Bound(0.0, 0.01, lo_open=True),
    "the law ignores timeouts: at p = 1 % it is already 10 % above PFTK's full model with T0 = 4R (24 % with "
    "T0 = 10R), and the gap grows fast above (tcplab's bound)",
    description="loss probability (congestion signals per packet)",
)


def constant(b: Any = 1.0) -> np.ndarray | np.float64:
    """C = √(3/(2b))."""
    return scalar_or_array(np.sqrt(3.0 / (2.0 * np.asarray(b, dtype=float))))


def pkts_per_rtt(p: Any, b: Any = 1.0) -> np.ndarray | np.float64:
    """C / √p packets per round trip."""
    return scalar_or_array(np.asarray(constant(b)) / np.sqrt(np.asarray(p, dtype=float)))


def _compute(shape, p, rtt_s, b):
    per_rtt = np.asarray(pkts_per_rtt(p, b))
    return {"throughput_pkts_per_s": per_rtt / rtt_s, "throughput_pkts_per_rtt": per_rtt}, []


MODEL = Model(
    name="mathis",
    title="Square-root law (Mathis et al.)",
    reference=REFERENCE,
    equations="T = (MSS/RTT) · C/√p, C = √(3/(2b))",
    params=(P, RTT, B, MSS),
    outputs=THROUGHPUT_OUTPUTS,
    compute=_compute,
    variants=RENO_FAMILY,
    notes="b defaults to 1 (C ≈ 1.22), as for PFTK. No timeouts and no window limit.",
)
