"""The bufferbloat study as a preset: CUBIC and BBR through Drop-Tail, CoDel, FQ-CoDel and PIE
with buffers of 1 to 8 bandwidth-delay products.

Not one paper's experiment but a question the AQM literature answers in several places (RFC
8289, RFC 8290, RFC 8033, Gettys & Nichols 2012, Cardwell et al. 2016, Hock et al. 2017): the
claims judged are in `CLAIMS`, each with its source. services/reproductions/study_bufferbloat.py
runs the study; docs/validation/study-bufferbloat.md discusses the outcome.
"""

from __future__ import annotations

from typing import Any

from services.presets.registry import Parameter, Preset, Reference

__all__ = [
    "BDP_PKTS",
    "BUFFER_BDP",
    "BUFFERS_BDP",
    "CLAIMS",
    "EVERY_VARIANT",
    "PRESETS",
    "QUEUE",
    "QUEUES",
    "SECOND_VARIANT",
    "SOURCES",
    "VARIANTS",
]

NAME = "study-bufferbloat"
RATE_MBPS = 20.0
RTT_MS = 40.0
BOTTLENECK_DELAY_MS = 10.0
PACKET_BYTES = 1500
BDP_PKTS = RATE_MBPS * 1e6 * RTT_MS / 1e3 / 8 / PACKET_BYTES
"""One bandwidth-delay product of the path in full-size packets (66.7)."""
BUFFERS_BDP = (1, 2, 4, 8)
QUEUES = ("droptail", "codel", "fq_codel", "pie")
VARIANTS = ("cubic", "bbr")

QUEUE = "topology.dumbbell.bottleneck.queue.type"
BUFFER_BDP = "buffer_bdp"
"""A preset parameter: the bottleneck's buffer in bandwidth-delay products (sets the queue's
`limit_pkts`, whatever the queue)."""
EVERY_VARIANT = "flows[*].variant"
SECOND_VARIANT = "flows[1].variant"

SOURCES = {
    "gettys": 'J. Gettys, K. Nichols, "Bufferbloat: Dark Buffers in the Internet", ACM Queue 9(11), 2011',
    "rfc8289": 'K. Nichols, V. Jacobson, A. McGregor, J. Iyengar, "Controlled Delay Active Queue Management", '
    "RFC 8289, 2018",
    "rfc8290": 'T. Hoeiland-Joergensen et al., "The Flow Queue CoDel Packet Scheduler and Active Queue Management '
    'Algorithm", RFC 8290, 2018',
    "rfc8033": 'R. Pan et al., "Proportional Integral Controller Enhanced (PIE)", RFC 8033, 2017',
    "bbr": 'N. Cardwell, Y. Cheng, C. S. Gunn, S. H. Yeganeh, V. Jacobson, "BBR: Congestion-Based Congestion '
    'Control", ACM Queue 14(5), 2016',
    "hock": 'M. Hock, R. Bless, M. Zitterbart, "Experimental Evaluation of BBR Congestion Control", IEEE ICNP 2017',
}

CLAIMS: tuple[dict[str, Any], ...] = (
    {
        "id": "droptail-delay-grows-with-buffer",
        "experiment": "same-variant",
        "text": "A loss-based sender fills whatever buffer it is given: behind Drop-Tail the queueing delay grows "
        "with the buffer, about one round trip per bandwidth-delay product of buffer.",
        "where": "Gettys & Nichols 2011 (bufferbloat); CUBIC through Drop-Tail",
    },
    {
        "id": "codel-delay-independent-of-buffer",
        "experiment": "same-variant",
        "text": "CoDel keeps the standing queue near its 5 ms target whatever the buffer size, and the link busy.",
        "where": "RFC 8289 §1 (its goals), §4.3 (target); CUBIC through CoDel",
    },
    {
        "id": "pie-delay-near-reference",
        "experiment": "same-variant",
        "text": "PIE holds the mean queueing latency near its 15 ms reference whatever the buffer size.",
        "where": "RFC 8033 §1, §4.2 (QDELAY_REF 15 ms); CUBIC through PIE",
    },
    {
        "id": "aqm-keeps-utilization",
        "experiment": "same-variant",
        "text": "The AQMs take the delay out without taking the throughput: the link stays at least 95 % busy.",
        "where": "RFC 8289 §1, RFC 8033 §1, RFC 8290 §1; CUBIC through CoDel, FQ-CoDel and PIE",
    },
    {
        "id": "bbr-avoids-bufferbloat",
        "experiment": "same-variant",
        "text": "BBR paces at the bottleneck rate with about one BDP in flight, so even a deep Drop-Tail buffer "
        "does not fill: its queueing delay stays well below a loss-based sender's.",
        "where": "Cardwell et al. 2016; BBR and CUBIC through an 8-BDP Drop-Tail buffer",
    },
    {
        "id": "bbr-cubic-share-depends-on-buffer",
        "experiment": "mixed",
        "text": "Sharing a Drop-Tail bottleneck with CUBIC, BBR takes most of the link in a shallow buffer and "
        "CUBIC does in a deep one.",
        "where": "Hock et al. 2017 (shallow and deep buffers); one CUBIC and one BBR flow",
    },
    {
        "id": "fq-codel-isolates-flows",
        "experiment": "mixed",
        "text": "FQ-CoDel's flow queueing gives each flow its fair share whatever its congestion control: CUBIC and "
        "BBR split the link evenly.",
        "where": "RFC 8290 §1 (flow queueing); one CUBIC and one BBR flow",
    },
)
"""The claims the study judges, each with where it comes from."""


