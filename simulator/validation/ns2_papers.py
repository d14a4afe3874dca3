#!/usr/bin/env python3
"""Papers 002 and 003 in ns-2.35 beside tcpsim: whom does ns-2 agree with?

Why: both papers ran ns-2, and tcpsim's reproductions (services/reproductions/paper002.py,
paper003.py; docs/validation/paper002.md, paper003.md) disagree with some of their conclusions
(first drops at 9 instead of 7 Mb/s, NewReno not the best under congestion, SACK+RED not the
worst, SSDR last under link errors, the buffer-dependent fairness comments...). Running the same
scenarios in ns-2 tells whether a disagreement is tcpsim's (ns-2 sides with the paper) or comes
from the scenario we had to guess (ns-2 sides with tcpsim).

For every point it runs ns-2 (simulator/validation/ns2/paper002.tcl, paper003.tcl: our Tcl
mirrors of services/presets/paper002.py, paper003.py) in two TCP profiles, and tcpsim on the preset
scenarios through `tcpsim.run` twice: as the presets build them (their `ns2` TCP profile) and with
`tcp.profile` removed (tcpsim's RFC defaults). One process at a time, under `nice`:

- `ns2`: ns-2.35's defaults as the papers' authors would have had them: `syn_` 1, `singledup_` 1
  (RFC 3042 limited transmit), RED in byte mode (`queue_in_bytes_`), Vegas without headers;
- `matched`: ns-2 set like tcpsim: no SYN, no limited transmit, RED in packets, Vegas packets
  40 bytes longer so that they are as long on the wire as the other agents' (see paper002.tcl).

It prints Markdown tables: the paper's claim, ns-2 (both profiles), tcpsim, and whom ns-2 agrees
with; `p002-probes` varies paper 002's unknowns (UDP fragmentation, window, delay, buffer, a fine CBR
grid, RED's wait_). Raw results are appended to --out as JSON lines. docs/validation/
ns2-papers-002-003.md has the findings.

    .venv/bin/python simulator/validation/ns2_papers.py                    # everything, ~17 min
    .venv/bin/python simulator/validation/ns2_papers.py --only p002-exp1 p003-fig5 --fig5-seeds 2
    .venv/bin/python simulator/validation/ns2_papers.py --markdown /tmp/ns2papers/tables.md
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
NS2_DIR = Path(__file__).resolve().parent / "ns2"

PROFILES: dict[str, dict[str, Any]] = {
    "ns2": {"syn": 1, "singledup": 1, "redbytes": 1, "vegashdr": 0},
    "matched": {"syn": 0, "singledup": 0, "redbytes": 0, "vegashdr": 1},
}
"""ns-2 settings per profile (paper003.tcl has no RED: `redbytes` is dropped there)."""

EXPERIMENTS = (
    "p002-exp1",
    "p002-exp2",
    "p002-exp3",
    "p002-probes",
    "p003-fig5",
    "p003-table2",
    "p003-table3",
    "p003-table4",
    "p003-bisect",
)


# ---- running -------------------------------------------------------------------------------------


class Runner:
    """Runs one simulation at a time and keeps every result (JSON lines under `out`)."""

    def __init__(self, out: Path, ns: str) -> None:
        self.out = out
        self.ns = ns
        out.mkdir(parents=True, exist_ok=True)
        self.ns_runs = 0
        self.ns_wall = 0.0
        self.tc_runs = 0
        self.tc_wall = 0.0
        self._files: dict[str, Any] = {}

    def _log(self, name: str, record: dict[str, Any]) -> None:
        if name not in self._files:
            self._files[name] = (self.out / f"{name}.jsonl").open("a")
        self._files[name].write(json.dumps(record) + "\n")
        self._files[name].flush()

    def ns2(self, log: str, script: str, **kw: Any) -> dict[str, Any]:
        args = [f"{k}={v}" for k, v in kw.items()]
        t = time.perf_counter()
        p = subprocess.run(
            ["nice", "-n", "10", self.ns, str(NS2_DIR / script), *args], capture_output=True, text=True, check=False
        )
        self.ns_wall += time.perf_counter() - t
        self.ns_runs += 1
        if p.returncode != 0 or not p.stdout.strip():
            raise RuntimeError(f"ns {script} {' '.join(args)} failed: {p.stderr[-2000:]}")
        r = json.loads(p.stdout.strip().splitlines()[-1])
        self._log(log, {"sim": "ns2", "kw": kw, "result": r})
        return r

    def tcpsim(self, log: str, scenario: dict[str, Any], sim: str = "tcpsim") -> dict[str, Any]:
        """`sim` "tcpsim": the scenario as the presets build it (their `ns2` TCP profile);
        "tcpsim-rfc": the same with every flow's `tcp.profile` removed (tcpsim's own defaults)."""
        import tcpsim

        if sim == "tcpsim-rfc":
            scenario = copy.deepcopy(scenario)
            for fl in scenario.get("flows", []):
                fl.get("tcp", {}).pop("profile", None)
        t = time.perf_counter()
        r = tcpsim.run(scenario)
        self.tc_wall += time.perf_counter() - t
        self.tc_runs += 1
        self._log(
            log,
            {
                "sim": sim,
                "scenario": scenario,
                "result": {k: v for k, v in r.items() if k in ("flows", "links", "fairness")},
            },
        )
        return r


# ---- small helpers -------------------------------------------------------------------------------


def mean(xs: Iterable[float]) -> float:
    xs = list(xs)
    return sum(xs) / len(xs) if xs else float("nan")


def hw95(xs: Sequence[float]) -> float:
    """Half-width of a normal 95 % interval of the mean (0 for one value)."""
    return 1.96 * statistics.stdev(xs) / math.sqrt(len(xs)) if len(xs) > 1 else 0.0


def f(x: float | None, d: int = 2) -> str:
    return "—" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{d}f}"


def table(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return out + [""]


def whom(paper_holds_ns2: bool | None, paper_holds_tc: bool | None) -> str:
    """Whom ns-2 agrees with, from whether the paper's claim holds in ns-2 and in tcpsim."""
    if paper_holds_ns2 is None or paper_holds_tc is None:
        return "—"
    if paper_holds_ns2 and paper_holds_tc:
        return "both (claim holds in both)"
    if not paper_holds_ns2 and not paper_holds_tc:
        return "**tcpsim** (claim fails in both)"
    if paper_holds_ns2:
        return "**the paper** (holds in ns-2, not in tcpsim)"
    return "neither: holds in tcpsim, not in ns-2"


def whom_all(ns_holds: Sequence[bool | None], tc_holds: bool | None, profiles: Sequence[str]) -> str:
    """`whom` for every ns-2 profile; one answer when the profiles agree."""
    ws = [whom(h, tc_holds) for h in ns_holds]
    if len(set(ws)) == 1:
        return ws[0]
    return "; ".join(f"{p}: {w}" for p, w in zip(profiles, ws, strict=True))


TC = ("tcpsim", "tcpsim-rfc")
"""tcpsim as the presets build it (the `ns2` TCP profile, since commit 9d8445f) and with its RFC defaults."""


def lab(s: str) -> str:
    return {"tcpsim": "tcpsim (ns2 profile)", "tcpsim-rfc": "tcpsim (RFC defaults)"}.get(s, f"ns-2 ({s})")


def jain(a: float, b: float) -> float:
    return (a + b) ** 2 / (2 * (a * a + b * b)) if a or b else 1.0


# ---- paper 002 -----------------------------------------------------------------------------------

P002_VARIANTS = ("tahoe", "reno", "newreno-sbs", "vegas")
P002_NAMES = {"tahoe": "Tahoe", "reno": "Reno", "newreno-sbs": "NewReno", "vegas": "Vegas", "sack": "SACK"}


