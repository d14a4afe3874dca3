#!/usr/bin/env python3
"""Paper 000 Table II (SBS flow among FTP/HTTP background, Drop-Tail) with ns-2's own web
traffic generator, beside the paper's published rows and tcpsim's preset.

Why: tcpsim's preset (`paper000-table2-droptail`) and the ns-2 peer that scripts the same HTTP
model by hand (../shared/peers/ns2/table2.tcl) agree with each other but miss the paper's
light-load rows by 2x (N = 4: 93 vs 45.9 pkts/RTT; loss event rate 2e-4 vs 7e-4). The paper ran
ns-2, whose usual web traffic is PagePool/WebTraf; this script runs that generator
(simulator/validation/ns2/table2_webtraf.tcl) under several readings of the paper's text and
ns-2's example parameter sets, to see whether any of them gives the paper's light-load rows.

Each ns-2 run is one JSON line (appended to --out as it finishes, so a long batch can be cut
short and rendered with --from). The reading `peer` runs the peer's table2.tcl instead, for
tcpsim's own HTTP model in ns-2. tcpsim's numbers come from the preset itself, run in this
process the way the reproduction does (services.reproductions.local.simulate over the
`table2` experiment of services/reproductions/paper000.py, restricted to the chosen sizes and
replications, sweep seed 1). Findings: docs/validation/ns2-table2.md.

    .venv/bin/python simulator/validation/ns2_table2.py --bg 4,8,16,32 --seeds 1,2,3 \\
        --readings paper,webex,largescale,redpd --out /tmp/t2.jsonl --markdown
    .venv/bin/python simulator/validation/ns2_table2.py --from /tmp/t2.jsonl --markdown
    .venv/bin/python simulator/validation/ns2_table2.py --readings paper,peer --set queue=50 --bg 4 --seeds 1 \\
        --tcpsim-set 'topology.dumbbell.bottleneck.queue.limit_pkts=50' --markdown

Runs are sequential and `nice -n 10` (one simulation process at a time).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
TCL = ROOT / "simulator" / "validation" / "ns2" / "table2_webtraf.tcl"
sys.path.insert(0, str(ROOT))

READINGS = ("paper", "webex", "largescale", "redpd")
READING_TEXT = {
    "paper": "paper's text in WebTraf: 1 object/page, Pareto mean 48 pkts shape 1.2, think Exp 0.5 s after a page ends",
    "webex": "ns-2.35 tcl/ex/web-traffic.tcl: inter-page Exp 1 s, 1 object/page, ParetoII mean 10 pkts shape 1.2",
    "largescale": "ns-2.35 tcl/ex/large-scale-web-traffic.tcl: inter-page Exp 15 s, 1 object/page, ParetoII mean 12 pkts shape 1.2",
    "redpd": "ns-2.35 tcl/ex/red-pd/helper.tcl Traffic/Web: inter-page Exp 10 s, Exp 10 objects/page 0.01 s apart, ParetoII mean 24 pkts",
}


PEER = ROOT.parent / "shared" / "peers" / "ns2" / "table2.tcl"


def run_peer(bg: int, seed: int, dur: float, extra: list[str]) -> dict[str, Any]:
    """The peer's ../shared/peers/ns2/table2.tcl (tcpsim's HTTP model scripted in ns-2), with p, m and
    pkts/RTT computed as its compare.py does (loss events grouped by the mean RTT taken from the
    mean queue); only its `queue`, `syn` and `singledup` keys are passed on."""
    warm = dur * 0.25
    df = Path(f"/tmp/ns2_table2_peer_drops_{os.getpid()}.tr")
    keys = [kv for kv in extra if kv.split("=")[0] in ("queue", "syn", "singledup")]
    cmd = [
        "nice",
        "-n",
        "10",
        "ns",
        str(PEER),
        f"bg={bg}",
        f"seed={seed}",
        f"dur={dur:g}",
        f"warm={warm:g}",
        f"dropfile={df}",
        *keys,
    ]
    out = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if out.returncode != 0 or not out.stdout.strip():
        raise SystemExit(f"{' '.join(cmd)} failed ({out.returncode}):\n{out.stderr[-2000:]}")
    ns = json.loads(out.stdout.strip().splitlines()[-1])
    rtt = 0.050 + (1 + ns["mean_queue_pkts"]) * 1040 * 8 / 15e6
    drops: dict[int, list[float]] = {0: [], 1: []}
    with open(df) as f:
        for line in f:
            x = line.split()
            if float(x[1]) >= warm and int(x[7]) in drops:
                drops[int(x[7])].append(float(x[1]))
    df.unlink()
    rec = {
        "kind": "ns2",
        "reading": label("peer", extra),
        "extra": extra,
        "bg": bg,
        "seed": seed,
        "dur": dur,
        "run_wall_s": ns["run_wall_s"],
        "mean_queue_pkts": ns["mean_queue_pkts"],
        "bneck_util": ns["bneck_departures"] * 1040 / (15e6 / 8 * (dur - warm)),
        "responses": ns["http_responses"],
    }
    for fid, k in ((0, "sbs"), (1, "imp")):
        sent, times = ns[k]["sent"], sorted(drops[fid])
        ev, first = 0, None
        for t in times:
            if first is None or t - first > rtt:
                ev, first = ev + 1, t
        rec[k] = {
            "sent": sent,
            "timeouts": ns[k]["timeouts"],
            "drops": len(times),
            "loss_events": ev,
            "loss_rate": len(times) / max(sent, 1),
            "loss_event_rate": ev / max(sent, 1),
            "m": len(times) / ev if ev else 0,
            "pkts_per_rtt": sent / (dur - warm) * rtt,
        }
    return rec


def run_ns2(bg: int, seed: int, dur: float, reading: str, extra: list[str]) -> dict[str, Any]:
    if reading == "peer":
        return run_peer(bg, seed, dur, extra)
    args = [f"bg={bg}", f"seed={seed}", f"dur={dur:g}", f"warm={dur * 0.25:g}", f"preset={reading}", *extra]
    cmd = ["nice", "-n", "10", "ns", str(TCL), *args]
    t = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if out.returncode != 0 or not out.stdout.strip():
        raise SystemExit(f"{' '.join(cmd)} failed ({out.returncode}):\n{out.stderr[-2000:]}")
    rec = json.loads(out.stdout.strip().splitlines()[-1])
    rec.update(kind="ns2", reading=label(reading, extra), extra=extra, process_wall_s=time.perf_counter() - t)
    return rec


def label(reading: str, extra: list[str]) -> str:
    return " ".join([reading, *extra])


def run_tcpsim(sizes: list[int], replications: int, dur: float, sets: list[str]) -> list[dict[str, Any]]:
    """The preset's Table II experiment, restricted; one record per run (SBS and IMP groups).

    `sets` are PATH=VALUE preset overrides (VALUE as JSON), e.g. flows[3].app.mean_think_s=0.05."""
    import tcpsim
    from services.reproductions.local import simulate
    from services.reproductions.paper000 import EXPERIMENTS

    exp = next(e for e in EXPERIMENTS if e.key == "table2")
    exp = dataclasses.replace(exp, axes=({"path": "background_flows", "values": sizes},), replications=replications)
    extra: list[dict[str, Any]] = []

    def run(scenario: dict[str, Any]) -> dict[str, Any]:
        t = time.perf_counter()
        r = tcpsim.run(scenario)
        bl = next(link for link in r["links"] if link["name"] == "bottleneck")
        share = {
            g: sum(f["throughput_bps"] for f in r["flows"] if f["name"].startswith(g)) / bl["rate_bps"]
            for g in ("sbs", "imp", "bg-ftp", "bg-http")
        }
        http = [f for f in r["flows"] if f["name"].startswith("bg-http")]
        extra.append(
            {
                "wall_s": time.perf_counter() - t,
                "util": bl["utilization"],
                "drops": bl["queue_drops"],
                "mean_queue_pkts": bl["mean_queue_pkts"],
                "seed": scenario["seed"],
                "share": share,
                # downloads are counted over the whole run (simulator/core/src/traffic/mod.rs Downloads)
                "downloads_per_s": sum(f.get("downloads") or 0 for f in http) / scenario["duration_s"],
            }
        )
        return r

    overrides: dict[str, Any] = {"duration_s": dur} if dur != 1000 else {}
    for kv in sets:
        path, _, value = kv.partition("=")
        overrides[path] = json.loads(value)
    obs = simulate(exp, overrides or None, run=run)
    recs: dict[tuple[int, int], dict[str, Any]] = {}
    for o in obs:
        if o.flow not in ("sbs", "imp"):
            continue
        key = (o.point, o.replication)
        rec = recs.setdefault(
            key,
            {
                "kind": "tcpsim",
                "path": "service",
                "reading": label("tcpsim", sets),
                "sets": sets,
                "bg": sizes[o.point],
                "seed": o.seed,
                "replication": o.replication,
                "dur": dur,
                **extra[o.point * replications + o.replication],
            },
        )
        m = o.metrics
        rec[o.flow] = {
            "pkts_per_rtt": m.get("throughput_pkts_per_rtt"),
            "loss_event_rate": m.get("loss_event_rate"),
            "loss_rate": m.get("loss_rate"),
            "m": m.get("drops_per_loss_event"),
            "timeouts": m.get("timeouts"),
            "mean_rtt_s": m.get("mean_rtt_s"),
        }
    return list(recs.values())


def published() -> dict[int, dict[str, Any]]:
    from services.presets.paper000 import TABLE2_FILE
    from services.presets.published import read_csv

    _, rows = read_csv(TABLE2_FILE)
    return {int(r["background_flows"]): r for r in rows}


def ms(xs: list[float], digits: int, sd: bool = True) -> str:
    xs = [x for x in xs if x is not None and not math.isnan(x)]
    if not xs:
        return "—"
    m = statistics.fmean(xs)
    if sd and len(xs) > 1:
        return f"{m:.{digits}f} ± {statistics.stdev(xs):.{digits}f}"
    return f"{m:.{digits}f}"


def sci(xs: list[float]) -> str:
    xs = [x for x in xs if x is not None]
    return f"{statistics.fmean(xs):.5f}" if xs else "—"


def share_of(t: list[dict[str, Any]]) -> str:
    """tcpsim's shares of the bottleneck rate (throughput_bps, headers included) by flow group."""
    if not all("share" in x for x in t):
        return "—"
    s = {g: statistics.fmean(x["share"][g] for x in t) for g in ("sbs", "imp", "bg-ftp", "bg-http")}
    return f"{s['sbs'] + s['imp']:.2f} / {s['bg-ftp']:.2f} / {s['bg-http']:.2f}"


