#!/usr/bin/env python3
"""Paper 002's three experiments on tcplab's core, beside the paper's numbers and conclusions.

Runs the paper 002 presets directly through `tcpsim.run` (their own scenarios, built with
`services.presets.build_scenario` and overrides), prints our numbers beside the paper's, and
judges each of the paper's conclusions (`published.values["conclusions"]` of the presets):

1. Experiment 1 (§3): Tahoe, Reno, NewReno, Vegas against CBR of 1-10 Mb/s (3,000-byte
   packets), and at 2 Mb/s with packets of 500-8,000 bytes.
2. Experiment 2 (§4): the pairs Reno/Reno, NewReno/Reno, Vegas/Vegas, NewReno/Vegas at low
   (1 Mb/s, 1,000 B) and high (10 Mb/s, 10,000 B) congestion.
3. Experiment 3 (§5): Reno and SACK through Drop-Tail and RED of 100 and 300 packets, CBR from
   4 s at 6, 8 (the preset) and 10 Mb/s; RED over `--seeds` seeds.

Throughput is the TCP flow's goodput (distinct payload delivered per second), in Mb/s and in
MB/s, the unit the paper's numbers fit. Latency is the mean one-way delay of a flow's packets,
derived from the result (the core reports no per-packet delay): per link on the flow's path,
propagation + transmission + the mean wait in its queue (Little's law: mean queue / packet
rate).

    .venv/bin/python bench/paper002.py [--seeds 5] [--markdown bench-results/paper002.md]

A few seconds of wall time.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import tcpsim

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from services.presets import get_preset  # noqa: E402
from services.scenarios import validate_scenario  # noqa: E402

PATHS = {"tcp": ("n1-n2", "n2-n3", "n3-n4"), "first": ("n1-n2", "n2-n3", "n3-n4"),
         "second": ("n5-n2", "n2-n3", "n3-n6"), "cbr": ("n2-n3",)}
"""Each flow's links (the static routes of the six-node graph)."""
EXP1_VARIANTS = {"Tahoe": "tahoe", "Reno": "reno", "NewReno": "newreno-sbs", "Vegas": "vegas"}
PAIRS = (("Reno", "Reno"), ("NewReno", "Reno"), ("Vegas", "Vegas"), ("NewReno", "Vegas"))
CORE = {"Reno": "reno", "NewReno": "newreno-sbs", "Vegas": "vegas", "SACK": "sack", "Tahoe": "tahoe"}


def run(preset: str, overrides: dict[str, Any]) -> dict[str, Any]:
    scenario = get_preset(preset).build(overrides)
    scenario.pop("outputs", None)
    _, canonical = validate_scenario(scenario)
    return tcpsim.run(canonical)


def latency_s(result: dict[str, Any], scenario_links: dict[str, dict[str, Any]], flow: str, packet_bytes: int) -> float:
    """Mean one-way delay of `flow`'s packets: per link, propagation + transmission + the mean
    wait in its queue (Little: mean packets waiting / packets per second through the link)."""
    span = result["measured_to_s"] - result["measured_from_s"]
    links = {link["name"]: link for link in result["links"]}
    total = 0.0
    for name in PATHS[flow]:
        link, spec = links[name], scenario_links[name]
        rate_pps = link["packets"] / span if span > 0 else 0.0
        wait = link["mean_queue_pkts"] / rate_pps if rate_pps > 0 else 0.0
        total += spec["delay_ms"] / 1000 + packet_bytes * 8 / link["rate_bps"] + wait
    return total


def flow_of(result: dict[str, Any], name: str) -> dict[str, Any]:
    return next(f for f in result["flows"] if f["name"] == name)


def links_of(preset: str) -> dict[str, dict[str, Any]]:
    return {link["name"]: link for link in get_preset(preset).scenario["topology"]["graph"]["links"]}


def mbps(bps: float) -> float:
    return bps / 1e6


