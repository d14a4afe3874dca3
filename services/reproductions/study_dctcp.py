"""The DCTCP study run and judged: DCTCP against CUBIC on one 10 Gb/s switch port marking at K,
and an incast of N senders into it (`services.presets.study_dctcp`).

Four experiments: `queue-vs-k` (two DCTCP or two CUBIC-with-ECN flows, K swept), `k-vs-buffer`
(DCTCP, CUBIC with ECN and plain CUBIC, the buffer swept at K 65), `mixed` (a DCTCP flow beside
CUBIC with or without ECN) and `incast` (N senders of 64 kB, DCTCP or plain CUBIC). A bulk
point's figures are means over its seeds of the port's link observation (utilisation, queueing
delay, marks, drops), the run's Jain index and the flow groups' goodput. An incast point's are,
per seed, the slowest sender's response (the query's completion), the mean response, the
timeouts summed over the senders and the senders that stalled, then means over the seeds. The
claims (`CLAIMS`, each with its source) are judged with the thresholds stated here and in
docs/validation/study-dctcp.md, which discusses the outcome.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from services.presets.study_dctcp import (
    BDP_PKTS,
    BUFFER,
    BUFFERS,
    CLAIMS,
    INCAST_BUFFER_PKTS,
    INCAST_COUNTS,
    INCAST_NAME,
    INCAST_VARIANTS,
    INITIAL_WINDOW_PKTS,
    K_DEFAULT,
    KS,
    MIN_RTO_S,
    NAME,
    PACKET_BYTES,
    RATE_MBPS,
    SECOND_SENDER,
    SENDER,
    SENDER_COUNT,
    SENDERS,
    SOURCES,
    VARIANT,
    K,
)
from services.reproductions.model import (
    AGREE,
    DISAGREE,
    NO_DATA,
    PARTLY,
    Cells,
    Column,
    Evaluation,
    Experiment,
    Observations,
    Paper,
    Plot,
    Table,
    evaluate_by_experiment,
    share,
)

PORT = "bottleneck"
RUN = "run"
BULK_SEEDS = 2
INCAST_SEEDS = 3
LABEL = {"dctcp": "DCTCP", "cubic-ecn": "CUBIC+ECN", "cubic": "CUBIC"}
BULK_PAIR = ("dctcp", "cubic-ecn")
OTHERS = ("cubic-ecn", "cubic")
MIXED_KS = KS[1:]
PACKET_US = PACKET_BYTES * 8 / RATE_MBPS
"""Microseconds to send one packet at the port's rate (1.2 µs): a queue of n packets delays by
n × this."""

EXPERIMENTS = (
    Experiment(
        "queue-vs-k",
        "Two DCTCP or two CUBIC-with-ECN flows: utilisation and queue against the marking threshold K",
        NAME,
        ({"path": SENDER, "values": list(BULK_PAIR)}, {"path": K, "values": list(KS)}),
        replications=BULK_SEEDS,
    ),
    Experiment(
        "k-vs-buffer",
        "DCTCP, CUBIC with ECN and plain CUBIC at K 65: the queue against the port's buffer",
        NAME,
        ({"path": SENDER, "values": list(SENDERS)}, {"path": BUFFER, "values": list(BUFFERS)}),
        replications=BULK_SEEDS,
    ),
    Experiment(
        "mixed",
        "A DCTCP flow beside CUBIC with or without ECN on one marking port: the shares",
        NAME,
        ({"path": SECOND_SENDER, "values": list(OTHERS)}, {"path": K, "values": list(MIXED_KS)}),
        replications=BULK_SEEDS,
    ),
    Experiment(
        "incast",
        "N senders of 64 kB into one port: the slowest response, timeouts and stalls, DCTCP against CUBIC",
        INCAST_NAME,
        ({"path": VARIANT, "values": list(INCAST_VARIANTS)}, {"path": SENDER_COUNT, "values": list(INCAST_COUNTS)}),
        replications=INCAST_SEEDS,
    ),
)

# ---- thresholds of the judgements ---------------------------------------------------------------

FULL = 0.99
"""Utilisation that counts as the link fully used."""
NEAR_K = (0.5, 1.5)
"""DCTCP's mean queue within half and one and a half times K."""
GUIDELINE_K = BDP_PKTS / 7
"""Alizadeh et al. §3.3: K > C·RTT/7 (11.9 packets here)."""
ECN_SHORTFALL = 0.02
"""CUBIC with ECN at least two points of utilisation below DCTCP at the smallest K past the
guideline."""
BUFFER_SPREAD = 1.25
"""DCTCP's p99 queueing delay varies by at most 25 % over the buffers ..."""
K_BOUND = 1.5
"""... and stays within 1.5 × K's drain time."""
FILLS = 0.5
"""Plain CUBIC's p99 reaches at least half the buffer's drain time at every buffer."""
LARGER_SHARE = 0.6
"""DCTCP's share of the goodput beside CUBIC with ECN."""
NO_SLOWER = (1.1, 0.001)
"""DCTCP's slowest response at most 1.1 × CUBIC's + 1 ms."""
OVERFLOW = 4.0
"""Stalls are judged where the first windows (N × 10 segments) are at least four times the buffer
(N ≥ 40: past the paper's "about 35 senders")."""
STALL_S = MIN_RTO_S / 2
"""A response at least this long waited for a timer (Linux's RTO, or a loss probe armed for the
RTO's deadline), not for the queue (1.7 ms drains the whole 32 × 64 kB at 10 Gb/s)."""


