"""Paper 003's experiments as presets: Lai & Yao, "TCP congestion control algorithms and a
performance comparison" (ns), §4.

- `paper003-fig5-link-errors` (§4.1, Fig. 5): two connections of one algorithm through a
  bottleneck that loses packets at a link error rate.
- `paper003-table2-distinct-delays` (§4.2, Table 2): short and long connections, UF.
- `paper003-table3-new-arrival` (§4.3, Table 3): a new connection arrives at 10 s.
- `paper003-table4-reno-interop` (§4.4, Table 4): each algorithm sharing the network with Reno.

All on one dumbbell for the paper's Fig. 4, which is not in the text: `fig4_topology` and the
module's constants are our choices, said in each description. The published tables are
`data/003_tables.json` (a verbatim copy of papers/published/) and the §4 comments
`data/003_findings.json` (our transcription, with sections). services/reproductions/paper003.py
runs them; docs/validation/paper003.md compares them with the paper.
"""

from __future__ import annotations

from typing import Any

from services.presets.published import read_json
from services.presets.registry import Parameter, Preset, Published, PublishedColumn, PublishedTable, Reference

__all__ = [
    "BUFFER",
    "CONNECTIONS",
    "DATA_FILE",
    "ERROR_RATE",
    "EVERY_VARIANT",
    "FIRST_COUNT",
    "FIRST_VARIANT",
    "FINDINGS_FILE",
    "PRESETS",
    "SECOND_VARIANT",
    "VARIANTS",
    "access_rtt_ms",
    "fig4_topology",
]

CITATION = (
    'Y.-C. Lai, C.-L. Yao, "TCP congestion control algorithms and a performance comparison" '
    "(National Cheng Kung University; ns)"
)
DATA_FILE = "003_tables.json"
FINDINGS_FILE = "003_findings.json"
SOURCE = (
    f"paper 003 (Lai & Yao, ns): Tables 2-4 in services/presets/data/{DATA_FILE}, the §4 comments in "
    f"services/presets/data/{FINDINGS_FILE}"
)

VARIANTS: dict[str, str] = {
    "Tahoe": "tahoe",
    "Reno": "reno",
    "NewReno": "newreno-sbs",
    "SACK": "sack",
    "FACK": "fack",
    "Rate-Halving": "rate-halving",
    "SSDR": "ssdr",
    "Vegas": "vegas",
    "Pseudo-Rate": "pseudo-rate",
}
"""The paper's names (Table 1; the data files' keys) -> the core's variants. NewReno is
newreno-sbs, RFC 3782's Slow-but-Steady; ns-2.35's Agent/TCP/Newreno defaults to Impatient
(`newreno_changes1_` 1) and the paper's older ns may have differed. Tahoe is in Table 1 but in
none of the results; Fig. 5's experiment runs it beside the others."""

# The override paths the presets declare and the reproduction sweeps
# (services/reproductions/paper003.py): spelled here only.
FIRST_VARIANT = "flows[0].variant"
"""The first flow group's algorithm: Fig. 5's only group, Table 4's Reno."""
SECOND_VARIANT = "flows[1].variant"
"""The second flow group's algorithm: Table 4's algorithm beside Reno."""
FIRST_COUNT = "flows[0].count"
"""Connections in the first flow group: all of Fig. 5's, Table 3's n old ones."""
SECOND_COUNT = "flows[1].count"
EVERY_VARIANT = "variant"
"""Tables 2-3's own parameter: the algorithm of both flow groups."""
CONNECTIONS = "connections"
"""Tables 2 and 4's own parameter: n connections, half in each group."""
ERROR_RATE = "topology.dumbbell.bottleneck.loss.rate"
"""The link error rate on A->B: Fig. 5's x axis."""
BUFFER = "topology.dumbbell.bottleneck.queue.limit_pkts"
"""The bottleneck buffer (ours: 10 packets; the reproduction also runs ns's 50)."""

