"""Paper 002's experiments as presets: Hushyar & Upreti, "Performance Analysis of TCP Variants"
(ns-2), §2-5.

- `paper002-exp1-congestion` (§2.3, §3, Figs. 2-3): one TCP flow against CBR/UDP of 1-10 Mb/s
  for Tahoe, Reno, NewReno and Vegas.
- `paper002-exp2-fairness-low`, `paper002-exp2-fairness-high` (§2.4, §4, Figs. 4-5): two TCP
  flows of a pair of variants and a CBR flow of 1 Mb/s (1,000-byte packets) or 10 Mb/s
  (10,000-byte packets).
- `paper002-exp3-droptail`, `paper002-exp3-red` (§2.5, §5, Figs. 6-8): Reno or SACK with CBR
  starting at 4 s, through a Drop-Tail or RED buffer of 100 or 300 packets.

All on the paper's six-node topology (`six_node_graph`). The paper's numbers are in
`data/002_published.json`, transcribed from its text for tcplab (the paper publishes no table;
its figures are not in the text). `services/reproductions/paper002.py` runs the experiments
as sweeps and judges each conclusion (`bench/reproduce.py 002` in process);
docs/validation/paper002.md compares them with the paper.
"""

from __future__ import annotations

import math
from typing import Any

from services.presets.published import read_json
from services.presets.registry import Parameter, Preset, Published, PublishedColumn, PublishedTable, Reference

__all__ = [
    "BOTTLENECK",
    "BUFFER",
    "CBR_BYTES",
    "CBR_RATE",
    "DATA_FILE",
    "LINK_DELAY_MS",
    "NS2_RED",
    "PRESETS",
    "SECOND_VARIANT",
    "VARIANT",
    "VARIANTS",
    "congestion_scenario",
    "fairness_scenario",
    "ns2_red_queue",
    "queuing_scenario",
    "six_node_graph",
]

CITATION = 'N. Hushyar, A. Upreti, "Performance Analysis of TCP Variants" (UMass Amherst; ns-2)'
DATA_FILE = "002_published.json"
SOURCE = "paper 002 (Hushyar & Upreti, ns-2), transcribed from its text in services/presets/data/" + DATA_FILE

VARIANTS: dict[str, str] = {
    "Tahoe": "tahoe",
    "Reno": "reno",
    "NewReno": "newreno-sbs",
    "Vegas": "vegas",
    "SACK": "sack",
}
"""The paper's names -> the core's variants. NewReno is the core's default, RFC 3782's
Slow-but-Steady; ns-2.35's Agent/TCP/Newreno defaults to Impatient (`newreno_changes1_` 1), and the
paper does not say which it ran (docs/validation/ns2-papers-002-003.md)."""

LINKS: tuple[tuple[str, str], ...] = (("n1", "n2"), ("n5", "n2"), ("n2", "n3"), ("n3", "n4"), ("n3", "n6"))
"""The six-node topology's links: N1 and N5 on N2, N2-N3 in the middle, N4 and N6 on N3 (the
flows' endpoints in §2.3-2.4: TCP N1->N4, TCP N5->N6, CBR N2->N3)."""
BOTTLENECK = 2
"""Index of N2-N3 in `topology.graph.links`: the link every flow crosses."""

# The override paths the presets declare and the reproduction sweeps
# (services/reproductions/paper002.py): spelled here only.
VARIANT = "flows[0].variant"
"""The TCP flow (experiments 1 and 3), the first TCP flow (experiment 2)."""
SECOND_VARIANT = "flows[1].variant"
"""Experiment 2's second TCP flow."""
CBR_RATE = "flows[1].app.rate_mbps"
"""The CBR flow's rate in experiments 1 and 3 (flow 1 is the CBR there)."""
CBR_BYTES = "flows[1].app.packet_bytes"
"""The CBR flow's packet size in experiments 1 and 3."""
EXP2_CBR_RATE = "flows[2].app.rate_mbps"
"""Experiment 2's CBR rate (flow 2 there, after the two TCP flows)."""
EXP2_CBR_BYTES = "flows[2].app.packet_bytes"
BUFFER = f"topology.graph.links[{BOTTLENECK}].queue.limit_pkts"
"""The N2-N3 buffer."""

