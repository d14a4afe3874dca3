"""Paper 003 (Lai & Yao, ns) reproduced: Fig. 5 and Tables 2-4 as sweeps of its presets, our
numbers beside the paper's, and its §4 comments judged.

The paper prints MT without a unit, so what is compared is unit-free: the order of the
algorithms, UF, and the ratios new/old and other/Reno. A comparison of two means is **more** or
**less** when the 95 % interval of the per-seed paired differences excludes zero (replication r
has the same seed, so the same start times, for every algorithm), **noise** when it does not.
Fig. 5's ranking is judged pair by pair on each algorithm's MT averaged over the non-zero error
rates: every pair the paper orders (a > b) must be `more`, every pair it calls ≈ must be noise
or within 5 %. The verdict of a claim checked at several settings is `share` of them (agree:
all, partly: some, disagree: none). Seeds and durations keep the whole reproduction at about a
minute of one core: Fig. 5 at the paper's 1000 s with 5 seeds, Tables 2-4 at 50 s with 10.
docs/validation/paper003.md discusses the outcome.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any, cast

from services.presets.paper003 import (
    BUFFER,
    CONNECTIONS,
    ERROR_RATE,
    EVERY_VARIANT,
    FIRST_COUNT,
    FIRST_VARIANT,
    SECOND_VARIANT,
    VARIANTS,
    conclusions,
)
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
from services.stats import differs, paired_difference, significant_direction, summarize

NAME = {v: k for k, v in VARIANTS.items()}
RANKED = [n for n in VARIANTS if n != "Tahoe"]
"""The eight algorithms of Fig. 5's ranking and Tables 2-3."""
ERROR_RATES = [0.0, 0.001, 0.005, 0.01, 0.02, 0.05]
FIG5_SEEDS = 5
TABLE_SEEDS = 10
SIMILAR = 0.05
"""Two means within 5 % (of the larger) are "≈" in the ranking even when the difference is
significant."""
NEW_SIMILAR = 0.25
"""§4.3 comment 2: new/old within 25 % is "similar" (the paper's own Table 3 has 0.70-1.02)."""
NS_BUFFER = 50

EXPERIMENTS = (
    Experiment(
        "fig5",
        "Fig. 5: MT of each algorithm against the link error rate (§4.1)",
        "paper003-fig5-link-errors",
        ({"path": FIRST_VARIANT, "values": list(VARIANTS.values())}, {"path": ERROR_RATE, "values": ERROR_RATES}),
        replications=FIG5_SEEDS,
    ),
    *(
        Experiment(f"{key}{suffix}", f"{title}{label}", preset, axes, overrides=overrides, replications=TABLE_SEEDS)
        for key, title, preset, axes in (
            (
                "table2",
                "Table 2: short and long connections, UF (§4.2)",
                "paper003-table2-distinct-delays",
                (
                    {"path": EVERY_VARIANT, "values": [VARIANTS[n] for n in RANKED]},
                    {"path": CONNECTIONS, "values": [2, 4]},
                ),
            ),
            (
                "table3",
                "Table 3: a new connection at 10 s among n old ones (§4.3)",
                "paper003-table3-new-arrival",
                (
                    {"path": EVERY_VARIANT, "values": [VARIANTS[n] for n in RANKED]},
                    {"path": FIRST_COUNT, "values": [1, 2, 3]},
                ),
            ),
            (
                "table4",
                "Table 4: each algorithm with Reno (§4.4)",
                "paper003-table4-reno-interop",
                (
                    {"path": SECOND_VARIANT, "values": [VARIANTS[n] for n in RANKED if n != "Reno"]},
                    {"path": CONNECTIONS, "values": [2, 4]},
                ),
            ),
        )
        # Each table also with ns's default buffer: the buffer is our choice, and decides some comments.
        for suffix, label, overrides in (
            ("", "", {}),
            ("-ns-buffer", f", ns's {NS_BUFFER}-packet buffer", {BUFFER: NS_BUFFER}),
        )
    ),
)
TABLE_KEYS = tuple(e.key for e in EXPERIMENTS if e.key != "fig5")

