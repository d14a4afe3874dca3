"""The cellular study as presets: CUBIC, BBR and Vegas over the LTE traces of Sprout and
Pantheon (the built-in named traces, services/traces/builtin.py), one scheme at a time as
Pantheon measures, and the three sharing the link.

Pantheon's view of a scheme on a path is one point: its mean throughput against its
95th-percentile one-way delay. The claims judged are in `CLAIMS`, each with its source;
services/reproductions/study_cellular.py runs the study and docs/validation/study-cellular.md
discusses the outcome.
"""

from __future__ import annotations

from typing import Any

from services.presets.registry import Parameter, Preset, Reference

__all__ = [
    "CARRIERS",
    "CLAIMS",
    "LINK",
    "PRESETS",
    "SCHEMES",
    "SHARED_NAME",
    "SOURCES",
    "VARIANT",
]

NAME = "study-cellular"
SHARED_NAME = "study-cellular-shared"
CARRIERS = ("TMobile-LTE-short", "Verizon-LTE-short", "ATT-LTE-driving")
"""The built-in LTE traces: `<carrier>.down` carries the data, `<carrier>.up` the ACKs."""
SCHEMES = ("cubic", "bbr", "vegas")
RTT_MS = 40.0
"""The path's minimum round trip: 10 ms each way across the trace-driven link, 10 ms each way
in the access links' share of it (the flows' rtt_ms)."""
BOTTLENECK_DELAY_MS = 10.0
BUFFER_PKTS = 2000
"""Drop-Tail, deep: 1.4 s at TMobile's mean 16.7 Mb/s, 4.8 s at Verizon's 5 Mb/s (mm-link's
default queue is unbounded; Sprout's Cubic saw multi-second queues). With 1000 packets CUBIC
timed out 4 times on TMobile's trace and used 92 % of its capacity (docs/validation/study-cellular.md)."""
DURATION_S = 60.0
WARMUP_S = 5.0

TCP = {"profile": "linux", "rack": False}
"""Every flow's TCP: Pantheon ran Linux's; RACK-TLP off, as Vegas cannot use it."""

LINK = "link"
"""A preset parameter: the carrier whose traces the bottleneck follows (sets the trace's
`name` and `reverse_name`)."""
VARIANT = "flows[*].variant"

SOURCES = {
    "sprout": 'K. Winstein, A. Sivaraman, H. Balakrishnan, "Stochastic Forecasts Achieve High Throughput and Low '
    'Delay over Cellular Networks", USENIX NSDI 2013',
    "mahimahi": 'R. Netravali et al., "Mahimahi: Accurate Record-and-Replay for HTTP", USENIX ATC 2015',
    "pantheon": 'F. Y. Yan et al., "Pantheon: the training ground for Internet congestion-control research", '
    "USENIX ATC 2018",
    "bbr": 'N. Cardwell, Y. Cheng, C. S. Gunn, S. H. Yeganeh, V. Jacobson, "BBR: Congestion-Based Congestion '
    'Control", ACM Queue 14(5), 2016',
    "mo": 'J. Mo, R. J. La, V. Anantharam, J. Walrand, "Analysis and Comparison of TCP Reno and Vegas", '
    "IEEE INFOCOM 1999",
}

CLAIMS: tuple[dict[str, Any], ...] = (
    {
        "id": "cubic-saturates-the-trace",
        "experiment": "alone",
        "text": "A saturating loss-based flow behind a deep buffer uses the link's capacity: CUBIC's goodput is "
        "within a few per cent of what the trace delivers over the run (its payload share of every opportunity).",
        "where": "Sprout's evaluation over these traces (Cubic's throughput close to the link's); mm-link's delivery model "
        "(Mahimahi)",
    },
    {
        "id": "delay-based-schemes-keep-the-queue-short",
        "experiment": "alone",
        "text": "Over a deep buffer CUBIC fills the queue (seconds of delay at the 95th percentile); BBR and Vegas "
        "keep the 95th-percentile delay several times lower.",
        "where": "Sprout's evaluation (Cubic's seconds of self-inflicted delay, Vegas's lower); Cardwell et al. 2016 and Pantheon's "
        "cellular results (BBR's delay below CUBIC's)",
    },
    {
        "id": "cubic-throughput-at-least-vegas",
        "experiment": "alone",
        "text": "Vegas buys its low delay with throughput: CUBIC's throughput is at least Vegas's on every trace.",
        "where": "Sprout's evaluation (Vegas below Cubic in throughput on the LTE traces)",
    },
    {
        "id": "sharing-cubic-takes-the-link",
        "experiment": "shared",
        "text": "Sharing a deep Drop-Tail buffer, the loss-based flow takes most of the link: CUBIC gets more than "
        "BBR, and Vegas, which backs off as the queue grows, is starved.",
        "where": "Mo et al. 1999 (Vegas against a loss-based sender); Cardwell et al. 2016 and Pantheon (BBR beside "
        "CUBIC in deep buffers)",
    },
)
"""The claims the study judges, each with where it comes from."""


