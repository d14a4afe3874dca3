"""TCP Reno with timeouts: the PFTK model, full and approximate.

J. Padhye, V. Firoiu, D. Towsley, J. Kurose, "Modeling TCP Throughput: A Simple Model and its
Empirical Validation", Proc. ACM SIGCOMM 1998, pp. 303-314 (equation numbers are the SIGCOMM
paper's; the IEEE/ACM ToN 2000 version, "Modeling TCP Reno Performance", numbers them
differently). Notation: p loss probability (of a loss indication per packet), RTT = R, T0 the
first timeout (the service's ``rto_s``), b packets acknowledged per ACK, W_max the receiver's
window limit (packets).

- E[W_u] = (2 + b)/(3b) + √(8(1 − p)/(3bp) + ((2 + b)/(3b))²) — the unconstrained mean window
  at a triple-duplicate-ACK loss indication;
- Q̂(w) = min(1, (1 − (1−p)³)(1 + (1−p)³(1 − (1−p)^(w−3))) / (1 − (1−p)^w)) — the probability
  that a loss indication in a window of w packets is a timeout (1 for w ≤ 3);
- f(p) = 1 + p + 2p² + 4p³ + 8p⁴ + 16p⁵ + 32p⁶ — the exponential back-off of a run of timeouts,
  whose mean duration is T0 f(p)/(1 − p);
- full model, eq. (32) (eq. (31) is its first branch without W_max):
      B = [(1−p)/p + E[W_u] + Q̂(E[W_u])/(1−p)] / [R(b E[W_u]/2 + 1) + Q̂(E[W_u]) T0 f(p)/(1−p)]
          if E[W_u] < W_max, else
      B = [(1−p)/p + W_max + Q̂(W_max)/(1−p)] / [R(b W_max/8 + (1−p)/(p W_max) + 2) + Q̂(W_max) T0 f(p)/(1−p)];
- approximate model, eq. (33), as in RFC 3448 §3.1 (TFRC):
      B ≈ min(W_max/R, 1 / (R √(2bp/3) + T0 min(1, 3√(3bp/8)) p (1 + 32p²))).

b defaults to 1: paper 000 and tcplab's simulator acknowledge every segment (the simulator's
default; paper 000 §III-A "an ACK is sent for each received segment"), and RFC 3448 uses b = 1
too. Pass b = 2 for a receiver that delays ACKs (RFC 1122), the case PFTK's traces mostly had.
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
    Output,
    Param,
    derived_warning,
    loss_event_rate,
    rto,
    scalar_or_array,
)

REFERENCE = (
    'J. Padhye, V. Firoiu, D. Towsley, J. Kurose, "Modeling TCP Throughput: A Simple Model and its '
    'Empirical Validation", Proc. ACM SIGCOMM 1998'
)

B = Param(
    name="b",
    symbol="b",
    unit="packets per ACK",
    description="packets acknowledged by one ACK (1: an ACK per segment; 2: delayed ACKs)",
    domain=Bound(1.0, None),
    domain_reason="an ACK that acknowledges new data covers at least one packet",
    valid=Bound(1.0, 2.0),
    valid_reason="TCP receivers acknowledge every segment or every second one (RFC 1122 delayed ACKs)",
    default=1.0,
)
W_MAX = Param(
    name="w_max",
    symbol="W_max",
    unit="packets",
    description="receiver window limit; absent means unlimited",
    domain=Bound(1.0, None),
    domain_reason="a window holds at least one packet",
    required=False,
)
T0 = rto("T0: duration of the first timeout (before back-off)")


def f_backoff(p: Any) -> np.ndarray | np.float64:
    """f(p) = 1 + p + 2p² + 4p³ + 8p⁴ + 16p⁵ + 32p⁶ (the back-off series, capped at 64 T0)."""
    p = np.asarray(p, dtype=float)
    return scalar_or_array(1 + p * (1 + p * (2 + p * (4 + p * (8 + p * (16 + p * 32))))))


def expected_window(p: Any, b: Any = 1.0) -> np.ndarray | np.float64:
    """E[W_u]: the mean unconstrained window (packets) at a triple-duplicate-ACK indication."""
    p = np.asarray(p, dtype=float)
    b = np.asarray(b, dtype=float)
    a = (2.0 + b) / (3.0 * b)
    return scalar_or_array(a + np.sqrt(8.0 * (1.0 - p) / (3.0 * b * p) + a * a))


def q_hat(p: Any, w: Any) -> np.ndarray | np.float64:
    """Q̂(w): probability that a loss indication in a window of w packets is a timeout."""
    p = np.asarray(p, dtype=float)
    w = np.asarray(w, dtype=float)
    log_q = np.log1p(-p)  # ln(1 − p), exact for small p
    q3 = np.exp(3.0 * log_q)
    num = -np.expm1(3.0 * log_q) * (1.0 + q3 * -np.expm1((w - 3.0) * log_q))
    den = -np.expm1(w * log_q)
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.minimum(1.0, num / den)
    return scalar_or_array(np.where(w <= 3.0, 1.0, q))


def full_pkts_per_s(p: Any, rtt_s: Any, rto_s: Any, b: Any = 1.0, w_max: Any = np.inf) -> np.ndarray | np.float64:
    """Eq. (32), the full model (eq. (31) when ``w_max`` is infinite): packets per second."""
    p = np.asarray(p, dtype=float)
    r = np.asarray(rtt_s, dtype=float)
    t0 = np.asarray(rto_s, dtype=float)
    b = np.asarray(b, dtype=float)
    w_max = np.asarray(w_max, dtype=float)
    ew = np.asarray(expected_window(p, b))
    timeouts = t0 * f_backoff(p) / (1.0 - p)
    # Unconstrained branch (E[W_u] < W_max).
    q_u = q_hat(p, ew)
    free = ((1.0 - p) / p + ew + q_u / (1.0 - p)) / (r * (b * ew / 2.0 + 1.0) + q_u * timeouts)
    # Window-limited branch; the minimum keeps W_max finite where this branch is not used.
    wm = np.minimum(w_max, np.maximum(ew, 1.0))
    q_m = q_hat(p, wm)
    limited = ((1.0 - p) / p + wm + q_m / (1.0 - p)) / (
        r * (b * wm / 8.0 + (1.0 - p) / (p * wm) + 2.0) + q_m * timeouts
    )
    return scalar_or_array(np.where(ew < w_max, free, limited))


def approx_pkts_per_s(p: Any, rtt_s: Any, rto_s: Any, b: Any = 1.0, w_max: Any = np.inf) -> np.ndarray | np.float64:
    """Eq. (33), the approximate model: packets per second."""
    p = np.asarray(p, dtype=float)
    r = np.asarray(rtt_s, dtype=float)
    t0 = np.asarray(rto_s, dtype=float)
    b = np.asarray(b, dtype=float)
    den = r * np.sqrt(2.0 * b * p / 3.0) + t0 * np.minimum(1.0, 3.0 * np.sqrt(3.0 * b * p / 8.0)) * p * (
        1.0 + 32.0 * p * p
    )
    return scalar_or_array(np.minimum(np.asarray(w_max, dtype=float) / r, 1.0 / den))


# ---- the registered models -------------------------------------------------------------------

# The full model covers timeouts and back-off, so it is not restricted to small p. The
# approximation drops terms that matter at high loss: its valid range is tcplab's, where it
# stays within 7 % of the full model (b = 1 or 2, T0 from R to 10R, no W_max; at p = 0.1 it
# is 7-24 % off, and up to 79 % near p = 1) — checked in tests/services/test_models.py.
P_FULL = loss_event_rate(None, "", description="loss probability (loss indications per packet sent)")
P_APPROX = loss_event_rate(
    Bound(0.0, 0.05, lo_open=True),
    "eq. (33) drops terms of the full model that matter at high loss; up to p = 5 % it stays within "
    "7 % of eq. (32) for b = 1 or 2 and R ≤ T0 ≤ 10R (tcplab's bound)",
    description="loss probability (loss indications per packet sent)",
)
T0_WARNING = (
    "T0 < R: TCP's timeout is at least the smoothed RTT (RFC 6298); the model's timeout terms assume "
    "a timeout longer than a round trip"
)
WINDOW = Output("window_pkts", "packets", "E[W_u], the unconstrained mean window (eq. 13 of the paper)")
Q_OUT = Output("timeout_probability", "1", "Q̂(min(E[W_u], W_max)): share of loss indications that are timeouts")


def _full(shape, p, rtt_s, rto_s, b, w_max=None):
    wm = np.inf if w_max is None else w_max
    pkts = np.asarray(full_pkts_per_s(p, rtt_s, rto_s, b, wm))
    ew = np.asarray(expected_window(p, b))
    warnings = derived_warning("rto_s", rto_s < rtt_s, shape, T0_WARNING)
    return {
        "throughput_pkts_per_s": pkts,
        "throughput_pkts_per_rtt": pkts * rtt_s,
        "window_pkts": ew,
        "timeout_probability": np.asarray(q_hat(p, np.minimum(ew, wm))),
    }, warnings


def _approx(shape, p, rtt_s, rto_s, b, w_max=None):
    wm = np.inf if w_max is None else w_max
    pkts = np.asarray(approx_pkts_per_s(p, rtt_s, rto_s, b, wm))
    warnings = derived_warning("rto_s", rto_s < rtt_s, shape, T0_WARNING)
    return {"throughput_pkts_per_s": pkts, "throughput_pkts_per_rtt": pkts * rtt_s}, warnings


FULL_MODEL = Model(
    name="pftk-full",
    title="TCP Reno with timeouts (PFTK), full model",
    reference=REFERENCE + ", eq. (32) (the full model; eq. (31) without W_max)",
    equations=(
        "B = [(1−p)/p + E[W_u] + Q̂(E[W_u])/(1−p)] / [R(b E[W_u]/2 + 1) + Q̂(E[W_u]) T0 f(p)/(1−p)] if E[W_u] < W_max, "
        "else [(1−p)/p + W_max + Q̂(W_max)/(1−p)] / [R(b W_max/8 + (1−p)/(p W_max) + 2) + Q̂(W_max) T0 f(p)/(1−p)]; "
        "E[W_u] = (2+b)/(3b) + √(8(1−p)/(3bp) + ((2+b)/(3b))²); "
        "Q̂(w) = min(1, (1−(1−p)³)(1+(1−p)³(1−(1−p)^(w−3))) / (1−(1−p)^w)); "
        "f(p) = 1 + p + 2p² + 4p³ + 8p⁴ + 16p⁵ + 32p⁶"
    ),
    params=(P_FULL, RTT, T0, B, W_MAX, MSS),
    outputs=THROUGHPUT_OUTPUTS + (WINDOW, Q_OUT),
    compute=_full,
    variants=RENO_FAMILY,
    notes="rto_s is T0. b defaults to 1 (an ACK per segment, as paper 000 and tcplab's simulator); use 2 "
    "for delayed ACKs. The two branches of eq. (32) do not meet exactly where E[W_u] = W_max.",
)

APPROX_MODEL = Model(
    name="pftk-approx",
    title="TCP Reno with timeouts (PFTK), approximate model",
    reference=REFERENCE + ", eq. (33); the same formula as RFC 3448 §3.1",
    equations="B ≈ min(W_max/R, 1 / (R √(2bp/3) + T0 min(1, 3√(3bp/8)) p (1 + 32p²)))",
    params=(P_APPROX, RTT, T0, B, W_MAX, MSS),
    outputs=THROUGHPUT_OUTPUTS,
    compute=_approx,
    variants=RENO_FAMILY,
    notes="rto_s is T0; b defaults to 1 (see pftk-full).",
)