def _tc_flow(r: dict[str, Any], name: str) -> dict[str, Any]:
    return next(x for x in r["flows"] if x["name"] == name)


def _tc_link(r: dict[str, Any], name: str) -> dict[str, Any]:
    return next(x for x in r["links"] if x["name"] == name)


def p002_exp1(run: Runner, profiles: Sequence[str]) -> list[str]:
    from services.presets.paper002 import congestion_scenario

    rates = list(range(1, 11))
    res: dict[str, dict[tuple[str, int], dict[str, float]]] = {p: {} for p in profiles}
    res["tcpsim"] = {}
    res["tcpsim-rfc"] = {}
    for v in P002_VARIANTS:
        for c in rates:
            for p in profiles:
                r = run.ns2("p002-exp1", "paper002.tcl", v1=v, cbr=c, cbrsize=3000, **PROFILES[p])
                t = r["windows"][0]["tcp"][0]
                res[p][(v, c)] = {
                    "goodput": t["goodput_bps"] / 1e6,
                    "drops": t["bneck_drops"],
                    "timeouts": t["timeouts"],
                    "queue": r["bneck_mean_queue_pkts"],
                }
            for ts in TC:
                r = run.tcpsim("p002-exp1", congestion_scenario(v, float(c), 3000), ts)
                t = _tc_flow(r, "tcp")
                res[ts][(v, c)] = {
                    "goodput": t["goodput_bps"] / 1e6,
                    "drops": t["drops"],
                    "timeouts": t["timeouts"],
                    "queue": _tc_link(r, "n2-n3")["mean_queue_pkts"],
                }
    sims = [*profiles, *TC]
    label = {s: lab(s) for s in sims}
    out = [
        "### Paper 002, experiment 1: one TCP flow against CBR (3,000-byte packets), 10 s",
        "",
        "TCP goodput (Mb/s) / TCP segments dropped / retransmission timeouts, per CBR rate. ns-2 and tcpsim "
        "are deterministic here (CBR without jitter, nothing random): one run per point.",
        "",
    ]
    for sim in sims:
        out.append(f"**{label[sim]}**")
        out.append("")
        out += table(
            ["CBR Mb/s", *[P002_NAMES[v] for v in P002_VARIANTS]],
            [
                [
                    c,
                    *[
                        f"{f(res[sim][(v, c)]['goodput'])} / {res[sim][(v, c)]['drops']} / "
                        f"{res[sim][(v, c)]['timeouts']}"
                        for v in P002_VARIANTS
                    ],
                ]
                for c in rates
            ],
        )

    def first_drop(sim: str, v: str) -> int | None:
        return next((c for c in rates if res[sim][(v, c)]["drops"] > 0), None)

    def congested(sim: str) -> list[int]:
        return [c for c in rates if any(res[sim][(v, c)]["drops"] > 0 for v in ("tahoe", "reno", "newreno-sbs"))]

    def best_under_congestion(sim: str) -> tuple[str, dict[str, float]]:
        cs = congested(sim)
        m = {v: mean(res[sim][(v, c)]["goodput"] for c in cs) for v in P002_VARIANTS}
        return max(m, key=m.get), m

    def vegas_lowest(sim: str) -> list[int]:
        return [
            c
            for c in rates
            if res[sim][("vegas", c)]["goodput"] < min(res[sim][(v, c)]["goodput"] for v in P002_VARIANTS[:3]) - 1e-9
        ]

    rows = []
    fd = {s: {v: first_drop(s, v) for v in P002_VARIANTS[:3]} for s in sims}
    holds = {s: all(fd[s][v] == 7 for v in fd[s]) for s in sims}
    rows.append(
        [
            "Tahoe, Reno, NewReno first drop at CBR 7 Mb/s",
            "7, 7, 7",
            *[", ".join(str(fd[s][v]) for v in P002_VARIANTS[:3]) for s in sims],
            whom_all([holds[p] for p in profiles], holds["tcpsim"], profiles),
        ]
    )
    vd = {s: sum(res[s][("vegas", c)]["drops"] for c in rates) for s in sims}
    rows.append(
        [
            "Vegas never drops",
            "0",
            *[str(vd[s]) for s in sims],
            whom_all([vd[p] == 0 for p in profiles], vd["tcpsim"] == 0, profiles),
        ]
    )
    best = {s: best_under_congestion(s) for s in sims}
    rows.append(
        [
            "NewReno has the highest throughput under congestion",
            "NewReno",
            *[
                f"{P002_NAMES[best[s][0]]} (CBR {congested(s)}: "
                + ", ".join(f"{P002_NAMES[v][0]} {best[s][1][v]:.3f}" for v in P002_VARIANTS)
                + ")"
                for s in sims
            ],
            whom_all([best[p][0] == "newreno-sbs" for p in profiles], best["tcpsim"][0] == "newreno-sbs", profiles),
        ]
    )
    vl = {s: vegas_lowest(s) for s in sims}
    rows.append(
        [
            "Vegas's throughput is consistently lower",
            "all rates",
            *[f"lowest at {len(vl[s])} of 10: {vl[s]}" for s in sims],
            whom_all([len(vl[p]) >= 8 for p in profiles], len(vl["tcpsim"]) >= 8, profiles),
        ]
    )
    q2 = {s: (mean(res[s][(v, 2)]["queue"] for v in P002_VARIANTS[:3]), res[s][("vegas", 2)]["queue"]) for s in sims}
    rows.append(
        [
            "Vegas has the lower latency at CBR 2 Mb/s (agree; here: mean N2-N3 queue, packets)",
            "0.005 vs 0.02 s",
            *[f"others {q2[s][0]:.1f}, Vegas {q2[s][1]:.1f}" for s in sims],
            whom_all([q2[p][1] < q2[p][0] for p in profiles], q2["tcpsim"][1] < q2["tcpsim"][0], profiles),
        ]
    )
    out += ["**Experiment 1: the paper's claims**", ""]
    out += table(["claim", "paper", *[label[s] for s in sims], "ns-2 agrees with"], rows)
    return out


