"""The DCTCP study as presets: DCTCP against CUBIC (with and without ECN) on one data-centre
switch port that marks at K, and an incast of N senders into that port.

Not one paper's experiment reproduced figure by figure but the claims of Alizadeh et al.,
"Data Center TCP (DCTCP)", SIGCOMM 2010, and of RFC 8257, judged on a switch port of our
choosing (`CLAIMS`, each with its source). services/reproductions/study_dctcp.py runs the
study; docs/validation/study-dctcp.md discusses the outcome.
"""

from __future__ import annotations

import copy
from functools import cache
from typing import Any

from services.presets.registry import Parameter, Preset, Reference
from services.scenarios.schema import Scenario

__all__ = [
    "BDP_PKTS",
    "BUFFER",
    "BUFFERS",
    "CLAIMS",
    "INCAST_BUFFER_PKTS",
    "INCAST_COUNTS",
    "INCAST_VARIANTS",
    "INITIAL_WINDOW_PKTS",
    "K",
    "KS",
    "K_DEFAULT",
    "MIN_RTO_S",
    "NAME",
    "INCAST_NAME",
    "PACKET_BYTES",
    "PRESETS",
    "RATE_MBPS",
    "RESPONSE_BYTES",
    "SECOND_SENDER",
    "SENDER",
    "SENDERS",
    "SENDER_COUNT",
    "SOURCES",
    "VARIANT",
    "sender_name",
]

NAME = "study-dctcp"
INCAST_NAME = "study-dctcp-incast"
RATE_MBPS = 10_000.0
RTT_MS = 0.1
BOTTLENECK_DELAY_MS = 0.01
PACKET_BYTES = 1500
"""The `linux` profile's segment on the wire: 1448 bytes of payload + 52 of headers."""
BDP_PKTS = RATE_MBPS * 1e6 * RTT_MS / 1e3 / 8 / PACKET_BYTES
"""C·RTT of the port in full-size packets (83.3)."""
K_DEFAULT = 65
"""The marking threshold the DCTCP authors advise at 10 Gb/s (65 packets; Linux's
Documentation/networking/dctcp.rst repeats it)."""
KS = (4, 12, 24, 65)
"""K below C·RTT/7 (11.9), at it, twice it, and the 10 Gb/s default."""
BUFFERS = (100, 200, 400, 800)
BUFFER_PKTS = 400
INCAST_BUFFER_PKTS = 100
"""Alizadeh et al.'s incast runs gave each port a static 100-packet buffer."""
INCAST_COUNTS = (4, 8, 16, 32, 48, 64)
RESPONSE_BYTES = 64_000
MIN_RTO_S = 0.2
INITIAL_WINDOW_PKTS = 10
"""The `linux` profile's initial window: what each incast sender sends in its first round trip."""
"""Linux's minimum RTO (the `linux` profile's `min_rto_s`)."""

SENDERS = ("dctcp", "cubic-ecn", "cubic")
"""What a flow runs: DCTCP (ECN always on), CUBIC with classic ECN (RFC 3168), plain CUBIC."""
INCAST_VARIANTS = ("dctcp", "cubic")

K = "topology.dumbbell.bottleneck.queue.ecn_threshold_pkts"
BUFFER = "topology.dumbbell.bottleneck.queue.limit_pkts"
SENDER = "sender"
"""A preset parameter: every flow's sender (`SENDERS`), which sets its variant and `tcp.ecn`."""
SECOND_SENDER = "second_sender"
"""A preset parameter: the second flow's sender, beside a DCTCP first flow."""
SENDER_COUNT = "senders"
"""A preset parameter of the incast: N, the number of senders (one flow entry each)."""
VARIANT = "flows[*].variant"

SOURCES = {
    "alizadeh": "M. Alizadeh, A. Greenberg, D. A. Maltz, J. Padhye, P. Patel, B. Prabhakar, S. Sengupta, "
    'M. Sridharan, "Data Center TCP (DCTCP)", ACM SIGCOMM 2010',
    "rfc8257": 'S. Bensley, D. Thaler, P. Balasubramanian, L. Eggert, G. Judd, "Data Center TCP (DCTCP): TCP '
    'Congestion Control for Data Centers", RFC 8257, 2017',
}