LINK_DELAY_MS = 1.0
"""Not given. The paper's Vegas latency at CBR 2 Mb/s, about 5 ms over three hops of which
transmission alone takes 2.5 ms (§3), leaves about 1 ms of propagation per link."""
NS2_QUEUE_LIMIT = 50
"""ns-2's default buffer (`Queue set limit_ 50`); §2.3: "We did not change the default ns2
buffer size"."""
NS2_WINDOW = 20
"""ns-2's default `window_` (the sender's upper bound on its window), not changed by the
paper as far as it says. Its published numbers fit it: no drops until CBR 7 Mb/s with a
50-packet buffer (§3)."""
DURATION_S = 10.0
"""Not given; §2.4 runs "a bit longer (15s)" when one flow starts late, so the others ran
shorter. We run 10 s."""


def ns2_red_queue(limit_pkts: int, rate_mbps: float = 10.0, delay_ms: float = LINK_DELAY_MS) -> dict[str, Any]:
    """ns-2.35's RED with its automatic defaults (ns-default.tcl: thresh_ 0, maxthresh_ 0,
    q_weight_ -1, mean_pktsize_ 500, linterm_ 10, gentle_ true, targetdelay_ 0.005), as red.cc
    computes them for this link: C = rate / (8 x 500) packets/s; min_th = max(5, 0.005 C / 2),
    max_th = 3 min_th; q_w = 1 - exp(-1 / (10 x max(0.1, 3 (delay + 1/C)) x C)). At 10 Mb/s:
    min_th 6.25, max_th 18.75, q_w about 0.0004, whatever the buffer."""
    c = rate_mbps * 1e6 / (8 * 500)
    min_th = max(5.0, 0.005 * c / 2)
    rtt = max(0.1, 3 * (delay_ms / 1000 + 1 / c))
    return {
        "type": "red",
        "limit_pkts": limit_pkts,
        "min_th_pkts": min_th,
        "max_th_pkts": 3 * min_th,
        "max_p": 0.1,
        "weight": round(1 - math.exp(-1 / (10 * rtt * c)), 8),
        "gentle": True,
        "mean_pkt_bytes": 500,
    }


NS2_RED = ns2_red_queue(100)


def six_node_graph(bottleneck_queue: dict[str, Any] | None = None) -> dict[str, Any]:
    """§2.1, Fig. 1: six nodes, every link a duplex 10 Mb link with ns-2's 50-packet Drop-Tail
    buffer; `bottleneck_queue` replaces N2-N3's (experiment 3's RED or Drop-Tail)."""
    links = []
    for i, (a, b) in enumerate(LINKS):
        queue = {"type": "droptail", "limit_pkts": NS2_QUEUE_LIMIT}
        if i == BOTTLENECK and bottleneck_queue:
            queue = bottleneck_queue
        links.append(
            {"name": f"{a}-{b}", "from": a, "to": b, "rate_mbps": 10, "delay_ms": LINK_DELAY_MS, "queue": dict(queue)}
        )
    return {"graph": {"nodes": ["n1", "n2", "n3", "n4", "n5", "n6"], "links": links}}


def _tcp_flow(name: str, variant: str, src: str, dst: str) -> dict[str, Any]:
    # The paper ran ns-2: its Agent/TCP defaults (the `ns2` profile), the window_ of 20 spelled
    # out because experiments override it.
    return {
        "name": name,
        "from": src,
        "to": dst,
        "variant": variant,
        "app": {"type": "ftp"},
        "tcp": {"profile": "ns2", "max_window_pkts": NS2_WINDOW},
    }


def _cbr_flow(rate_mbps: float, packet_bytes: int, start_s: float = 0.0) -> dict[str, Any]:
    return {
        "name": "cbr",
        "type": "udp",
        "from": "n2",
        "to": "n3",
        "start_s": start_s,
        "app": {"type": "cbr", "rate_mbps": rate_mbps, "packet_bytes": packet_bytes},
    }