def p002_exp2(run: Runner, profiles: Sequence[str]) -> list[str]:
    from services.presets.paper002 import fairness_scenario

    pairs = (("reno", "reno"), ("newreno-sbs", "reno"), ("vegas", "vegas"), ("newreno-sbs", "vegas"))
    levels = {"low": (1.0, 1000), "high": (10.0, 10000)}
    paper = {
        ("low", "reno", "reno"): "0.56 / 0.56",
        ("low", "newreno-sbs", "reno"): "0.56 / 0.56",
        ("low", "vegas", "vegas"): "0.55 / 0.6",
        ("low", "newreno-sbs", "vegas"): "0.98 / 0.15",
        ("high", "reno", "reno"): "0.2 / 0.2",
        ("high", "newreno-sbs", "reno"): "0.23 / 0.185",
        ("high", "vegas", "vegas"): "0.1 / 0.1",
        ("high", "newreno-sbs", "vegas"): "0.26 / 0.1",
    }
    sims = [*profiles, *TC]
    res: dict[tuple[str, str, str, str], tuple[float, float, int]] = {}
    for lv, (cbr, size) in levels.items():
        for a, b in pairs:
            for p in profiles:
                r = run.ns2("p002-exp2", "paper002.tcl", v1=a, v2=b, cbr=cbr, cbrsize=size, **PROFILES[p])
                t = r["windows"][0]["tcp"]
                res[(p, lv, a, b)] = (
                    t[0]["goodput_bps"] / 1e6,
                    t[1]["goodput_bps"] / 1e6,
                    t[0]["bneck_drops"] + t[1]["bneck_drops"],
                )
            for ts in TC:
                r = run.tcpsim("p002-exp2", fairness_scenario(a, b, cbr, size), ts)
                x, y = _tc_flow(r, "first"), _tc_flow(r, "second")
                res[(ts, lv, a, b)] = (x["goodput_bps"] / 1e6, y["goodput_bps"] / 1e6, x["drops"] + y["drops"])
    out = [
        "### Paper 002, experiment 2: two TCP flows and CBR (low: 1 Mb/s of 1,000-byte packets; high: "
        "10 Mb/s of 10,000-byte packets), 10 s",
        "",
        "Goodput of the first / second flow in Mb/s (the paper's numbers as printed, 'Mbps'; at low congestion "
        "they fit MB/s: multiply by 8), TCP drops of both, Jain's index.",
        "",
    ]
    rows = []
    for lv in levels:
        for a, b in pairs:
            cells = []
            for s in sims:
                x, y, d = res[(s, lv, a, b)]
                cells.append(f"{x:.2f} / {y:.2f}, {d} drops, J {jain(x, y):.3f}")
            rows.append([lv, f"{P002_NAMES[a]}/{P002_NAMES[b]}", paper[(lv, a, b)], *cells])
    out += table(["congestion", "pair", "paper", *[lab(x) for x in sims]], rows)

    def claims(s: str) -> dict[str, bool]:
        g = lambda lv, a, b: res[(s, lv, a, b)]  # noqa: E731
        return {
            "Vegas/Vegas at low congestion unequal (0.55 / 0.6)": abs(
                g("low", "vegas", "vegas")[0] - g("low", "vegas", "vegas")[1]
            )
            > 0.05 * g("low", "vegas", "vegas")[0],
            "Reno/Reno and Vegas/Vegas fair": min(jain(*g(lv, a, a)[:2]) for lv in levels for a in ("reno", "vegas"))
            >= 0.95,
            "Without losses NewReno = Reno": abs(
                g("low", "newreno-sbs", "reno")[0] - g("low", "newreno-sbs", "reno")[1]
            )
            <= 0.02 * g("low", "newreno-sbs", "reno")[0],
            "High congestion: NewReno > Reno": g("high", "newreno-sbs", "reno")[0]
            > g("high", "newreno-sbs", "reno")[1],
            "Vegas loses to NewReno, most at low congestion": g("low", "newreno-sbs", "vegas")[0]
            / max(1e-9, g("low", "newreno-sbs", "vegas")[1])
            > g("high", "newreno-sbs", "vegas")[0] / max(1e-9, g("high", "newreno-sbs", "vegas")[1])
            > 1,
        }

    cl = {s: claims(s) for s in sims}
    out += ["**Experiment 2: the paper's claims** (holds / fails per simulator)", ""]
    out += table(
        ["claim", *[lab(x) for x in sims], "ns-2 agrees with"],
        [
            [
                k,
                *["holds" if cl[s][k] else "fails" for s in sims],
                whom_all([cl[p][k] for p in profiles], cl["tcpsim"][k], profiles),
            ]
            for k in cl["tcpsim"]
        ],
    )
    return out


def p002_exp3(run: Runner, profiles: Sequence[str], seeds: int) -> list[str]:
    from services.presets.paper002 import ns2_red_queue, queuing_scenario

    rates, buffers, variants = (6, 8, 10), (100, 300), ("reno", "sack")
    sims = [*profiles, *TC]
    # res[(sim, rate, buffer, queue, variant)] = per-seed lists
    res: dict[tuple[Any, ...], dict[str, list[float]]] = {}
    for c in rates:
        for b in buffers:
            for q in ("droptail", "red"):
                for v in variants:
                    n = seeds if q == "red" else 1
                    for p in profiles:
                        acc: dict[str, list[float]] = {"goodput": [], "timeouts": [], "drops": [], "queue": []}
                        for seed in range(1, n + 1):
                            r = run.ns2(
                                "p002-exp3",
                                "paper002.tcl",
                                v1=v,
                                cbr=c,
                                cbrstart=4,
                                warm=4,
                                qtype=q,
                                qlimit=b,
                                seed=seed,
                                **PROFILES[p],
                            )
                            t = r["windows"][1]["tcp"][0]
                            acc["goodput"].append(t["goodput_bps"] / 1e6)
                            acc["timeouts"].append(t["timeouts"])
                            acc["drops"].append(t["bneck_drops"])
                            acc["queue"].append(r["bneck_mean_queue_pkts"])
                        res[(p, c, b, q, v)] = acc
                    for ts in TC:
                        acc = {"goodput": [], "timeouts": [], "drops": [], "queue": []}
                        for seed in range(1, n + 1):
                            queue = ns2_red_queue(b) if q == "red" else {"type": "droptail", "limit_pkts": b}
                            sc = queuing_scenario(queue, v, float(c), seed)
                            sc["warmup_s"] = 4.0
                            sc.pop("outputs", None)
                            r = run.tcpsim("p002-exp3", sc, ts)
                            t = _tc_flow(r, "tcp")
                            acc["goodput"].append(t["goodput_bps"] / 1e6)
                            acc["timeouts"].append(t["timeouts"])
                            acc["drops"].append(t["drops"])
                            acc["queue"].append(_tc_link(r, "n2-n3")["mean_queue_pkts"])
                        res[(ts, c, b, q, v)] = acc
    out = [
        "### Paper 002, experiment 3: Reno or SACK, CBR (3,000-byte packets) from 4 s, Drop-Tail or RED on "
        "N2-N3; measured 4-10 s",
        "",
        f"TCP goodput (Mb/s) / timeouts / TCP drops; RED: means of {seeds} seeds, Drop-Tail: one run "
        "(deterministic). Mean N2-N3 queue (packets, 4-10 s) in the last columns. ns-2 `ns2` profile: RED in "
        "byte mode (ns-2.35's default: the average and the limit count bytes / 500, so a 3,000-byte CBR packet "
        "weighs 6); `matched`: RED in packets, as tcpsim.",
        "",
    ]
    rows = []
    for c in rates:
        for b in buffers:
            for v in variants:
                cells = []
                for s in sims:
                    dt, red = res[(s, c, b, "droptail", v)], res[(s, c, b, "red", v)]
                    cells.append(
                        f"DT {mean(dt['goodput']):.2f}/{mean(dt['timeouts']):.1f}/{mean(dt['drops']):.0f}, "
                        f"RED {mean(red['goodput']):.2f}/{mean(red['timeouts']):.1f}/{mean(red['drops']):.0f}"
                    )
                qs = [
                    f"{mean(res[(s, c, b, 'droptail', v)]['queue']):.0f} / {mean(res[(s, c, b, 'red', v)]['queue']):.0f}"
                    for s in sims
                ]
                rows.append([c, b, P002_NAMES[v], *cells, *qs])
    label = [lab(x) for x in sims]
    out += table(["CBR", "buffer", "variant", *label, *[f"queue DT/RED {x}" for x in label]], rows)

    def red_lower(s: str, c: int) -> tuple[int, int]:
        k = [
            mean(res[(s, c, b, "red", v)]["goodput"]) < mean(res[(s, c, b, "droptail", v)]["goodput"]) - 1e-6
            for b in buffers
            for v in variants
        ]
        return sum(k), len(k)

    def sack_red_worst(s: str, c: int) -> list[bool]:
        out_ = []
        for b in buffers:
            g = {(q, v): mean(res[(s, c, b, q, v)]["goodput"]) for q in ("droptail", "red") for v in variants}
            out_.append(min(g, key=g.get) == ("red", "sack"))
        return out_

    def red_latency(s: str, c: int) -> bool:
        return all(
            mean(res[(s, c, b, "red", v)]["queue"]) < mean(res[(s, c, b, "droptail", v)]["queue"])
            for b in buffers
            for v in variants
        )

    rows = []
    for c in rates:
        rl = {s: red_lower(s, c) for s in sims}
        rows.append(
            [
                f"CBR {c}: RED lowers TCP throughput more than Drop-Tail, Reno and SACK",
                *[f"{rl[s][0]} of {rl[s][1]}" for s in sims],
                whom_all([rl[p][0] == rl[p][1] for p in profiles], rl["tcpsim"][0] == rl["tcpsim"][1], profiles),
            ]
        )
        sw = {s: sack_red_worst(s, c) for s in sims}
        rows.append(
            [
                f"CBR {c}: SACK with RED has the lowest throughput (buffers 100, 300)",
                *[str(sw[s]) for s in sims],
                whom_all([all(sw[p]) for p in profiles], all(sw["tcpsim"]), profiles),
            ]
        )
        lt = {s: red_latency(s, c) for s in sims}
        rows.append(
            [
                f"CBR {c}: RED gives lower latency (mean queue)",
                *["holds" if lt[s] else "fails" for s in sims],
                whom_all([lt[p] for p in profiles], lt["tcpsim"], profiles),
            ]
        )
    out += ["**Experiment 3: the paper's claims**", ""]
    out += table(["claim", *label, "ns-2 agrees with"], rows)
    return out