CLAIMS: tuple[dict[str, Any], ...] = (
    {
        "id": "dctcp-full-throughput-above-c-rtt-over-7",
        "experiment": "queue-vs-k",
        "text": "With the marking threshold K above C·RTT/7, DCTCP keeps the link fully used while its queue "
        "oscillates around K.",
        "where": "Alizadeh et al. 2010 §3.3 (guidelines for choosing K: K > C·RTT/7); two DCTCP flows",
    },
    {
        "id": "classic-ecn-needs-a-larger-k",
        "experiment": "queue-vs-k",
        "text": "A classic ECN sender, which cuts its window by a fixed factor per marked window, needs a far larger "
        "K than DCTCP to keep the link busy: at K near C·RTT/7 it leaves the link partly idle.",
        "where": "Alizadeh et al. 2010 §3.1 and §3.3 (DCTCP's reduction follows the extent of congestion; TCP "
        "needs about a bandwidth-delay product of queue); two CUBIC flows with ECN at the same K",
    },
    {
        "id": "dctcp-queue-independent-of-buffer",
        "experiment": "k-vs-buffer",
        "text": "DCTCP's queue stays near K whatever the switch's buffer, where a loss-based sender fills the "
        "buffer it is given: DCTCP needs far less buffer for the same throughput.",
        "where": "Alizadeh et al. 2010 Fig. 1 and §1 (the same or better throughput with 90 % less buffer); "
        "two DCTCP and two plain CUBIC flows, buffers of 100-800 packets, K 65",
    },
    {
        "id": "dctcp-beats-classic-ecn",
        "experiment": "mixed",
        "text": "Sharing a marking queue with a conventional TCP, DCTCP reduces its window more gently and takes "
        "the larger share: the two do not coexist well and should be kept apart.",
        "where": "RFC 8257 §6 (deployment issues; DCTCP is for controlled environments, §1); one DCTCP and one "
        "CUBIC-with-ECN flow at the same K",
    },
    {
        "id": "incast-dctcp-no-worse-than-tcp",
        "experiment": "incast",
        "text": "Under incast, DCTCP's marking keeps the queue short so the senders' bursts fit, and its slowest "
        "response is no slower than TCP's at every number of senders.",
        "where": "Alizadeh et al. 2010 §4.2 (incast, Fig. 18: DCTCP's query completion below TCP's up to about "
        "35 senders); N senders of 64 kB each, DCTCP against plain CUBIC",
    },
    {
        "id": "incast-stalls-once-first-windows-overflow",
        "experiment": "incast",
        "text": "Once the senders' first windows alone far exceed the port's buffer, DCTCP cannot help (its marks "
        "act a round trip late): some response waits a retransmission timeout, as TCP's does.",
        "where": "Alizadeh et al. 2010 §4.2 (incast, Fig. 18: DCTCP's query completion degrades past about 35 "
        "senders with a static buffer); 48 and 64 senders × a ten-segment initial window into a 100-packet buffer",
    },
)
"""The claims the study judges, each with where it comes from."""


SENDER_PATHS = {
    "dctcp": ("dctcp", True),
    "cubic-ecn": ("cubic", True),
    "cubic": ("cubic", False),
}


def sender_name(variant: str | None, ecn: bool | None) -> str | None:
    """The sender (`SENDERS`) of a flow's variant and `tcp.ecn`."""
    if variant == "dctcp":
        return "dctcp"
    return {("cubic", True): "cubic-ecn", ("cubic", False): "cubic"}.get((variant or "", bool(ecn)))


def _sender(flows: str) -> Any:
    def expand(sender: Any) -> dict[str, Any]:
        if sender not in SENDER_PATHS:
            raise ValueError(f"must be one of {', '.join(SENDERS)}, got {sender!r}")
        variant, ecn = SENDER_PATHS[sender]
        return {f"{flows}.variant": variant, f"{flows}.tcp.ecn": ecn}

    return expand


TCP = {"profile": "linux"}
"""Linux's defaults, as the `linux` profile has them since core 0.7.0: RACK-TLP (without it the
incast is decided by DupThresh, docs/simulator.md "ECN"), the SYN exchange's RTT sample (so the
first RTO is Linux's 200 ms minimum and a loss probe waits two round trips, not RFC 6298's 1 s)
and quick ACKs for a connection's first 16 segments."""


