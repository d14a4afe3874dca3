"""The L4S study as a preset: one scalable flow (TCP Prague, or DCTCP sending ECT(1)) beside one
classic flow (Reno or CUBIC) on one bottleneck whose queue is DualPI2, PIE with ECN, FQ-CoDel or
Drop-Tail.

Not one paper's experiment but the claims of the L4S RFCs (RFC 9330, RFC 9331, RFC 9332) and of
RFC 8257, judged on a path of our choosing (`CLAIMS`, each with its source).
services/reproductions/study_l4s.py runs the study; docs/validation/study-l4s.md discusses the
outcome.
"""

from __future__ import annotations

from typing import Any

from services.presets.registry import Parameter, Preset, Reference

__all__ = [
    "BDP_PKTS",
    "CLAIMS",
    "CLASSIC",
    "CLASSICS",
    "DROPTAIL_LIMIT_PKTS",
    "NAME",
    "PACKET_BYTES",
    "PI2_TARGET_MS",
    "PRESETS",
    "QUEUE",
    "QUEUES",
    "RATE_MBPS",
    "RTT",
    "RTTS",
    "RTT_MS",
    "RTT_VIRT_MS",
    "SCALABLE",
    "SCALABLES",
    "SOURCES",
]

NAME = "study-l4s"
RATE_MBPS = 100.0
RTT_MS = 20.0
RTTS = (10, 20, 40, 80)
"""Below, at and above Prague's 25 ms R_virt (`RTT_VIRT_MS`), up to RFC 9332's RTT_max of 100 ms."""
BOTTLENECK_DELAY_MS = 5.0
PACKET_BYTES = 1500
BDP_PKTS = RATE_MBPS * 1e6 * RTT_MS / 1e3 / 8 / PACKET_BYTES
"""One bandwidth-delay product at the base RTT in full-size packets (166.7)."""
PI2_TARGET_MS = 15.0
"""DualPI2's classic target (RFC 9332 Appendix A.1), and PIE's QDELAY_REF (RFC 8033 §4.2)."""
RTT_VIRT_MS = 25.0
"""Prague grows RTT-independently as a 25 ms flow would below this (Linux's RTT_CONTROL_RATE)."""
DROPTAIL_LIMIT_PKTS = 250
"""Drop-Tail's buffer: 30 ms at 100 Mb/s, 1.5 BDP at the base RTT."""

QUEUE = "queue"
"""A preset parameter: the bottleneck's queue (`QUEUES`), which sets the whole queue object."""
QUEUES = ("dualpi2", "pie-ecn", "fq_codel", "droptail")
QUEUE_OBJECTS: dict[str, dict[str, Any]] = {
    "dualpi2": {"type": "dualpi2"},
    "pie-ecn": {"type": "pie", "ecn": True},
    "fq_codel": {"type": "fq_codel"},
    "droptail": {"type": "droptail", "limit_pkts": DROPTAIL_LIMIT_PKTS},
}
"""Each queue with its RFC's defaults (docs/simulator.md, "Queues"); PIE marks ECN-capable
packets instead of dropping them (RFC 8033 §5.1), FQ-CoDel does by default."""
SCALABLE = "flows[0].variant"
SCALABLES = ("prague", "dctcp")
"""The scalable flow's congestion control; it always sends ECT(1) (`tcp.l4s`)."""
CLASSIC = "flows[1].variant"
CLASSICS = ("reno", "cubic")
"""The classic flow's congestion control, Not-ECT."""
RTT = "flows[*].rtt_ms"

SOURCES = {
    "rfc9330": 'B. Briscoe, K. De Schepper, M. Bagnulo, G. White, "Low Latency, Low Loss, and Scalable Throughput '
    '(L4S) Internet Service: Architecture", RFC 9330, 2023',
    "rfc9331": 'K. De Schepper, B. Briscoe, "The Explicit Congestion Notification (ECN) Protocol for Low Latency, '
    'Low Loss, and Scalable Throughput (L4S)", RFC 9331, 2023',
    "rfc9332": 'K. De Schepper, B. Briscoe, G. White, "Dual-Queue Coupled Active Queue Management (AQM) for Low '
    'Latency, Low Loss, and Scalable Throughput (L4S)", RFC 9332, 2023',
    "rfc8257": 'S. Bensley, D. Thaler, P. Balasubramanian, L. Eggert, G. Judd, "Data Center TCP (DCTCP): TCP '
    'Congestion Control for Data Centers", RFC 8257, 2017',
}

CLAIMS: tuple[dict[str, Any], ...] = (
    {
        "id": "l4s-queue-about-a-millisecond",
        "experiment": "queues",
        "text": "Under DualPI2 the L4S flow's queueing delay stays around a millisecond while the classic flow's "
        "sits near PI2's 15 ms target.",
        "where": "RFC 9332 §1 and §2 (RFC 9330, the L4S architecture); Prague beside Reno and beside CUBIC through "
        "DualPI2 at 20 ms",
    },
    {
        "id": "coupling-equal-rates",
        "experiment": "rtt",
        "text": "The coupling (k = 2, p_C = (p_CL/k)²) gives the scalable flow and the classic flow roughly equal "
        "rates: within a factor of two of each other.",
        "where": "RFC 9332 §2.1 (the coupling, derived for flows of the same RTT); Prague or DCTCP-ECT(1) beside "
        "Reno or CUBIC through DualPI2, 10-80 ms",
    },
    {
        "id": "scalable-starves-classic-in-one-queue",
        "experiment": "queues",
        "text": "A scalable flow sharing one classic single-queue AQM (PIE with ECN) with a classic flow starves "
        "it — the reason for the dual queue.",
        "where": "RFC 9332 §1; RFC 9331 §4.3 (a scalable sender's response needs a separate queue or a classic "
        "fall-back); RFC 8257 §6 (DCTCP beside conventional TCP); Prague beside Reno and CUBIC through PIE with ECN",
    },
    {
        "id": "dualpi2-keeps-the-link-busy",
        "experiment": "rtt",
        "text": "Under DualPI2 the link stays busy: at least 95 % utilisation.",
        "where": "RFC 9330 and RFC 9332 §1 (low queuing delay with the link still fully used: our reading of their "
        "aims, not one sentence cited); every DualPI2 point of the RTT sweep",
    },
)
"""The claims the study judges, each with where it comes from."""