REASONS = {
    "throughput-ranking": "SSDR falls below Reno: it takes about twice NewReno's timeouts under link errors (129 "
    "against 70 per connection at 2 %) with fewer fast retransmits, and smooth-starts back after each; the paper's "
    "setup gives no reason for its SSDR to differ (docs/validation/paper003.md). Pseudo-Rate edges out Vegas (1.4 %): "
    "both recover losses as Reno in the core, and Pseudo-Rate jumps back to its window bound at once.",
    "throughput-gaps-widen": "At the lowest error rates the link, not the algorithm, limits MT.",
    "fairness-bias-against-long": "Vegas and Pseudo-Rate share almost equally between short and long connections (UF "
    "1-27 % with the 10-packet buffer). With ns's 50-packet buffer the queue dominates every round trip and the long "
    "connection is often ahead.",
    "fairness-sack-option-fairer": "Without link errors the losses are buffer overflows, one or two per window; Reno "
    "recovers most of them as the SACK family does, and all six loss-recovery algorithms have UF 165-187 %.",
    "fairness-avoidance-fairer": "With ns's 50-packet buffer the loss-recovery algorithms are far fairer (UF 15-56 %) "
    "and Vegas at n = 2 is not.",
    "fairness-pseudo-rate-best": "With ns's 50-packet buffer Reno's UF at n = 2 is as low as Pseudo-Rate's.",
    "arrival-transient-shorter-for-avoidance": "The transient period needs each connection's window over time; a "
    "sweep's observations hold totals over the measurement window only (run the preset with traces to see it).",
    "arrival-recovery-new-similar": "With ns's 50-packet buffer and one old connection the newcomer's slow start "
    "overflows the buffer the old one keeps full and it times out for most of the 40 s (new/old 0.18).",
    "arrival-avoidance-new-better-with-more": "With the 10-packet buffer three old Vegas connections keep 3-9 packets "
    "queued, and the new one's slow start overflows what is left: 80 drops and up to 40 timeouts. With ns's "
    "50-packet buffer (table3-ns-buffer) the paper's effect appears (new/old 1.0, 1.3, 1.9).",
    "arrival-pseudo-rate-bias-against-old": "",
    "interop-reno-robs-avoidance": "With a 10-packet buffer Reno overflows the queue so often that its own losses "
    "cost it more than Vegas's smaller window costs Vegas (Mo et al. 1999: Vegas holds its own against Reno when "
    "buffers are small), at n = 4 Vegas gets twice Reno's; with ns's 50-packet buffer (table4-ns-buffer) Reno "
    "takes most of the link, as in the paper.",
    "interop-recovery-beats-reno": "NewReno gains nothing over Reno (nor does it in the paper's own Table 4 at n = 2: "
    "8257 against 8663); SACK, FACK and Rate-Halving gain 6-18 %, significantly where losses come several per "
    "window (n = 4, the 10-packet buffer), where the paper's gains are 20-70 %.",
}


# ---- comparisons --------------------------------------------------------------------------------


def paired(a: Sequence[float | None], b: Sequence[float | None]) -> str:
    """`more`/`less` when the 95 % interval of the per-seed differences a - b excludes zero,
    `noise` when it does not (or when there are fewer than two pairs and they differ by
    nothing)."""
    s = paired_difference(zip(b, a, strict=False))  # b_i, a_i: the differences a_i − b_i
    if s.mean is None:
        return "noise"
    direction = significant_direction(s)
    if direction is None:  # one pair: its sign
        direction = 1 if s.mean > 0 else -1 if s.mean < 0 else 0
    return {1: "more", -1: "less", 0: "noise"}[direction]


def _mean(xs: Sequence[float | None]) -> float | None:
    return summarize(xs).mean


def _hw(xs: Sequence[float | None]) -> float | None:
    return summarize(xs).half_width


def _kbps(bps: float | None) -> float | None:
    return None if bps is None else bps / 1e3


def _pct(x: float) -> str:
    return f"{x * 100:.1f} %"


def _judged(
    cid: str,
    experiment: str,
    verdict: str,
    ours: str = "",
    numbers: Mapping[str, Any] | None = None,
    reason: str | None = None,
) -> Judged:
    c = next(c for c in conclusions() if c["id"] == cid)
    return Judged(
        cid,
        c["text"],
        c["where"],
        experiment,
        verdict,
        ours,
        dict(numbers or {}),
        reason if reason is not None else (REASONS.get(cid) or None),
    )


def _not_run(experiment: str, key: str | None = None) -> list[Judged]:
    return [_judged(c["id"], key or experiment, NOT_RUN) for c in conclusions(experiment)]


