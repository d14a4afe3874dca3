"""CUBIC's average window: RFC 9438 §5.1 (and RFC 8312 §5.1, its predecessor).

The RFC's analysis takes a deterministic loss model: one loss event every 1/p packets, each at
the window W_max where the cubic curve W(t) = C(t − K)³ + W_max returns to the previous maximum
(K = ∛(W_max(1 − β)/C), so a cycle lasts K seconds). Averaging the curve over a cycle gives
W_max(3 + β)/4, and equating the packets of a cycle, (1/R)∫₀ᴷ W dt, to 1/p gives

    AVG_W_cubic = (C(3 + β) / (4(1 − β)))^¼ · R^¾ / p^¾          (packets; R in seconds)

CUBIC never grows slower than Reno would (the Reno-friendly region, RFC 9438 §4.3: an AIMD
estimate with α = 3(1 − β)/(1 + β), whose average window is Reno's √(3/(2p))), so the model is
the larger of the two: max(AVG_W_cubic, √(3/(2p))). The answer per round trip is that window;
per second, the window over R.

C = 0.4 and β = 0.7 by default, as the RFC and tcplab's core (simulator/core/src/cc/cubic.rs).
Like the square-root law, no timeouts, no slow start, no window or bandwidth limit.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from services.models.common import (
    MSS,
    RTT,
    THROUGHPUT_OUTPUTS,
    Bound,
    Model,
    Output,
    Param,
    loss_event_rate,
    scalar_or_array,
)

REFERENCE = (
    'L. Xu, S. Ha, I. Rhee, V. Goel, L. Eggert, "CUBIC for Fast and Long-Distance Networks", RFC 9438, '
    "2023, §5.1 (RFC 8312, 2018, §5.1)"
)

P = loss_event_rate(
    Bound(0.0, 0.01, lo_open=True),
    "the analysis ignores timeouts and slow start, as the square-root law does (tcplab's bound, the same "
    "as for Mathis et al.)",
    description="loss event rate (loss events per packet, deterministic in the analysis)",
)
C_PARAM = Param(
    name="c",
    symbol="C",
    unit="packets/s³",
    description="the cubic curve's scaling constant",
    domain=Bound(0.0, None, lo_open=True),
    domain_reason="C scales the window's growth; at C = 0 the window never grows back",
    default=0.4,
)
BETA = Param(
    name="beta",
    symbol="β",
    unit="1",
    description="multiplicative decrease factor (the window after a loss event is β times the window before)",
    domain=Bound(0.0, 1.0, lo_open=True, hi_open=True),
    domain_reason="a decrease keeps a positive fraction of the window, and less than all of it",
    default=0.7,
)
REGION = Output(
    "reno_friendly",
    "boolean",
    "true where the Reno-friendly estimate √(3/(2p)) exceeds the cubic average (RFC 9438 §4.3: CUBIC then "
    "follows Reno's growth)",
)
WINDOW = Output("window_pkts", "packets", "average congestion window")


def avg_w_cubic(p: Any, rtt_s: Any, c: Any = 0.4, beta: Any = 0.7) -> np.ndarray | np.float64:
    """RFC 9438 §5.1: the average window of the cubic curve under deterministic loss."""
    p, r, c, b = (np.asarray(x, dtype=float) for x in (p, rtt_s, c, beta))
    return scalar_or_array((c * (3.0 + b) / (4.0 * (1.0 - b))) ** 0.25 * r**0.75 / p**0.75)


def avg_w_reno_friendly(p: Any) -> np.ndarray | np.float64:
    """The Reno-friendly region's average window: AIMD(α = 3(1 − β)/(1 + β), β) averages
    √(α(1 + β)/(2(1 − β)p)) = √(3/(2p)), Reno's, whatever β."""
    return scalar_or_array(np.sqrt(1.5 / np.asarray(p, dtype=float)))


def pkts_per_rtt(p: Any, rtt_s: Any, c: Any = 0.4, beta: Any = 0.7) -> np.ndarray | np.float64:
    """CUBIC's average window, packets per round trip: the larger of the two regions'."""
    return scalar_or_array(np.maximum(avg_w_cubic(p, rtt_s, c, beta), avg_w_reno_friendly(p)))


def _compute(shape, p, rtt_s, c, beta):
    cubic = np.asarray(avg_w_cubic(p, rtt_s, c, beta))
    friendly = np.asarray(avg_w_reno_friendly(p))
    per_rtt = np.maximum(cubic, friendly)
    return {
        "throughput_pkts_per_s": per_rtt / rtt_s,
        "throughput_pkts_per_rtt": per_rtt,
        "window_pkts": per_rtt,
        "reno_friendly": np.broadcast_to(friendly > cubic, shape),
    }, []


MODEL = Model(
    name="cubic",
    title="CUBIC average window (RFC 9438 §5.1)",
    reference=REFERENCE,
    equations="AVG_W = max((C(3+β)/(4(1−β)))^¼ · R^¾/p^¾, √(3/(2p))); T = AVG_W/R",
    params=(P, RTT, C_PARAM, BETA, MSS),
    outputs=THROUGHPUT_OUTPUTS + (WINDOW, REGION),
    compute=_compute,
    variants=("cubic",),
    notes="Deterministic loss (one event every 1/p packets), each at the previous maximum; no timeouts, slow "
    "start or window limit. With C = 0.4, β = 0.7 the cubic term is 1.054 · (R/p)^¾ and exceeds Reno's "
    "1.22/√p when R³/p > about 1.8 (R in s): long paths or rare losses.",
)