def p002_probes(run: Runner, profiles: Sequence[str], seeds: int) -> list[str]:
    """Why ns-2 and tcpsim differ from the paper in experiments 1 and 3: the scenario's unknowns."""
    from services.presets.paper002 import congestion_scenario, ns2_red_queue, queuing_scenario

    out = ["### Paper 002: probes of the scenario's unknowns", ""]
    # 1. first drops: which guess moves them to 7 Mb/s?
    rates = (6, 6.5, 7, 7.5, 8, 8.5, 9)

    def tc_guess(v: str, c: float, kw: dict[str, Any]) -> dict[str, Any] | None:
        sc = congestion_scenario(v, c, int(kw.get("cbrsize", 3000)))
        if "udpsize" in kw:
            return None  # tcpsim's CBR cannot send a 3,000-byte message as three back-to-back packets
        if "window" in kw:
            sc["flows"][0]["tcp"]["max_window_pkts"] = kw["window"]
        for link in sc["topology"]["graph"]["links"]:
            link["delay_ms"] = float(kw.get("delay", link["delay_ms"]))
        if "qlimit" in kw:
            sc["topology"]["graph"]["links"][2]["queue"]["limit_pkts"] = kw["qlimit"]
        return sc

    guesses = (
        ("the preset (window 20, queue 50, 1 ms, CBR 3,000-byte packets)", {}),
        (
            "CBR through Agent/UDP's default packetSize_ 1000 (each 3,000-byte packet sent as 3 back to back)",
            {"udpsize": 1000},
        ),
        ("CBR of 1,000-byte packets, evenly spaced", {"cbrsize": 1000}),
        ("window_ 64", {"window": 64}),
        ("window_ 100000 (unbounded)", {"window": 100000}),
        ("link delay 10 ms", {"delay": 10}),
        ("queue 20 on N2-N3", {"qlimit": 20}),
    )
    rows = []
    for text, kw in guesses:
        cells = []
        for sim in ("ns2", "tcpsim"):
            for v in ("tahoe", "reno", "newreno-sbs"):
                first: Any = None
                for c in rates:
                    if sim == "ns2":
                        r = run.ns2("p002-probes", "paper002.tcl", v1=v, cbr=c, **(PROFILES[profiles[0]] | kw))
                        dropped = r["windows"][0]["tcp"][0]["bneck_drops"] > 0
                    else:
                        sc = tc_guess(v, c, kw)
                        if sc is None:
                            first = "n/a"
                            break
                        dropped = _tc_flow(run.tcpsim("p002-probes", sc), "tcp")["drops"] > 0
                    if dropped:
                        first = c
                        break
                cells.append(str(first) if first is not None else f"> {rates[-1]}")
        rows.append([text, *cells])
    out += [f"**First CBR rate (Mb/s) with TCP drops, rates {list(rates)}; ns-2 in its {profiles[0]} profile**", ""]
    out += table(
        ["scenario", "ns-2 Tahoe", "ns-2 Reno", "ns-2 NewReno", "tcpsim Tahoe", "tcpsim Reno", "tcpsim NewReno"], rows
    )
    # 2. NewReno under congestion on a fine grid (phase effects of the deterministic CBR)
    grid = [round(9.0 + 0.1 * i, 1) for i in range(11)]
    sims = [*profiles, *TC]
    g: dict[tuple[str, str], list[float]] = {}
    for v in ("tahoe", "reno", "newreno-sbs", "vegas"):
        for c in grid:
            for p in profiles:
                r = run.ns2("p002-probes", "paper002.tcl", v1=v, cbr=c, **PROFILES[p])
                g.setdefault((p, v), []).append(r["windows"][0]["tcp"][0]["goodput_bps"] / 1e6)
            for tsim in TC:
                t = _tc_flow(run.tcpsim("p002-probes", congestion_scenario(v, c, 3000), tsim), "tcp")
                g.setdefault((tsim, v), []).append(t["goodput_bps"] / 1e6)
    rows = []
    for s in sims:
        best = max(("tahoe", "reno", "newreno-sbs", "vegas"), key=lambda v: mean(g[(s, v)]))
        wins = {
            v: sum(
                1 for i in range(len(grid)) if max(("tahoe", "reno", "newreno-sbs"), key=lambda x: g[(s, x)][i]) == v
            )
            for v in ("tahoe", "reno", "newreno-sbs")
        }
        rows.append(
            [
                lab(s),
                *[f"{mean(g[(s, v)]):.3f} ± {hw95(g[(s, v)]):.3f}" for v in ("tahoe", "reno", "newreno-sbs", "vegas")],
                P002_NAMES[best],
                ", ".join(f"{P002_NAMES[v]} {n}" for v, n in wins.items()),
            ]
        )
    out += [
        f"**Goodput (Mb/s) at CBR {grid[0]}-{grid[-1]} Mb/s in steps of 0.1 (11 deterministic runs; ± 95 % over the "
        "rates)**; last column: how often each of Tahoe/Reno/NewReno is the best of the three",
        "",
    ]
    out += table(
        ["simulator", "Tahoe", "Reno", "NewReno", "Vegas", "highest mean", "best of the three, per rate"], rows
    )
    # 3. RED: ns-2's wait_ (spacing of early drops) against tcpsim, which has none
    rows = []
    for c in (6, 8, 10):
        for v in ("reno", "sack"):
            cells = []
            for p in profiles:
                for red_kw in ({"redbytes": 0, "redwait": 1}, {"redbytes": 0, "redwait": 0}):
                    gs, ts = [], []
                    for seed in range(1, seeds + 1):
                        r = run.ns2(
                            "p002-probes",
                            "paper002.tcl",
                            v1=v,
                            cbr=c,
                            cbrstart=4,
                            warm=4,
                            qtype="red",
                            qlimit=100,
                            seed=seed,
                            **(PROFILES[p] | red_kw),
                        )
                        t = r["windows"][1]["tcp"][0]
                        gs.append(t["goodput_bps"] / 1e6)
                        ts.append(t["timeouts"])
                    cells.append(f"{mean(gs):.2f} / {mean(ts):.1f}")
            for tsim in TC:
                gs, ts = [], []
                for seed in range(1, seeds + 1):
                    sc = queuing_scenario(ns2_red_queue(100), v, float(c), seed)
                    sc["warmup_s"] = 4.0
                    sc.pop("outputs", None)
                    t = _tc_flow(run.tcpsim("p002-probes", sc, tsim), "tcp")
                    gs.append(t["goodput_bps"] / 1e6)
                    ts.append(t["timeouts"])
                cells.append(f"{mean(gs):.2f} / {mean(ts):.1f}")
            r = run.ns2(
                "p002-probes",
                "paper002.tcl",
                v1=v,
                cbr=c,
                cbrstart=4,
                warm=4,
                qtype="droptail",
                qlimit=100,
                **PROFILES[profiles[0]],
            )
            rows.append([c, P002_NAMES[v], f"{r['windows'][1]['tcp'][0]['goodput_bps'] / 1e6:.2f}", *cells])
    out += [
        f"**RED 100 in packet mode: TCP goodput 4-10 s (Mb/s) / timeouts, {seeds} seeds; ns-2's TCP in each profile "
        "with RED's `wait_` 1 (ns-2's default) and 0; tcpsim both ways**",
        "",
    ]
    out += table(
        [
            "CBR",
            "variant",
            f"ns-2 Drop-Tail ({profiles[0]})",
            *[f"ns-2 {p} RED wait_ {w}" for p in profiles for w in (1, 0)],
            *[f"{lab(t)} RED" for t in TC],
        ],
        rows,
    )
    return out


