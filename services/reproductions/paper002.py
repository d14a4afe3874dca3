"""Paper 002 (Hushyar & Upreti, ns-2) reproduced: its three experiments as sweeps of the
paper 002 presets, our numbers beside the ones its text states, and its conclusions judged.

Throughput is the TCP flow's goodput, in Mb/s and MB/s (the paper's "Mbps" fit MB/s at low
congestion, Mb/s at high: docs/validation/paper002.md). Latency is the flow's mean RTT as the
core measures it: the paper's one-way latency plus the ACK's way back, so comparable between
variants and queues (which is what the conclusions compare), not equal to the paper's numbers.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping
from typing import Any, cast

from services.presets import get_preset
from services.presets.paper002 import BUFFER, CBR_BYTES, CBR_RATE, EXP3_CBR_MBPS, SECOND_VARIANT, VARIANT
from services.presets.published import read_json
from services.reproductions.model import (
    AGREE,
    DISAGREE,
    NO_DATA,
    NOT_RUN,
    PARTLY,
    Cells,
    Column,
    Evaluation,
    Experiment,
    Judged,
    Observations,
    Paper,
    Plot,
    Table,
    share,
)

EXP1_VARIANTS = {"Tahoe": "tahoe", "Reno": "reno", "NewReno": "newreno-sbs", "Vegas": "vegas"}
CORE = {**EXP1_VARIANTS, "SACK": "sack"}
NAME = {v: k for k, v in CORE.items()}
PAIRS = (("Reno", "Reno"), ("NewReno", "Reno"), ("Vegas", "Vegas"), ("NewReno", "Vegas"))
RATES = list(range(1, 11))
SIZES = [500, 1000, 2000, 4000, 8000]
EXP3_RATES = [6.0, EXP3_CBR_MBPS, 10.0]
EXP3_SEEDS = 5

EXPERIMENTS = (
    Experiment(
        "exp1",
        "Experiment 1: one TCP flow against CBR of 1-10 Mb/s (Figs. 2-3)",
        "paper002-exp1-congestion",
        (
            {"path": VARIANT, "values": list(EXP1_VARIANTS.values())},
            {"path": CBR_RATE, "values": [float(r) for r in RATES]},
        ),
    ),
    Experiment(
        "exp1-sizes",
        "Experiment 1 at CBR 2 Mb/s, packets of 500-8,000 bytes (§3)",
        "paper002-exp1-congestion",
        ({"path": VARIANT, "values": list(EXP1_VARIANTS.values())}, {"path": CBR_BYTES, "values": SIZES}),
        overrides={CBR_RATE: 2.0},
    ),
    *(
        Experiment(
            f"exp2-{level}",
            f"Experiment 2: fairness pairs, {level} congestion (§4.{i})",
            f"paper002-exp2-fairness-{level}",
            # Every first/second combination (an axis lists a value once): the paper's four
            # pairs and two more (Reno/Vegas, Vegas/Reno).
            (
                {"path": VARIANT, "values": ["reno", "newreno-sbs", "vegas"]},
                {"path": SECOND_VARIANT, "values": ["reno", "vegas"]},
            ),
        )
        for i, level in ((1, "low"), (2, "high"))
    ),
    *(
        Experiment(
            f"exp3-{queue}",
            f"Experiment 3: Reno and SACK through {label}, CBR from 4 s (§5)",
            f"paper002-exp3-{queue}",
            (
                {"path": VARIANT, "values": ["reno", "sack"]},
                {"path": BUFFER, "values": [100, 300]},
                {"path": CBR_RATE, "values": EXP3_RATES},
            ),
            # Measured once the CBR has started (4-10 s); RED drops at random: 5 seeds.
            overrides={"warmup_s": 4.0},
            replications=EXP3_SEEDS if queue == "red" else 1,
        )
        for queue, label in (("droptail", "Drop-Tail"), ("red", "RED"))
    ),
)

REASONS = {
    "exp1-vegas-no-drops": "With ns-2's window_ of 20 and 50-packet buffers (defaults we assume; the paper names "
    "neither) the N2-N3 buffer overflows only from 9 Mb/s of CBR in the core; drops at 7 Mb/s need a smaller "
    "buffer, a larger window or burstier arrivals than the core's exactly periodic CBR.",
    "exp1-newreno-highest-throughput": "TCP loses packets only at 9-10 Mb/s of CBR, one per window from a full "
    "Drop-Tail queue; with one loss per window NewReno and Reno behave alike and the differences are of the size "
    "of one timeout. The paper's reason (several losses per window) needs bursts our deterministic CBR does not make.",
    "exp1-vegas-lower-throughput": "Vegas is the lowest at most rates but by at most about 0.1 Mb/s, and equal at "
    "1 Mb/s where nothing is congested.",
    "exp2-same-variant-fair": "The paper's Vegas/Vegas 0.55/0.6 comes from ns-2's Vegas estimating different base "
    "RTTs; in the core both flows have identical paths and start together.",
    "exp3-red-lower-throughput": "With a window of 20 segments TCP never fills a 100- or 300-packet Drop-Tail "
    "buffer, so below 10 Mb/s of CBR Drop-Tail drops nothing while RED (thresholds 6.25/18.75) drops early; at "
    "6 Mb/s SACK repairs RED's drops without a timeout.",
    "exp3-sack-red-worst": "Only where the CBR alone nearly fills the link (10 Mb/s) does SACK with RED time out "
    "most; at 6-8 Mb/s Reno loses more to timeouts than SACK. The paper does not give its CBR rate here.",
}


def _paper_conclusions() -> dict[str, dict[str, Any]]:
    return {c["id"]: c for c in read_json("002_published.json")["conclusions"]}


def _judged(cid: str, experiment: str, verdict: str, ours: str, numbers: Mapping[str, Any] | None = None) -> Judged:
    c = _paper_conclusions()[cid]
    return Judged(cid, c["text"], c["where"], experiment, verdict, ours, dict(numbers or {}), REASONS.get(cid))


def _mbps(bps: float | None) -> float | None:
    return None if bps is None else bps / 1e6


def _mbytes(bps: float | None) -> float | None:
    return None if bps is None else bps / 8e6


def _ms(s: float | None) -> float | None:
    return None if s is None else s * 1e3


def _fmt(x: float | None, digits: int = 2) -> str:
    return "—" if x is None else f"{x:.{digits}f}"


def _jain(a: float, b: float) -> float:
    return (a + b) ** 2 / (2 * (a * a + b * b)) if a or b else 0.0


# ---- experiment 1 ---------------------------------------------------------------------------


def _exp1(cells: Cells, sizes: Cells) -> tuple[list[Table], list[Judged]]:
    tables: list[Table] = []
    judged: list[Judged] = []
    published = get_preset("paper002-exp1-congestion").published
    assert published is not None
    values = published.values
    rates = [r for r in cells.axis(CBR_RATE) if r is not None] if cells else []
    data: dict[str, dict[float, dict[str, float | None]]] = {}
    for name, core in EXP1_VARIANTS.items():
        data[name] = {}
        for rate in rates:
            at = {VARIANT: core, CBR_RATE: rate}
            data[name][rate] = {m: cells.mean("tcp", m, at) for m in ("goodput_bps", "drops", "timeouts", "mean_rtt_s")}
    if cells:
        rows = [
            {
                "cbr_mbps": rate,
                "variant": name,
                "goodput_mbps": _mbps(d["goodput_bps"]),
                "goodput_mbytes_per_s": _mbytes(d["goodput_bps"]),
                "drops": d["drops"],
                "timeouts": d["timeouts"],
                "mean_rtt_ms": _ms(d["mean_rtt_s"]),
            }
            for rate in rates
            for name in EXP1_VARIANTS
            if (d := data[name][rate])
        ]
        tables.append(
            Table(
                "exp1-throughput",
                "Experiment 1: TCP throughput against the CBR rate (Figs. 2-3)",
                "Our TCP flow's goodput, drops and mean RTT beside CBR of 1-10 Mb/s (3,000-byte packets). The paper's "
                "curves are not in its text; it states the first drops at 7 Mb/s and NewReno highest under congestion.",
                "exp1",
                (
                    Column("cbr_mbps", "CBR", "Mb/s"),
                    Column("variant", "variant"),
                    Column("goodput_mbps", "ours", "Mb/s"),
                    Column("goodput_mbytes_per_s", "ours", "MB/s"),
                    Column("drops", "drops", "packets"),
                    Column("timeouts", "timeouts"),
                    Column("mean_rtt_ms", "mean RTT", "ms"),
                ),
                rows,
                Plot(
                    x="cbr_mbps",
                    y=("goodput_mbps",),
                    series="variant",
                    x_label="CBR rate (Mb/s)",
                    y_label="TCP goodput (Mb/s)",
                    note="Ours only: the paper's Fig. 2 is not in its text.",
                ),
            )
        )
        first = {n: next((r for r in rates if (data[n][r]["drops"] or 0) > 0), None) for n in EXP1_VARIANTS}
        tables.append(
            Table(
                "exp1-first-drops",
                "Experiment 1: the CBR rate at which TCP first loses packets (§3, Fig. 3)",
                "",
                "exp1",
                (Column("variant", "variant"), Column("paper", "paper", "Mb/s"), Column("ours", "ours", "Mb/s")),
                [
                    {
                        "variant": n,
                        "paper": values["first_drops_at_cbr_mbps"].get(n, "never"),
                        "ours": first[n] or "never",
                    }
                    for n in EXP1_VARIANTS
                ],
            )
        )
        vegas_drops = sum(data["Vegas"][r]["drops"] or 0 for r in rates)
        others = {n: first[n] for n in ("Tahoe", "Reno", "NewReno")}
        verdict = (
            AGREE
            if vegas_drops == 0 and all(f == 7 for f in others.values())
            else (PARTLY if vegas_drops == 0 else DISAGREE)
        )
        judged.append(
            _judged(
                "exp1-vegas-no-drops",
                "exp1",
                verdict,
                f"Vegas drops {vegas_drops:g} in all; the others first drop at "
                + ", ".join(f"{n} {_fmt(f, 0) if f else 'never'}" for n, f in others.items())
                + " Mb/s",
                {"vegas_drops": vegas_drops, "first_drops_mbps": first},
            )
        )
        lowest = [
            r
            for r in rates
            if all(x is not None for x in (data[n][r]["goodput_bps"] for n in EXP1_VARIANTS))
            and cast(float, data["Vegas"][r]["goodput_bps"])  # the all(... is not None) above
            < min(cast(float, data[n][r]["goodput_bps"]) for n in ("Tahoe", "Reno", "NewReno"))
        ]
        verdict = AGREE if len(lowest) >= 0.8 * len(rates) else (PARTLY if lowest else DISAGREE)
        judged.append(
            _judged(
                "exp1-vegas-lower-throughput",
                "exp1",
                verdict,
                f"Vegas lowest at {len(lowest)} of {len(rates)} CBR rates ({', '.join(f'{r:g}' for r in lowest)})",
                {"vegas_lowest_at_mbps": lowest},
            )
        )
        congested = [r for r in rates if any(data[n][r]["drops"] for n in EXP1_VARIANTS)]
        if congested:
            mean_cong = {
                n: statistics.fmean(data[n][r]["goodput_bps"] or 0.0 for r in congested) for n in EXP1_VARIANTS
            }
            best = max(mean_cong, key=lambda n: mean_cong[n])
            judged.append(
                _judged(
                    "exp1-newreno-highest-throughput",
                    "exp1",
                    AGREE if best == "NewReno" else DISAGREE,
                    f"mean goodput at the CBR rates with drops ({', '.join(f'{r:g}' for r in congested)}): "
                    + ", ".join(f"{n} {_fmt(_mbps(x), 3)}" for n, x in mean_cong.items())
                    + " Mb/s",
                    {"congested_mbps": congested, "goodput_mbps": {n: _mbps(x) for n, x in mean_cong.items()}},
                )
            )
        else:
            judged.append(
                _judged("exp1-newreno-highest-throughput", "exp1", NO_DATA, "no CBR rate made TCP lose a packet")
            )
    else:
        judged += [
            _judged(c, "exp1", NOT_RUN, "")
            for c in ("exp1-vegas-no-drops", "exp1-vegas-lower-throughput", "exp1-newreno-highest-throughput")
        ]

    if sizes:
        at2 = values["at_cbr_2mbps"]
        mean_of = {
            n: {
                m: statistics.fmean(
                    x
                    for s in sizes.axis(CBR_BYTES)
                    if (x := sizes.mean("tcp", m, {VARIANT: c, CBR_BYTES: s})) is not None
                )
                for m in ("goodput_bps", "mean_rtt_s", "drops")
            }
            for n, c in EXP1_VARIANTS.items()
        }
        tables.append(
            Table(
                "exp1-cbr2",
                "Experiment 1 at CBR 2 Mb/s, packets of 500-8,000 bytes (§3)",
                'Means over the packet sizes. The paper\'s throughput as printed ("Mbps"; it fits MB/s); its latency is '
                "one-way per segment, ours the mean RTT.",
                "exp1-sizes",
                (
                    Column("variant", "variant"),
                    Column("paper_throughput", "paper throughput", "as printed"),
                    Column("ours_mbytes_per_s", "ours", "MB/s"),
                    Column("ours_mbps", "ours", "Mb/s"),
                    Column("paper_latency_ms", "paper latency", "ms"),
                    Column("ours_rtt_ms", "ours mean RTT", "ms"),
                    Column("paper_drops", "paper drops"),
                    Column("ours_drops", "ours drops"),
                ),
                [
                    {
                        "variant": n,
                        "paper_throughput": at2["throughput"][n],
                        "ours_mbytes_per_s": _mbytes(m["goodput_bps"]),
                        "ours_mbps": _mbps(m["goodput_bps"]),
                        "paper_latency_ms": _ms(at2["latency_s"][n]),
                        "ours_rtt_ms": _ms(m["mean_rtt_s"]),
                        "paper_drops": at2["drops"][n],
                        "ours_drops": m["drops"],
                    }
                    for n, m in mean_of.items()
                ],
                Plot(
                    x="variant",
                    y=("ours_rtt_ms",),
                    paper_y="paper_latency_ms",
                    kind="bars",
                    x_label="variant",
                    y_label="latency (ms)",
                    note="Paper: one-way latency per segment; ours: the mean RTT.",
                ),
            )
        )
        lat = {n: m["mean_rtt_s"] for n, m in mean_of.items()}
        ok = lat["Vegas"] < min(lat[n] for n in ("Tahoe", "Reno", "NewReno"))
        judged.insert(
            2,
            _judged(
                "exp1-vegas-lower-latency",
                "exp1-sizes",
                AGREE if ok else DISAGREE,
                "mean RTT at CBR 2 Mb/s: " + ", ".join(f"{n} {_fmt(_ms(x), 1)} ms" for n, x in lat.items()),
                {"mean_rtt_ms": {n: _ms(x) for n, x in lat.items()}},
            ),
        )
    else:
        judged.insert(2, _judged("exp1-vegas-lower-latency", "exp1-sizes", NOT_RUN, ""))
    return tables, judged


# ---- experiment 2 ---------------------------------------------------------------------------


def _exp2(levels: Mapping[str, Cells]) -> tuple[list[Table], list[Judged]]:
    tables: list[Table] = []
    results: dict[str, dict[tuple[str, str], dict[str, float]]] = {}
    for level, cells in levels.items():
        if not cells:
            continue
        preset = get_preset(f"paper002-exp2-fairness-{level}")
        assert preset.published is not None
        pub = {(p["first"], p["second"]): p for p in preset.published.values["pairs"]}
        results[level] = {}
        rows = []
        for a, b in PAIRS:
            at = {VARIANT: CORE[a], SECOND_VARIANT: CORE[b]}
            g1, g2 = cells.mean("first", "goodput_bps", at), cells.mean("second", "goodput_bps", at)
            d1, d2 = cells.mean("first", "drops", at), cells.mean("second", "drops", at)
            if g1 is None or g2 is None:
                continue
            results[level][(a, b)] = {
                "first": g1,
                "second": g2,
                "drops_first": d1 or 0,
                "drops_second": d2 or 0,
                "jain": _jain(g1, g2),
            }
            p = pub[(a, b)]
            rows.append(
                {
                    "pair": f"{a}/{b}",
                    "paper_first": p["throughput"][0],
                    "paper_second": p["throughput"][1],
                    "ours_first_mbytes_per_s": _mbytes(g1),
                    "ours_second_mbytes_per_s": _mbytes(g2),
                    "ours_first_mbps": _mbps(g1),
                    "ours_second_mbps": _mbps(g2),
                    "paper_drops": p.get("drops"),
                    "ours_drops": (d1 or 0) + (d2 or 0),
                    "jain": _jain(g1, g2),
                }
            )
        tables.append(
            Table(
                f"exp2-{level}",
                f"Experiment 2, {level} congestion: two TCP flows and CBR (§4)",
                "The paper's throughputs as printed (\"Mbps\"); ours in MB/s and Mb/s; Jain's fairness index of ours.",
                f"exp2-{level}",
                (
                    Column("pair", "first/second"),
                    Column("paper_first", "paper first", "as printed"),
                    Column("paper_second", "paper second", "as printed"),
                    Column("ours_first_mbytes_per_s", "ours first", "MB/s"),
                    Column("ours_second_mbytes_per_s", "ours second", "MB/s"),
                    Column("ours_first_mbps", "ours first", "Mb/s"),
                    Column("ours_second_mbps", "ours second", "Mb/s"),
                    Column("paper_drops", "paper drops"),
                    Column("ours_drops", "ours drops"),
                    Column("jain", "Jain"),
                ),
                rows,
            )
        )
    judged: list[Judged] = []
    both = "low" in results and "high" in results
    fair_pairs = [
        (lvl, pair) for lvl in results for pair in (("Reno", "Reno"), ("Vegas", "Vegas")) if pair in results[lvl]
    ]
    if both and fair_pairs:
        fair = {f"{a}/{b} {lvl}": results[lvl][(a, b)]["jain"] for lvl, (a, b) in fair_pairs}
        judged.append(
            _judged(
                "exp2-same-variant-fair",
                "exp2-low, exp2-high",
                AGREE if all(j >= 0.95 for j in fair.values()) else DISAGREE,
                ", ".join(f"{k}: Jain {j:.3f}" for k, j in fair.items()),
                {"jain": fair},
            )
        )
    else:
        judged.append(_judged("exp2-same-variant-fair", "exp2-low, exp2-high", NOT_RUN, ""))
    lo = results.get("low", {}).get(("NewReno", "Reno"))
    if lo:
        gap = abs(lo["first"] - lo["second"]) / max(lo["first"], lo["second"], 1e-9)
        judged.append(
            _judged(
                "exp2-newreno-reno-equal-low",
                "exp2-low",
                AGREE if gap <= 0.05 else DISAGREE,
                f"NewReno {_fmt(_mbps(lo['first']))}, Reno {_fmt(_mbps(lo['second']))} Mb/s (gap "
                f"{gap * 100:.1f} %), {lo['drops_first'] + lo['drops_second']:g} drops",
                {"gap": gap},
            )
        )
    else:
        judged.append(_judged("exp2-newreno-reno-equal-low", "exp2-low", NOT_RUN, ""))
    hi = results.get("high", {}).get(("NewReno", "Reno"))
    if hi:
        judged.append(
            _judged(
                "exp2-newreno-beats-reno-high",
                "exp2-high",
                AGREE if hi["first"] > hi["second"] else DISAGREE,
                f"NewReno {_fmt(_mbps(hi['first']), 3)}, Reno {_fmt(_mbps(hi['second']), 3)} Mb/s, "
                f"drops {hi['drops_first']:g}+{hi['drops_second']:g}",
                {"newreno_mbps": _mbps(hi["first"]), "reno_mbps": _mbps(hi["second"])},
            )
        )
    else:
        judged.append(_judged("exp2-newreno-beats-reno-high", "exp2-high", NOT_RUN, ""))
    nv = {
        lvl: results[lvl][("NewReno", "Vegas")]
        for lvl in ("low", "high")
        if ("NewReno", "Vegas") in results.get(lvl, {})
    }
    if len(nv) == 2:
        ratio = {lvl: r["first"] / max(r["second"], 1.0) for lvl, r in nv.items()}
        loses = all(r["first"] > r["second"] for r in nv.values())
        verdict = AGREE if loses and ratio["low"] > ratio["high"] else (PARTLY if loses else DISAGREE)
        judged.append(
            _judged(
                "exp2-vegas-loses-to-newreno",
                "exp2-low, exp2-high",
                verdict,
                f"NewReno/Vegas goodput ratio {ratio['low']:.1f} (low), {ratio['high']:.1f} (high)",
                {"ratio": ratio},
            )
        )
    else:
        judged.append(_judged("exp2-vegas-loses-to-newreno", "exp2-low, exp2-high", NOT_RUN, ""))
    return tables, judged


# ---- experiment 3 ---------------------------------------------------------------------------


def _exp3(droptail: Cells, red: Cells) -> tuple[list[Table], list[Judged]]:
    ids = ("exp3-red-lower-throughput", "exp3-sack-red-worst", "exp3-red-lower-latency")
    if not droptail or not red:
        return [], [_judged(c, "exp3-droptail, exp3-red", NOT_RUN, "") for c in ids]
    queues = {"droptail": droptail, "red": red}
    rates = [r for r in droptail.axis(CBR_RATE) if r in red.axis(CBR_RATE)]
    cases = [(b, v) for b in (100, 300) for v in ("reno", "sack")]
    rows: dict[tuple[float, int, str, str], dict[str, float | None]] = {}
    for rate in rates:
        for b, v in cases:
            for q, cells in queues.items():
                at = {VARIANT: v, BUFFER: b, CBR_RATE: rate}
                rows[(rate, b, q, v)] = {
                    m: cells.mean("tcp", m, at) for m in ("goodput_bps", "timeouts", "drops", "mean_rtt_s")
                }
    table = Table(
        "exp3",
        "Experiment 3: TCP after the CBR starts at 4 s, Drop-Tail against RED (§5, Figs. 6-8)",
        f"Measured from 4 to 10 s; RED over {EXP3_SEEDS} seeds (means), Drop-Tail is deterministic. The paper gives "
        "no CBR rate here (the preset's is 8 Mb/s) and no numbers, only its findings.",
        "exp3-droptail, exp3-red",
        (
            Column("cbr_mbps", "CBR", "Mb/s"),
            Column("buffer", "buffer", "packets"),
            Column("queue", "queue"),
            Column("variant", "variant"),
            Column("goodput_mbps", "TCP after 4 s", "Mb/s"),
            Column("timeouts", "timeouts"),
            Column("drops", "drops"),
            Column("mean_rtt_ms", "mean RTT", "ms"),
        ),
        [
            {
                "cbr_mbps": rate,
                "buffer": b,
                "queue": q,
                "variant": NAME[v],
                "goodput_mbps": _mbps(x["goodput_bps"]),
                "timeouts": x["timeouts"],
                "drops": x["drops"],
                "mean_rtt_ms": _ms(x["mean_rtt_s"]),
            }
            for (rate, b, q, v), x in rows.items()
        ],
    )

    def lower(rate: float, b: int, v: str, metric: str) -> bool | None:
        r, d = rows[(rate, b, "red", v)][metric], rows[(rate, b, "droptail", v)][metric]
        return None if r is None or d is None else r < d

    per_rate: dict[str, dict[float, str]] = {c: {} for c in ids}
    texts: dict[str, list[str]] = {c: [] for c in ids}
    for rate in rates:
        n = sum(bool(lower(rate, b, v, "goodput_bps")) for b, v in cases)
        per_rate[ids[0]][rate] = share(n, len(cases))
        texts[ids[0]].append(f"CBR {rate:g}: RED below Drop-Tail in {n} of {len(cases)}")
        worst = []
        for b in (100, 300):
            combos = {(q, v): rows[(rate, b, q, v)]["goodput_bps"] or 0.0 for q in queues for v in ("reno", "sack")}
            worst.append(min(combos, key=lambda k: combos[k]) == ("red", "sack"))
        per_rate[ids[1]][rate] = share(sum(worst), len(worst))
        texts[ids[1]].append(f"CBR {rate:g}: SACK+RED lowest for {sum(worst)} of 2 buffers")
        n = sum(bool(lower(rate, b, v, "mean_rtt_s")) for b, v in cases)
        per_rate[ids[2]][rate] = share(n, len(cases))
        texts[ids[2]].append(f"CBR {rate:g}: RED's mean RTT below Drop-Tail's in {n} of {len(cases)}")
    judged = []
    for c in ids:
        verdicts = list(per_rate[c].values())
        verdict = share(sum(v == AGREE for v in verdicts), len(verdicts))
        if verdict == DISAGREE and any(v == PARTLY for v in verdicts):
            verdict = PARTLY
        judged.append(
            _judged(
                c,
                "exp3-droptail, exp3-red",
                verdict,
                "; ".join(texts[c]),
                {"by_cbr_mbps": {f"{r:g}": v for r, v in per_rate[c].items()}},
            )
        )
    return [table], judged


def evaluate(observations: Observations) -> Evaluation:
    """The tables and judged conclusions for whatever experiments have observations."""

    def cells(key: str) -> Cells:
        return Cells(observations.get(key, ()))

    t1, j1 = _exp1(cells("exp1"), cells("exp1-sizes"))
    t2, j2 = _exp2({"low": cells("exp2-low"), "high": cells("exp2-high")})
    t3, j3 = _exp3(cells("exp3-droptail"), cells("exp3-red"))
    return Evaluation(tables=t1 + t2 + t3, conclusions=j1 + j2 + j3)


PAPER = Paper(
    number="002",
    title="Performance Analysis of TCP Variants (ns-2)",
    citation='N. Hushyar, A. Upreti, "Performance Analysis of TCP Variants" (UMass Amherst; ns-2)',
    setup="Six nodes joined by 10 Mb/s links; one TCP flow against CBR/UDP of 1-10 Mb/s for Tahoe, Reno, NewReno "
    "and Vegas (experiment 1); pairs of TCP flows sharing the link with CBR at low and high congestion "
    "(experiment 2); Reno and SACK through Drop-Tail and RED buffers of 100 and 300 packets with CBR from 4 s "
    "(experiment 3). What the paper leaves open (link delays, window, durations, the CBR rate of experiment 3) "
    "is chosen in the presets' descriptions.",
    experiments=EXPERIMENTS,
    evaluate=evaluate,
    validation="docs/validation/paper002.md",
)
