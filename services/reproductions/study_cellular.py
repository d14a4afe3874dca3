"""The cellular study run and judged: CUBIC, BBR and Vegas over the LTE traces of Sprout and
Pantheon (`services.presets.study_cellular`).

Two experiments: `alone` (each scheme by itself on each trace, Pantheon's method) and `shared`
(the three together on each trace). A scheme's point in Pantheon's view is its mean throughput
(goodput) against its 95th-percentile one-way delay; tcpsim reports per-packet queueing-delay
percentiles of the bottleneck, not of a flow, so the one-way delay is the bottleneck's p95
queueing delay plus the path's one-way propagation delay (exact for a flow alone). The claims
(`CLAIMS`, each with its source) are judged with the thresholds below, which
docs/validation/study-cellular.md discusses beside the measured numbers.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from services.presets.study_cellular import (
    CARRIERS,
    CLAIMS,
    DURATION_S,
    LINK,
    NAME,
    RTT_MS,
    SCHEMES,
    SHARED_NAME,
    SOURCES,
    VARIANT,
    WARMUP_S,
)
from services.reproductions.model import (
    NO_DATA,
    Cells,
    Column,
    Evaluation,
    Experiment,
    Observations,
    Paper,
    Plot,
    Rows,
    Table,
    evaluate_by_experiment,
    share,
)
from services.traces.builtin import builtin_trace

BOTTLENECK = "bottleneck"
ALONE_FLOW = "bulk"
LABEL = {"cubic": "CUBIC", "bbr": "BBR", "vegas": "Vegas"}
PAYLOAD = 1460 / 1500
"""A full-size packet's payload share of the 1500 bytes an opportunity carries (goodput counts
payload)."""

EXPERIMENTS = (
    Experiment(
        "alone",
        "Each scheme alone over each LTE trace: throughput against 95th-percentile delay (Pantheon's view)",
        NAME,
        ({"path": LINK, "values": list(CARRIERS)}, {"path": VARIANT, "values": list(SCHEMES)}),
    ),
    Experiment(
        "shared",
        "CUBIC, BBR and Vegas sharing each LTE trace",
        SHARED_NAME,
        ({"path": LINK, "values": list(CARRIERS)},),
    ),
)

# ---- thresholds of the judgements ---------------------------------------------------------------

SATURATION = 0.95
"""CUBIC's goodput at least 95 % of the trace's payload capacity over the measured window
("within a few per cent"); AGREE on every trace, PARTLY on some."""
LOWER_DELAY = 1 / 3
"""BBR's and Vegas's p95 queueing delay at most a third of CUBIC's on the same trace."""
STARVED = 0.10
"""Vegas's share of the goodput when sharing: below 10 % is starved."""


def capacity_mbps(carrier: str) -> float | None:
    """What the carrier's downlink trace delivers over the measured window, payload only."""
    trace = builtin_trace(f"{carrier}.down")
    return None if trace is None else trace.capacity_bps(WARMUP_S, DURATION_S) * PAYLOAD / 1e6


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else seconds * 1e3


def _mbps(bps: float | None) -> float | None:
    return None if bps is None else bps / 1e6


def alone_rows(cells: Cells) -> list[dict[str, Any]]:
    rows = []
    for carrier in CARRIERS:
        for scheme in SCHEMES:
            where = {LINK: carrier, VARIANT: scheme}
            if not cells.select(BOTTLENECK, **where):
                continue
            p95 = _ms(cells.mean(BOTTLENECK, "p95_queue_delay_s", where))
            goodput = _mbps(cells.mean(ALONE_FLOW, "goodput_bps", where))
            capacity = capacity_mbps(carrier)
            rows.append(
                {
                    "trace": carrier,
                    "scheme": LABEL[scheme],
                    "goodput_mbps": goodput,
                    "capacity_mbps": capacity,
                    "of_capacity": None if goodput is None or not capacity else goodput / capacity,
                    "p95_delay_ms": None if p95 is None else p95 + RTT_MS / 2,
                    "p95_queue_ms": p95,
                    "mean_queue_ms": _ms(cells.mean(BOTTLENECK, "mean_queue_delay_s", where)),
                    "drops": cells.mean(BOTTLENECK, "link_drops", where),
                }
            )
    return rows


def _share_of(part: float | None, total: float) -> float | None:
    return None if part is None or not total else part / total


