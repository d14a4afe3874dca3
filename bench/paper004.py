#!/usr/bin/env python3
"""Paper 004's experiments on tcplab's core, beside the paper's numbers and conclusions.

Runs the four paper 004 presets for the paper's four variants directly through `tcpsim.run`
(the presets' own scenarios, built with `services.presets.build_scenario`), with several seeds
where loss is random, and prints per variant our download response time, throughput, goodput,
timeouts and fast retransmits beside Table 2 / Table 3, then each of the paper's conclusions
(`published.values["conclusions"]` of the presets) with whether our runs agree.

The wired cases run twice: as the paper states them (1 ms through the cloud), and with the
cloud's latency raised until the 44-segment window limits the path to about the paper's
effective rate (Table 3's times mean about 0.5 Mb/s; `--slow-cloud-ms`). The wireless case runs
at the preset's attenuation loss rate and at the rates of `--wireless-rates` (sensitivity).

    .venv/bin/python bench/paper004.py [--seeds 10] [--markdown bench-results/paper004.md]

About a minute on one core.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import tcpsim

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from services.presets import get_preset  # noqa: E402
from services.presets.paper004 import VARIANTS, WIRED_FILE_BYTES, WIRELESS_FILE_BYTES  # noqa: E402
from services.scenarios import validate_scenario  # noqa: E402

NAMES = {v: k for k, v in VARIANTS.items()}  # core variant -> the paper's name
TIE = 0.001
"""Means closer than this (relative) are a tie: below every difference the paper's tables make."""
T95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262, 10: 2.228,
       11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131, 19: 2.093, 29: 2.045}


def half_width(values: Sequence[float]) -> float:
    """95 % Student-t half-width of the mean (0 for one value)."""
    n = len(values)
    if n < 2:
        return 0.0
    t = T95.get(n - 1, 1.96 if n > 30 else 2.05)
    return t * statistics.stdev(values) / math.sqrt(n)


def run_case(preset: str, variant: str, seeds: Sequence[int], overrides: dict[str, Any], file_bytes: int) -> dict[str, Any]:
    """Runs `preset` with `variant` for each seed; the per-seed metrics and their means."""
    p = get_preset(preset)
    rows = []
    for seed in seeds:
        scenario = p.build({"flows[0].variant": variant, "seed": seed, **overrides})
        scenario.pop("outputs", None)  # the bench needs no traces
        _, canonical = validate_scenario(scenario)
        result = tcpsim.run(canonical)
        f = result["flows"][0]
        t = f["download_time_s"]
        if t is None:
            raise SystemExit(f"{preset} {variant} seed {seed}: the download did not finish in {scenario['duration_s']} s")
        span = result["measured_to_s"] - result["measured_from_s"]
        rows.append({
            "seed": seed,
            "download_time_s": t,
            # The paper's "throughput" counts what the server sends (retransmissions included),
            # its goodput what the client receives in order; both over the download.
            "throughput_bps": f["throughput_bps"] * span / t,
            "goodput_bps": file_bytes * 8 / t,
            "timeouts": f["timeouts"],
            "fast_retransmits": f["fast_retransmits"],
            "retransmits": f["retransmits"],
            "drops": f["drops"],
        })
    out: dict[str, Any] = {"variant": variant, "runs": rows}
    for key in ("download_time_s", "throughput_bps", "goodput_bps", "timeouts", "fast_retransmits", "retransmits", "drops"):
        values = [r[key] for r in rows]
        out[key] = statistics.fmean(values)
        out[key + "_hw"] = half_width(values)
    return out


def run_preset(preset: str, seeds: Sequence[int], overrides: dict[str, Any] | None = None) -> dict[str, dict[str, Any]]:
    file_bytes = WIRELESS_FILE_BYTES if "wireless" in preset else WIRED_FILE_BYTES
    return {v: run_case(preset, v, seeds, overrides or {}, file_bytes) for v in VARIANTS.values()}


# ---- conclusions ----------------------------------------------------------------------------


def _better(metric: str, a: float, b: float) -> bool:
    return a < b if metric == "download_time_s" else a > b