PACKET_BYTES = 512
"""§4: "packet size is fixed at a length of 512 bytes" — ns's packetSize_, the payload; ns adds
a 40-byte TCP/IP header on the wire."""
BOTTLENECK_MBPS = 1.5
BOTTLENECK_DELAY_MS = 1.0
BUFFER_PKTS = 10
ACCESS_MBPS = 10.0
SHORT_ACCESS_MS = 0.4
LONG_ACCESS_MS = 40.0
"""§4.2: short and long connections have 0.4 ms and 40 ms "between the source and router A,
and between router B and the destination" (the text swaps the two words)."""
ACCESS_MS = 20.0
"""The access delay of every connection outside Table 2 (not given): between the two."""
WINDOW_PKTS = 64
"""ns's window_ (the sender's bound), not given: 64 packets of 512 bytes, a 32 KB window."""


def access_rtt_ms(access_ms: float) -> float:
    """The round trip of a connection whose two access links each delay `access_ms`."""
    return 2 * (2 * access_ms + BOTTLENECK_DELAY_MS)


def fig4_topology(error_rate: float | None = None) -> dict[str, Any]:
    """Our Fig. 4: sources - router A - (1.5 Mb/s, 1 ms, 10-packet Drop-Tail) - router B -
    destinations, 10 Mb/s access links; `error_rate` loses data packets on A->B (§4.1)."""
    bottleneck: dict[str, Any] = {
        "rate_mbps": BOTTLENECK_MBPS,
        "delay_ms": BOTTLENECK_DELAY_MS,
        "queue": {"type": "droptail", "limit_pkts": BUFFER_PKTS},
    }
    if error_rate is not None:
        bottleneck["loss"] = {"type": "uniform", "rate": error_rate}
    return {
        "dumbbell": {
            "bottleneck": bottleneck,
            "access": {"rate_mbps": ACCESS_MBPS, "queue": {"type": "droptail", "limit_pkts": 100}},
        }
    }


def _ns_tcp() -> dict[str, Any]:
    # The paper ran ns: ns-2's Agent/TCP defaults (the `ns2` profile) with its 512-byte packets
    # and window. ns's TcpAgent::reset() sets ssthresh_ = window_: SSDR's smooth start acts from
    # the start.
    return {
        "profile": "ns2",
        "mss_bytes": PACKET_BYTES,
        "header_bytes": 40,
        "max_window_pkts": WINDOW_PKTS,
        "initial_ssthresh_pkts": WINDOW_PKTS,
    }


START_JITTER_S = 0.5
"""Connections meant to start at 0 start uniformly in [0, 0.5] s, so seeds differ (§4 gives no
start times; ns would start them together and run once)."""


def _flow(name: str, variant: str, count: int, access_ms: float = ACCESS_MS, start_s: Any = None) -> dict[str, Any]:
    return {
        "name": name,
        "count": count,
        "variant": variant,
        "rtt_ms": access_rtt_ms(access_ms),
        "start_s": {"uniform": [0.0, START_JITTER_S]} if start_s is None else start_s,
        "app": {"type": "ftp"},
        "tcp": _ns_tcp(),
    }


# ---- preset parameters ---------------------------------------------------------------------------


def _variant_name(value: Any) -> str:
    if value not in VARIANTS.values():
        raise ValueError(f"variant must be one of {', '.join(VARIANTS.values())}, got {value!r}")
    return value


def _both_variants(value: Any) -> dict[str, Any]:
    """`variant`: the algorithm of every connection (Tables 2-3 run one algorithm at a time)."""
    return {FIRST_VARIANT: _variant_name(value), SECOND_VARIANT: value}