def _per_seed(cells: Cells, flow: str, where: Mapping[str, Any]) -> list[float | None]:
    return cells.values(flow, "goodput_bps", where)


# ---- Fig. 5 -------------------------------------------------------------------------------------


def rank_pairs(ranking: Sequence[Sequence[str]]) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """The pairs (a, b) the paper puts in order (a > b) and those it calls similar (a ≈ b)."""
    ordered = [(a, b) for i, group in enumerate(ranking) for lower in ranking[i + 1 :] for a in group for b in lower]
    similar = [(a, b) for group in ranking for i, a in enumerate(group) for b in group[i + 1 :]]
    return ordered, similar


def judge_ranking(
    ranking: Sequence[Sequence[str]], per_seed: Mapping[str, Sequence[float | None]]
) -> tuple[str, str, dict[str, Any]]:
    """(verdict, ours, numbers) for the ranking, from each algorithm's per-seed MT."""
    ordered, similar = rank_pairs(ranking)
    mean = {n: _mean(per_seed[n]) for n in per_seed}
    found = {(a, b): paired(per_seed[a], per_seed[b]) for a, b in ordered}
    right = [p for p, c in found.items() if c == "more"]
    wrong = [p for p, c in found.items() if c == "less"]
    unlike = [
        (a, b)
        for a, b in similar
        # Not noise: a and b have a finite pair, so both means are numbers.
        if paired(per_seed[a], per_seed[b]) != "noise" and differs(cast(float, mean[a]), cast(float, mean[b]), SIMILAR)
    ]
    ours_order = sorted(mean, key=lambda n: -(mean[n] or 0.0))
    text = (
        " > ".join(f"{n} {_kbps(mean[n]):.0f}" for n in ours_order)
        + " kb/s"
        + f"; ordered pairs: {len(right)} of {len(ordered)} the paper's way"
        + (", the other way: " + ", ".join(f"{a} < {b}" for a, b in wrong) if wrong else "")
        + ("; ≈ pairs not similar: " + ", ".join(f"{a} / {b}" for a, b in unlike) if unlike else "")
    )
    if len(right) == len(ordered) and not unlike:
        verdict = AGREE
    elif len(right) >= len(ordered) / 2:
        verdict = PARTLY
    else:
        verdict = DISAGREE
    return (
        verdict,
        text,
        {
            "mt_kbps": {n: _kbps(m) for n, m in mean.items()},
            "ordered_pairs": len(ordered),
            "right": len(right),
            "wrong": [list(p) for p in wrong],
            "not_similar": [list(p) for p in unlike],
        },
    )


def spread(means: Sequence[float]) -> float:
    """(max - min) / max of the algorithms' MT: the gap, relative to the best."""
    return (max(means) - min(means)) / max(means) if means and max(means) > 0 else 0.0


def judge_gaps(spreads: Mapping[float, float]) -> tuple[str, str]:
    """Agree when the spread grows at every step of the error rate, partly when it is larger at
    the highest rate than at the lowest, disagree otherwise."""
    rates = sorted(spreads)
    values = [spreads[r] for r in rates]
    text = ", ".join(f"{r * 100:g} %: {_pct(s)}" for r, s in zip(rates, values, strict=True))
    if len(values) < 2:
        return NO_DATA, text
    if all(b >= a for a, b in itertools.pairwise(values)) and values[-1] > values[0]:
        return AGREE, text
    return (PARTLY if values[-1] > values[0] else DISAGREE), text