def _us(seconds: float | None) -> float | None:
    return None if seconds is None else seconds * 1e6


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else seconds * 1e3


def _mean(xs: list[float | None]) -> float | None:
    data = [x for x in xs if x is not None]
    return sum(data) / len(data) if data else None


def _port(cells: Cells, where: Mapping[str, Any]) -> dict[str, float | None]:
    """The port's figures at one point, means over its seeds."""
    return {
        "utilization": cells.mean(PORT, "utilization", where),
        "mean_queue_pkts": cells.mean(PORT, "mean_queue_pkts", where),
        "mean_delay_us": _us(cells.mean(PORT, "mean_queue_delay_s", where)),
        "p99_delay_us": _us(cells.mean(PORT, "p99_queue_delay_s", where)),
        "marks": cells.mean(PORT, "ecn_marks", where),
        "drops": cells.mean(PORT, "link_drops", where),
    }


def _bulk(cells: Cells, where: Mapping[str, Any]) -> dict[str, float | None]:
    """A bulk point: the port's figures, the flows' goodput (Gb/s) and shares, Jain's index."""
    goodput = {f: cells.mean(f, "goodput_bps", where) for f in ("first", "second")}
    first, second = goodput["first"], goodput["second"]
    total = None if first is None or second is None else first + second
    return {
        **_port(cells, where),
        "goodput_gbps": None if total is None else total / 1e9,
        "first_gbps": None if first is None else first / 1e9,
        "second_gbps": None if second is None else second / 1e9,
        "first_share": None if not total or first is None else first / total,
        "jain": cells.mean(RUN, "jain", where),
        "timeouts": _timeouts(cells, where),
    }


def _timeouts(cells: Cells, where: Mapping[str, Any]) -> float | None:
    values = [cells.mean(f, "timeouts", where) for f in ("first", "second")]
    return None if None in values else sum(v for v in values if v is not None)


def _incast(cells: Cells, where: Mapping[str, Any], n: int) -> dict[str, float | None]:
    """An incast point: per seed, over the N senders (one flow group each), the slowest response
    (None if one never finished), the mean one, the timeouts and the stalled senders; then
    means over the seeds."""
    times = [cells.values(f"s{i}", "download_time_s", where) for i in range(n)]
    timeouts = [cells.values(f"s{i}", "timeouts", where) for i in range(n)]
    seeds = min((len(t) for t in times), default=0)
    slowest, mean, total, stalled = [], [], [], []
    for r in range(seeds):
        each = [t[r] for t in times]
        done = [x for x in each if x is not None]
        slowest.append(max(done) if len(done) == n else None)
        mean.append(_mean(list(done)))
        total.append(sum(t[r] or 0 for t in timeouts))
        stalled.append(sum(1 for x in each if x is None or x >= STALL_S))
    return {
        "slowest_ms": _ms(_mean(slowest)) if slowest and None not in slowest else None,
        "mean_ms": _ms(_mean(mean)),
        "timeouts": _mean(list(total)),
        "stalled": _mean(list(stalled)),
        **{k: v for k, v in _port(cells, where).items() if k in ("drops", "marks")},
    }