# ---- paper 003 -----------------------------------------------------------------------------------

P003_NAMES = {
    "tahoe": "Tahoe",
    "reno": "Reno",
    "newreno-sbs": "NewReno",
    "sack": "SACK",
    "fack": "FACK",
    "fack-rampdown": "FACK+rampdown",
    "rate-halving": "Rate-Halving",
    "ssdr": "SSDR",
    "vegas": "Vegas",
    "pseudo-rate": "Pseudo-Rate",
}
NS2_003 = ("reno", "newreno-sbs", "sack", "fack", "rate-halving", "vegas")
TC_003 = ("reno", "newreno-sbs", "sack", "fack", "rate-halving", "ssdr", "vegas", "pseudo-rate")
LOSS_RECOVERY = ("reno", "newreno-sbs", "sack", "fack", "rate-halving", "ssdr")
SACK_OPTION = ("sack", "fack", "rate-halving")


def _p003_ns(profile: str) -> dict[str, Any]:
    return {k: v for k, v in PROFILES[profile].items() if k != "redbytes"}


def _p003_tc(
    groups: Sequence[tuple[str, str, int, float, Any]],
    *,
    duration: float,
    seed: int,
    buffer: int,
    err: float | None = None,
    warmup: float | None = None,
) -> dict[str, Any]:
    from services.presets.paper003 import _flow, fig4_topology

    topo = copy.deepcopy(fig4_topology(err))
    topo["dumbbell"]["bottleneck"]["queue"]["limit_pkts"] = buffer
    s: dict[str, Any] = {
        "name": "ns2-papers-003",
        "duration_s": duration,
        "seed": seed,
        "topology": topo,
        "flows": [_flow(n, v, c, a, st) for n, v, c, a, st in groups],
    }
    if warmup:
        s["warmup_s"] = warmup
    return s


def _groups_arg(groups: Sequence[tuple[str, str, int, float, Any]]) -> str:
    return ",".join(f"{n}/{v}/{c}/{a}/{'u' if st is None else st}" for n, v, c, a, st in groups)


def _goodputs(sim: str, r: dict[str, Any]) -> dict[str, list[float]]:
    """Goodput (kb/s) per connection, by group name."""
    out: dict[str, list[float]] = {}
    if sim in TC:
        for x in r["flows"]:
            out.setdefault(x["name"].rsplit("-", 1)[0], []).append(x["goodput_bps"] / 1e3)
    else:
        for x in r["conns"]:
            out.setdefault(x["group"], []).append(x["goodput_bps"] / 1e3)
    return out


def _run003(
    run: Runner,
    log: str,
    sim: str,
    groups: Sequence[tuple[str, str, int, float, Any]],
    *,
    duration: float,
    seed: int,
    buffer: int,
    err: float | None = None,
    warmup: float | None = None,
) -> tuple[dict[str, Any], dict[str, list[float]]]:
    if sim in TC:
        r = run.tcpsim(log, _p003_tc(groups, duration=duration, seed=seed, buffer=buffer, err=err, warmup=warmup), sim)
    else:
        r = run.ns2(
            log,
            "paper003.tcl",
            groups=_groups_arg(groups),
            err=err or 0,
            dur=duration,
            warm=warmup or 0,
            seed=seed,
            queue=buffer,
            **_p003_ns(sim),
        )
    return r, _goodputs(sim, r)


def _timeouts(sim: str, r: dict[str, Any]) -> float:
    return mean(x["timeouts"] for x in (r["flows"] if sim in TC else r["conns"]))