def judge(conclusion: dict[str, Any], results: dict[str, dict[str, Any]]) -> tuple[str, str]:
    """("agree" | "disagree" | "within noise", what we measured) for one conclusion."""
    claim = conclusion["claim"]
    if claim == "one_loss_recovery":
        counts = {v: (r["fast_retransmits"], r["timeouts"]) for v, r in results.items()}
        ok = all(fr == 1 and to == 0 for fr, to in counts.values())
        text = ", ".join(f"{NAMES[v]} {fr:g} FR / {to:g} RTO" for v, (fr, to) in counts.items())
        return ("agree" if ok else "disagree"), text
    metric = conclusion["metric"]
    mean = {v: r[metric] for v, r in results.items()}
    hw = {v: r[metric + "_hw"] for v, r in results.items()}

    def fmt(v: str) -> str:
        x = mean[v] / 1e3 if metric != "download_time_s" else mean[v]
        h = hw[v] / 1e3 if metric != "download_time_s" else hw[v]
        unit = "s" if metric == "download_time_s" else "kb/s"
        return f"{NAMES[v]} {x:.1f}" + (f" ± {h:.1f}" if h else "") + f" {unit}"

    def compare(a: str, b: str) -> str:
        """"better"/"worse" (a against b, separated: the 95 % interval of the paired per-seed
        differences excludes 0), "noise" (it does not), "tie" (means within 0.1 %)."""
        if abs(mean[a] - mean[b]) <= TIE * abs(mean[b]):
            return "tie"
        diffs = [x[metric] - y[metric] for x, y in zip(results[a]["runs"], results[b]["runs"], strict=True)]
        better = _better(metric, mean[a], mean[b])
        if len(diffs) > 1 and abs(statistics.fmean(diffs)) <= half_width(diffs):
            return "noise"
        return "better" if better else "worse"

    if claim in ("best", "worst", "better_than", "worse_than"):
        v = conclusion["variant"]
        others = conclusion.get("others") or [o for o in mean if o != v]
        want = "better" if claim in ("best", "better_than") else "worse"
        wrong = "worse" if want == "better" else "better"
        found = [compare(v, o) for o in others]
        text = "; ".join(fmt(x) for x in [v, *others]) + " — against " + ", ".join(
            f"{NAMES[o]}: {c}" for o, c in zip(others, found, strict=True))
        if all(c == want for c in found):
            return "agree", text
        if wrong in found:
            return "disagree", text
        if all(c in (want, "noise") for c in found):
            return "agree in the means, not significant", text
        return "no difference", text
    if claim == "similar":
        vs = conclusion["variants"]
        lo, hi = min(mean[v] for v in vs), max(mean[v] for v in vs)
        spread = (hi - lo) / lo if lo else 0.0
        ok = spread <= conclusion["tolerance"]
        return ("agree" if ok else "disagree"), "; ".join(fmt(v) for v in vs) + f" (spread {spread * 100:.2f} %)"
    raise ValueError(f"unknown claim {claim!r}")


# ---- output ---------------------------------------------------------------------------------


def table(title: str, results: dict[str, dict[str, Any]], paper: dict[str, float] | None, seeds: int) -> list[str]:
    lines = [f"**{title}** ({seeds} seed{'s' if seeds > 1 else ''}; ± is the 95 % interval of the mean)", "",
             "| variant | paper download (s) | ours download (s) | throughput (kb/s) | goodput (kb/s) | timeouts | fast retransmits | drops |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for v, r in results.items():
        pub = f"{paper[NAMES[v]]}" if paper else "—"
        dl = f"{r['download_time_s']:.1f}" + (f" ± {r['download_time_s_hw']:.1f}" if r["download_time_s_hw"] else "")
        lines.append(f"| {NAMES[v]} | {pub} | {dl} | {r['throughput_bps'] / 1e3:.1f} | {r['goodput_bps'] / 1e3:.1f} | "
                     f"{r['timeouts']:.1f} | {r['fast_retransmits']:.1f} | {r['drops']:.1f} |")
    return [*lines, ""]


def verdicts(preset: str, results: dict[str, dict[str, Any]]) -> list[str]:
    lines = ["| conclusion (paper) | where | ours | verdict |", "|---|---|---|---|"]
    for c in get_preset(preset).published.values["conclusions"]:
        verdict, text = judge(c, results)
        lines.append(f"| {c['text']} | {c['where']} | {text} | **{verdict}** |")
    return [*lines, ""]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=10, help="seeds for the random-loss cases (default 10)")
    parser.add_argument("--slow-cloud-ms", type=float, default=300.0,
                        help="cloud latency of the window-limited wired runs (default 300 ms)")
    parser.add_argument("--wireless-rates", type=float, nargs="*", default=[0.05, 0.3],
                        help="extra attenuation loss rates to try (default 0.05 0.3)")
    parser.add_argument("--markdown", type=Path, help="write the tables and verdicts here")
    args = parser.parse_args()
    started = time.perf_counter()
    seeds = list(range(1, args.seeds + 1))
    data = get_preset("paper004-table2-wireless-attenuation").published
    out: list[str] = []

    def section(title: str, preset: str, run_seeds: Sequence[int], overrides: dict[str, Any] | None,
                paper: dict[str, float] | None) -> dict[str, dict[str, Any]]:
        results = run_preset(preset, run_seeds, overrides)
        block = table(title, results, paper, len(run_seeds)) + verdicts(preset, results)
        print("\n".join(block), flush=True)
        out.extend(block)
        return results

    table2 = dict(data.tables[0].rows[0])
    table3 = dict(get_preset("paper004-table3-wired-random-loss").published.tables[0].rows[0])
    rate = get_preset("paper004-table2-wireless-attenuation").parameter("flows[0].loss.rate").default
    section(f"Wireless, Table 2 (attenuation loss {rate})", "paper004-table2-wireless-attenuation", seeds, None, table2)
    for extra in args.wireless_rates:
        section(f"Wireless, attenuation loss {extra}", "paper004-table2-wireless-attenuation", seeds,
                {"flows[0].loss.rate": extra}, table2)
    slow = {"cloud_latency_ms": args.slow_cloud_ms, "duration_s": 1200.0}
    for label, overrides in (("cloud 1 ms, as stated", None), (f"cloud {args.slow_cloud_ms:g} ms, window-limited", slow)):
        section(f"Wired, one loss ({label})", "paper004-wired-one-loss", [1], overrides, None)
        section(f"Wired, two losses in a window ({label})", "paper004-wired-two-losses", [1], overrides, None)
        section(f"Wired, 0.05 % loss, Table 3 ({label})", "paper004-table3-wired-random-loss", seeds, overrides, table3)
    wall = time.perf_counter() - started
    print(f"wall time: {wall:.0f} s")
    if args.markdown:
        args.markdown.parent.mkdir(parents=True, exist_ok=True)
        args.markdown.write_text("\n".join(out) + f"\nwall time: {wall:.0f} s\n")


if __name__ == "__main__":
    main()
