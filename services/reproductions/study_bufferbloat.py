"""The bufferbloat study run and judged: CUBIC and BBR through Drop-Tail, CoDel, FQ-CoDel and PIE
at 1-8 BDP of buffer (`services.presets.study_bufferbloat`).

Two experiments: `same-variant` (two CUBIC or two BBR flows) and `mixed` (one of each). Each
point's figures are means over its seeds: the bottleneck's queueing delay (mean, 99th
percentile), utilisation and drops from its link observation, Jain's index from the run's, the
goodput from the flow groups. The claims (`CLAIMS`, each with its source) are judged with
thresholds stated in `judge_*` and in docs/validation/study-bufferbloat.md, which discusses the
outcome.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from services.presets.study_bufferbloat import (
    BDP_PKTS,
    BUFFER_BDP,
    BUFFERS_BDP,
    CLAIMS,
    EVERY_VARIANT,
    NAME,
    QUEUE,
    QUEUES,
    RTT_MS,
    SECOND_VARIANT,
    SOURCES,
    VARIANTS,
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
    judge_claims,
    share,
)

BOTTLENECK = "bottleneck"
RUN = "run"
FLOWS = ("first", "second")
SEEDS = 3
LABEL = {
    "droptail": "Drop-Tail",
    "codel": "CoDel",
    "fq_codel": "FQ-CoDel",
    "pie": "PIE",
    "cubic": "CUBIC",
    "bbr": "BBR",
}

EXPERIMENTS = (
    Experiment(
        "same-variant",
        "Two CUBIC or two BBR flows: queueing delay and utilisation against the buffer, per queue",
        NAME,
        (
            {"path": EVERY_VARIANT, "values": list(VARIANTS)},
            {"path": QUEUE, "values": list(QUEUES)},
            {"path": BUFFER_BDP, "values": list(BUFFERS_BDP)},
        ),
        replications=SEEDS,
    ),
    Experiment(
        "mixed",
        "One CUBIC and one BBR flow: how they share, per queue and buffer",
        NAME,
        ({"path": QUEUE, "values": list(QUEUES)}, {"path": BUFFER_BDP, "values": list(BUFFERS_BDP)}),
        overrides={SECOND_VARIANT: "bbr"},
        replications=SEEDS,
    ),
)

# ---- thresholds of the judgements ---------------------------------------------------------------

DROPTAIL_GROWTH = 0.5
"""Drop-Tail's p99 delay at the deepest buffer must reach half of what a full buffer holds
(buffer_bdp × RTT): a loss-based sender fills it."""
CODEL_TARGET_S = 0.005
CODEL_BOUND = 4.0
"""CoDel's p99 delay within 4 × its target at every buffer (a sawtooth around the target, not a
standing queue of the buffer's size)."""
PIE_REFERENCE_S = 0.015
PIE_BAND = (0.5, 1.5)
"""PIE's mean delay within half and one and a half times QDELAY_REF."""
UTILIZATION = 0.95
BBR_BELOW_CUBIC = 0.5
"""BBR's p99 delay in the deepest Drop-Tail buffer at most half CUBIC's."""
FAIR_JAIN = 0.95


def _mean(xs: list[float | None]) -> float | None:
    data = [x for x in xs if x is not None]
    return sum(data) / len(data) if data else None


def _point(cells: Cells, where: Mapping[str, Any]) -> dict[str, float | None]:
    """One point's figures, means over its seeds."""
    goodput = {f: cells.mean(f, "goodput_bps", where) for f in FLOWS}
    total = None if None in goodput.values() else sum(g for g in goodput.values() if g is not None)
    second = goodput["second"]
    return {
        "goodput_mbps": None if total is None else total / 1e6,
        "first_mbps": None if goodput["first"] is None else goodput["first"] / 1e6,
        "second_mbps": None if second is None else second / 1e6,
        "second_share": None if not total or second is None else second / total,
        "utilization": cells.mean(BOTTLENECK, "utilization", where),
        "jain": cells.mean(RUN, "jain", where),
        "mean_delay_ms": _ms(cells.mean(BOTTLENECK, "mean_queue_delay_s", where)),
        "p99_delay_ms": _ms(cells.mean(BOTTLENECK, "p99_queue_delay_s", where)),
        "drops": cells.mean(BOTTLENECK, "link_drops", where),
    }


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else seconds * 1e3