def shared_rows(cells: Cells) -> list[dict[str, Any]]:
    rows = []
    for carrier in CARRIERS:
        where = {LINK: carrier}
        if not cells.select(BOTTLENECK, **where):
            continue
        goodput = {s: _mbps(cells.mean(s, "goodput_bps", where)) for s in SCHEMES}
        total = sum(g for g in goodput.values() if g is not None)
        p95 = _ms(cells.mean(BOTTLENECK, "p95_queue_delay_s", where))
        rows.append(
            {
                "trace": carrier,
                **{f"{s}_mbps": goodput[s] for s in SCHEMES},
                **{f"{s}_share": _share_of(goodput[s], total) for s in SCHEMES},
                "capacity_mbps": capacity_mbps(carrier),
                "p95_delay_ms": None if p95 is None else p95 + RTT_MS / 2,
            }
        )
    return rows


ALONE_COLUMNS = (
    Column("trace", "trace"),
    Column("scheme", "scheme"),
    Column("goodput_mbps", "throughput (goodput)", "Mb/s"),
    Column("capacity_mbps", "trace's capacity (payload)", "Mb/s"),
    Column("of_capacity", "of capacity"),
    Column("p95_delay_ms", "one-way delay, p95", "ms"),
    Column("p95_queue_ms", "queueing delay, p95", "ms"),
    Column("mean_queue_ms", "queueing delay, mean", "ms"),
    Column("drops", "bottleneck drops"),
)


def alone_table(rows: list[dict[str, Any]]) -> Table:
    return Table(
        "alone",
        "Each scheme alone: mean throughput against 95th-percentile one-way delay, per LTE trace",
        f"One run per point ({DURATION_S:g} s, the first {WARMUP_S:g} s warm-up). One-way delay = the "
        f"bottleneck's p95 queueing delay + {RTT_MS / 2:g} ms propagation. Capacity: what the downlink trace "
        "delivers over the measured window, times 1460/1500 (payload).",
        "alone",
        ALONE_COLUMNS,
        rows,
        Plot(
            x="p95_delay_ms",
            y=("goodput_mbps",),
            series="scheme",
            kind="points",
            x_label="95th-percentile one-way delay (ms)",
            y_label="mean throughput (Mb/s)",
            note="Pantheon's view: one point per scheme per trace, the delay axis logarithmic and reversed as "
            "Pantheon draws it (better is up and to the right).",
        ),
    )


def shared_table(rows: list[dict[str, Any]]) -> Table:
    columns = (
        Column("trace", "trace"),
        *(Column(f"{s}_mbps", f"{LABEL[s]} goodput", "Mb/s") for s in SCHEMES),
        *(Column(f"{s}_share", f"{LABEL[s]}'s share") for s in SCHEMES),
        Column("capacity_mbps", "trace's capacity (payload)", "Mb/s"),
        Column("p95_delay_ms", "one-way delay, p95", "ms"),
    )
    return Table(
        "shared",
        "CUBIC, BBR and Vegas sharing the link: each one's goodput",
        "One run per trace; the three start together.",
        "shared",
        columns,
        rows,
        Plot(
            x="trace",
            y=tuple(f"{s}_mbps" for s in SCHEMES),
            kind="bars",
            x_label="trace",
            y_label="goodput (Mb/s)",
        ),
    )


# ---- the claims --------------------------------------------------------------------------------


def _fmt(x: float | None, digits: int = 0) -> str:
    return "n/a" if x is None else f"{x:.{digits}f}"


def _row(rows: list[dict[str, Any]], carrier: str, scheme: str) -> dict[str, Any]:
    return next((r for r in rows if r["trace"] == carrier and r["scheme"] == LABEL[scheme]), {})


def _per_trace(rows: Rows, check: Callable[[str], bool | None], say: Callable[[str], str]) -> tuple[str, str]:
    """`share` of the traces where `check` holds (None: not measured there); no_data when it was
    measured on none of them (a sweep of the preset along other traces)."""
    checked = {c: check(c) for c in CARRIERS}
    found = [ok for ok in checked.values() if ok is not None]
    text = "; ".join(say(c) for c in CARRIERS if checked[c] is not None)
    return (share(sum(found), len(found)) if found else NO_DATA), text