def _queue(name: Any) -> dict[str, Any]:
    if name not in QUEUE_OBJECTS:
        raise ValueError(f"must be one of {', '.join(QUEUES)}, got {name!r}")
    return {"topology.dumbbell.bottleneck.queue": dict(QUEUE_OBJECTS[name])}


TCP = {"profile": "linux"}
"""Linux's defaults (RACK-TLP, the SYN exchange's RTT sample, quick ACKs, HyStart, PRR), as the
L4S table of docs/simulator.md was measured with."""

DESCRIPTION = f"""\
Two bulk TCP flows share a {RATE_MBPS:g} Mb/s bottleneck (one BDP = {BDP_PKTS:.1f} packets of \
{PACKET_BYTES} bytes at {RTT_MS:g} ms) for 50 s, the first 10 warm-up: `scalable` runs a scalable \
congestion control that sends ECT(1), the L4S identifier (`flows[0].variant`: TCP Prague, or DCTCP \
with `tcp.l4s`), `classic` a classic one, Not-ECT (`flows[1].variant`: Reno or CUBIC). `queue` sets \
the bottleneck's queue with its RFC's defaults: DualPI2 (`dualpi2`: an L queue with a ramp at about \
1 ms, a C queue under PI2 at {PI2_TARGET_MS:g} ms, coupling k = 2, 10 % classic weight), PIE marking \
ECN-capable packets (`pie-ecn`), FQ-CoDel (`fq_codel`) or Drop-Tail with {DROPTAIL_LIMIT_PKTS} \
packets ({DROPTAIL_LIMIT_PKTS * PACKET_BYTES * 8 / RATE_MBPS / 1e3:g} ms). `flows[*].rtt_ms` sets \
both flows' base RTT (Prague's RTT scaling acts below {RTT_VIRT_MS:g} ms). The study judges the \
claims of RFC 9330-9332 and RFC 8257 on each flow's goodput and queueing delay (its mean RTT above \
its propagation RTT), the bottleneck's utilisation, p99 queueing delay, marks and drops.

What the sources leave open and we chose: the path (100 Mb/s and 20 ms, the setting of the L4S \
table in docs/simulator.md), one flow of each kind, Linux's TCP defaults (the `linux` profile), \
starts spread over the first 0.1 s, and two seeds per point."""


def _preset() -> Preset:
    scenario = {
        "name": NAME,
        "description": "L4S study: TCP Prague beside Reno through DualPI2 at 100 Mb/s and 20 ms.",
        "duration_s": 50.0,
        "warmup_s": 10.0,
        "seed": 1,
        "topology": {
            "dumbbell": {
                "bottleneck": {
                    "rate_mbps": RATE_MBPS,
                    "delay_ms": BOTTLENECK_DELAY_MS,
                    "queue": dict(QUEUE_OBJECTS["dualpi2"]),
                }
            }
        },
        "flows": [
            {
                "name": name,
                "variant": variant,
                "rtt_ms": RTT_MS,
                "start_s": {"uniform": [0.0, 0.1]},
                "tcp": {**TCP, "l4s": l4s},
            }
            for name, variant, l4s in (("scalable", "prague", True), ("classic", "reno", False))
        ],
    }
    return Preset(
        name=NAME,
        title="L4S study: a scalable flow beside a classic flow through DualPI2, PIE, FQ-CoDel and Drop-Tail",
        description=DESCRIPTION,
        reference=Reference(
            paper=None,
            citation="; ".join(SOURCES.values()),
            where="a study of the L4S RFCs' coexistence claims (services/presets/study_l4s.py, CLAIMS)",
        ),
        parameters=(
            Parameter(
                QUEUE,
                "the bottleneck's queue: dualpi2, pie-ecn (PIE marking ECN), fq_codel or droptail (250 packets)",
                None,
                "dualpi2",
                paper_values=QUEUES,
                expands_to=("topology.dumbbell.bottleneck.queue",),
            ),
            Parameter(
                SCALABLE,
                "the scalable flow's congestion control (it sends ECT(1))",
                None,
                "prague",
                paper_values=SCALABLES,
            ),
            Parameter(CLASSIC, "the classic flow's congestion control (Not-ECT)", None, "reno", paper_values=CLASSICS),
            Parameter(RTT, "both flows' base round-trip time", "ms", RTT_MS, paper_values=RTTS),
            Parameter("duration_s", "simulated seconds", "s", 50.0),
            Parameter("seed", "random seed: the start times in [0, 0.1] s", None, 1),
        ),
        published=None,
        template=scenario,
        warmup_fraction=1 / 5,
        expanders={QUEUE: _queue},
    )


PRESETS: tuple[Preset, ...] = (_preset(),)