def congestion_scenario(
    variant: str = "reno", cbr_mbps: float = 7.0, cbr_bytes: int = 3000, *, name: str | None = None
) -> dict[str, Any]:
    """Experiment 1 (§2.3): TCP `tcp` N1->N4, CBR `cbr` N2->N3."""
    return {
        "name": name or f"paper002-exp1-{variant}-cbr{cbr_mbps:g}",
        "duration_s": DURATION_S,
        "topology": six_node_graph(),
        "flows": [_tcp_flow("tcp", variant, "n1", "n4"), _cbr_flow(cbr_mbps, cbr_bytes)],
    }


def fairness_scenario(
    first: str = "newreno-sbs",
    second: str = "vegas",
    cbr_mbps: float = 1.0,
    cbr_bytes: int = 1000,
    *,
    name: str | None = None,
) -> dict[str, Any]:
    """Experiment 2 (§2.4): TCP `first` N1->N4, TCP `second` N5->N6, CBR `cbr` N2->N3."""
    return {
        "name": name or f"paper002-exp2-{first}-{second}-cbr{cbr_mbps:g}",
        "duration_s": DURATION_S,
        "topology": six_node_graph(),
        "flows": [
            _tcp_flow("first", first, "n1", "n4"),
            _tcp_flow("second", second, "n5", "n6"),
            _cbr_flow(cbr_mbps, cbr_bytes),
        ],
    }


EXP3_CBR_MBPS = 8.0
EXP3_CBR_START_S = 4.0


def queuing_scenario(
    queue: dict[str, Any],
    variant: str = "reno",
    cbr_mbps: float = EXP3_CBR_MBPS,
    seed: int = 1,
    *,
    name: str | None = None,
) -> dict[str, Any]:
    """Experiment 3 (§2.5): experiment 1's flows, the CBR from 4 s, `queue` on N2-N3."""
    return {
        "name": name or f"paper002-exp3-{queue['type']}{queue['limit_pkts']}-{variant}",
        "duration_s": DURATION_S,
        "seed": seed,
        "topology": six_node_graph(queue),
        "flows": [_tcp_flow("tcp", variant, "n1", "n4"), _cbr_flow(cbr_mbps, 3000, EXP3_CBR_START_S)],
        "outputs": {"trace_interval_s": 0.05, "trace": ["cwnd", "queue"], "trace_links": ["n2-n3"]},
    }


# ---- descriptions ------------------------------------------------------------------------------

COMMON = """\
What the paper leaves open and we chose:
- Topology: its Fig. 1 is not in the text; the flows' endpoints (TCP N1->N4, TCP N5->N6, CBR \
N2->N3) give six nodes with links N1-N2, N5-N2, N2-N3, N3-N4, N3-N6, every one 10 Mb/s (§2.1). \
N2-N3 (`topology.graph.links[2]`) is the link every flow crosses. A `graph` topology.
- Propagation delay 1 ms per link (not given): the paper's Vegas latency of about 5 ms at CBR \
2 Mb/s (§3), of which transmission over three hops takes 2.5 ms, leaves about that much.
- ns-2's defaults, which the paper says it kept for the buffer and does not mention otherwise: \
50-packet Drop-Tail buffers, 1000-byte TCP segments + 40 header bytes, an ACK per segment, \
minimum RTO 200 ms, initial window 2, and the sender's window_ of 20 packets \
(`flows[0].tcp.max_window_pkts`). The paper's numbers fit that window: a window-limited flow \
fills only part of the 50-packet buffer, so drops start only when CBR takes a large share of \
it (at 7 Mb/s in §3).
- NewReno is newreno-sbs (timer reset on every partial ACK); Vegas has ns-2's alpha 1, beta 3, \
gamma 1. CBR sends at exact intervals (ns-2's default, no jitter); nothing is random, so one \
run per point.
- Throughput unit: the paper prints "Mbps", and its numbers do not fit one unit. At low \
congestion they fit megabytes per second (in §4.1 two flows of 0.56 plus 1 Mb/s of CBR fill \
the 10 Mb/s link only as 2 x 0.56 x 8 + 1 = 10 Mb/s; beside 2 Mb/s of CBR a flow gets "1", \
i.e. 8 Mb/s); at high congestion (§4.2) ours match them read as Mb/s. The reproduction \
(services/reproductions/paper002.py) prints ours in both. Latency: the paper's is the mean \
one-way delay of a flow's packets; the reproduction compares the flow's mean RTT as the core \
measures it (the paper's latency plus the ACK's way back).
- 10 simulated seconds (not given; §2.4's staggered runs are "a bit longer (15s)")."""