def _fig5(cells: Cells) -> tuple[list[Table], list[Judged]]:
    if not cells:
        return [], _not_run("fig5")
    rates = sorted(r for r in cells.axis(ERROR_RATE) if r is not None)
    rows, mt = [], {}
    for rate in rates:
        for name, core in VARIANTS.items():
            at = {FIRST_VARIANT: core, ERROR_RATE: rate}
            xs = _per_seed(cells, "tcp", at)
            mt[(name, rate)] = xs
            rows.append(
                {
                    "error_rate": rate,
                    "algorithm": name,
                    "mt_kbps": _kbps(_mean(xs)),
                    "mt_kbps_half_width": _kbps(_hw(xs)),
                    "timeouts": cells.mean("tcp", "timeouts", at),
                    "fast_retransmits": cells.mean("tcp", "fast_retransmits", at),
                }
            )
    curve = Table(
        "fig5",
        "Fig. 5: MT against the link error rate (§4.1)",
        f"Mean goodput per connection over 1000 s, means of {FIG5_SEEDS} seeds (± 95 %); timeouts and fast "
        "retransmits per connection. The paper's curves are not in its text, only their order.",
        "fig5",
        (
            Column("error_rate", "error rate"),
            Column("algorithm", "algorithm"),
            Column("mt_kbps", "MT", "kb/s"),
            Column("mt_kbps_half_width", "±", "kb/s"),
            Column("timeouts", "timeouts"),
            Column("fast_retransmits", "fast retransmits"),
        ),
        rows,
        Plot(
            x="error_rate",
            y=("mt_kbps",),
            series="algorithm",
            x_label="link error rate",
            y_label="MT per connection (kb/s)",
        ),
    )
    errors = [r for r in rates if r > 0]
    ranking = conclusions("fig5")[0]["ranking"]
    group_of = {n: i + 1 for i, g in enumerate(ranking) for n in g}
    # Per seed, MT averaged over the non-zero error rates (the whole of Fig. 5's curve).
    over: dict[str, list[float | None]] = {}
    for name in RANKED:
        series = [mt[(name, r)] for r in errors]
        over[name] = [
            None if any(s[i] is None for s in series) else sum(cast(float, s[i]) for s in series) / len(series)
            for i in range(min((len(s) for s in series), default=0))
        ]
    judged = []
    if errors:
        verdict, text, numbers = judge_ranking(ranking, over)
        judged.append(_judged("throughput-ranking", "fig5", verdict, text, numbers))
        order = sorted(RANKED, key=lambda n: -(_mean(over[n]) or 0.0))
        rank_table = Table(
            "fig5-ranking",
            "Fig. 5: the ranking (§4.1 comment 1)",
            "MT averaged over the non-zero error rates, per seed, then the mean (± 95 %). Paper group: 1 is Vegas, "
            "2 Pseudo-Rate ≈ Rate-Halving, 3 SSDR ≈ FACK ≈ SACK, 4 NewReno, 5 Reno.",
            "fig5",
            (
                Column("algorithm", "algorithm"),
                Column("paper_group", "paper group"),
                Column("our_rank", "our rank"),
                Column("mt_kbps", "MT", "kb/s"),
                Column("mt_kbps_half_width", "±", "kb/s"),
            ),
            [
                {
                    "algorithm": n,
                    "paper_group": group_of[n],
                    "our_rank": order.index(n) + 1,
                    "mt_kbps": _kbps(_mean(over[n])),
                    "mt_kbps_half_width": _kbps(_hw(over[n])),
                }
                for n in RANKED
            ],
            Plot(x="algorithm", y=("mt_kbps",), kind="bars", x_label="algorithm", y_label="MT (kb/s)"),
        )
        spreads = {r: spread([m for n in RANKED if (m := _mean(mt[(n, r)])) is not None]) for r in rates}
        verdict, text = judge_gaps({r: s for r, s in spreads.items() if r > 0})
        judged.append(
            _judged(
                "throughput-gaps-widen",
                "fig5",
                verdict,
                "(best - worst) / best of the eight: " + text,
                {"spread": {f"{r:g}": s for r, s in spreads.items()}},
            )
        )
        return [curve, rank_table], judged
    return [curve], [_judged(c["id"], "fig5", NO_DATA, "no error rate above 0 was run") for c in conclusions("fig5")]


# ---- Table 2 ------------------------------------------------------------------------------------


def uf(short: float, long: float) -> float:
    """§4.2's UF for equal numbers of short and long connections."""
    mean = (short + long) / 2
    return abs(long - short) / mean * 100 if mean else 0.0