def _queue_vs_k_rows(cells: Cells) -> list[dict[str, Any]]:
    rows = []
    for sender in BULK_PAIR:
        for k in KS:
            where = {SENDER: sender, K: k}
            if cells.select(PORT, **where):
                rows.append({"sender": LABEL[sender], "k_pkts": k, "k_c_rtt": k / BDP_PKTS, **_bulk(cells, where)})
    return rows


def _buffer_rows(cells: Cells) -> list[dict[str, Any]]:
    rows = []
    for sender in SENDERS:
        for buffer in BUFFERS:
            where = {SENDER: sender, BUFFER: buffer}
            if cells.select(PORT, **where):
                rows.append({"sender": LABEL[sender], "buffer_pkts": buffer, **_bulk(cells, where)})
    return rows


def _mixed_rows(cells: Cells) -> list[dict[str, Any]]:
    rows = []
    for other in OTHERS:
        for k in MIXED_KS:
            where = {SECOND_SENDER: other, K: k}
            if cells.select(PORT, **where):
                rows.append({"other": LABEL[other], "k_pkts": k, **_bulk(cells, where)})
    return rows


def _incast_rows(cells: Cells) -> list[dict[str, Any]]:
    rows = []
    for variant in INCAST_VARIANTS:
        for n in INCAST_COUNTS:
            where = {VARIANT: variant, SENDER_COUNT: n}
            if cells.select(PORT, **where):
                first_windows = n * INITIAL_WINDOW_PKTS
                rows.append({"variant": LABEL[variant], "senders": n, "first_windows_pkts": first_windows})
                rows[-1].update(_incast(cells, where, n))
    return rows


def _only(rows: list[dict[str, Any]], columns: tuple[Column, ...]) -> list[dict[str, Any]]:
    names = [c.name for c in columns]
    return [{n: r.get(n) for n in names} for r in rows]


PORT_COLUMNS = (
    Column("utilization", "utilisation"),
    Column("goodput_gbps", "goodput (both flows)", "Gb/s"),
    Column("mean_queue_pkts", "queue, mean", "pkts"),
    Column("mean_delay_us", "queueing delay, mean", "µs"),
    Column("p99_delay_us", "queueing delay, p99", "µs"),
    Column("marks", "CE marks"),
    Column("drops", "drops"),
    Column("jain", "Jain's index"),
)


def _queue_vs_k_table(rows: list[dict[str, Any]]) -> Table:
    columns = (
        Column("sender", "senders"),
        Column("k_pkts", "K", "pkts"),
        Column("k_c_rtt", "K / C·RTT"),
        *PORT_COLUMNS,
    )
    return Table(
        "queue-vs-k",
        "Two DCTCP or two CUBIC-with-ECN flows: utilisation and queue against K",
        f"Means of {BULK_SEEDS} seeds per point; C·RTT is {BDP_PKTS:.1f} packets, C·RTT/7 {GUIDELINE_K:.1f}; "
        f"buffer 400 packets; one packet waits {PACKET_US:.1f} µs.",
        "queue-vs-k",
        columns,
        _only(rows, columns),
        Plot(x="k_pkts", y=("utilization",), series="sender", x_label="K (packets)", y_label="utilisation"),
    )


def _buffer_table(rows: list[dict[str, Any]]) -> Table:
    columns = (Column("sender", "senders"), Column("buffer_pkts", "buffer", "pkts"), *PORT_COLUMNS)
    return Table(
        "k-vs-buffer",
        "DCTCP, CUBIC with ECN and plain CUBIC at K 65: the queue against the buffer",
        f"Means of {BULK_SEEDS} seeds per point; K = {K_DEFAULT} packets ({K_DEFAULT * PACKET_US:.0f} µs of queue).",
        "k-vs-buffer",
        columns,
        _only(rows, columns),
        Plot(
            x="buffer_pkts",
            y=("p99_delay_us",),
            series="sender",
            x_label="buffer (packets)",
            y_label="queueing delay, 99th percentile (µs)",
        ),
    )