def render(recs: list[dict[str, Any]], markdown: bool) -> str:
    pub = published()
    tsv: dict[str, dict[int, list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    ns: dict[str, dict[int, list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    for r in recs:
        if r["kind"] == "tcpsim":
            tsv[r.get("reading", "tcpsim")][r["bg"]].append(r)
        else:
            ns[r["reading"]][r["bg"]].append(r)
    ts = tsv.get("tcpsim", {})  # the preset as it is: the comparison column
    lines: list[str] = []

    def table(header: list[str], rows: list[list[str]]) -> None:
        if markdown:
            lines.append("| " + " | ".join(header) + " |")
            lines.append("|" + "|".join("---:" if i else "---" for i in range(len(header))) + "|")
            lines.extend("| " + " | ".join(r) + " |" for r in rows)
        else:
            lines.append("\t".join(header))
            lines.extend("\t".join(r) for r in rows)
        lines.append("")

    sizes = sorted({r["bg"] for r in recs})
    for reading, by_n in ns.items():
        base = reading.split()[0]
        if base == "peer":
            title = f"ns-2, the peer's table2.tcl (tcpsim's HTTP model scripted by hand), `{reading}`"
        elif "web=persist" in reading:
            title = f"ns-2, one persistent connection per web session (not WebTraf), `{reading}`"
        else:
            title = f"ns-2 WebTraf, reading `{reading}`" + (f": {READING_TEXT[base]}" if base in READING_TEXT else "")
        lines.append(f"{'### ' if markdown else ''}{title}")
        lines.append("")
        header = [
            "N",
            "seeds",
            "p: paper / ns-2 / tcpsim",
            "loss rate: paper / ns-2 / tcpsim",
            "m: ns-2 / tcpsim",
            "SBS pkts/RTT: paper / ns-2 / tcpsim",
            "IMP pkts/RTT: ns-2 / tcpsim",
            "ns-2 share fg / ftp / web",
            "ns-2 util, mean queue pkts",
            "web objects/s, pkts/object",
            "SBS RTOs ns-2 / tcpsim",
            "ns-2 run s",
        ]
        rows = []
        for n in sorted(by_n):
            rs, t, p = by_n[n], ts.get(n, []), pub.get(n, {})

            def col(rr: list[dict[str, Any]], flow: str, key: str) -> list[float]:
                return [x[flow][key] for x in rr if x.get(flow) and x[flow].get(key) is not None]

            win = [x["dur"] * 0.75 for x in rs]
            full = all("class" in x for x in rs)  # the peer's script reports no per-class counters
            share = (
                [statistics.fmean(x["class"][c]["util"] for x in rs) for c in ("sbs", "imp", "ftp", "web")]
                if full
                else []
            )
            rows.append(
                [
                    str(n),
                    str(len(rs)),
                    f"{p.get('loss_event_rate', '—')} / {sci(col(rs, 'sbs', 'loss_event_rate'))} / {sci(col(t, 'sbs', 'loss_event_rate'))}",
                    f"{p.get('loss_rate', '—')} / {sci(col(rs, 'sbs', 'loss_rate'))} / {sci(col(t, 'sbs', 'loss_rate'))}",
                    f"{ms(col(rs, 'sbs', 'm'), 2, False)} / {ms(col(t, 'sbs', 'm'), 2, False)}",
                    f"{p.get('sim_pkts_per_rtt', '—')} / {ms(col(rs, 'sbs', 'pkts_per_rtt'), 1)} / {ms(col(t, 'sbs', 'pkts_per_rtt'), 1)}",
                    f"{ms(col(rs, 'imp', 'pkts_per_rtt'), 1, False)} / {ms(col(t, 'imp', 'pkts_per_rtt'), 1, False)}",
                    f"{share[0] + share[1]:.2f} / {share[2]:.2f} / {share[3]:.2f}" if full else "—",
                    f"{statistics.fmean(x['bneck_util'] for x in rs):.3f}, {statistics.fmean(x['mean_queue_pkts'] for x in rs):.0f}",
                    f"{statistics.fmean(x['responses'] / w for x, w in zip(rs, win, strict=True)):.1f}, "
                    f"{statistics.fmean(x['mean_response_pkts'] for x in rs):.1f}"
                    if full
                    else f"{statistics.fmean(x['responses'] / x['dur'] for x in rs):.1f} (whole run), —",
                    f"{ms(col(rs, 'sbs', 'timeouts'), 1, False)} / {ms(col(t, 'sbs', 'timeouts'), 1, False)}",
                    f"{statistics.fmean(x['run_wall_s'] for x in rs):.1f}",
                ]
            )
        table(header, rows)

    for tlabel, ts_ in tsv.items():
        lines.append(
            f"{'### ' if markdown else ''}tcpsim, preset paper000-table2-droptail (its HTTP model)"
            + (f", overrides `{tlabel.removeprefix('tcpsim ')}`" if tlabel != "tcpsim" else "")
            + ", beside the published row"
        )
        lines.append("")
        header = [
            "N",
            "runs",
            "p: paper / tcpsim",
            "loss rate: paper / tcpsim",
            "m",
            "SBS pkts/RTT: paper / tcpsim",
            "IMP pkts/RTT",
            "SBS mean RTT s",
            "share fg / ftp / web",
            "bneck util, mean queue pkts",
            "web downloads/s",
            "SBS RTOs",
            "run s",
        ]
        rows = []
        for n in sorted(ts_):
            t, p = ts_[n], pub.get(n, {})

            def c(flow: str, key: str) -> list[float]:
                return [x[flow][key] for x in t if x.get(flow) and x[flow].get(key) is not None]

            rows.append(
                [
                    str(n),
                    str(len(t)),
                    f"{p.get('loss_event_rate', '—')} / {sci(c('sbs', 'loss_event_rate'))}",
                    f"{p.get('loss_rate', '—')} / {sci(c('sbs', 'loss_rate'))}",
                    ms(c("sbs", "m"), 2, False),
                    f"{p.get('sim_pkts_per_rtt', '—')} / {ms(c('sbs', 'pkts_per_rtt'), 1)}",
                    ms(c("imp", "pkts_per_rtt"), 1),
                    ms(c("sbs", "mean_rtt_s"), 4, False),
                    share_of(t),
                    f"{statistics.fmean(x['util'] for x in t):.3f}, {statistics.fmean(x['mean_queue_pkts'] for x in t):.0f}",
                    f"{statistics.fmean(x['downloads_per_s'] for x in t):.1f}"
                    if all("downloads_per_s" in x for x in t)
                    else "—",
                    ms(c("sbs", "timeouts"), 1, False),
                    f"{statistics.fmean(x['wall_s'] for x in t):.2f}",
                ]
            )
        table(header, rows)

    allr = {**{f"ns-2 {k}": v for k, v in ns.items()}, **tsv}
    if len(allr) > 1:
        lines.append(f"{'### ' if markdown else ''}Summary: SBS pkts/RTT (loss event rate), means over seeds")
        lines.append("")
        header = ["N", "published", *allr]
        rows = []
        for n in sizes:
            p = pub.get(n, {})
            row = [str(n), f"{p.get('sim_pkts_per_rtt', '—')} ({p.get('loss_event_rate', '—')})"]
            for rd in allr.values():
                rs = rd.get(n, [])
                row.append(
                    f"{ms([x['sbs']['pkts_per_rtt'] for x in rs], 1, False)} ({sci([x['sbs']['loss_event_rate'] for x in rs])})"
                    if rs
                    else "—"
                )
            rows.append(row)
        table(header, rows)
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--bg", default="4,8,16,32", help="background flow counts (comma list)")
    ap.add_argument("--seeds", default="1,2,3", help="ns-2 seeds (comma list); tcpsim runs as many replications")
    ap.add_argument("--dur", type=float, default=1000.0, help="simulated seconds (the last 3/4 measured); paper: 1000")
    ap.add_argument(
        "--readings",
        default=",".join(READINGS),
        help="table2_webtraf.tcl presets (comma list); `peer` runs ../shared/peers/ns2/table2.tcl instead",
    )
    ap.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="extra table2_webtraf.tcl key=value for every ns-2 run (repeatable; becomes part of the reading's label)",
    )
    ap.add_argument(
        "--tcpsim-set",
        action="append",
        default=[],
        metavar="PATH=JSON",
        help="preset override for the tcpsim runs, e.g. flows[3].app.mean_think_s=0.05 (repeatable)",
    )
    ap.add_argument("--no-tcpsim", action="store_true", help="skip tcpsim's preset runs")
    ap.add_argument("--no-ns2", action="store_true", help="skip the ns-2 runs")
    ap.add_argument("--out", help="append every run's JSON record to this JSONL file")
    ap.add_argument(
        "--from", dest="from_", action="append", default=[], help="render records from JSONL file(s) (repeatable)"
    )
    ap.add_argument("--markdown", action="store_true", help="Markdown tables")
    a = ap.parse_args()

    recs: list[dict[str, Any]] = []
    for path in a.from_:
        recs += [json.loads(x) for x in Path(path).read_text().splitlines() if x.strip()]
    if not a.from_:
        if not a.no_ns2 and shutil.which("ns") is None:
            raise SystemExit("ns (ns-2.35) not found: apt-get install -y ns2")
        sizes = [int(x) for x in a.bg.split(",")]
        seeds = [int(x) for x in a.seeds.split(",")]
        out = open(a.out, "a") if a.out else None

        def keep(r: dict[str, Any]) -> None:
            recs.append(r)
            if out:
                out.write(json.dumps(r) + "\n")
                out.flush()

        if not a.no_tcpsim:
            t = time.perf_counter()
            for r in run_tcpsim(sizes, len(seeds), a.dur, a.tcpsim_set):
                keep(r)
            print(f"tcpsim: {len(sizes) * len(seeds)} runs in {time.perf_counter() - t:.1f} s", file=sys.stderr)
        if not a.no_ns2:
            for reading in a.readings.split(","):
                for n in sizes:
                    for s in seeds:
                        r = run_ns2(n, s, a.dur, reading, a.set)
                        keep(r)
                        print(
                            f"ns-2 {r['reading']} N={n} seed={s}: SBS {r['sbs']['pkts_per_rtt']:.1f} pkts/RTT, "
                            f"p {r['sbs']['loss_event_rate']:.5f}, run {r['run_wall_s']:.1f} s",
                            file=sys.stderr,
                            flush=True,
                        )
        if out:
            out.close()
    print(render(recs, a.markdown))


if __name__ == "__main__":
    os.chdir(ROOT)
    main()