def _table2(cells: Cells, key: str) -> tuple[list[Table], list[Judged]]:
    if not cells:
        return [], _not_run("table2", key)
    published = read_json("003_tables.json")["table2_distinct_delays_50s"]
    ns = sorted(n for n in cells.axis(CONNECTIONS) if n is not None)
    res: dict[tuple[str, int], dict[str, Any]] = {}
    tables = []
    for n in ns:
        rows = []
        for name in RANKED:
            at = {EVERY_VARIANT: VARIANTS[name], CONNECTIONS: n}
            s, lg = _per_seed(cells, "short", at), _per_seed(cells, "long", at)
            ufs = [uf(a, b) for a, b in zip(s, lg, strict=False) if a is not None and b is not None]
            res[(name, n)] = {"short": s, "long": lg, "uf": ufs}
            p = published[f"n{n}"][name]
            rows.append(
                {
                    "algorithm": name,
                    "paper_short": p[0],
                    "paper_long": p[1],
                    "paper_uf": p[2],
                    "short_kbps": _kbps(_mean(s)),
                    "long_kbps": _kbps(_mean(lg)),
                    "uf": _mean(ufs),
                    "uf_half_width": _hw(ufs),
                }
            )
        tables.append(
            Table(
                f"{key}-n{n}",
                f"{_title(key)}, n = {n}",
                f"Ours: mean goodput per connection over 50 s and UF (%), means of {TABLE_SEEDS} seeds (± 95 %); the "
                "paper's MT as printed.",
                key,
                (
                    Column("algorithm", "algorithm"),
                    Column("paper_short", "paper short"),
                    Column("paper_long", "paper long"),
                    Column("paper_uf", "paper UF", "%"),
                    Column("short_kbps", "ours short", "kb/s"),
                    Column("long_kbps", "ours long", "kb/s"),
                    Column("uf", "ours UF", "%"),
                    Column("uf_half_width", "±", "%"),
                ),
                rows,
                Plot(x="algorithm", y=("uf",), paper_y="paper_uf", kind="bars", x_label="algorithm", y_label="UF (%)"),
            )
        )
    judged = []
    # 1) every algorithm biased against long connections: long < short, paired, at each n.
    checks = {f"{name} n={n}": paired(r["long"], r["short"]) for (name, n), r in res.items()}
    biased = [k for k, c in checks.items() if c == "less"]
    judged.append(
        _judged(
            "fairness-bias-against-long",
            key,
            share(len(biased), len(checks)),
            f"long below short in {len(biased)} of {len(checks)}"
            + ("; not: " + ", ".join(k for k in checks if k not in biased) if len(biased) < len(checks) else ""),
            {"checks": checks},
        )
    )
    # 2), 3) groups: each algorithm of `better` has a lower mean UF than each of `worse`, at each n.
    for cid in ("fairness-sack-option-fairer", "fairness-avoidance-fairer"):
        c = next(x for x in conclusions("table2") if x["id"] == cid)
        pairs = [(a, b, n) for n in ns for a in c["better"] for b in c["worse"]]
        ok = [
            (a, b, n)
            for a, b, n in pairs
            if cast(float, _mean(res[(a, n)]["uf"])) < cast(float, _mean(res[(b, n)]["uf"]))
        ]
        means = "; ".join(
            f"n={n}: " + ", ".join(f"{a} {_mean(res[(a, n)]['uf']):.0f}" for a in c["better"] + c["worse"]) for n in ns
        )
        judged.append(
            _judged(
                cid,
                key,
                share(len(ok), len(pairs)),
                f"{len(ok)} of {len(pairs)} pairs fairer as the paper says (UF %: {means})",
                {"pairs": len(pairs), "agree": len(ok)},
            )
        )
    # 4) Pseudo-Rate's UF the lowest at each n.
    best = {n: min(RANKED, key=lambda a: cast(float, _mean(res[(a, n)]["uf"]))) for n in ns}
    judged.append(
        _judged(
            "fairness-pseudo-rate-best",
            key,
            share(sum(b == "Pseudo-Rate" for b in best.values()), len(ns)),
            ", ".join(
                f"n={n}: lowest UF {b} ({_mean(res[(b, n)]['uf']):.0f} %; Pseudo-Rate "
                f"{_mean(res[('Pseudo-Rate', n)]['uf']):.0f} %)"
                for n, b in best.items()
            ),
            {"lowest": best},
        )
    )
    return tables, judged


# ---- Table 3 ------------------------------------------------------------------------------------


def _ratio(new: Sequence[float | None], old: Sequence[float | None]) -> list[float]:
    return [a / b for a, b in zip(new, old, strict=False) if a is not None and b]


# A table of two sides per algorithm and their ratio: (column key, label) of each side.
Sides = tuple[tuple[str, str], tuple[str, str]]
NEW_OLD: Sides = (("new", "new"), ("old", "old"))
RENO_OTHER: Sides = (("reno", "Reno"), ("other", "other"))