def judge_saturation(rows: Rows) -> tuple[str, str]:
    def ratio(c: str) -> float | None:
        return _row(rows["alone"], c, "cubic").get("of_capacity")

    def ok(c: str) -> bool | None:
        r = ratio(c)
        return None if r is None else r >= SATURATION

    return _per_trace(
        rows,
        ok,
        lambda c: (
            f"{c}: {_fmt(_row(rows['alone'], c, 'cubic').get('goodput_mbps'), 2)} of "
            f"{_fmt(_row(rows['alone'], c, 'cubic').get('capacity_mbps'), 2)} Mb/s ({_fmt(100 * (ratio(c) or 0), 1)} %)"
        ),
    )


def judge_delay(rows: Rows) -> tuple[str, str]:
    def p95(c: str, s: str) -> float | None:
        return _row(rows["alone"], c, s).get("p95_queue_ms")

    def ok(c: str) -> bool | None:
        cubic, bbr, vegas = p95(c, "cubic"), p95(c, "bbr"), p95(c, "vegas")
        if cubic is None or bbr is None or vegas is None:
            return None
        return max(bbr, vegas) <= LOWER_DELAY * cubic

    return _per_trace(
        rows,
        ok,
        lambda c: (
            f"{c}: p95 queueing CUBIC {_fmt(p95(c, 'cubic'))} ms, BBR {_fmt(p95(c, 'bbr'))}, "
            f"Vegas {_fmt(p95(c, 'vegas'))}"
        ),
    )


def judge_cubic_vs_vegas(rows: Rows) -> tuple[str, str]:
    def goodput(c: str, s: str) -> float | None:
        return _row(rows["alone"], c, s).get("goodput_mbps")

    def ok(c: str) -> bool | None:
        cubic, vegas = goodput(c, "cubic"), goodput(c, "vegas")
        return None if cubic is None or vegas is None else cubic >= vegas

    return _per_trace(
        rows, ok, lambda c: f"{c}: CUBIC {_fmt(goodput(c, 'cubic'), 2)}, Vegas {_fmt(goodput(c, 'vegas'), 2)} Mb/s"
    )


def judge_sharing(rows: Rows) -> tuple[str, str]:
    def at(c: str) -> dict[str, Any]:
        return next((r for r in rows["shared"] if r["trace"] == c), {})

    def ok(c: str) -> bool | None:
        r = at(c)
        if r.get("cubic_mbps") is None or r.get("bbr_mbps") is None or r.get("vegas_share") is None:
            return None
        return r["cubic_mbps"] > r["bbr_mbps"] and r["vegas_share"] < STARVED

    return _per_trace(
        rows,
        ok,
        lambda c: (
            f"{c}: CUBIC {_fmt(at(c).get('cubic_mbps'), 2)}, BBR {_fmt(at(c).get('bbr_mbps'), 2)}, "
            f"Vegas {_fmt(at(c).get('vegas_mbps'), 2)} Mb/s"
        ),
    )


JUDGES: dict[str, Callable[[Rows], tuple[str, str]]] = {
    "cubic-saturates-the-trace": judge_saturation,
    "delay-based-schemes-keep-the-queue-short": judge_delay,
    "cubic-throughput-at-least-vegas": judge_cubic_vs_vegas,
    "sharing-cubic-takes-the-link": judge_sharing,
}

REASONS: Mapping[str, str] = {}


def evaluate(observations: Observations) -> Evaluation:
    return evaluate_by_experiment(
        observations,
        EXPERIMENTS,
        {"alone": alone_rows, "shared": shared_rows},
        {"alone": alone_table, "shared": shared_table},
        CLAIMS,
        JUDGES,
        REASONS,
    )


PAPER = Paper(
    number="cellular",
    title="Cellular links: CUBIC, BBR and Vegas over the LTE traces of Sprout and Pantheon",
    citation="; ".join(SOURCES.values()),
    setup="The bottleneck follows a built-in LTE trace (T-Mobile, Verizon, AT&T driving; Mahimahi format, the "
    "downlink carrying data, the uplink ACKs) behind a 2000-packet Drop-Tail buffer, 40 ms minimum round trip, "
    "60 s of which the first 5 are warm-up. Each scheme runs alone on each trace (Pantheon's method), then the "
    "three share it. The claims come from Sprout's and Pantheon's results over these traces and the BBR and "
    "Vegas literature, each with its source.",
    experiments=EXPERIMENTS,
    evaluate=evaluate,
    validation="docs/validation/study-cellular.md",
    levels=True,
)