def p003_fig5(run: Runner, profiles: Sequence[str], seeds: int, duration: float) -> list[str]:
    rates = (0.0, 0.001, 0.005, 0.01, 0.02, 0.05)
    sims = [*profiles, *TC]
    variants = {p: ("tahoe", *NS2_003, "fack-rampdown") for p in profiles} | {t: ("tahoe", *TC_003) for t in TC}
    mt: dict[tuple[str, str, float], list[float]] = {}
    to: dict[tuple[str, str, float], list[float]] = {}
    lost: dict[tuple[str, float], list[float]] = {}  # realised link-error rate: error drops / data packets sent
    for s in sims:
        for v in variants[s]:
            for e in rates:
                for seed in range(1, seeds + 1):
                    r, g = _run003(
                        run,
                        "p003-fig5",
                        s,
                        [("tcp", v, 2, 20.0, None)],
                        duration=duration,
                        seed=seed,
                        buffer=10,
                        err=e if e > 0 else None,
                    )
                    mt.setdefault((s, v, e), []).append(mean(g["tcp"]))
                    to.setdefault((s, v, e), []).append(_timeouts(s, r))
                    if s in TC:
                        drops = _tc_link(r, "bottleneck")["loss_drops"]
                        sent = sum(x["packets_sent"] for x in r["flows"])
                    else:
                        drops, sent = r["error_drops"], sum(x["data_pkts_sent"] for x in r["conns"])
                    lost.setdefault((s, e), []).append(drops / sent if sent else 0.0)
    label = {x: lab(x) for x in sims}
    all_v = ("tahoe", *TC_003, "fack-rampdown")
    out = [
        f"### Paper 003, Fig. 5: MT (kb/s per connection) against the link error rate; two connections, "
        f"{duration:g} s, {seeds} seeds",
        "",
        "Mean goodput per connection (± 95 % over seeds), timeouts per connection in brackets. ns-2 has no SSDR "
        "and no Pseudo-Rate; Rate-Halving is ns-2's `Agent/TCP/SackRH` (PSC's rate-halving), FACK+rampdown is "
        "`Agent/TCP/Fack` with `rampdown_` (not in the paper; a second rate-halving-like FACK). ns-2's "
        "`Agent/TCP/Fack` does not count its timeouts (`FackTcpAgent::timeout` never increments `nrexmit_`).",
        "",
    ]
    for e in rates:
        rows = []
        for v in all_v:
            cells = []
            for s in sims:
                if v not in variants[s]:
                    cells.append("—")
                    continue
                xs = mt[(s, v, e)]
                cells.append(f"{mean(xs):.1f} ± {hw95(xs):.1f} ({mean(to[(s, v, e)]):.0f})")
            rows.append([P003_NAMES[v], *cells])
        out += [f"**error rate {e:g}**", ""] + table(["algorithm", *[label[s] for s in sims]], rows)

    out += ["**Realised link-error rate** (error drops / data packets sent, mean over algorithms and seeds)", ""]
    out += table(
        ["error rate", *[label[s] for s in sims]],
        [[f"{e:g}", *[f"{mean(lost[(s, e)]):.5f}" for s in sims]] for e in rates[1:]],
    )

    # ranking over the non-zero error rates, per seed
    avg = {
        (s, v): [mean(mt[(s, v, e)][i] for e in rates if e > 0) for i in range(seeds)]
        for s in sims
        for v in variants[s]
    }
    paper_groups = [["vegas"], ["pseudo-rate", "rate-halving"], ["ssdr", "fack", "sack"], ["newreno-sbs"], ["reno"]]
    rank_of = {v: i for i, g in enumerate(paper_groups) for v in g}
    rows = []
    for name, s, vset in [
        *[(label[x], x, variants[x]) for x in sims],
        *[(f"{lab(t)}, ns-2's algorithms only", t, NS2_003) for t in TC],
    ]:
        vs = [v for v in vset if v in rank_of]
        order = sorted(vs, key=lambda v: -mean(avg[(s, v)]))
        ok = tot = 0
        wrong = []
        for i, a in enumerate(vs):
            for b in vs[i + 1 :]:
                if rank_of[a] == rank_of[b]:
                    continue
                hi, lo = (a, b) if rank_of[a] < rank_of[b] else (b, a)
                tot += 1
                if mean(avg[(s, hi)]) > mean(avg[(s, lo)]):
                    ok += 1
                else:
                    wrong.append(f"{P003_NAMES[lo]} > {P003_NAMES[hi]}")
        rows.append(
            [
                name,
                " > ".join(f"{P003_NAMES[v]} {mean(avg[(s, v)]):.0f}" for v in order),
                f"{ok} of {tot}",
                "; ".join(wrong) or "—",
            ]
        )
    out += [
        "**Fig. 5 ranking** (MT averaged over the non-zero error rates; the paper: Vegas > Pseudo-Rate ≈ "
        "Rate-Halving > SSDR ≈ FACK ≈ SACK > NewReno > Reno; pairs counted only between the paper's groups, "
        "among the algorithms each simulator has)",
        "",
    ]
    out += table(["simulator", "order (kb/s)", "pairs in the paper's order", "pairs the other way"], rows)
    rows = []
    for s in sims:
        spreads = []
        for e in rates[1:]:
            ms = [mean(mt[(s, v, e)]) for v in variants[s] if v != "tahoe" and v != "fack-rampdown"]
            spreads.append(f"{(max(ms) - min(ms)) / max(ms) * 100:.0f} %")
        rows.append([label[s], ", ".join(spreads)])
    out += [
        "**Gaps widen with the error rate** ((best − worst)/best at 0.1, 0.5, 1, 2, 5 %; Tahoe left out as "
        "the paper does)",
        "",
    ]
    out += table(["simulator", "spread"], rows)
    # SSDR against ns-2's loss-recovery algorithms at the same scenario
    rows = []
    for e in rates[1:]:
        rows.append(
            [
                f"{e:g}",
                *[f(mean(mt[(t, "ssdr", e)]), 1) for t in TC],
                *[
                    f"{f(mean(mt[(s, 'reno', e)]), 1)} / {f(mean(mt[(s, 'newreno-sbs', e)]), 1)} / "
                    f"{f(mean(mt[(s, 'sack', e)]), 1)}"
                    for s in sims
                ],
            ]
        )
    out += [
        "**SSDR (tcpsim only) beside Reno / NewReno / SACK** in each simulator (kb/s): whether tcpsim's Reno "
        "family matches ns-2's, so that SSDR's deficit is SSDR's own",
        "",
    ]
    out += table(
        ["error rate", *[f"{lab(t)} SSDR" for t in TC], *[f"{label[s]} Reno / NewReno / SACK" for s in sims]], rows
    )
    return out


def _uf(short: Sequence[float], long: Sequence[float]) -> float:
    allc = [*short, *long]
    return abs(mean(long) - mean(short)) / mean(allc) * 100 if mean(allc) > 0 else float("nan")


def claim_row(
    claim: str, verdicts: dict[str, tuple[bool, str]], sims: Sequence[str], profiles: Sequence[str]
) -> list[str]:
    """One claim of a paper-003 table: holds or fails (with its evidence) in each simulator and
    in tcpsim on ns-2's algorithms only (`common`), and whom ns-2 agrees with."""
    cells = [("holds" if verdicts[s][0] else "fails") + f" ({verdicts[s][1]})" for s in [*sims, "common"]]
    return [claim, *cells, whom_all([verdicts[p][0] for p in profiles], verdicts["common"][0], profiles)]


def claims_table(title: str, sim_labels: Sequence[str], rows: list[list[str]]) -> list[str]:
    """A paper-003 table's claims, one `claim_row` each."""
    return [
        f"**{title}: the paper's claims**",
        "",
        *table(
            [
                "claim",
                *sim_labels,
                "tcpsim (ns2 profile), ns-2's algorithms only",
                "ns-2 agrees with (vs tcpsim, ns2 profile, on ns-2's algorithms)",
            ],
            rows,
        ),
    ]


