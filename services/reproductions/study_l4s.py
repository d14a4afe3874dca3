"""The L4S study run and judged: a scalable flow beside a classic flow through DualPI2, PIE with
ECN, FQ-CoDel and Drop-Tail, and through DualPI2 at round trips of 10 to 80 ms
(`services.presets.study_l4s`).

Two experiments: `queues` (TCP Prague beside Reno or CUBIC through each queue at 20 ms) and
`rtt` (Prague or DCTCP-ECT(1) beside Reno or CUBIC through DualPI2, the base RTT swept). A
point's figures are means over its seeds: each flow's goodput and queueing delay (its mean RTT
above its propagation RTT) from the flow groups, the bottleneck's utilisation, p99 queueing
delay, marks and drops from its link observation. The claims (`CLAIMS`, each with its source)
are judged with the thresholds stated here and in docs/validation/study-l4s.md, which discusses
the outcome.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from services.presets.study_l4s import (
    CLAIMS,
    CLASSIC,
    CLASSICS,
    NAME,
    PI2_TARGET_MS,
    QUEUE,
    QUEUES,
    RTT,
    RTT_MS,
    RTT_VIRT_MS,
    RTTS,
    SCALABLE,
    SCALABLES,
    SOURCES,
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

BOTTLENECK = "bottleneck"
FLOWS = ("scalable", "classic")
SEEDS = 2
LABEL = {
    "dualpi2": "DualPI2",
    "pie-ecn": "PIE+ECN",
    "fq_codel": "FQ-CoDel",
    "droptail": "Drop-Tail",
    "prague": "Prague",
    "dctcp": "DCTCP-ECT(1)",
    "reno": "Reno",
    "cubic": "CUBIC",
}

EXPERIMENTS = (
    Experiment(
        "queues",
        "TCP Prague beside Reno or CUBIC through DualPI2, PIE with ECN, FQ-CoDel and Drop-Tail at 20 ms",
        NAME,
        ({"path": QUEUE, "values": list(QUEUES)}, {"path": CLASSIC, "values": list(CLASSICS)}),
        overrides={SCALABLE: "prague"},
        replications=SEEDS,
    ),
    Experiment(
        "rtt",
        "Prague or DCTCP-ECT(1) beside Reno or CUBIC through DualPI2: the shares against the base RTT",
        NAME,
        (
            {"path": SCALABLE, "values": list(SCALABLES)},
            {"path": CLASSIC, "values": list(CLASSICS)},
            {"path": RTT, "values": list(RTTS)},
        ),
        overrides={QUEUE: "dualpi2"},
        replications=SEEDS,
    ),
)

# ---- thresholds of the judgements ---------------------------------------------------------------

L4S_DELAY_MS = 2.0
""""Around a millisecond": the L4S flow's mean queueing delay at most 2 ms (the ramp starts at
0.8 ms and is fully on at 1.2 ms)."""
NEAR_TARGET = (0.5, 1.5)
"""The classic flow's within half and one and a half times PI2's 15 ms target."""
EQUAL_WITHIN = 2.0
""""Roughly equal": each flow's goodput within a factor of two of the other's."""
STARVED = 0.8
"""Beside a scalable flow in one PIE queue, the classic flow is starved when the scalable flow
takes at least 80 % of the goodput (four times the classic flow's)."""
BUSY = 0.95
"""Utilisation that counts as the link kept busy."""


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else seconds * 1e3


def _queued_ms(cells: Cells, flow: str, where: Mapping[str, Any]) -> float | None:
    """The flow's mean RTT above its propagation RTT (ms): its queueing delay, delayed ACKs
    included."""
    rtt = cells.mean(flow, "mean_rtt_s", where)
    base = cells.mean(flow, "rtt_propagation_s", where)
    return None if rtt is None or base is None else _ms(rtt - base)


def _point(cells: Cells, where: Mapping[str, Any]) -> dict[str, float | None]:
    """One point: both flows' goodput (Mb/s), queueing delay, the scalable flow's share and the
    ratio of the two rates; the bottleneck's utilisation, p99 queueing delay, marks and drops."""
    goodput = {f: cells.mean(f, "goodput_bps", where) for f in FLOWS}
    scalable, classic = goodput["scalable"], goodput["classic"]
    total = None if scalable is None or classic is None else scalable + classic
    return {
        "scalable_mbps": None if scalable is None else scalable / 1e6,
        "classic_mbps": None if classic is None else classic / 1e6,
        "scalable_share": None if not total or scalable is None else scalable / total,
        "ratio": None if not classic or scalable is None else scalable / classic,
        "scalable_queue_ms": _queued_ms(cells, "scalable", where),
        "classic_queue_ms": _queued_ms(cells, "classic", where),
        "utilization": cells.mean(BOTTLENECK, "utilization", where),
        "p99_delay_ms": _ms(cells.mean(BOTTLENECK, "p99_queue_delay_s", where)),
        "marks": cells.mean(BOTTLENECK, "ecn_marks", where),
        "drops": cells.mean(BOTTLENECK, "link_drops", where),
    }


def _queue_rows(cells: Cells) -> list[dict[str, Any]]:
    rows = []
    for queue in QUEUES:
        for classic in CLASSICS:
            where = {QUEUE: queue, CLASSIC: classic}
            if cells.select(BOTTLENECK, **where):
                rows.append({"queue": LABEL[queue], "classic": LABEL[classic], **_point(cells, where)})
    return rows


def _rtt_rows(cells: Cells) -> list[dict[str, Any]]:
    rows = []
    for scalable in SCALABLES:
        for classic in CLASSICS:
            for rtt in RTTS:
                where = {SCALABLE: scalable, CLASSIC: classic, RTT: rtt}
                if cells.select(BOTTLENECK, **where):
                    pair = f"{LABEL[scalable]} / {LABEL[classic]}"
                    rows.append({"pair": pair, "rtt_ms": rtt, **_point(cells, where)})
    return rows


def _only(rows: list[dict[str, Any]], columns: tuple[Column, ...]) -> list[dict[str, Any]]:
    names = [c.name for c in columns]
    return [{n: r.get(n) for n in names} for r in rows]


POINT_COLUMNS = (
    Column("scalable_mbps", "scalable goodput", "Mb/s"),
    Column("classic_mbps", "classic goodput", "Mb/s"),
    Column("ratio", "scalable / classic"),
    Column("scalable_share", "scalable share"),
    Column("scalable_queue_ms", "scalable queueing, mean", "ms"),
    Column("classic_queue_ms", "classic queueing, mean", "ms"),
    Column("p99_delay_ms", "bottleneck queueing, p99", "ms"),
    Column("utilization", "utilisation"),
    Column("marks", "CE marks"),
    Column("drops", "drops"),
)


def _queues_table(rows: list[dict[str, Any]]) -> Table:
    columns = (Column("queue", "queue"), Column("classic", "classic sender"), *POINT_COLUMNS)
    return Table(
        "queues",
        "TCP Prague beside a classic flow through each queue: shares and each flow's queueing delay",
        f"Means of {SEEDS} seeds per point; 100 Mb/s, {RTT_MS:g} ms base RTT, 40 s measured after 10. A flow's "
        "queueing is its mean RTT above its propagation RTT (delayed ACKs included); the p99 is the bottleneck's "
        "over every packet.",
        "queues",
        columns,
        _only(rows, columns),
        Plot(
            x="queue",
            y=("scalable_share",),
            series="classic",
            kind="bars",
            x_label="queue",
            y_label="Prague's share of the goodput",
        ),
    )


def _rtt_table(rows: list[dict[str, Any]]) -> Table:
    columns = (Column("pair", "scalable / classic"), Column("rtt_ms", "base RTT", "ms"), *POINT_COLUMNS)
    return Table(
        "rtt",
        "Through DualPI2: the scalable flow's rate against the classic flow's, base RTT 10-80 ms",
        f"Means of {SEEDS} seeds per point. Below {RTT_VIRT_MS:g} ms Prague grows as a {RTT_VIRT_MS:g} ms flow "
        "would ((RTT/25 ms)² segments per round trip); DCTCP does not.",
        "rtt",
        columns,
        _only(rows, columns),
        Plot(
            x="rtt_ms",
            y=("ratio",),
            series="pair",
            x_label="base RTT (ms)",
            y_label="scalable goodput / classic goodput",
        ),
    )


# ---- the claims --------------------------------------------------------------------------------

Rows = Mapping[str, list[dict[str, Any]]]
"""Table rows by experiment key."""


def _fmt(x: float | None, digits: int = 1) -> str:
    return "n/a" if x is None else f"{x:.{digits}f}"


def judge_l4s_delay(rows: Rows) -> tuple[str, str]:
    """Through DualPI2, beside each classic sender: the L4S flow queues at most 2 ms, the
    classic flow within 7.5-22.5 ms (half to one and a half times PI2's target); agree when
    both hold at every row, partly when one of the two holds somewhere."""
    dual = [r for r in rows["queues"] if r["queue"] == LABEL["dualpi2"]]
    text = "through DualPI2, queueing L4S / classic: " + ", ".join(
        f"beside {r['classic']}: {_fmt(r['scalable_queue_ms'], 2)} / {_fmt(r['classic_queue_ms'])} ms" for r in dual
    )
    judged = [r for r in dual if r["scalable_queue_ms"] is not None and r["classic_queue_ms"] is not None]
    if not judged:
        return NO_DATA, text
    low, high = (f * PI2_TARGET_MS for f in NEAR_TARGET)
    short = [r["scalable_queue_ms"] <= L4S_DELAY_MS for r in judged]
    near = [low <= r["classic_queue_ms"] <= high for r in judged]
    if all(short) and all(near):
        return AGREE, text
    return (PARTLY if any(short) or any(near) else DISAGREE), text


def judge_coupling(rows: Rows) -> tuple[str, str]:
    """Through DualPI2, at every pair and RTT, the scalable flow's goodput within a factor of
    two of the classic flow's."""
    table = [r for r in rows["rtt"] if r["ratio"] is not None]
    text = "scalable / classic goodput: " + "; ".join(
        f"{pair}: " + ", ".join(f"{r['rtt_ms']} ms {_fmt(r['ratio'], 2)}" for r in table if r["pair"] == pair)
        for pair in dict.fromkeys(r["pair"] for r in table)
    )
    if not table:
        return NO_DATA, text
    return share(sum(1 for r in table if 1 / EQUAL_WITHIN <= r["ratio"] <= EQUAL_WITHIN), len(table)), text


def judge_starvation(rows: Rows) -> tuple[str, str]:
    """Through one PIE queue marking ECN, beside each classic sender, Prague takes at least 80 %
    of the goodput."""
    pie = [r for r in rows["queues"] if r["queue"] == LABEL["pie-ecn"] and r["scalable_share"] is not None]
    dual = {r["classic"]: r for r in rows["queues"] if r["queue"] == LABEL["dualpi2"]}
    text = "Prague's share through PIE+ECN (through DualPI2): " + ", ".join(
        f"beside {r['classic']}: {_fmt(r['scalable_share'], 2)} "
        f"({_fmt(dual[r['classic']]['scalable_share'], 2) if r['classic'] in dual else 'n/a'})"
        for r in pie
    )
    if not pie:
        return NO_DATA, text
    return share(sum(1 for r in pie if r["scalable_share"] >= STARVED), len(pie)), text


def judge_busy(rows: Rows) -> tuple[str, str]:
    """At every DualPI2 point of the RTT sweep the link is at least 95 % busy."""
    table = [r for r in rows["rtt"] if r["utilization"] is not None]
    low = [r for r in table if r["utilization"] < BUSY]
    text = f"utilisation through DualPI2 from {_fmt(min((r['utilization'] for r in table), default=None), 3)} to " + (
        f"{_fmt(max((r['utilization'] for r in table), default=None), 3)}"
    )
    if low:
        text += "; below 0.95: " + ", ".join(
            f"{r['pair']} at {r['rtt_ms']} ms {_fmt(r['utilization'], 3)}" for r in low
        )
    if not table:
        return NO_DATA, text
    return share(len(table) - len(low), len(table)), text


JUDGES: dict[str, Callable[[Rows], tuple[str, str]]] = {
    "l4s-queue-about-a-millisecond": judge_l4s_delay,
    "coupling-equal-rates": judge_coupling,
    "scalable-starves-classic-in-one-queue": judge_starvation,
    "dualpi2-keeps-the-link-busy": judge_busy,
}

REASONS = {
    "coupling-equal-rates": "RFC 9332 §2.1 derives the coupling for a scalable and a classic flow of the same "
    "RTT in their steady state. TCP Prague departs from it on purpose "
    "below 25 ms, growing as a 25 ms flow would ((RTT/25 ms)² segments per round trip): at 10 ms it takes 0.30-0.40 "
    "of the classic rate (1.1-1.5 with the scaling off). DCTCP under the linux profile holds its window for the "
    "round after each reduction, as Linux does: 0.4 of CUBIC's rate at 20-40 ms (0.9 at 20 ms without the hold). At 80 ms "
    "the 50 s run ends before the flows converge (docs/validation/study-l4s.md).",
    "dualpi2-keeps-the-link-busy": "At 40-80 ms beside Reno: PI2's 15 ms target is well under a Reno flow's "
    "halving at that bandwidth-delay product, so the classic queue empties after each loss, and the scalable flow, "
    "short of its share (not converged at 80 ms in 50 s; DCTCP held in its CWR rounds and, unpaced, marked on its "
    "bursts by the L queue's 1 ms ramp), does not fill the gap (docs/validation/study-l4s.md).",
}

ROWS: dict[str, Callable[[Cells], list[dict[str, Any]]]] = {"queues": _queue_rows, "rtt": _rtt_rows}
TABLES: dict[str, Callable[[list[dict[str, Any]]], Table]] = {"queues": _queues_table, "rtt": _rtt_table}


def evaluate(observations: Observations) -> Evaluation:
    return evaluate_by_experiment(observations, EXPERIMENTS, ROWS, TABLES, CLAIMS, JUDGES, REASONS)


PAPER = Paper(
    number="l4s",
    title="L4S coexistence: a scalable flow beside a classic flow through DualPI2 and single-queue AQMs",
    citation="; ".join(SOURCES.values()),
    setup="One scalable flow (TCP Prague, or DCTCP sending ECT(1)) and one classic flow (Reno or CUBIC, Not-ECT) "
    "share a 100 Mb/s bottleneck, Linux's TCP defaults: at 20 ms through DualPI2, PIE marking ECN, FQ-CoDel and a "
    "30 ms Drop-Tail buffer, then through DualPI2 at base RTTs of 10, 20, 40 and 80 ms; 50 s, the last 40 "
    "measured, two seeds per point. The claims come from RFC 9330-9332 and RFC 8257, each with its section.",
    experiments=EXPERIMENTS,
    evaluate=evaluate,
    validation="docs/validation/study-l4s.md",
    levels=True,
)