def _mixed_table(rows: list[dict[str, Any]]) -> Table:
    columns = (
        Column("other", "beside DCTCP"),
        Column("k_pkts", "K", "pkts"),
        Column("first_gbps", "DCTCP goodput", "Gb/s"),
        Column("second_gbps", "other's goodput", "Gb/s"),
        Column("first_share", "DCTCP's share"),
        Column("jain", "Jain's index"),
        Column("utilization", "utilisation"),
        Column("mean_delay_us", "queueing delay, mean", "µs"),
        Column("marks", "CE marks"),
        Column("drops", "drops"),
        Column("timeouts", "timeouts (both flows)"),
    )
    return Table(
        "mixed",
        "A DCTCP flow beside CUBIC with or without ECN: DCTCP's share against K",
        f"Means of {BULK_SEEDS} seeds per point; buffer 400 packets.",
        "mixed",
        columns,
        _only(rows, columns),
        Plot(x="k_pkts", y=("first_share",), series="other", x_label="K (packets)", y_label="DCTCP's share"),
    )


def _incast_table(rows: list[dict[str, Any]]) -> Table:
    columns = (
        Column("variant", "senders run"),
        Column("senders", "N"),
        Column("first_windows_pkts", "first windows (N × 10)", "pkts"),
        Column("slowest_ms", "slowest response (query)", "ms"),
        Column("mean_ms", "mean response", "ms"),
        Column("timeouts", "timeouts (all senders)"),
        Column("stalled", f"senders ≥ {STALL_S * 1e3:g} ms"),
        Column("drops", "drops"),
        Column("marks", "CE marks"),
    )
    return Table(
        "incast",
        "N senders of 64 kB into one port: the slowest response against N",
        f"Means of {INCAST_SEEDS} seeds per point; buffer {INCAST_BUFFER_PKTS} packets, K {K_DEFAULT}, minimum RTO "
        f"{MIN_RTO_S * 1e3:g} ms. A sender at 100 ms or more waited a retransmission timeout: its first window and "
        "its loss probe were both lost.",
        "incast",
        columns,
        _only(rows, columns),
        Plot(x="senders", y=("slowest_ms",), series="variant", x_label="senders N", y_label="slowest response (ms)"),
    )


# ---- the claims --------------------------------------------------------------------------------

Rows = Mapping[str, list[dict[str, Any]]]
"""Table rows by experiment key."""


def _fmt(x: float | None, digits: int = 1) -> str:
    return "n/a" if x is None else f"{x:.{digits}f}"


def _row(rows: list[dict[str, Any]], **want: Any) -> dict[str, Any] | None:
    return next((r for r in rows if all(r.get(k) == v for k, v in want.items())), None)


def judge_full_throughput(rows: Rows) -> tuple[str, str]:
    """At every K past C·RTT/7, two DCTCP flows keep the link at least 99 % busy and their mean
    queue within K/2..3K/2."""
    dctcp = [r for r in rows["queue-vs-k"] if r["sender"] == LABEL["dctcp"]]
    above = [r for r in dctcp if r["k_pkts"] > GUIDELINE_K]

    def holds(r: dict[str, Any]) -> bool:
        queue = r["mean_queue_pkts"]
        return (
            (r["utilization"] or 0) >= FULL
            and queue is not None
            and (NEAR_K[0] * r["k_pkts"] <= queue <= NEAR_K[1] * r["k_pkts"])
        )

    text = "DCTCP, utilisation (mean queue) by K: " + ", ".join(
        f"K {r['k_pkts']}: {_fmt(r['utilization'], 3)} ({_fmt(r['mean_queue_pkts'])} pkts)" for r in dctcp
    )
    return (share(sum(1 for r in above if holds(r)), len(above)) if above else NO_DATA), text