EXP1_DESCRIPTION = (
    """\
Paper 002 experiment 1 (§2.3, §3, Figs. 2-3): one TCP flow with FTP from N1 to N4 and one \
CBR/UDP flow from N2 to N3 on the six-node topology of 10 Mb/s links; the CBR rate goes from \
1 to 10 Mb/s with 3,000-byte packets (and the packet size from 500 to 8,000 bytes at \
2 Mb/s), for Tahoe, Reno, NewReno and Vegas: the TCP flow's throughput, latency and drops. \
The paper: no variant drops a packet at 2 Mb/s; Tahoe, Reno and NewReno first drop at 7 Mb/s; \
Vegas never does but has a lower throughput; NewReno has the highest throughput under \
congestion. This preset is Reno at 7 Mb/s: sweep `flows[0].variant` (tahoe, reno, newreno-sbs, \
vegas) and `flows[1].app.rate_mbps` (1-10) for Figs. 2-3.

"""
    + COMMON
)

EXP2_DESCRIPTION = (
    """\
Paper 002 experiment 2 (§2.4, §4, Figs. 4-5): two TCP flows, `first` from N1 to N4 and \
`second` from N5 to N6, with a CBR flow from N2 to N3; {level}. Pairs (first/second): \
Reno/Reno, NewReno/Reno, Vegas/Vegas, NewReno/Vegas. The paper finds equal pairs fair and \
Vegas starved by NewReno ({numbers}). This preset is NewReno/Vegas: set `flows[0].variant` \
and `flows[1].variant` for the other pairs, `flows[1].start_s` to start the second flow \
later (§2.4).

"""
    + COMMON
)

EXP2_LOW = (
    "little to no congestion: CBR 1 Mb/s with 1,000-byte packets (§4.1)",
    "NewReno 0.98 against Vegas 0.15 at low congestion",
)
EXP2_HIGH = (
    "high congestion: CBR 10 Mb/s with 10,000-byte packets (§4.2)",
    "NewReno 0.26 against Vegas 0.1 at high congestion, with 8 drops, all NewReno's",
)

EXP3_DESCRIPTION = (
    """\
Paper 002 experiment 3 (§2.5, §5, Figs. 6-8): experiment 1's setup with TCP Reno or SACK; the \
TCP flow starts at 0 and the CBR flow at 4 s, once TCP has left slow start; the N2-N3 buffer \
is {queue_text} of 100 or 300 packets. The paper: once the CBR starts, TCP's throughput drops \
more under RED than under Drop-Tail, most with SACK and RED (timeouts); RED has the lower \
latency. This preset is Reno with a 100-packet buffer: set `flows[0].variant` (reno, sack) \
and `topology.graph.links[2].queue.limit_pkts` (100, 300).

- The CBR flow (not given): 8 Mb/s (`flows[1].app.rate_mbps`) of 3,000-byte packets, as in \
experiment 1 ("the same as experiment 1"), at a rate where experiment 1 is congested. \
The reproduction (services/reproductions/paper002.py) also runs 6 and 10 Mb/s.
- Only N2-N3 has the experiment's buffer; the other links keep ns-2's 50-packet Drop-Tail \
(they never queue). The trace records the TCP window and N2-N3's queue every 50 ms.
{red_text}
"""
    + COMMON
)