def _topology(limit: int, k: int) -> dict[str, Any]:
    return {
        "dumbbell": {
            "access": {"rate_mbps": RATE_MBPS},
            "bottleneck": {
                "rate_mbps": RATE_MBPS,
                "delay_ms": BOTTLENECK_DELAY_MS,
                "queue": {"type": "droptail", "limit_pkts": limit, "ecn_threshold_pkts": k},
            },
        }
    }


DESCRIPTION = f"""\
Two bulk TCP flows (`first`, `second`) share one {RATE_MBPS / 1e3:g} Gb/s switch port with a \
{RTT_MS * 1e3:g} µs round trip (C·RTT = {BDP_PKTS:.1f} packets of {PACKET_BYTES} bytes; every host \
has a {RATE_MBPS / 1e3:g} Gb/s access link) for 0.3 s, the first 0.1 s warm-up. The port is \
Drop-Tail with a {BUFFER_PKTS}-packet buffer that marks CE on an ECN-capable arrival finding K = \
{K_DEFAULT} packets or more waiting (RFC 8257 §3.1; `ecn_threshold_pkts`). `sender` sets both \
flows' congestion control: DCTCP (`dctcp`, ECN always on), CUBIC with classic ECN (`cubic-ecn`) or \
plain CUBIC (`cubic`, which the marking never touches: a Drop-Tail queue); `second_sender` sets \
the second flow's alone, beside DCTCP. The study sweeps K (below, at and above C·RTT/7), the \
buffer (100-800 packets) and the mix, and judges the claims of Alizadeh et al. 2010 and RFC 8257 \
on the port's utilisation, queueing delay (mean, p99), marks and drops and on the flows' shares.

What the sources leave open and we chose: one port at 10 Gb/s and 100 µs (the DCTCP paper's \
testbed ran 1 and 10 Gb/s with round trips of about 100 µs), two flows (its Fig. 1), Linux's \
TCP defaults (the `linux` profile: RACK-TLP, the SYN exchange's RTT sample, quick ACKs at a \
connection's start), starts spread over the first \
millisecond, and two seeds per point."""

INCAST_DESCRIPTION = f"""\
N senders (`senders`, one flow entry `s0` … each) answer one request at once with a \
{RESPONSE_BYTES // 1000} kB response each through the same {RATE_MBPS / 1e3:g} Gb/s port \
({RTT_MS * 1e3:g} µs round trip) into one receiver, Alizadeh et al.'s incast (§4.2): a \
{INCAST_BUFFER_PKTS}-packet buffer (their static per-port allocation) that marks at K = \
{K_DEFAULT}. Every sender runs `flows[*].variant` (dctcp or plain cubic) with Linux's defaults, \
RACK-TLP and the SYN exchange's RTT sample. Each response's time (`download_time_s`) and timeouts are \
measured from the start (no warm-up); the query completes with its slowest response.

What the sources leave open and we chose: a fixed response per sender (so N × 10 segments of \
initial window is what the buffer must absorb in the first round trip), starts spread over 20 µs \
(the request's fan-out), Linux's 200 ms minimum RTO (the paper also ran 10 ms), 1 s simulated, \
three seeds per point. Without RACK-TLP (`tcp.rack: false`), DupThresh decides the incast and \
DCTCP senders time out: docs/simulator.md "ECN"."""


def _flow(name: str, ecn: bool, **extra: Any) -> dict[str, Any]:
    return {"name": name, "variant": "dctcp", "rtt_ms": RTT_MS, "tcp": {**TCP, "ecn": ecn}, **extra}