def judge_classic_ecn(rows: Rows) -> tuple[str, str]:
    """At the smallest K past C·RTT/7, CUBIC with ECN uses the link at least two points less
    than DCTCP."""
    ks = sorted({r["k_pkts"] for r in rows["queue-vs-k"] if r["k_pkts"] > GUIDELINE_K})
    for k in ks:
        dctcp = _row(rows["queue-vs-k"], sender=LABEL["dctcp"], k_pkts=k)
        ecn = _row(rows["queue-vs-k"], sender=LABEL["cubic-ecn"], k_pkts=k)
        if dctcp and ecn and dctcp["utilization"] is not None and ecn["utilization"] is not None:
            full = [r["k_pkts"] for r in rows["queue-vs-k"] if r["sender"] == LABEL["cubic-ecn"]]
            reach = min(
                (
                    r["k_pkts"]
                    for r in rows["queue-vs-k"]
                    if r["sender"] == LABEL["cubic-ecn"] and (r["utilization"] or 0) >= FULL
                ),
                default=None,
            )
            text = (
                f"utilisation at K {k}: DCTCP {_fmt(dctcp['utilization'], 3)}, CUBIC+ECN {_fmt(ecn['utilization'], 3)}; "
                f"CUBIC+ECN reaches {FULL:g} at K {reach if reach is not None else f'> {max(full)}'}"
            )
            gap = dctcp["utilization"] - ecn["utilization"]
            return (AGREE if gap >= ECN_SHORTFALL else PARTLY if gap > 0 else DISAGREE), text
    return NO_DATA, "no K past C·RTT/7 was run for both senders"


def judge_buffer(rows: Rows) -> tuple[str, str]:
    """DCTCP's p99 delay flat over the buffers and within 1.5 × K; plain CUBIC's at least half
    the buffer's drain time at every buffer."""
    table = rows["k-vs-buffer"]
    dctcp = [_row(table, sender=LABEL["dctcp"], buffer_pkts=b) for b in BUFFERS]
    cubic = [_row(table, sender=LABEL["cubic"], buffer_pkts=b) for b in BUFFERS]
    d99 = [r["p99_delay_us"] if r else None for r in dctcp]
    c99 = [r["p99_delay_us"] if r else None for r in cubic]
    text = (
        f"p99 queueing delay at buffers {', '.join(map(str, BUFFERS))} packets: DCTCP "
        f"{', '.join(_fmt(v) for v in d99)} µs, plain CUBIC {', '.join(_fmt(v) for v in c99)} µs "
        f"(K {K_DEFAULT} drains in {K_DEFAULT * PACKET_US:.0f} µs)"
    )
    if None in d99 or None in c99:
        return NO_DATA, text
    dv = [v for v in d99 if v is not None]
    flat = max(dv) <= BUFFER_SPREAD * min(dv) and max(dv) <= K_BOUND * K_DEFAULT * PACKET_US
    fills = all(v is not None and v >= FILLS * b * PACKET_US for v, b in zip(c99, BUFFERS, strict=True))
    return (AGREE if flat and fills else PARTLY if flat or fills else DISAGREE), text


def judge_mixed(rows: Rows) -> tuple[str, str]:
    """Beside CUBIC with ECN, DCTCP takes at least 60 % of the goodput at every K."""
    table = rows["mixed"]
    ecn = [r for r in table if r["other"] == LABEL["cubic-ecn"] and r["first_share"] is not None]
    plain = [r for r in table if r["other"] == LABEL["cubic"] and r["first_share"] is not None]
    text = "DCTCP's share (Jain) beside CUBIC+ECN: " + ", ".join(
        f"K {r['k_pkts']}: {_fmt(r['first_share'], 2)} ({_fmt(r['jain'], 2)})" for r in ecn
    )
    if plain:
        text += "; beside plain CUBIC: " + ", ".join(
            f"K {r['k_pkts']}: {_fmt(r['first_share'], 2)} ({_fmt(r['jain'], 2)})" for r in plain
        )
    if not ecn:
        return NO_DATA, text
    return share(sum(1 for r in ecn if r["first_share"] >= LARGER_SHARE), len(ecn)), text


def judge_incast_no_worse(rows: Rows) -> tuple[str, str]:
    """At every N, DCTCP's slowest response at most 1.1 × CUBIC's + 1 ms."""
    table = rows["incast"]
    pairs = [
        (n, _row(table, variant=LABEL["dctcp"], senders=n), _row(table, variant=LABEL["cubic"], senders=n))
        for n in INCAST_COUNTS
    ]
    both = [(n, d["slowest_ms"], c["slowest_ms"]) for n, d, c in pairs if d and c]
    text = "slowest response, DCTCP against CUBIC: " + ", ".join(f"N {n}: {_fmt(d)} / {_fmt(c)} ms" for n, d, c in both)
    judged = [(d, c) for _, d, c in both if d is not None and c is not None]
    if not judged:
        return NO_DATA, text
    factor, slack = NO_SLOWER
    good = sum(1 for d, c in judged if d <= factor * c + slack * 1e3)
    return share(good, len(judged)), text