RED_TEXT = """\
- RED: ns-2.35's defaults, which compute themselves from the link (the paper gives no RED \
parameter): min_th 6.25 and max_th 18.75 packets, q_w 0.0004, max_p 0.1, gentle, a mean \
packet of 500 bytes (`ns2_red_queue` derives them as ns-2's red.cc does). So the thresholds do \
not follow the buffer size: 100 or 300 only sets the hard limit. ns-2 counts the average in \
packets, as here; ns-2's `wait_` (spacing drops) is not modelled by the core."""


# ---- published ----------------------------------------------------------------------------------


def _conclusions(*ids: str) -> tuple[dict[str, Any], ...]:
    by_id = {c["id"]: c for c in read_json(DATA_FILE)["conclusions"]}
    return tuple(dict(by_id[i]) for i in ids)


def _variant_table(name: str, caption: str, values: dict[str, Any], unit: str) -> PublishedTable:
    row = {k: v for k, v in values.items() if v is not None}
    columns = tuple(PublishedColumn(k, f"TCP {k} ({VARIANT} = {VARIANTS[k]})", unit) for k in row)
    return PublishedTable(name=name, caption=caption, columns=columns, rows=(row,))


def _exp1_published() -> Published:
    data = read_json(DATA_FILE)
    exp1 = data["exp1"]
    at2 = exp1["at_cbr_2mbps"]
    conclusions = _conclusions(
        "exp1-vegas-no-drops",
        "exp1-vegas-lower-throughput",
        "exp1-vegas-lower-latency",
        "exp1-newreno-highest-throughput",
    )
    return Published(
        source=SOURCE,
        setup=f"{data['topology']} {exp1['setup']}",
        findings=tuple(f"{c['text']} ({c['where']})" for c in conclusions),
        values={
            "conclusions": list(conclusions),
            "first_drops_at_cbr_mbps": exp1["first_drops_at_cbr_mbps"],
            "never_drops": exp1["never_drops"],
            "at_cbr_2mbps": at2,
            "throughput_unit_as_printed": data["throughput_unit_as_printed"],
        },
        tables=(
            _variant_table(
                "§3 throughput at CBR 2 Mb/s",
                'TCP throughput beside 2 Mb/s of CBR (packets of 500-8,000 bytes, no drops), as printed ("Mbps")',
                at2["throughput"],
                "Mbps as printed",
            ),
            _variant_table(
                "§3 latency at CBR 2 Mb/s", "Average latency per segment beside 2 Mb/s of CBR", at2["latency_s"], "s"
            ),
            _variant_table(
                "§3 first drops",
                "CBR rate (3,000-byte packets) at which the TCP flow first loses packets (Vegas: never)",
                exp1["first_drops_at_cbr_mbps"],
                "Mb/s",
            ),
        ),
    )


PAIR_COLUMNS = (
    PublishedColumn("first", "throughput of the first flow (N1->N4), as printed", "Mbps as printed"),
    PublishedColumn("second", "throughput of the second flow (N5->N6), as printed", "Mbps as printed"),
    PublishedColumn("drops", "TCP segments dropped, both flows", "packets"),
)