def _ratio_row(
    name: str,
    sides: Sides,
    paper: tuple[float, float],
    paper_ratio: float,
    ours: tuple[Sequence[float | None], Sequence[float | None]],
    ratio: Sequence[float],
) -> dict[str, Any]:
    (a, _), (b, _) = sides
    return {
        "algorithm": name,
        f"paper_{a}": paper[0],
        f"paper_{b}": paper[1],
        "paper_ratio": paper_ratio,
        f"{a}_kbps": _kbps(_mean(ours[0])),
        f"{b}_kbps": _kbps(_mean(ours[1])),
        "ratio": _mean(ratio),
        "ratio_half_width": _hw(ratio),
    }


def _ratio_table(key: str, n: int, caption: str, sides: Sides, ratio_label: str, rows: list[dict[str, Any]]) -> Table:
    (a, a_label), (b, b_label) = sides
    return Table(
        f"{key}-n{n}",
        f"{_title(key)}, n = {n}",
        caption,
        key,
        (
            Column("algorithm", "algorithm"),
            Column(f"paper_{a}", f"paper {a_label}"),
            Column(f"paper_{b}", f"paper {b_label}"),
            Column("paper_ratio", f"paper {ratio_label}"),
            Column(f"{a}_kbps", f"ours {a_label}", "kb/s"),
            Column(f"{b}_kbps", f"ours {b_label}", "kb/s"),
            Column("ratio", f"ours {ratio_label}"),
            Column("ratio_half_width", "±"),
        ),
        rows,
        Plot(
            x="algorithm",
            y=("ratio",),
            paper_y="paper_ratio",
            kind="bars",
            x_label="algorithm",
            y_label=ratio_label.replace("/", " / "),
        ),
    )


def _table3(cells: Cells, key: str) -> tuple[list[Table], list[Judged]]:
    if not cells:
        return [], _not_run("table3", key)
    published = read_json("003_tables.json")["table3_new_arrival_at_10s_mt_10_to_50s"]
    ns = sorted(n for n in cells.axis(FIRST_COUNT) if n is not None)
    ratio: dict[tuple[str, int], list[float]] = {}
    tables = []
    for n in ns:
        rows = []
        for name in RANKED:
            at = {EVERY_VARIANT: VARIANTS[name], FIRST_COUNT: n}
            new, old = _per_seed(cells, "new", at), _per_seed(cells, "old", at)
            ratio[(name, n)] = _ratio(new, old)
            p = published[f"n{n}"][name]
            rows.append(_ratio_row(name, NEW_OLD, (p[0], p[1]), p[0] / p[1], (new, old), ratio[(name, n)]))
        caption = (
            f"Goodput per connection between 10 and 50 s, means of {TABLE_SEEDS} seeds; new/old per seed, then the "
            "mean (± 95 %). The paper's MT as printed and its new/old."
        )
        tables.append(_ratio_table(key, n, caption, NEW_OLD, "new/old", rows))

    def r(name: str, n: int) -> float:
        return _mean(ratio[(name, n)]) or 0.0

    judged = [_judged("arrival-transient-shorter-for-avoidance", key, NO_DATA, "not measured")]
    c = next(x for x in conclusions("table3") if x["id"] == "arrival-recovery-new-similar")
    checks = {f"{a} n={n}": r(a, n) for a in c["variants"] for n in ns}
    ok = [k for k, x in checks.items() if abs(x - 1) <= NEW_SIMILAR]
    judged.append(
        _judged(
            c["id"],
            key,
            share(len(ok), len(checks)),
            f"new/old within {NEW_SIMILAR * 100:.0f} % in {len(ok)} of {len(checks)}"
            + (
                "; not: " + ", ".join(f"{k} {checks[k]:.2f}" for k in checks if k not in ok)
                if len(ok) < len(checks)
                else ""
            ),
            {"new_over_old": checks},
        )
    )
    lo, hi = ns[0], ns[-1]
    c = next(x for x in conclusions("table3") if x["id"] == "arrival-avoidance-new-better-with-more")
    grows = [a for a in c["variants"] if r(a, hi) > r(a, lo) and r(a, hi) > 1]
    judged.append(
        _judged(
            c["id"],
            key,
            share(len(grows), len(c["variants"])) if hi > lo else NO_DATA,
            "; ".join(f"{a} new/old " + ", ".join(f"n={n}: {r(a, n):.2f}" for n in ns) for a in c["variants"]),
            {"new_over_old": {a: {n: r(a, n) for n in ns} for a in c["variants"]}},
        )
    )
    checks4 = {f"Pseudo-Rate n={n}: new > old": r("Pseudo-Rate", n) > 1 for n in ns}
    if 1 in ns:
        checks4["Vegas n=1: new < old"] = r("Vegas", 1) < 1
    judged.append(
        _judged(
            "arrival-pseudo-rate-bias-against-old",
            key,
            share(sum(checks4.values()), len(checks4)),
            ", ".join(f"{k} ({'yes' if v else 'no'})" for k, v in checks4.items())
            + f"; Vegas n=1 new/old {r('Vegas', 1):.2f}" * (1 in ns),
            {"checks": checks4},
        )
    )
    return tables, judged