def judge_incast_stalls(rows: Rows) -> tuple[str, str]:
    """Where the first windows are at least four times the buffer, DCTCP's slowest response waits
    at least a minimum RTO."""
    table = rows["incast"]
    over = [
        r for r in table if r["variant"] == LABEL["dctcp"] and r["first_windows_pkts"] >= OVERFLOW * INCAST_BUFFER_PKTS
    ]
    text = "; ".join(
        f"N {r['senders']} ({r['first_windows_pkts']} pkts of first windows): DCTCP slowest {_fmt(r['slowest_ms'])} ms, "
        f"{_fmt(r['stalled'])} senders stalled, {_fmt(r['timeouts'])} timeouts"
        + (
            f"; CUBIC slowest {_fmt(c['slowest_ms'])} ms"
            if (c := _row(table, variant=LABEL["cubic"], senders=r["senders"]))
            else ""
        )
        for r in over
    )
    judged = [r for r in over if r["slowest_ms"] is not None]
    if not judged:
        return NO_DATA, text or "no N whose first windows are four times the buffer was run"
    return share(sum(1 for r in judged if r["slowest_ms"] >= MIN_RTO_S * 1e3), len(judged)), text


JUDGES: dict[str, Callable[[Rows], tuple[str, str]]] = {
    "dctcp-full-throughput-above-c-rtt-over-7": judge_full_throughput,
    "classic-ecn-needs-a-larger-k": judge_classic_ecn,
    "dctcp-queue-independent-of-buffer": judge_buffer,
    "dctcp-beats-classic-ecn": judge_mixed,
    "incast-dctcp-no-worse-than-tcp": judge_incast_no_worse,
    "incast-stalls-once-first-windows-overflow": judge_incast_stalls,
}

REASONS = {
    "incast-dctcp-no-worse-than-tcp": "With Linux's ten-segment initial window every sender's first burst arrives "
    "before any mark can act: past ten senders the 100-packet buffer overflows in the first round trip, for "
    "DCTCP as for CUBIC, and which senders lose their tail decides the slowest response "
    "(docs/validation/study-dctcp.md).",
    "incast-stalls-once-first-windows-overflow": "tcpsim's RACK-TLP repairs a lost tail with a probe; a sender "
    "that lost its whole first window probes at the RTO's deadline (docs/validation/study-dctcp.md).",
}

ROWS: dict[str, Callable[[Cells], list[dict[str, Any]]]] = {
    "queue-vs-k": _queue_vs_k_rows,
    "k-vs-buffer": _buffer_rows,
    "mixed": _mixed_rows,
    "incast": _incast_rows,
}
TABLES: dict[str, Callable[[list[dict[str, Any]]], Table]] = {
    "queue-vs-k": _queue_vs_k_table,
    "k-vs-buffer": _buffer_table,
    "mixed": _mixed_table,
    "incast": _incast_table,
}


def evaluate(observations: Observations) -> Evaluation:
    return evaluate_by_experiment(observations, EXPERIMENTS, ROWS, TABLES, CLAIMS, JUDGES, REASONS)


PAPER = Paper(
    number="dctcp",
    title="DCTCP against CUBIC on one switch: K against the buffer, and an incast of N senders",
    citation="; ".join(SOURCES.values()),
    setup="Two bulk flows (DCTCP, CUBIC with ECN or plain CUBIC, Linux's defaults: RACK-TLP, the SYN's RTT sample) share one 10 Gb/s "
    "switch port with a 100 µs round trip (C·RTT 83 packets) whose Drop-Tail buffer marks CE at K packets: K "
    "swept from 4 to 65 packets, the buffer from 100 to 800, and DCTCP beside CUBIC; 0.3 s, the last 0.2 measured, "
    "two seeds per point. Then N = 4-64 senders answer one request with 64 kB each into a 100-packet port "
    "(K 65), DCTCP against plain CUBIC, three seeds. The claims come from Alizadeh et al. (SIGCOMM 2010) and RFC "
    "8257, each with its section.",
    experiments=EXPERIMENTS,
    evaluate=evaluate,
    validation="docs/validation/study-dctcp.md",
    levels=True,
)