def _rows(cells: Cells, fixed: Mapping[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for queue in QUEUES:
        for bdp in BUFFERS_BDP:
            where = {**fixed, QUEUE: queue, BUFFER_BDP: bdp}
            if cells.select(BOTTLENECK, **where):
                rows.append({"queue": LABEL[queue], "buffer_bdp": bdp, **_point(cells, where)})
    return rows


def _only(rows: list[dict[str, Any]], columns: tuple[Column, ...]) -> list[dict[str, Any]]:
    """The rows with the table's columns only (a point's figures include the per-flow split)."""
    names = [c.name for c in columns]
    return [{n: r.get(n) for n in names} for r in rows]


def _at(rows: list[dict[str, Any]], queue: str, bdp: int) -> dict[str, Any] | None:
    return next((r for r in rows if r["queue"] == LABEL[queue] and r["buffer_bdp"] == bdp), None)


COMMON_COLUMNS = (
    Column("queue", "queue"),
    Column("buffer_bdp", "buffer", "BDP"),
    Column("goodput_mbps", "goodput (both flows)", "Mb/s"),
    Column("utilization", "utilisation"),
    Column("jain", "Jain's index"),
    Column("mean_delay_ms", "queueing delay, mean", "ms"),
    Column("p99_delay_ms", "queueing delay, p99", "ms"),
    Column("drops", "bottleneck drops"),
)


def _same_table(variant: str, rows: list[dict[str, Any]]) -> Table:
    return Table(
        f"same-{variant}",
        f"Two {LABEL[variant]} flows: queueing delay against the buffer",
        f"Means of {SEEDS} seeds per point; one BDP is {BDP_PKTS:.1f} packets ({RTT_MS:g} ms at the link rate).",
        "same-variant",
        COMMON_COLUMNS,
        _only(rows, COMMON_COLUMNS),
        Plot(
            x="buffer_bdp",
            y=("p99_delay_ms",),
            series="queue",
            x_label="buffer (BDP)",
            y_label="queueing delay, 99th percentile (ms)",
        ),
    )


def _mixed_table(rows: list[dict[str, Any]]) -> Table:
    columns = (
        *COMMON_COLUMNS[:2],
        Column("first_mbps", "CUBIC goodput", "Mb/s"),
        Column("second_mbps", "BBR goodput", "Mb/s"),
        Column("second_share", "BBR's share"),
        *COMMON_COLUMNS[3:],
    )
    return Table(
        "mixed",
        "One CUBIC and one BBR flow: BBR's share of the goodput against the buffer",
        f"Means of {SEEDS} seeds per point.",
        "mixed",
        columns,
        _only(rows, columns),
        Plot(x="buffer_bdp", y=("second_share",), series="queue", x_label="buffer (BDP)", y_label="BBR's share"),
    )


# ---- the claims --------------------------------------------------------------------------------

Rows = Mapping[str, list[dict[str, Any]]]
"""Table rows by variant ("cubic", "bbr") for same-variant, "mixed" for the mixed one."""


def _fmt(x: float | None, digits: int = 1) -> str:
    return "n/a" if x is None else f"{x:.{digits}f}"


def judge_droptail_grows(rows: Rows) -> tuple[str, str]:
    """Every larger buffer gives a larger p99, and the deepest one is at least half full."""
    p99 = [(_at(rows["cubic"], "droptail", b) or {}).get("p99_delay_ms") for b in BUFFERS_BDP]
    if None in p99:
        return PARTLY, "not every buffer size was run"
    values = [v for v in p99 if v is not None]
    rising = all(b > a for a, b in zip(values, values[1:], strict=False))
    full = values[-1] >= DROPTAIL_GROWTH * BUFFERS_BDP[-1] * RTT_MS
    text = "CUBIC through Drop-Tail, p99 " + ", ".join(
        f"{_fmt(v)} ms at {b} BDP" for v, b in zip(values, BUFFERS_BDP, strict=True)
    )
    return (AGREE if rising and full else PARTLY if rising or full else DISAGREE), text


def _share(good: int, total: int) -> str:
    """`share` of the buffers that hold, no_data when none of the study's buffers was run."""
    return share(good, total) if total else NO_DATA


def _every_buffer(rows: list[dict[str, Any]], queue: str, ok: Callable[[dict[str, Any]], bool]) -> tuple[int, int]:
    found = [r for b in BUFFERS_BDP if (r := _at(rows, queue, b)) is not None]
    return sum(1 for r in found if ok(r)), len(found)


def judge_codel(rows: Rows) -> tuple[str, str]:
    bound = CODEL_BOUND * CODEL_TARGET_S * 1e3
    good, total = _every_buffer(
        rows["cubic"],
        "codel",
        lambda r: (
            r["p99_delay_ms"] is not None and r["p99_delay_ms"] <= bound and (r["utilization"] or 0) >= UTILIZATION
        ),
    )
    p99 = [(_at(rows["cubic"], "codel", b) or {}).get("p99_delay_ms") for b in BUFFERS_BDP]
    util = [(_at(rows["cubic"], "codel", b) or {}).get("utilization") for b in BUFFERS_BDP]
    text = (
        f"CUBIC through CoDel: p99 {', '.join(_fmt(v) for v in p99)} ms at {', '.join(map(str, BUFFERS_BDP))} BDP "
        f"(bound {bound:g} ms), utilisation {', '.join(_fmt(u, 3) for u in util)}"
    )
    return _share(good, total), text


def judge_pie(rows: Rows) -> tuple[str, str]:
    lo, hi = (f * PIE_REFERENCE_S * 1e3 for f in PIE_BAND)
    good, total = _every_buffer(
        rows["cubic"], "pie", lambda r: r["mean_delay_ms"] is not None and lo <= r["mean_delay_ms"] <= hi
    )
    means = [(_at(rows["cubic"], "pie", b) or {}).get("mean_delay_ms") for b in BUFFERS_BDP]
    return _share(
        good, total
    ), f"CUBIC through PIE: mean {', '.join(_fmt(v) for v in means)} ms (band {lo:g}-{hi:g} ms)"


def judge_utilization(rows: Rows) -> tuple[str, str]:
    aqms = ("codel", "fq_codel", "pie")
    counts = [_every_buffer(rows["cubic"], q, lambda r: (r["utilization"] or 0) >= UTILIZATION) for q in aqms]
    lowest = {
        q: min(
            (r["utilization"] for r in rows["cubic"] if r["queue"] == LABEL[q] and r["utilization"] is not None),
            default=None,
        )
        for q in aqms
    }
    text = "CUBIC, lowest utilisation over the buffers: " + ", ".join(
        f"{LABEL[q]} {_fmt(u, 3)}" for q, u in lowest.items()
    )
    return _share(sum(c[0] for c in counts), sum(c[1] for c in counts)), text


def judge_bbr_queue(rows: Rows) -> tuple[str, str]:
    deepest = BUFFERS_BDP[-1]
    bbr = (_at(rows["bbr"], "droptail", deepest) or {}).get("p99_delay_ms")
    cubic = (_at(rows["cubic"], "droptail", deepest) or {}).get("p99_delay_ms")
    if bbr is None or cubic is None:
        return PARTLY, "the deepest Drop-Tail buffer was not run for both"
    text = f"p99 at {deepest} BDP of Drop-Tail: BBR {_fmt(bbr)} ms, CUBIC {_fmt(cubic)} ms"
    return (AGREE if bbr <= BBR_BELOW_CUBIC * cubic else PARTLY if bbr < cubic else DISAGREE), text


def judge_share(rows: Rows) -> tuple[str, str]:
    shallow = (_at(rows["mixed"], "droptail", BUFFERS_BDP[0]) or {}).get("second_share")
    deep = (_at(rows["mixed"], "droptail", BUFFERS_BDP[-1]) or {}).get("second_share")
    if shallow is None or deep is None:
        return PARTLY, "the shallowest and deepest Drop-Tail buffers were not both run"
    text = f"BBR's share through Drop-Tail: {_fmt(shallow, 2)} at {BUFFERS_BDP[0]} BDP, {_fmt(deep, 2)} at {BUFFERS_BDP[-1]} BDP"
    both = shallow > 0.5 and deep < 0.5
    return (AGREE if both else PARTLY if shallow > deep else DISAGREE), text


def judge_fq(rows: Rows) -> tuple[str, str]:
    good, total = _every_buffer(rows["mixed"], "fq_codel", lambda r: (r["jain"] or 0) >= FAIR_JAIN)
    jain = [(_at(rows["mixed"], "fq_codel", b) or {}).get("jain") for b in BUFFERS_BDP]
    others = [
        f"{LABEL[q]} {_fmt(min((r['jain'] for r in rows['mixed'] if r['queue'] == LABEL[q] and r['jain'] is not None), default=None), 3)}"
        for q in ("droptail", "codel", "pie")
    ]
    text = f"CUBIC + BBR, Jain under FQ-CoDel {', '.join(_fmt(j, 3) for j in jain)} (lowest elsewhere: {', '.join(others)})"
    return _share(good, total), text


JUDGES: dict[str, Callable[[Rows], tuple[str, str]]] = {
    "droptail-delay-grows-with-buffer": judge_droptail_grows,
    "codel-delay-independent-of-buffer": judge_codel,
    "pie-delay-near-reference": judge_pie,
    "aqm-keeps-utilization": judge_utilization,
    "bbr-avoids-bufferbloat": judge_bbr_queue,
    "bbr-cubic-share-depends-on-buffer": judge_share,
    "fq-codel-isolates-flows": judge_fq,
}

REASONS = {
    "bbr-cubic-share-depends-on-buffer": "tcpsim's BBRv1 leaves out the parts docs/simulator.md lists; the crossover "
    "buffer depends on the RTT and on how many flows share (Hock et al. measured it at about 1-2 BDP with more flows).",
}


def evaluate(observations: Observations) -> Evaluation:
    same, mixed = Cells(observations.get("same-variant", ())), Cells(observations.get("mixed", ()))
    rows: dict[str, list[dict[str, Any]]] = {v: _rows(same, {EVERY_VARIANT: v}) for v in VARIANTS} if same else {}
    if mixed:
        rows["mixed"] = _rows(mixed, {})
    tables = [_same_table(v, rows[v]) for v in VARIANTS if rows.get(v)]
    if rows.get("mixed"):
        tables.append(_mixed_table(rows["mixed"]))
    ran = {"same-variant": bool(same), "mixed": bool(mixed)}
    judged = judge_claims(CLAIMS, JUDGES, REASONS, rows, lambda c: ran[c["experiment"]])
    return Evaluation(tables, judged)


PAPER = Paper(
    number="bufferbloat",
    title="Bufferbloat: CUBIC and BBR through Drop-Tail, CoDel, FQ-CoDel and PIE at 1-8 BDP",
    citation="; ".join(SOURCES.values()),
    setup="Two bulk flows (two CUBIC, two BBR, or one of each, Linux's defaults) share a 20 Mb/s bottleneck with a "
    "40 ms round trip whose queue is Drop-Tail, CoDel, FQ-CoDel or PIE with a buffer of 1, 2, 4 or 8 BDP; 60 s, "
    "the last 40 measured, three seeds per point. The claims judged come from the AQM RFCs and the bufferbloat "
    "and BBR literature, each with its source.",
    experiments=EXPERIMENTS,
    evaluate=evaluate,
    validation="docs/validation/study-bufferbloat.md",
    levels=True,
)