def _exp2_published(level: str) -> Published:
    data = read_json(DATA_FILE)
    exp2 = data["exp2"]
    tables = []
    for pair in exp2[level]["pairs"]:
        row: dict[str, float | int] = {"first": pair["throughput"][0], "second": pair["throughput"][1]}
        if "drops" in pair:
            row["drops"] = pair["drops"]
        tables.append(
            PublishedTable(
                name=f"{pair['first']}/{pair['second']}",
                caption=f"{pair['first']} (first, N1->N4) and {pair['second']} (second, N5->N6), CBR "
                f"{exp2[level]['cbr_rate_mbps']} Mbps of {exp2[level]['cbr_packet_bytes']}-byte packets",
                columns=PAIR_COLUMNS if "drops" in pair else PAIR_COLUMNS[:2],
                rows=(row,),
            )
        )
    ids = (
        "exp2-same-variant-fair",
        "exp2-vegas-loses-to-newreno",
        "exp2-newreno-reno-equal-low" if level == "low" else "exp2-newreno-beats-reno-high",
    )
    conclusions = _conclusions(*ids)
    return Published(
        source=SOURCE,
        setup=f"{data['topology']} {exp2['setup']}",
        findings=tuple(f"{c['text']} ({c['where']})" for c in conclusions),
        values={
            "conclusions": list(conclusions),
            "pairs": exp2[level]["pairs"],
            "cbr_rate_mbps": exp2[level]["cbr_rate_mbps"],
            "cbr_packet_bytes": exp2[level]["cbr_packet_bytes"],
            "throughput_unit_as_printed": data["throughput_unit_as_printed"],
        },
        tables=tuple(tables),
    )


def _exp3_published() -> Published:
    data = read_json(DATA_FILE)
    exp3 = data["exp3"]
    conclusions = _conclusions("exp3-red-lower-throughput", "exp3-sack-red-worst", "exp3-red-lower-latency")
    return Published(
        source=SOURCE,
        setup=f"{data['topology']} {exp3['setup']}",
        findings=tuple(f"{c['text']} ({c['where']})" for c in conclusions),
        values={
            "conclusions": list(conclusions),
            "cbr_start_s": exp3["cbr_start_s"],
            "buffers_pkts": exp3["buffers_pkts"],
        },
    )


# ---- presets ------------------------------------------------------------------------------------

WINDOW_PARAMETER = Parameter(
    "flows[0].tcp.max_window_pkts",
    "the TCP sender's window limit (ns-2's window_; not given by the paper)",
    "packets",
    NS2_WINDOW,
)
DURATION_PARAMETER = Parameter("duration_s", "simulated seconds (not given by the paper)", "s", DURATION_S)


def _exp1_preset() -> Preset:
    exp1 = read_json(DATA_FILE)["exp1"]
    name = "paper002-exp1-congestion"
    return Preset(
        name=name,
        title="Paper 002 experiment 1: one TCP flow against CBR/UDP of 1-10 Mb/s on the six-node topology",
        description=EXP1_DESCRIPTION,
        reference=Reference(paper="002", citation=CITATION, where=exp1["where"]),
        parameters=(
            Parameter(
                VARIANT,
                "TCP variant: Tahoe, Reno, NewReno (newreno-sbs), Vegas",
                None,
                "reno",
                paper_values=("tahoe", "reno", "newreno-sbs", "vegas"),
            ),
            Parameter(
                CBR_RATE,
                "CBR rate: Figs. 2-3's x axis",
                "Mb/s",
                7.0,
                paper_range=tuple(exp1["cbr_rate_range_mbps"]),
            ),
            Parameter(
                CBR_BYTES,
                "CBR packet size (3,000 bytes for Figs. 2-3)",
                "bytes",
                exp1["cbr_packet_bytes"],
                paper_range=tuple(exp1["cbr_packet_bytes_range"]),
            ),
            Parameter(
                BUFFER,
                "N2-N3 buffer (ns-2's default)",
                "packets",
                NS2_QUEUE_LIMIT,
            ),
            WINDOW_PARAMETER,
            DURATION_PARAMETER,
        ),
        published=_exp1_published(),
        template=congestion_scenario(name=name) | {"description": "Paper 002 §3: Reno beside 7 Mb/s of CBR."},
    )