def _link(carrier: Any) -> dict[str, Any]:
    if carrier not in CARRIERS:
        raise ValueError(f"must be one of {', '.join(CARRIERS)}, got {carrier!r}")
    return {
        "topology.dumbbell.bottleneck.trace.name": f"{carrier}.down",
        "topology.dumbbell.bottleneck.trace.reverse_name": f"{carrier}.up",
    }


SETUP = f"""\
The bottleneck follows a built-in LTE trace (`link`: {", ".join(CARRIERS)}; the downlink's \
trace carries the data, the uplink's the ACKs, both looping), behind a {BUFFER_PKTS}-packet \
Drop-Tail buffer, with a {RTT_MS:g} ms minimum round trip; {DURATION_S:g} s, the first \
{WARMUP_S:g} s warm-up, Linux's TCP defaults (the `linux` profile) with RACK-TLP off for \
every scheme (tcpsim's Vegas recovers without SACK, which RACK needs). Pantheon's view of a scheme \
is its mean throughput against its 95th-percentile one-way delay; tcpsim reports the \
bottleneck's queueing-delay percentiles (per packet), so a flow's p95 one-way delay here is the \
p95 queueing delay plus the {RTT_MS / 2:g} ms one-way propagation delay (exact when one flow \
has the queue to itself)."""


def _scenario(name: str, description: str, flows: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "name": name,
        "description": description,
        "duration_s": DURATION_S,
        "warmup_s": WARMUP_S,
        "seed": 1,
        "topology": {
            "dumbbell": {
                "bottleneck": {
                    "trace": {"name": f"{CARRIERS[0]}.down", "reverse_name": f"{CARRIERS[0]}.up"},
                    "delay_ms": BOTTLENECK_DELAY_MS,
                    "queue": {"type": "droptail", "limit_pkts": BUFFER_PKTS},
                }
            }
        },
        "flows": [{"rtt_ms": RTT_MS, "tcp": dict(TCP), **f} for f in flows],
    }


def _parameters(*extra: Parameter) -> tuple[Parameter, ...]:
    return (
        Parameter(
            LINK,
            "the carrier whose LTE traces the bottleneck follows (downlink: data, uplink: ACKs)",
            None,
            CARRIERS[0],
            paper_values=CARRIERS,
            expands_to=("topology.dumbbell.bottleneck.trace.name", "topology.dumbbell.bottleneck.trace.reverse_name"),
        ),
        *extra,
        Parameter("topology.dumbbell.bottleneck.queue.limit_pkts", "the Drop-Tail buffer", "packets", BUFFER_PKTS),
        Parameter("duration_s", "simulated seconds", "s", DURATION_S),
    )


def _reference() -> Reference:
    return Reference(
        paper=None,
        citation="; ".join(SOURCES.values()),
        where="a study of the cellular results of Sprout and Pantheon (services/presets/study_cellular.py, CLAIMS)",
    )


def _alone() -> Preset:
    return Preset(
        name=NAME,
        title="Cellular study: CUBIC, BBR or Vegas alone over an LTE trace (Pantheon's method)",
        description="One bulk flow of one scheme (`flows[*].variant`: cubic, bbr, vegas) over the link, as "
        "Pantheon runs each scheme alone on the same path. " + SETUP,
        reference=_reference(),
        parameters=_parameters(
            Parameter(VARIANT, "the flow's congestion control", None, "cubic", paper_values=SCHEMES),
        ),
        published=None,
        template=_scenario(
            NAME, "Cellular study: one CUBIC flow over T-Mobile's LTE trace.", [{"name": "bulk", "variant": "cubic"}]
        ),
        warmup_fraction=WARMUP_S / DURATION_S,
        expanders={LINK: _link},
    )


def _shared() -> Preset:
    return Preset(
        name=SHARED_NAME,
        title="Cellular study: CUBIC, BBR and Vegas sharing an LTE trace",
        description="Three bulk flows, one of each scheme, start together and share the link. " + SETUP,
        reference=_reference(),
        parameters=_parameters(),
        published=None,
        template=_scenario(
            SHARED_NAME,
            "Cellular study: CUBIC, BBR and Vegas sharing T-Mobile's LTE trace.",
            [{"name": scheme, "variant": scheme} for scheme in SCHEMES],
        ),
        warmup_fraction=WARMUP_S / DURATION_S,
        expanders={LINK: _link},
    )


PRESETS: tuple[Preset, ...] = (_alone(), _shared())