def _halves(value: Any) -> dict[str, Any]:
    """`connections`: n of Tables 2 and 4, half in each flow group."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 2 or value % 2:
        raise ValueError(f"connections must be an even number >= 2, got {value!r}")
    return {FIRST_COUNT: value // 2, SECOND_COUNT: value // 2}


def _variant_parameter(default: str) -> Parameter:
    return Parameter(
        EVERY_VARIANT,
        "the algorithm of every connection",
        None,
        default,
        paper_values=tuple(v for v in VARIANTS.values() if v != "tahoe"),
        expands_to=(FIRST_VARIANT, SECOND_VARIANT),
    )


def _connections_parameter(where: str) -> Parameter:
    return Parameter(
        CONNECTIONS,
        f"n, the number of connections, half in each group ({where})",
        None,
        2,
        paper_values=(2, 4),
        expands_to=(FIRST_COUNT, SECOND_COUNT),
    )


SEED_PARAMETER = Parameter("seed", "random seed: the start times in [0, 0.5] s (and the link errors)", None, 1)


# ---- descriptions ----------------------------------------------------------------------------

COMMON = f"""\
What the paper leaves open and we chose (its Fig. 4, the network model, is not in the text):
- Topology: a dumbbell, sources - router A - router B - destinations. A-B is a \
{BOTTLENECK_MBPS:g} Mb/s link with {BOTTLENECK_DELAY_MS:g} ms of propagation and a \
{BUFFER_PKTS}-packet Drop-Tail buffer; every host has its own {ACCESS_MBPS:g} Mb/s access \
link on each side. 1.5 Mb/s because the paper's MT totals (about 16,300-17,900 per 50 s in \
Tables 2 and 4) fit packets delivered through a T1 in 50 s (18,300 of 512 bytes at most); the \
small buffer and the short A-B delay because with them the short/long unfairness of the \
loss-recovery algorithms is of the paper's size (UF 150-190 %, Table 2), where a 50-packet \
buffer (ns's default) gives 15-60 %. Access links delay {ACCESS_MS:g} ms each (round trip \
{access_rtt_ms(ACCESS_MS):g} ms) except in Table 2's experiment (§4.2: 0.4 and 40 ms).
- TCP: ns's agents — {PACKET_BYTES}-byte packets (§4) + 40 header bytes, an ACK per packet, \
no delayed ACKs, initial window 2, RTO with a 200 ms minimum and 10 ms ticks; a window_ of \
{WINDOW_PKTS} packets (32 KB; not given) and, as ns's TcpAgent::reset() does, an initial \
ssthresh equal to it (so SSDR's smooth start acts from the first round). NewReno is \
newreno-sbs; Vegas has alpha 1, beta 3, gamma 1 (ns's); Pseudo-Rate's queue length (2 \
segments) and SSDR's grain and depth (2, 2) are the core's defaults (`tcp.pseudo_rate`, \
`tcp.ssdr`; docs/simulator.md).
- Connections meant to start together start uniformly within the first {START_JITTER_S:g} s, \
so each seed is a different run (`seed`); the paper runs each case once.
- MT is printed without a unit; ours is goodput (payload received) in kb/s per connection, \
and the reproduction compares shares and ratios, which need no unit."""

FIG5_DESCRIPTION = (
    """\
Paper 003 §4.1, Fig. 5: the mean throughput MT of each TCP algorithm as the link error rate \
grows, over 1000 s. The paper ranks them Vegas > Pseudo-Rate ≈ Rate-Halving > SSDR ≈ FACK ≈ \
SACK > NewReno > Reno and finds the gaps widening with the error rate. This preset is two Reno \
connections with a 1 % error rate: sweep `flows[0].variant` over the nine and \
`topology.dumbbell.bottleneck.loss.rate` for the curves.

- Link errors (the paper gives neither the rates nor the link): each data packet crossing A->B \
is lost independently with the error rate (a `uniform` loss module on the bottleneck's forward \
direction; ACKs are not lost). Fig. 5's rates are not in the text; the reproduction runs 0, \
0.1, 0.5, 1, 2 and 5 %.
- Two connections of the algorithm (`flows[0].count`; not given), on the common access delay.

"""
    + COMMON
)

TABLE2_DESCRIPTION = (
    """\
Paper 003 §4.2, Table 2: short and long connections of one algorithm share the bottleneck for \
50 s; the short ones have 0.4 ms on each access link, the long ones 40 ms (round trips {short:g} \
and {long:g} ms here). UF = |long - short| / mean of all connections x 100 %. The paper: every \
algorithm is biased against long connections; those with the SACK option are fairer than \
those without; the loss-avoidance ones fairer still, Pseudo-Rate the fairest. This preset is \
Reno with n = 2 (one short, one long): set `variant` and `connections` (2 or 4). No link \
errors (the paper mentions none here).

"""
    + COMMON
)

TABLE3_DESCRIPTION = (
    """\
Paper 003 §4.3, Table 3: n connections of one algorithm start at 0 and a new one arrives at \
10 s; MT of the new and the old connections between 10 and 50 s (`warmup_s` 10). The paper: \
for loss-recovery algorithms the new connection ends up with about the old ones' bandwidth; \
for the loss-avoidance ones the new connection does better as n grows (it overestimates \
basertt behind the queue), and with Pseudo-Rate always. This preset is Reno with n = 1: set \
`variant` and `flows[0].count` (1, 2, 3).

- n is the number of old connections: Table 3's totals (new + n x old, about 13,400-13,900 for \
Reno) are then 0.82-0.85 of Table 2's 50 s totals, as 40 of 50 s would make them. (Its old \
columns end in .5, .66 and .75, which would suggest n + 1 old connections; the totals do not \
fit that.) No link errors.

"""
    + COMMON
)

TABLE4_DESCRIPTION = (
    """\
Paper 003 §4.4, Table 4: each algorithm shares the bottleneck with Reno, n = 2 or 4 \
connections, half of each. The paper: Reno robs the loss-avoidance algorithms (Vegas, \
Pseudo-Rate); the loss-recovery algorithms derived from Reno gain more than Reno. This preset \
is Reno against SACK with n = 2: set `flows[1].variant` and `connections`.

- Duration 50 s (not given; as Tables 2 and 3). All connections on the common access delay. \
No link errors.

"""
    + COMMON
)


# ---- published -----------------------------------------------------------------------------------


def conclusions(experiment: str | None = None) -> tuple[dict[str, Any], ...]:
    """The §4 comments (data/003_findings.json), those of one experiment if given."""
    return tuple(
        dict(c) for c in read_json(FINDINGS_FILE)["conclusions"] if experiment is None or c["experiment"] == experiment
    )


def _rows_table(name: str, caption: str, block: dict[str, Any], columns: tuple[PublishedColumn, ...]) -> PublishedTable:
    """One table of 003_tables.json at one n: a row per algorithm, the paper's name first."""
    keys = [c.name for c in columns[1:]]
    rows = tuple(
        {"algorithm": algorithm, **dict(zip(keys, values, strict=True))} for algorithm, values in block.items()
    )
    return PublishedTable(name=name, caption=caption, columns=columns, rows=rows)


def _published(experiment: str, tables: tuple[PublishedTable, ...], values: dict[str, Any]) -> Published:
    findings = read_json(FINDINGS_FILE)
    cs = conclusions(experiment)
    return Published(
        source=SOURCE,
        setup=f"{findings['setup']} {findings['experiments'][experiment]['setup']}",
        findings=tuple(f"{c['text']} ({c['where']})" for c in cs),
        values={"conclusions": list(cs), "units_note": read_json(DATA_FILE)["units_note"], **values},
        tables=tables,
    )


ALGORITHM = PublishedColumn("algorithm", "the paper's name of the algorithm (Table 1)")


def _table2() -> Published:
    data = read_json(DATA_FILE)["table2_distinct_delays_50s"]
    columns = (
        ALGORITHM,
        PublishedColumn("short", "MT of the short connections", "as printed"),
        PublishedColumn("long", "MT of the long connections", "as printed"),
        PublishedColumn("uf_percent", "UF, |long - short| / mean x 100", "%"),
    )
    tables = tuple(
        _rows_table(f"Table 2, n={n}", f"Distinct propagation delays, {n} connections (50 s)", data[f"n{n}"], columns)
        for n in (2, 4)
    )
    return _published("table2", tables, {"table2": data})


def _table3() -> Published:
    data = read_json(DATA_FILE)["table3_new_arrival_at_10s_mt_10_to_50s"]
    columns = (
        ALGORITHM,
        PublishedColumn("new", "MT of the new connection (10-50 s)", "as printed"),
        PublishedColumn("old", "MT of the old connections (10-50 s)", "as printed"),
    )
    tables = tuple(
        _rows_table(f"Table 3, n={n}", f"A new arrival at 10 s, n = {n}", data[f"n{n}"], columns) for n in (1, 2, 3)
    )
    return _published("table3", tables, {"table3": data})


def _table4() -> Published:
    data = read_json(DATA_FILE)["table4_interoperating_with_reno"]
    columns = (
        ALGORITHM,
        PublishedColumn("reno", "MT of the Reno connections", "as printed"),
        PublishedColumn("other", "MT of the other algorithm's connections", "as printed"),
    )
    tables = tuple(
        _rows_table(f"Table 4, n={n}", f"Interoperating with Reno, n = {n}", data[f"n{n}"], columns) for n in (2, 4)
    )
    return _published("table4", tables, {"table4": data})


# ---- presets -------------------------------------------------------------------------------------


def _reference(experiment: str) -> Reference:
    return Reference(paper="003", citation=CITATION, where=read_json(FINDINGS_FILE)["experiments"][experiment]["where"])


DEFAULT_ERROR_RATE = 0.01


def _fig5_preset() -> Preset:
    name = "paper003-fig5-link-errors"
    scenario = {
        "name": name,
        "description": "Paper 003 §4.1: two Reno connections, 1 % link errors.",
        "duration_s": 1000.0,
        "seed": 1,
        "topology": fig4_topology(DEFAULT_ERROR_RATE),
        "flows": [_flow("tcp", "reno", 2)],
    }
    return Preset(
        name=name,
        title="Paper 003 Fig. 5: mean throughput of each TCP algorithm against the link error rate",
        description=FIG5_DESCRIPTION,
        reference=_reference("fig5"),
        parameters=(
            Parameter(FIRST_VARIANT, "the TCP algorithm", None, "reno", paper_values=tuple(VARIANTS.values())),
            Parameter(
                ERROR_RATE,
                "link error rate: the probability that A->B loses "
                "a data packet (Fig. 5's x axis; its values are not given)",
                "probability",
                DEFAULT_ERROR_RATE,
            ),
            Parameter(FIRST_COUNT, "connections of the algorithm (not given)", None, 2),
            Parameter("duration_s", "simulated seconds (Fig. 5: 1000 s)", "s", 1000.0, paper_values=(1000.0,)),
            SEED_PARAMETER,
        ),
        published=_published("fig5", (), {"ranking": conclusions("fig5")[0]["ranking"]}),
        template=scenario,
    )


def _table2_preset() -> Preset:
    name = "paper003-table2-distinct-delays"
    scenario = {
        "name": name,
        "description": "Paper 003 §4.2: Reno, one short and one long connection.",
        "duration_s": 50.0,
        "seed": 1,
        "topology": fig4_topology(),
        "flows": [_flow("short", "reno", 1, SHORT_ACCESS_MS), _flow("long", "reno", 1, LONG_ACCESS_MS)],
    }
    return Preset(
        name=name,
        title="Paper 003 Table 2: short and long connections of one algorithm, and their unfairness UF",
        description=TABLE2_DESCRIPTION.format(short=access_rtt_ms(SHORT_ACCESS_MS), long=access_rtt_ms(LONG_ACCESS_MS)),
        reference=_reference("table2"),
        parameters=(
            _variant_parameter("reno"),
            _connections_parameter("Table 2: 2 and 4"),
            Parameter(
                "flows[0].rtt_ms",
                "round trip of the short connections (§4.2: 0.4 ms per access link)",
                "ms",
                access_rtt_ms(SHORT_ACCESS_MS),
            ),
            Parameter(
                "flows[1].rtt_ms",
                "round trip of the long connections (§4.2: 40 ms per access link)",
                "ms",
                access_rtt_ms(LONG_ACCESS_MS),
            ),
            Parameter("duration_s", "simulated seconds (Table 2: 50 s)", "s", 50.0, paper_values=(50.0,)),
            SEED_PARAMETER,
        ),
        published=_table2(),
        template=scenario,
        expanders={EVERY_VARIANT: _both_variants, CONNECTIONS: _halves},
    )


ARRIVAL_S = 10.0


def _table3_preset() -> Preset:
    name = "paper003-table3-new-arrival"
    scenario = {
        "name": name,
        "description": "Paper 003 §4.3: Reno, one old connection and a new one at 10 s.",
        "duration_s": 50.0,
        "warmup_s": ARRIVAL_S,
        "seed": 1,
        "topology": fig4_topology(),
        "flows": [_flow("old", "reno", 1), _flow("new", "reno", 1, start_s=ARRIVAL_S)],
    }
    return Preset(
        name=name,
        title="Paper 003 Table 3: a new connection arrives at 10 s among n old ones",
        description=TABLE3_DESCRIPTION,
        reference=_reference("table3"),
        parameters=(
            _variant_parameter("reno"),
            Parameter(FIRST_COUNT, "n, the old connections (Table 3: 1, 2, 3)", None, 1, paper_values=(1, 2, 3)),
            Parameter(
                "flows[1].start_s",
                "arrival of the new connection (§4.3: 10 s)",
                "s",
                ARRIVAL_S,
                paper_values=(ARRIVAL_S,),
            ),
            Parameter("warmup_s", "start of the measurement (§4.3: 10 s)", "s", ARRIVAL_S, paper_values=(ARRIVAL_S,)),
            Parameter("duration_s", "simulated seconds (§4.3: measured until 50 s)", "s", 50.0, paper_values=(50.0,)),
            SEED_PARAMETER,
        ),
        published=_table3(),
        template=scenario,
        expanders={EVERY_VARIANT: _both_variants},
    )


def _table4_preset() -> Preset:
    name = "paper003-table4-reno-interop"
    scenario = {
        "name": name,
        "description": "Paper 003 §4.4: one Reno and one SACK connection.",
        "duration_s": 50.0,
        "seed": 1,
        "topology": fig4_topology(),
        "flows": [_flow("reno", "reno", 1), _flow("other", "sack", 1)],
    }
    return Preset(
        name=name,
        title="Paper 003 Table 4: each algorithm interoperating with Reno",
        description=TABLE4_DESCRIPTION,
        reference=_reference("table4"),
        parameters=(
            Parameter(
                SECOND_VARIANT,
                "the algorithm beside Reno",
                None,
                "sack",
                paper_values=tuple(v for v in VARIANTS.values() if v not in ("tahoe", "reno")),
            ),
            _connections_parameter("Table 4: 2 and 4"),
            Parameter("duration_s", "simulated seconds (not given)", "s", 50.0),
            SEED_PARAMETER,
        ),
        published=_table4(),
        template=scenario,
        expanders={CONNECTIONS: _halves},
    )


PRESETS: tuple[Preset, ...] = (_fig5_preset(), _table2_preset(), _table3_preset(), _table4_preset())