def _preset() -> Preset:
    scenario = {
        "name": NAME,
        "description": "DCTCP study: two DCTCP flows through a 10 Gb/s port marking at K = 65.",
        "duration_s": 0.3,
        "warmup_s": 0.1,
        "seed": 1,
        "topology": _topology(BUFFER_PKTS, K_DEFAULT),
        "flows": [_flow(name, True, start_s={"uniform": [0.0, 0.001]}) for name in ("first", "second")],
    }
    return Preset(
        name=NAME,
        title="DCTCP study: DCTCP against CUBIC on one 10 Gb/s switch port marking at K",
        description=DESCRIPTION,
        reference=Reference(
            paper=None,
            citation="; ".join(SOURCES.values()),
            where="a study of the DCTCP paper's and RFC 8257's claims (services/presets/study_dctcp.py, CLAIMS)",
        ),
        parameters=(
            Parameter(
                SENDER,
                "both flows' congestion control: dctcp, cubic-ecn (CUBIC with classic ECN) or cubic",
                None,
                "dctcp",
                paper_values=SENDERS,
                expands_to=("flows[*].variant", "flows[*].tcp.ecn"),
            ),
            Parameter(
                SECOND_SENDER,
                "the second flow's congestion control, beside a DCTCP first flow",
                None,
                "dctcp",
                paper_values=SENDERS,
                expands_to=("flows[1].variant", "flows[1].tcp.ecn"),
            ),
            Parameter(K, "K: the port marks CE at this many packets waiting", "pkts", K_DEFAULT, paper_values=KS),
            Parameter(BUFFER, "the port's buffer", "pkts", BUFFER_PKTS, paper_values=BUFFERS),
            Parameter("duration_s", "simulated seconds", "s", 0.3),
            Parameter("seed", "random seed: the start times in [0, 1] ms", None, 1),
        ),
        published=None,
        template=scenario,
        warmup_fraction=1 / 3,
        expanders={SENDER: _sender("flows[*]"), SECOND_SENDER: _sender("flows[1]")},
    )


def _incast_template(n: int) -> dict[str, Any]:
    return {
        "name": INCAST_NAME,
        "description": f"DCTCP study: an incast of {n} DCTCP senders of 64 kB into one 10 Gb/s port.",
        "duration_s": 1.0,
        "warmup_s": 0.0,
        "seed": 1,
        "topology": _topology(INCAST_BUFFER_PKTS, K_DEFAULT),
        "flows": [
            # ECN off: DCTCP turns it on for itself, and the CUBIC senders are plain (the paper's TCP).
            _flow(f"s{i}", False, start_s={"uniform": [0.0, 0.00002]}, app={"type": "ftp", "bytes": RESPONSE_BYTES})
            for i in range(n)
        ],
    }


INCAST_DEFAULT = 16


@cache
def _normal_sender() -> dict[str, Any]:
    """One incast sender with every default filled in, as `Preset.build` has the template's."""
    flows: list[dict[str, Any]] = Scenario.model_validate(_incast_template(1)).model_dump(
        mode="json", exclude_none=True
    )["flows"]
    return flows[0]


def _senders(n: Any) -> dict[str, Any]:
    """`flows`, one entry per sender: each its own flow group, so the slowest response (the
    query's completion) is read from the observations, not only the mean."""
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= 256:
        raise ValueError(f"must be a whole number of senders in 1..256, got {n!r}")
    return {"flows": [{**copy.deepcopy(_normal_sender()), "name": f"s{i}"} for i in range(n)]}


def _incast_preset() -> Preset:
    return Preset(
        name=INCAST_NAME,
        title="DCTCP study: an incast of N senders of 64 kB into one 10 Gb/s port, DCTCP against CUBIC",
        description=INCAST_DESCRIPTION,
        reference=Reference(
            paper=None,
            citation="; ".join(SOURCES.values()),
            where="a study of the DCTCP paper's incast claims (services/presets/study_dctcp.py, CLAIMS)",
        ),
        parameters=(
            Parameter(
                SENDER_COUNT,
                "N, the number of senders (flows s0 … s{N-1}, one entry each)",
                None,
                INCAST_DEFAULT,
                paper_range=(min(INCAST_COUNTS), max(INCAST_COUNTS)),
                paper_values=INCAST_COUNTS,
                expands_to=("flows",),
            ),
            Parameter(VARIANT, "every sender's congestion control", None, "dctcp", paper_values=INCAST_VARIANTS),
            Parameter("seed", "random seed: the start times in [0, 20] µs", None, 1),
        ),
        published=None,
        template=_incast_template(INCAST_DEFAULT),
        expanders={SENDER_COUNT: _senders},
    )


PRESETS: tuple[Preset, ...] = (_preset(), _incast_preset())