# ---- Table 4 ------------------------------------------------------------------------------------


def _table4(cells: Cells, key: str) -> tuple[list[Table], list[Judged]]:
    if not cells:
        return [], _not_run("table4", key)
    published = read_json("003_tables.json")["table4_interoperating_with_reno"]
    ns = sorted(n for n in cells.axis(CONNECTIONS) if n is not None)
    res: dict[tuple[str, int], tuple[list[float | None], list[float | None]]] = {}
    tables = []
    for n in ns:
        rows = []
        for name in RANKED[1:]:
            at = {SECOND_VARIANT: VARIANTS[name], CONNECTIONS: n}
            reno, other = _per_seed(cells, "reno", at), _per_seed(cells, "other", at)
            res[(name, n)] = (reno, other)
            ratio = _ratio(other, reno)
            p = published[f"n{n}"][name]
            rows.append(_ratio_row(name, RENO_OTHER, (p[0], p[1]), p[1] / p[0], (reno, other), ratio))
        caption = (
            f"Goodput per connection over 50 s, means of {TABLE_SEEDS} seeds; other/Reno per seed, then the mean "
            "(± 95 %). The paper's MT as printed and its other/Reno."
        )
        tables.append(_ratio_table(key, n, caption, RENO_OTHER, "other/Reno", rows))
    judged = []
    for cid, want in (("interop-reno-robs-avoidance", "less"), ("interop-recovery-beats-reno", "more")):
        c = next(x for x in conclusions("table4") if x["id"] == cid)
        checks = {f"{a} n={n}": paired(res[(a, n)][1], res[(a, n)][0]) for a in c["variants"] for n in ns}
        ok = [k for k, v in checks.items() if v == want]
        judged.append(
            _judged(
                cid,
                key,
                share(len(ok), len(checks)),
                f"{len(ok)} of {len(checks)} {'below' if want == 'less' else 'above'} Reno significantly ("
                + ", ".join(f"{k}: {v}" for k, v in checks.items())
                + ")",
                {"checks": checks},
            )
        )
    return tables, judged


def _title(key: str) -> str:
    return next(e.title for e in EXPERIMENTS if e.key == key)


TABLES = {"table2": _table2, "table3": _table3, "table4": _table4}


def evaluate(observations: Observations) -> Evaluation:
    """The tables and judged conclusions for whatever experiments have observations."""
    tables, judged = _fig5(Cells(observations.get("fig5", ())))
    for key in TABLE_KEYS:
        t, j = TABLES[key.removesuffix("-ns-buffer")](Cells(observations.get(key, ())), key)
        tables += t
        judged += j
    return Evaluation(tables, judged)


PAPER = Paper(
    number="003",
    title="TCP congestion control algorithms and a performance comparison (ns)",
    citation='Y.-C. Lai, C.-L. Yao, "TCP congestion control algorithms and a performance comparison" '
    "(National Cheng Kung University; ns)",
    setup="Tahoe, Reno, NewReno, SACK, FACK, Rate-Halving, SSDR, Vegas and Pseudo-Rate with 512-byte packets on a "
    "dumbbell (the paper's Fig. 4 is not in its text: 1.5 Mb/s, 1 ms, a 10-packet buffer between the routers is our "
    "choice): MT against the link error rate (Fig. 5), short against long connections and their UF (Table 2), a new "
    "connection at 10 s (Table 3), each algorithm beside Reno (Table 4, also with ns's 50-packet buffer).",
    experiments=EXPERIMENTS,
    evaluate=evaluate,
    validation="docs/validation/paper003.md",
)