def p003_table2(run: Runner, profiles: Sequence[str], seeds: int) -> list[str]:
    from services.presets.published import read_json

    paper = read_json("003_tables.json")["table2_distinct_delays_50s"]
    pname = {
        v: k
        for k, v in {
            "Reno": "reno",
            "NewReno": "newreno-sbs",
            "SACK": "sack",
            "FACK": "fack",
            "Rate-Halving": "rate-halving",
            "SSDR": "ssdr",
            "Vegas": "vegas",
            "Pseudo-Rate": "pseudo-rate",
        }.items()
    }
    sims = [*profiles, *TC]
    variants = {p: NS2_003 for p in profiles} | {t: TC_003 for t in TC}
    label = {x: lab(x) for x in sims}
    res: dict[tuple[str, int, int, str], dict[str, list[float]]] = {}
    for buf in (10, 50):
        for n in (2, 4):
            for s in sims:
                for v in variants[s]:
                    acc: dict[str, list[float]] = {"short": [], "long": [], "uf": []}
                    for seed in range(1, seeds + 1):
                        _, g = _run003(
                            run,
                            "p003-table2",
                            s,
                            [("short", v, n // 2, 0.4, None), ("long", v, n // 2, 40.0, None)],
                            duration=50.0,
                            seed=seed,
                            buffer=buf,
                        )
                        acc["short"].append(mean(g["short"]))
                        acc["long"].append(mean(g["long"]))
                        acc["uf"].append(_uf(g["short"], g["long"]))
                    res[(s, buf, n, v)] = acc
    out = [
        f"### Paper 003, Table 2: short (0.4 ms access) and long (40 ms) connections, 50 s, {seeds} seeds",
        "",
        "Short / long goodput (kb/s per connection) and UF (%, mean over seeds ± 95 %); the paper's UF first.",
        "",
    ]
    for buf in (10, 50):
        for n in (2, 4):
            rows = []
            for v in TC_003:
                cells = []
                for s in sims:
                    if v not in variants[s]:
                        cells.append("—")
                        continue
                    a = res[(s, buf, n, v)]
                    cells.append(
                        f"{mean(a['short']):.0f} / {mean(a['long']):.0f}, UF {mean(a['uf']):.0f} ± {hw95(a['uf']):.0f}"
                    )
                rows.append([P003_NAMES[v], paper[f"n{n}"][pname[v]][2], *cells])
            out += [f"**buffer {buf}, n = {n}**", ""] + table(
                ["algorithm", "paper UF", *[label[s] for s in sims]], rows
            )

    def claims(s: str, vs: Sequence[str], buf: int) -> dict[str, tuple[bool, str]]:
        lr = [v for v in LOSS_RECOVERY if v in vs]
        la = [v for v in ("vegas", "pseudo-rate") if v in vs]
        c: dict[str, tuple[bool, str]] = {}
        biased = [
            (n, v) for n in (2, 4) for v in vs if mean(res[(s, buf, n, v)]["long"]) < mean(res[(s, buf, n, v)]["short"])
        ]
        c["Every algorithm is biased against long connections"] = (
            len(biased) == 2 * len(vs),
            f"{len(biased)} of {2 * len(vs)}",
        )
        pairs = [
            (n, a, b)
            for n in (2, 4)
            for a in SACK_OPTION
            for b in ("reno", "newreno-sbs", "ssdr")
            if a in vs and b in vs
        ]
        fair = [p for p in pairs if mean(res[(s, buf, p[0], p[1])]["uf"]) < mean(res[(s, buf, p[0], p[2])]["uf"])]
        c["SACK-option algorithms are fairer than the others"] = (
            len(fair) == len(pairs),
            f"{len(fair)} of {len(pairs)} pairs",
        )
        pairs = [(n, a, b) for n in (2, 4) for a in la for b in lr]
        fair = [p for p in pairs if mean(res[(s, buf, p[0], p[1])]["uf"]) < mean(res[(s, buf, p[0], p[2])]["uf"])]
        c["Loss-avoidance (Vegas, Pseudo-Rate) fairer than loss-recovery"] = (
            len(fair) == len(pairs),
            f"{len(fair)} of {len(pairs)} pairs",
        )
        return c

    rows = []
    for buf in (10, 50):
        cl = {s: claims(s, variants[s], buf) for s in sims} | {"common": claims("tcpsim", NS2_003, buf)}
        for k in cl["tcpsim"]:
            rows.append(claim_row(f"buffer {buf}: {k}", {s: cl[s][k] for s in cl}, sims, profiles))
    out += claims_table("Table 2", [label[s] for s in sims], rows)
    return out


def p003_table3(run: Runner, profiles: Sequence[str], seeds: int) -> list[str]:
    from services.presets.published import read_json

    paper = read_json("003_tables.json")["table3_new_arrival_at_10s_mt_10_to_50s"]
    pname = {
        "reno": "Reno",
        "newreno-sbs": "NewReno",
        "sack": "SACK",
        "fack": "FACK",
        "rate-halving": "Rate-Halving",
        "ssdr": "SSDR",
        "vegas": "Vegas",
        "pseudo-rate": "Pseudo-Rate",
    }
    sims = [*profiles, *TC]
    variants = {p: NS2_003 for p in profiles} | {t: TC_003 for t in TC}
    label = {x: lab(x) for x in sims}
    ratio: dict[tuple[str, int, int, str], list[float]] = {}
    for buf in (10, 50):
        for n in (1, 2, 3):
            for s in sims:
                for v in variants[s]:
                    for seed in range(1, seeds + 1):
                        _, g = _run003(
                            run,
                            "p003-table3",
                            s,
                            [("old", v, n, 20.0, None), ("new", v, 1, 20.0, 10.0)],
                            duration=50.0,
                            seed=seed,
                            buffer=buf,
                            warmup=10.0,
                        )
                        o = mean(g["old"])
                        ratio.setdefault((s, buf, n, v), []).append(mean(g["new"]) / o if o > 0 else float("nan"))

    def pr(v: str, n: int) -> str:
        row = paper[f"n{n}"].get(pname[v])
        return f"{row[0] / row[1]:.2f}" if row else "—"

    out = [
        f"### Paper 003, Table 3: a new connection at 10 s among n old ones; new/old goodput 10-50 s, {seeds} seeds",
        "",
    ]
    for buf in (10, 50):
        rows = []
        for v in TC_003:
            for n in (1, 2, 3):
                rows.append(
                    [
                        P003_NAMES[v],
                        n,
                        pr(v, n),
                        *[
                            f"{mean(ratio[(s, buf, n, v)]):.2f} ± {hw95(ratio[(s, buf, n, v)]):.2f}"
                            if v in variants[s]
                            else "—"
                            for s in sims
                        ],
                    ]
                )
        out += [f"**buffer {buf}**: new/old", ""] + table(["algorithm", "n", "paper", *[label[s] for s in sims]], rows)

    rows = []
    for buf in (10, 50):

        def lr_ok(s: str, vs: Sequence[str]) -> tuple[bool, str]:
            xs = [mean(ratio[(s, buf, n, v)]) for n in (1, 2, 3) for v in LOSS_RECOVERY if v in vs]
            return all(0.65 <= x <= 1.1 for x in xs), f"{min(xs):.2f}-{max(xs):.2f}"

        def vegas_grows(s: str, vs: Sequence[str]) -> tuple[bool, str]:
            xs = [mean(ratio[(s, buf, n, "vegas")]) for n in (1, 2, 3)]
            return xs[0] < xs[1] < xs[2], ", ".join(f"{x:.2f}" for x in xs)

        for k, fn in (
            ("Loss-recovery: the new connection gets about the old ones' bandwidth (paper 0.70-1.02)", lr_ok),
            ("Vegas: the new connection does better as n grows", vegas_grows),
        ):
            cl = {s: fn(s, variants[s]) for s in sims} | {"common": fn("tcpsim", NS2_003)}
            rows.append(claim_row(f"buffer {buf}: {k}", cl, sims, profiles))
    out += claims_table("Table 3", [label[s] for s in sims], rows)
    return out


def p003_table4(run: Runner, profiles: Sequence[str], seeds: int) -> list[str]:
    from services.presets.published import read_json

    paper = read_json("003_tables.json")["table4_interoperating_with_reno"]
    pname = {
        "newreno-sbs": "NewReno",
        "sack": "SACK",
        "fack": "FACK",
        "rate-halving": "Rate-Halving",
        "ssdr": "SSDR",
        "vegas": "Vegas",
        "pseudo-rate": "Pseudo-Rate",
    }
    sims = [*profiles, *TC]
    others = {p: tuple(v for v in NS2_003 if v != "reno") for p in profiles} | {
        t: tuple(v for v in TC_003 if v != "reno") for t in TC
    }
    label = {x: lab(x) for x in sims}
    ratio: dict[tuple[str, int, int, str], list[float]] = {}
    for buf in (10, 50):
        for n in (2, 4):
            for s in sims:
                for v in others[s]:
                    for seed in range(1, seeds + 1):
                        _, g = _run003(
                            run,
                            "p003-table4",
                            s,
                            [("reno", "reno", n // 2, 20.0, None), ("other", v, n // 2, 20.0, None)],
                            duration=50.0,
                            seed=seed,
                            buffer=buf,
                        )
                        rn = mean(g["reno"])
                        ratio.setdefault((s, buf, n, v), []).append(mean(g["other"]) / rn if rn > 0 else float("nan"))

    def pr(v: str, n: int) -> str:
        row = paper[f"n{n}"].get(pname[v])
        return f"{row[1] / row[0]:.2f}" if row else "—"

    out = [
        f"### Paper 003, Table 4: each algorithm against Reno (n/2 of each), 50 s, {seeds} seeds; other/Reno goodput",
        "",
    ]
    for buf in (10, 50):
        rows = [
            [
                P003_NAMES[v],
                n,
                pr(v, n),
                *[
                    f"{mean(ratio[(s, buf, n, v)]):.2f} ± {hw95(ratio[(s, buf, n, v)]):.2f}" if v in others[s] else "—"
                    for s in sims
                ],
            ]
            for v in others["tcpsim"]
            for n in (2, 4)
        ]
        out += [f"**buffer {buf}**", ""] + table(["algorithm", "n", "paper", *[label[s] for s in sims]], rows)
    rows = []
    for buf in (10, 50):

        def robbed(s: str, vs: Sequence[str]) -> tuple[bool, str]:
            xs = [mean(ratio[(s, buf, n, v)]) for n in (2, 4) for v in ("vegas", "pseudo-rate") if v in vs]
            return all(x < 1 for x in xs), ", ".join(f"{x:.2f}" for x in xs)

        def gain(s: str, vs: Sequence[str]) -> tuple[bool, str]:
            ps = [(n, v) for n in (2, 4) for v in ("newreno-sbs", "sack", "fack", "rate-halving", "ssdr") if v in vs]
            ok = [p for p in ps if mean(ratio[(s, buf, p[0], p[1])]) > 1.0]
            return len(ok) == len(ps), f"{len(ok)} of {len(ps)}"

        for k, fn in (
            ("Reno robs the loss-avoidance algorithms (other/Reno < 1)", robbed),
            ("Reno-derived loss-recovery algorithms gain more than Reno (other/Reno > 1)", gain),
        ):
            cl = {s: fn(s, others[s]) for s in sims} | {"common": fn("tcpsim", others[profiles[0]])}
            rows.append(claim_row(f"buffer {buf}: {k}", cl, sims, profiles))
    out += claims_table("Table 4", [label[s] for s in sims], rows)
    return out


def ns2_ways() -> list[tuple[str, Any]]:
    """tcpsim's `ns2` profile settings that differ from its RFC defaults, each with its RFC value
    (read from the core, so a new setting is bisected too)."""
    import tcpsim  # noqa: PLC0415  (the project's .venv)

    bare = {
        "duration_s": 1,
        "topology": {"dumbbell": {"bottleneck": {"rate_mbps": 1, "delay_ms": 1}}},
        "flows": [{"name": "f", "rtt_ms": 10}],
    }
    rfc = tcpsim.normalize(bare)["flows"][0]["tcp"]
    return [
        (k, rfc[k])
        for k, v in tcpsim.TCP_PROFILES["ns2"].items()
        if k in rfc and rfc[k] != v and k not in ("max_window_pkts",)
    ]


def p003_profile_bisect(run: Runner, seeds: int, duration: float) -> list[str]:
    """Fig. 5's link errors: which of the `ns2` profile's settings moves tcpsim away from ns-2."""
    rates = (0.01, 0.02, 0.05)
    variants = ("reno", "newreno-sbs", "fack", "rate-halving")
    configs: list[tuple[str, dict[str, Any] | None]] = [("tcpsim ns2 profile", {})]
    configs += [(f"ns2 profile, {k} {json.dumps(v)}", {k: v}) for k, v in ns2_ways()]
    configs += [("tcpsim RFC defaults", None)]
    mt: dict[tuple[str, str, float], list[float]] = {}
    for v in variants:
        for e in rates:
            for seed in range(1, seeds + 1):
                r = run.ns2(
                    "p003-bisect",
                    "paper003.tcl",
                    groups=_groups_arg([("tcp", v, 2, 20.0, None)]),
                    err=e,
                    dur=duration,
                    seed=seed,
                    queue=10,
                    **_p003_ns("ns2"),
                )
                mt.setdefault(("ns-2 (ns2)", v, e), []).append(mean(_goodputs("ns2", r)["tcp"]))
                for name, over in configs:
                    sc = _p003_tc([("tcp", v, 2, 20.0, None)], duration=duration, seed=seed, buffer=10, err=e)
                    if over is None:
                        r = run.tcpsim("p003-bisect", sc, "tcpsim-rfc")
                    else:
                        sc["flows"][0]["tcp"].update(over)
                        r = run.tcpsim("p003-bisect", sc, "tcpsim")
                    mt.setdefault((name, v, e), []).append(mean(_goodputs("tcpsim", r)["tcp"]))
    rows = []
    for name in ["ns-2 (ns2)", *[c[0] for c in configs]]:
        rows.append([name, *[f"{mean(mt[(name, v, e)]):.1f}" for v in variants for e in rates]])
    out = [
        f"### Paper 003, Fig. 5 scenario: which `ns2`-profile setting moves tcpsim from ns-2 ({duration:g} s, "
        f"{seeds} seeds; MT kb/s per connection)",
        "",
        "Each row but the first and last is tcpsim's `ns2` profile with one of its ns-2 settings set back to "
        "tcpsim's RFC default.",
        "",
    ]
    out += table(["configuration", *[f"{P003_NAMES[v]} {e * 100:g} %" for v in variants for e in rates]], rows)
    return out


# ---- main ----------------------------------------------------------------------------------------


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", nargs="*", choices=EXPERIMENTS, help="experiments to run (default: all)")
    ap.add_argument("--profiles", default="ns2,matched", help="ns-2 profiles, comma list of ns2, matched")
    ap.add_argument("--seeds", type=int, default=10, help="seeds for paper 003's tables (tcpsim's reproduction: 10)")
    ap.add_argument("--red-seeds", type=int, default=5, help="seeds for paper 002's RED runs (as tcpsim's: 5)")
    ap.add_argument("--fig5-seeds", type=int, default=3, help="seeds for paper 003's Fig. 5 (tcpsim's: 5)")
    ap.add_argument("--fig5-dur", type=float, default=1000.0, help="Fig. 5 duration, s (the paper: 1000)")
    ap.add_argument(
        "--out", type=Path, default=Path("/tmp/ns2papers/raw"), help="directory for raw JSON lines (appended to)"
    )
    ap.add_argument("--markdown", type=Path, help="also write the Markdown here")
    ap.add_argument("--ns", default=shutil.which("ns") or "/usr/bin/ns", help="ns-2 binary")
    args = ap.parse_args()
    try:
        os.nice(10)
    except OSError:
        pass
    profiles = [p for p in args.profiles.split(",") if p]
    for p in profiles:
        if p not in PROFILES:
            ap.error(f"unknown profile {p}")
    run = Runner(args.out, args.ns)
    todo: dict[str, Callable[[], list[str]]] = {
        "p002-exp1": lambda: p002_exp1(run, profiles),
        "p002-exp2": lambda: p002_exp2(run, profiles),
        "p002-exp3": lambda: p002_exp3(run, profiles, args.red_seeds),
        "p002-probes": lambda: p002_probes(run, profiles, args.red_seeds),
        "p003-fig5": lambda: p003_fig5(run, profiles, args.fig5_seeds, args.fig5_dur),
        "p003-table2": lambda: p003_table2(run, profiles, args.seeds),
        "p003-table3": lambda: p003_table3(run, profiles, args.seeds),
        "p003-table4": lambda: p003_table4(run, profiles, args.seeds),
        "p003-bisect": lambda: p003_profile_bisect(run, args.fig5_seeds, args.fig5_dur),
    }
    lines: list[str] = []
    started = time.perf_counter()
    for key in args.only or EXPERIMENTS:
        t = time.perf_counter()
        part = todo[key]()
        part.append(f"_{key}: {time.perf_counter() - t:.0f} s wall_")
        part.append("")
        print("\n".join(part), flush=True)
        lines += part
    tail = (
        f"_total {time.perf_counter() - started:.0f} s: ns-2 {run.ns_runs} runs, {run.ns_wall:.0f} s (process "
        f"wall, niced); tcpsim {run.tc_runs} runs, {run.tc_wall:.0f} s_"
    )
    print(tail)
    lines.append(tail)
    if args.markdown:
        args.markdown.parent.mkdir(parents=True, exist_ok=True)
        args.markdown.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