def mbytes(bps: float) -> float:
    return bps / 8e6


# ---- experiment 1 ---------------------------------------------------------------------------


def experiment1(out: list[str]) -> list[tuple[str, str, str, str]]:
    preset = "paper002-exp1-congestion"
    links = links_of(preset)
    published = get_preset(preset).published.values
    rates = list(range(1, 11))
    data: dict[str, dict[int, dict[str, float]]] = {}
    for paper, core in EXP1_VARIANTS.items():
        data[paper] = {}
        for rate in rates:
            r = run(preset, {"flows[0].variant": core, "flows[1].app.rate_mbps": float(rate)})
            tcp = flow_of(r, "tcp")
            data[paper][rate] = {"goodput": tcp["goodput_bps"], "drops": tcp["drops"], "loss_rate": tcp["loss_rate"],
                                 "latency": latency_s(r, links, "tcp", 1040), "timeouts": tcp["timeouts"]}
    out += ["**Experiment 1: TCP goodput (Mb/s) against the CBR rate (3,000-byte packets)**", "",
            "| CBR Mb/s | " + " | ".join(EXP1_VARIANTS) + " |", "|---" * (len(EXP1_VARIANTS) + 1) + "|"]
    for rate in rates:
        out.append(f"| {rate} | " + " | ".join(f"{mbps(data[v][rate]['goodput']):.2f}" for v in EXP1_VARIANTS) + " |")
    out += ["", "**Experiment 1: TCP segments dropped / latency (ms) against the CBR rate**", "",
            "| CBR Mb/s | " + " | ".join(EXP1_VARIANTS) + " |", "|---" * (len(EXP1_VARIANTS) + 1) + "|"]
    for rate in rates:
        out.append(f"| {rate} | " + " | ".join(
            f"{data[v][rate]['drops']} / {data[v][rate]['latency'] * 1e3:.1f}" for v in EXP1_VARIANTS) + " |")

    # At 2 Mb/s over packet sizes (§3's first part).
    sizes = [500, 1000, 2000, 4000, 8000]
    at2: dict[str, dict[int, dict[str, float]]] = {}
    for paper, core in EXP1_VARIANTS.items():
        at2[paper] = {}
        for size in sizes:
            r = run(preset, {"flows[0].variant": core, "flows[1].app.rate_mbps": 2.0, "flows[1].app.packet_bytes": size})
            tcp = flow_of(r, "tcp")
            at2[paper][size] = {"goodput": tcp["goodput_bps"], "drops": tcp["drops"],
                                "latency": latency_s(r, links, "tcp", 1040)}
    pub = published["at_cbr_2mbps"]
    out += ["", "**Experiment 1 at CBR 2 Mb/s, packets of 500-8,000 bytes** (means over the sizes; paper's "
            "throughput as printed, \"Mbps\")", "",
            "| variant | paper throughput | ours MB/s | ours Mb/s | paper latency (s) | ours latency (s) | paper drops | ours drops |",
            "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for v in EXP1_VARIANTS:
        g = statistics.fmean(at2[v][s]["goodput"] for s in sizes)
        lat = statistics.fmean(at2[v][s]["latency"] for s in sizes)
        drops = sum(at2[v][s]["drops"] for s in sizes)
        out.append(f"| {v} | {pub['throughput'][v]} | {mbytes(g):.3f} | {mbps(g):.2f} | {pub['latency_s'][v]} | "
                   f"{lat:.4f} | {pub['drops'][v]} | {drops} |")
    first = {v: next((rate for rate in rates if data[v][rate]["drops"] > 0), None) for v in EXP1_VARIANTS}
    out += ["", "| first CBR rate with TCP drops (Mb/s) | " + " | ".join(EXP1_VARIANTS) + " |",
            "|---" * (len(EXP1_VARIANTS) + 1) + "|",
            "| paper | " + " | ".join(str(published["first_drops_at_cbr_mbps"].get(v, "never")) for v in EXP1_VARIANTS) + " |",
            "| ours | " + " | ".join(str(first[v] or "never") for v in EXP1_VARIANTS) + " |", ""]

    verdicts = []
    vegas_drops = sum(data["Vegas"][r]["drops"] for r in rates)
    others_first = {v: first[v] for v in ("Tahoe", "Reno", "NewReno")}
    ok = vegas_drops == 0 and all(f == 7 for f in others_first.values())
    verdicts.append(("exp1-vegas-no-drops", f"Vegas drops {vegas_drops} in all; first drops of the others at "
                     + ", ".join(f"{v} {f}" for v, f in others_first.items()),
                     "agree" if ok else ("partly: Vegas never drops" if vegas_drops == 0 else "disagree"), ""))
    lowest = [r for r in rates if data["Vegas"][r]["goodput"] < min(data[v][r]["goodput"] for v in ("Tahoe", "Reno", "NewReno"))]
    verdicts.append(("exp1-vegas-lower-throughput", f"Vegas lowest at {len(lowest)} of 10 CBR rates ({lowest})",
                     "agree" if len(lowest) >= 8 else ("partly" if lowest else "disagree"), ""))
    lat = {v: statistics.fmean(at2[v][s]["latency"] for s in sizes) for v in EXP1_VARIANTS}
    verdicts.append(("exp1-vegas-lower-latency", ", ".join(f"{v} {x * 1e3:.1f} ms" for v, x in lat.items()) + " at 2 Mb/s",
                     "agree" if lat["Vegas"] < min(lat[v] for v in ("Tahoe", "Reno", "NewReno")) else "disagree", ""))
    congested = [r for r in rates if any(data[v][r]["drops"] for v in EXP1_VARIANTS)]
    mean_cong = {v: statistics.fmean(data[v][r]["goodput"] for r in congested) if congested else 0.0 for v in EXP1_VARIANTS}
    best = max(mean_cong, key=lambda v: mean_cong[v])
    verdicts.append(("exp1-newreno-highest-throughput",
                     "mean goodput at the CBR rates with drops " + str(congested) + ": "
                     + ", ".join(f"{v} {mbps(x):.3f}" for v, x in mean_cong.items()) + " Mb/s",
                     "agree" if best == "NewReno" and congested else ("no congestion losses" if not congested else "disagree"), ""))
    return verdicts


# ---- experiment 2 ---------------------------------------------------------------------------


def experiment2(out: list[str]) -> list[tuple[str, str, str, str]]:
    results: dict[str, dict[tuple[str, str], dict[str, float]]] = {}
    for level in ("low", "high"):
        preset = f"paper002-exp2-fairness-{level}"
        pub = {(p["first"], p["second"]): p for p in get_preset(preset).published.values["pairs"]}
        results[level] = {}
        out += [f"**Experiment 2, {level} congestion** (paper's throughput as printed, \"Mbps\"; ours in MB/s, "
                "then Mb/s)", "",
                "| pair (first/second) | paper first | paper second | ours first MB/s | ours second MB/s | "
                "ours Mb/s | paper drops | ours drops (first+second) | Jain |",
                "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for a, b in PAIRS:
            r = run(preset, {"flows[0].variant": CORE[a], "flows[1].variant": CORE[b]})
            f1, f2 = flow_of(r, "first"), flow_of(r, "second")
            g1, g2 = f1["goodput_bps"], f2["goodput_bps"]
            jain = (g1 + g2) ** 2 / (2 * (g1 * g1 + g2 * g2)) if g1 + g2 else 0.0
            results[level][(a, b)] = {"first": g1, "second": g2, "drops": f1["drops"] + f2["drops"], "jain": jain,
                                      "drops_first": f1["drops"], "drops_second": f2["drops"]}
            p = pub[(a, b)]
            out.append(f"| {a}/{b} | {p['throughput'][0]} | {p['throughput'][1]} | {mbytes(g1):.3f} | {mbytes(g2):.3f} | "
                       f"{mbps(g1):.2f} / {mbps(g2):.2f} | {p.get('drops', '—')} | {f1['drops']}+{f2['drops']} | {jain:.3f} |")
        out.append("")

    verdicts = []
    fair = {(lvl, pair): results[lvl][pair]["jain"] for lvl in ("low", "high") for pair in (("Reno", "Reno"), ("Vegas", "Vegas"))}
    verdicts.append(("exp2-same-variant-fair", ", ".join(f"{a}/{b} {lvl}: Jain {j:.3f}" for (lvl, (a, b)), j in fair.items()),
                     "agree" if all(j >= 0.95 for j in fair.values()) else "disagree", ""))
    lo = results["low"][("NewReno", "Reno")]
    gap = abs(lo["first"] - lo["second"]) / max(lo["first"], lo["second"])
    verdicts.append(("exp2-newreno-reno-equal-low", f"NewReno {mbps(lo['first']):.2f}, Reno {mbps(lo['second']):.2f} Mb/s "
                     f"(gap {gap * 100:.1f} %), {lo['drops']} drops", "agree" if gap <= 0.05 else "disagree", ""))
    hi = results["high"][("NewReno", "Reno")]
    verdicts.append(("exp2-newreno-beats-reno-high", f"NewReno {mbps(hi['first']):.3f}, Reno {mbps(hi['second']):.3f} Mb/s, "
                     f"drops {hi['drops_first']}+{hi['drops_second']}",
                     "agree" if hi["first"] > hi["second"] else "disagree", ""))
    ratio = {lvl: results[lvl][("NewReno", "Vegas")]["first"] / max(results[lvl][("NewReno", "Vegas")]["second"], 1.0)
             for lvl in ("low", "high")}
    ok = all(results[lvl][("NewReno", "Vegas")]["first"] > results[lvl][("NewReno", "Vegas")]["second"] for lvl in ratio)
    most_low = ratio["low"] > ratio["high"]
    verdicts.append(("exp2-vegas-loses-to-newreno", f"NewReno/Vegas goodput ratio {ratio['low']:.1f} (low), {ratio['high']:.1f} (high)",
                     "agree" if ok and most_low else ("partly: Vegas loses, but not most at low congestion" if ok else "disagree"), ""))
    return verdicts


# ---- experiment 3 ---------------------------------------------------------------------------


def experiment3(out: list[str], seeds: Sequence[int], rates: Sequence[float]) -> list[tuple[str, str, str, str]]:
    rows: dict[tuple[float, int, str, str], dict[str, float]] = {}
    for rate in rates:
        for buffer in (100, 300):
            for queue in ("droptail", "red"):
                preset = f"paper002-exp3-{queue}"
                links = links_of(preset)
                for variant in ("reno", "sack"):
                    per_seed = []
                    for seed in (seeds if queue == "red" else seeds[:1]):
                        base = {"flows[0].variant": variant, "topology.graph.links[2].queue.limit_pkts": buffer,
                                "flows[1].app.rate_mbps": rate, "seed": seed}
                        before = flow_of(run(preset, {**base, "duration_s": 4.0}), "tcp")
                        r = run(preset, {**base, "warmup_s": 4.0})
                        tcp, cbr = flow_of(r, "tcp"), flow_of(r, "cbr")
                        per_seed.append({"before": before["goodput_bps"], "after": tcp["goodput_bps"],
                                         "cbr": cbr["goodput_bps"], "timeouts": tcp["timeouts"], "drops": tcp["drops"],
                                         "cbr_drops": cbr["drops"], "latency_tcp": latency_s(r, links, "tcp", 1040),
                                         "latency_cbr": latency_s(r, links, "cbr", 3000)})
                    rows[(rate, buffer, queue, variant)] = {k: statistics.fmean(s[k] for s in per_seed) for k in per_seed[0]}
    out += [f"**Experiment 3: TCP before / after the CBR starts at 4 s** (RED: means of {len(seeds)} seeds; Drop-Tail "
            "is deterministic)", "",
            "| CBR Mb/s | buffer | queue | variant | TCP Mb/s 0-4 s | TCP Mb/s 4-10 s | drop | CBR Mb/s | TCP timeouts | "
            "TCP drops | latency TCP (ms) | latency CBR (ms) |",
            "|---:|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for (rate, buffer, queue, variant), x in rows.items():
        out.append(f"| {rate:g} | {buffer} | {queue} | {variant} | {mbps(x['before']):.2f} | {mbps(x['after']):.2f} | "
                   f"{(1 - x['after'] / x['before']) * 100:.0f} % | {mbps(x['cbr']):.2f} | {x['timeouts']:.1f} | "
                   f"{x['drops']:.1f} | {x['latency_tcp'] * 1e3:.1f} | {x['latency_cbr'] * 1e3:.1f} |")
    out.append("")

    verdicts = []
    for rate in rates:
        cases = [(b, v) for b in (100, 300) for v in ("reno", "sack")]
        lower = [(b, v) for b, v in cases if rows[(rate, b, "red", v)]["after"] < rows[(rate, b, "droptail", v)]["after"]]
        verdicts.append(("exp3-red-lower-throughput",
                         f"CBR {rate:g}: RED below Drop-Tail after 4 s in {len(lower)} of 4 (buffer, variant) cases",
                         "agree" if len(lower) == 4 else ("partly" if lower else "disagree"), ""))
        worst = []
        for b in (100, 300):
            combos = {(q, v): rows[(rate, b, q, v)]["after"] for q in ("droptail", "red") for v in ("reno", "sack")}
            worst.append(min(combos, key=lambda k: combos[k]) == ("red", "sack"))
        verdicts.append(("exp3-sack-red-worst", f"CBR {rate:g}: SACK+RED lowest after 4 s for buffers 100, 300: {worst}",
                         "agree" if all(worst) else ("partly" if any(worst) else "disagree"), ""))
        lat = [(rows[(rate, b, "red", v)]["latency_tcp"], rows[(rate, b, "droptail", v)]["latency_tcp"]) for b, v in cases]
        verdicts.append(("exp3-red-lower-latency",
                         f"CBR {rate:g}: TCP latency RED / Drop-Tail " + ", ".join(f"{a * 1e3:.1f}/{d * 1e3:.1f}" for a, d in lat) + " ms",
                         "agree" if all(a < d for a, d in lat) else ("partly" if any(a < d for a, d in lat) else "disagree"), ""))
    return verdicts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=5, help="seeds for RED (default 5)")
    parser.add_argument("--exp3-rates", type=float, nargs="*", default=[6.0, 8.0, 10.0])
    parser.add_argument("--markdown", type=Path, help="write the tables and verdicts here")
    args = parser.parse_args()
    started = time.perf_counter()
    out: list[str] = []
    verdicts = experiment1(out) + experiment2(out) + experiment3(out, list(range(1, args.seeds + 1)), args.exp3_rates)
    texts = {c["id"]: (c["text"], c["where"]) for name in ("paper002-exp1-congestion", "paper002-exp2-fairness-low",
                                                            "paper002-exp2-fairness-high", "paper002-exp3-red")
             for c in get_preset(name).published.values["conclusions"]}
    out += ["**Conclusions**", "", "| conclusion (paper) | where | ours | verdict |", "|---|---|---|---|"]
    for cid, ours, verdict, _ in verdicts:
        text, where = texts[cid]
        out.append(f"| {text} | {where} | {ours} | **{verdict}** |")
    wall = time.perf_counter() - started
    out += ["", f"wall time: {wall:.0f} s"]
    print("\n".join(out))
    if args.markdown:
        args.markdown.parent.mkdir(parents=True, exist_ok=True)
        args.markdown.write_text("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