def _limit(bdp: Any) -> dict[str, Any]:
    if isinstance(bdp, bool) or not isinstance(bdp, int | float) or not 0 < bdp <= 1000:
        raise ValueError(f"must be a number of bandwidth-delay products in (0, 1000], got {bdp!r}")
    return {"topology.dumbbell.bottleneck.queue.limit_pkts": max(1, round(bdp * BDP_PKTS))}


DESCRIPTION = f"""\
Two bulk TCP flows share a {RATE_MBPS:g} Mb/s bottleneck with a {RTT_MS:g} ms round trip \
(one BDP = {BDP_PKTS:.1f} packets of {PACKET_BYTES} bytes), for 60 s of which the first 20 are \
warm-up. The study sweeps the bottleneck's queue (Drop-Tail, CoDel, FQ-CoDel, PIE: each with its \
RFC's defaults, `docs/simulator.md`), its buffer (`buffer_bdp`: 1, 2, 4 and 8 BDP, the limit in \
packets whatever the queue) and the senders: two CUBIC, two BBR, or one of each. It measures what \
the bufferbloat literature argues about — the bottleneck's queueing delay (mean and 99th \
percentile), its utilisation, the flows' goodput and Jain's index — and judges seven published \
claims against them (RFC 8289, RFC 8290, RFC 8033, Gettys & Nichols 2011, Cardwell et al. 2016, \
Hock et al. 2017).

What the sources leave open and we chose: the path (20 Mb/s and 40 ms, a home access link; the \
effects scale with the BDP), two flows (the smallest mix that shows sharing), Linux's TCP \
defaults (the `linux` profile: CUBIC with HyStart++ and PRR, BBRv1 as tcpsim models it), starts \
spread over the first 0.5 s, and three seeds per point."""


def _preset() -> Preset:
    scenario = {
        "name": NAME,
        "description": "Bufferbloat study: two CUBIC flows through a 1-BDP Drop-Tail buffer.",
        "duration_s": 60.0,
        "warmup_s": 20.0,
        "seed": 1,
        "topology": {
            "dumbbell": {
                "bottleneck": {
                    "rate_mbps": RATE_MBPS,
                    "delay_ms": BOTTLENECK_DELAY_MS,
                    "queue": {"type": "droptail", "limit_pkts": round(BDP_PKTS)},
                }
            }
        },
        "flows": [
            {
                "name": name,
                "variant": "cubic",
                "rtt_ms": RTT_MS,
                "start_s": {"uniform": [0.0, 0.5]},
                "tcp": {"profile": "linux"},
            }
            for name in ("first", "second")
        ],
    }
    return Preset(
        name=NAME,
        title="Bufferbloat study: CUBIC and BBR through Drop-Tail, CoDel, FQ-CoDel and PIE at 1-8 BDP",
        description=DESCRIPTION,
        reference=Reference(
            paper=None,
            citation="; ".join(SOURCES.values()),
            where="a study of the AQM literature's claims (services/presets/study_bufferbloat.py, CLAIMS)",
        ),
        parameters=(
            Parameter(QUEUE, "the bottleneck's queue", None, "droptail", paper_values=QUEUES),
            Parameter(
                BUFFER_BDP,
                "the bottleneck's buffer in bandwidth-delay products (its queue's limit_pkts)",
                "BDP",
                1,
                paper_range=(min(BUFFERS_BDP), max(BUFFERS_BDP)),
                paper_values=BUFFERS_BDP,
                expands_to=("topology.dumbbell.bottleneck.queue.limit_pkts",),
            ),
            Parameter(EVERY_VARIANT, "both flows' congestion control", None, "cubic", paper_values=VARIANTS),
            Parameter(SECOND_VARIANT, "the second flow's congestion control", None, "cubic", paper_values=VARIANTS),
            Parameter("duration_s", "simulated seconds", "s", 60.0),
            Parameter("seed", "random seed: the start times in [0, 0.5] s", None, 1),
        ),
        published=None,
        template=scenario,
        warmup_fraction=1 / 3,
        expanders={BUFFER_BDP: _limit},
    )


PRESETS: tuple[Preset, ...] = (_preset(),)