def _exp2_preset(level: str) -> Preset:
    exp2 = read_json(DATA_FILE)["exp2"]
    cbr = exp2[level]
    name = f"paper002-exp2-fairness-{level}"
    text, numbers = EXP2_LOW if level == "low" else EXP2_HIGH
    return Preset(
        name=name,
        title=f"Paper 002 experiment 2: fairness between two TCP variants, {level} congestion "
        f"(CBR {cbr['cbr_rate_mbps']} Mb/s)",
        description=EXP2_DESCRIPTION.format(level=text, numbers=numbers),
        reference=Reference(paper="002", citation=CITATION, where=f"{exp2['where']}; §4.{1 if level == 'low' else 2}"),
        parameters=(
            Parameter(
                VARIANT,
                "variant of the first TCP flow (N1->N4)",
                None,
                "newreno-sbs",
                paper_values=("reno", "newreno-sbs", "vegas"),
            ),
            Parameter(
                SECOND_VARIANT,
                "variant of the second TCP flow (N5->N6)",
                None,
                "vegas",
                paper_values=("reno", "vegas"),
            ),
            Parameter("flows[1].start_s", "start of the second TCP flow (§2.4 also starts one later)", "s", 0.0),
            Parameter(
                EXP2_CBR_RATE,
                "CBR rate",
                "Mb/s",
                float(cbr["cbr_rate_mbps"]),
                paper_values=(float(cbr["cbr_rate_mbps"]),),
            ),
            Parameter(
                EXP2_CBR_BYTES,
                "CBR packet size",
                "bytes",
                cbr["cbr_packet_bytes"],
                paper_values=(cbr["cbr_packet_bytes"],),
            ),
            WINDOW_PARAMETER,
            DURATION_PARAMETER,
        ),
        published=_exp2_published(level),
        template=fairness_scenario(cbr_mbps=float(cbr["cbr_rate_mbps"]), cbr_bytes=cbr["cbr_packet_bytes"], name=name)
        | {"description": f"Paper 002 §4: NewReno and Vegas, CBR {cbr['cbr_rate_mbps']} Mb/s."},
    )


def _exp3_preset(red: bool) -> Preset:
    exp3 = read_json(DATA_FILE)["exp3"]
    queue = ns2_red_queue(100) if red else {"type": "droptail", "limit_pkts": 100}
    kind = "red" if red else "droptail"
    name = f"paper002-exp3-{kind}"
    red_params: tuple[Parameter, ...] = ()
    if red:
        red_params = (
            Parameter(
                f"topology.graph.links[{BOTTLENECK}].queue.min_th_pkts",
                "RED minimum threshold (ns-2.35's automatic value; not given by the paper)",
                "packets",
                queue["min_th_pkts"],
            ),
            Parameter(
                f"topology.graph.links[{BOTTLENECK}].queue.weight",
                "RED averaging weight q_w (ns-2.35's automatic value; not given by the paper)",
                None,
                queue["weight"],
            ),
        )
    return Preset(
        name=name,
        title=f"Paper 002 experiment 3: Reno and SACK through a {'RED' if red else 'Drop-Tail'} buffer, CBR from 4 s",
        description=EXP3_DESCRIPTION.format(queue_text="RED" if red else "Drop-Tail", red_text=RED_TEXT if red else ""),
        reference=Reference(paper="002", citation=CITATION, where=exp3["where"]),
        parameters=(
            Parameter(VARIANT, "TCP variant: Reno or SACK", None, "reno", paper_values=("reno", "sack")),
            Parameter(
                BUFFER,
                "N2-N3 buffer",
                "packets",
                100,
                paper_values=tuple(exp3["buffers_pkts"]),
            ),
            Parameter(CBR_RATE, "CBR rate (not given by the paper)", "Mb/s", EXP3_CBR_MBPS),
            Parameter(
                "flows[1].start_s",
                "CBR start (§2.5: 4 s)",
                "s",
                EXP3_CBR_START_S,
                paper_values=(float(exp3["cbr_start_s"]),),
            ),
            *red_params,
            Parameter("seed", "random seed (RED's drops)", None, 1),
            WINDOW_PARAMETER,
            DURATION_PARAMETER,
        ),
        published=_exp3_published(),
        template=queuing_scenario(queue, name=name) | {"description": f"Paper 002 §5: Reno, {kind} 100."},
    )


PRESETS: tuple[Preset, ...] = (
    _exp1_preset(),
    _exp2_preset("low"),
    _exp2_preset("high"),
    _exp3_preset(red=False),
    _exp3_preset(red=True),
)
