#!/usr/bin/env python3
"""tcpsim and htsim side by side on the htsim peer's matrix (cases A, B, C, D; issue 13's goal:
tcpsim ≥ 5× htsim in bottleneck packets per wall-second on every case).

    .venv/bin/python simulator/bench/htsim_side.py                 # A, B, C, D, 3 reps (what `make bench` runs)
    .venv/bin/python simulator/bench/htsim_side.py --cases A64,C1_1G --reps 1
    .venv/bin/python simulator/bench/htsim_side.py --from bench-results/htsim-side-X.json --markdown

The peer lives beside the repository in ../shared/peers/htsim (read-only): vendored htsim
sources, `dumbbell.cpp` (our htsim main), `build.sh` and `compare.py`, which holds the case
matrix and runs both simulators alternately, each run in a fresh process, writing one JSON line
per run. This script only drives them:

1. builds htsim with build.sh into --htsim-work (default bench-results/htsim-work, gitignored)
   when htsim_dumbbell is missing there (or with --build); about a minute on 2 cores;
2. runs `compare.py TAG REPS CASE` once per case (a per-case --timeout bounds it), with
   HTSIM_WORK set to that directory and TCPLAB_PYTHON to this Python (which must import
   tcpsim), and reads back $HTSIM_WORK/results/TAG.jsonl;
3. per case: bottleneck packets per wall-second for each simulator (whole-run packets served by
   the forward bottleneck / median event-loop wall time: tcpsim's stats.wall_s, htsim's
   loop_wall_s; tcpsim's whole-run count comes from compare.py's extra untimed warmup_s 0
   run), the ratio tcpsim/htsim (of those rates, and the median of the per-repetition ratios),
   and whether it meets the ≥ 5× goal.

The tcpsim side is newreno-sbs, as compare.py's matrix (htsim's TCP is NewReno without SACK).
Results: bench-results/htsim-side-<date>.json (--json); --markdown prints the docs table.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
PEER = REPO.parent / "shared" / "peers" / "htsim"
DEFAULT_WORK = REPO / "bench-results" / "htsim-work"
GOAL_RATIO = 5.0
GROUPS = "ABCD"


def log(*a: object) -> None:
    print(*a, file=sys.stderr, flush=True)


def _load(name: str, path: Path):
    import importlib.util

    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def peer_cases(peer: Path) -> dict:
    """compare.py's CASES (importing it runs nothing but the table)."""
    return _load("htsim_peer_compare", peer / "compare.py").CASES


def select(cases: dict, spec: str) -> list[str]:
    out: list[str] = []
    for tok in (t.strip() for t in spec.split(",")):
        if not tok:
            continue
        hits = [k for k in cases if k == tok or (len(tok) == 1 and k.startswith(tok.upper()))]
        if not hits:
            sys.exit(
                f"htsim_side: unknown case {tok!r}; the peer has {', '.join(cases)} (or a group letter {', '.join(GROUPS)})"
            )
        out += [h for h in hits if h not in out]
    return out


def ensure_htsim(peer: Path, work: Path, force: bool) -> Path:
    exe = work / "htsim_dumbbell"
    if exe.exists() and not force:
        return exe
    log(f"htsim_side: building htsim with {peer / 'build.sh'} into {work} (about a minute on 2 cores) ...")
    work.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, HTSIM_WORK=str(work))
    t0 = time.perf_counter()
    r = subprocess.run(["bash", str(peer / "build.sh")], cwd=REPO, env=env, stdout=sys.stderr, stderr=sys.stderr)
    if r.returncode != 0 or not exe.exists():
        sys.exit(f"htsim_side: build.sh failed (exit {r.returncode}); htsim needs g++ and make")
    log(f"htsim_side: built {exe} in {time.perf_counter() - t0:.0f} s")
    return exe


def run_case(
    peer: Path, work: Path, python: str, tag: str, name: str, reps: int, timeout: float, arms3: bool
) -> str | None:
    """compare.py on one case; None, or why it failed."""
    env = dict(os.environ, HTSIM_WORK=str(work), TCPLAB_PYTHON=python)
    if arms3:
        env["ARMS"] = "3"
    else:
        env.pop("ARMS", None)
    cmd = [sys.executable, str(peer / "compare.py"), tag, str(reps), name]
    # Its own process group, so that a timeout also ends the simulator compare.py is running.
    p = subprocess.Popen(
        cmd, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        return f"over the {timeout:g} s timeout"
    except BaseException:
        os.killpg(p.pid, signal.SIGKILL)
        raise
    for line in out.strip().splitlines():
        log(f"htsim_side:   {line}")
    if p.returncode != 0:
        return f"compare.py exit {p.returncode}: " + "\n".join(err.strip().splitlines()[-6:])
    return None


def summarize(rows: list[dict], name: str) -> dict | None:
    rs = [r for r in rows if r["case"] == name]
    aux = [r for r in rs if r["kind"] == "aux_tcpsim_warmup0"]
    timed = [r for r in rs if r["kind"] == "timed"]
    T = [r for r in timed if r["sim"] == "tcpsim"]
    H = [r for r in timed if r["sim"] == "htsim"]
    Q = [r for r in timed if r["sim"] == "htsim-quiet"]
    if not aux or not T or not H:
        return None
    med = statistics.median
    tw = med(r["result"]["wall_s"] for r in T)
    hw = med(r["result"]["wall_s"] for r in H)
    tp = aux[0]["bottleneck_pkts_total"]
    hp = H[0]["result"]["bottleneck_pkts_total"]
    paired = []
    for k in sorted({r["rep"] for r in timed}):
        t = [r["result"]["wall_s"] for r in T if r["rep"] == k]
        h = [r["result"]["wall_s"] for r in H if r["rep"] == k]
        if t and h:
            # per-repetition ratio of the packet rates (the packet counts are fixed)
            paired.append((tp / t[0]) / (hp / h[0]))
    c = rs[0]["cfg"]
    out = {
        "case": name,
        "cfg": c,
        "reps": len(paired),
        "tcpsim_wall_s": tw,
        "htsim_wall_s": hw,
        "tcpsim_wall_s_runs": [r["result"]["wall_s"] for r in T],
        "htsim_wall_s_runs": [r["result"]["wall_s"] for r in H],
        "tcpsim_bottleneck_pkts": tp,
        "htsim_bottleneck_pkts": hp,
        "tcpsim_pkts_per_s": tp / tw,
        "htsim_pkts_per_s": hp / hw,
        "ratio": (tp / tw) / (hp / hw),
        "ratio_median_paired": med(paired),
        "ratio_range": [min(paired), max(paired)],
        "meets_goal": (tp / tw) / (hp / hw) >= GOAL_RATIO,
        "tcpsim_goodput_mbps": T[0]["result"]["aggregate_goodput_mbps"],
        "htsim_goodput_mbps": H[0]["result"]["aggregate_goodput_mbps"],
        "tcpsim_events": T[0]["result"]["events"],
        "htsim_events": H[0]["result"]["events"],
        "tcpsim_drops_total": aux[0].get("bottleneck_drops_total"),
        "htsim_drops_total": H[0]["result"].get("bottleneck_drops_total"),
        "tcpsim_timeouts_total": aux[0].get("timeouts_total"),
        "htsim_timeouts_total": H[0]["result"].get("timeouts"),
        "load_1min": [float(r["load"][0]) for r in timed],
        "tcpsim_core_version": T[0]["result"].get("core_version"),
    }
    if Q:
        qw = med(r["result"]["wall_s"] for r in Q)
        out["htsim_quiet_wall_s"] = qw
        out["ratio_vs_quiet"] = (tp / tw) / (hp / qw)
    return out


def f_rate(mbps: float) -> str:
    return f"{mbps / 1000:g} Gb/s" if mbps >= 1000 else f"{mbps:g} Mb/s"


def table_rows(results: list[dict]) -> tuple[list[str], list[list[str]]]:
    header = [
        "case",
        "N",
        "bottleneck",
        "RTT",
        "sim s",
        "reps",
        "tcpsim Mpkt/wall-s",
        "htsim Mpkt/wall-s",
        "tcpsim/htsim",
        "(per-rep range)",
        "goal >= 5x",
    ]
    rows = []
    for r in results:
        c = r.get("cfg") or {}
        if "error" in r:
            rows.append(
                [
                    r["case"],
                    str(c.get("n", "")),
                    f_rate(c["mbps"]) if c else "",
                    f"{c.get('rtt', '')} ms",
                    str(c.get("dur", "")),
                    "-",
                    "-",
                    "-",
                    "FAILED",
                    "",
                    r["error"][:60],
                ]
            )
            continue
        rows.append(
            [
                r["case"],
                f"{c['n']:,}",
                f_rate(c["mbps"]),
                f"{c['rtt']} ms",
                f"{c['dur']:g}",
                str(r["reps"]),
                f"{r['tcpsim_pkts_per_s'] / 1e6:.2f}",
                f"{r['htsim_pkts_per_s'] / 1e6:.2f}",
                f"{r['ratio']:.2f}x",
                f"{r['ratio_range'][0]:.2f}-{r['ratio_range'][1]:.2f}",
                "yes" if r["meets_goal"] else "NO",
            ]
        )
    return header, rows


def summary_line(results: list[dict]) -> str:
    ok = [r for r in results if "error" not in r]
    if not ok:
        return "no case completed"
    worst = min(ok, key=lambda r: r["ratio"])
    best = max(ok, key=lambda r: r["ratio"])
    meets = sum(r["meets_goal"] for r in ok)
    failed = len(results) - len(ok)
    return (
        f"{meets}/{len(results)} cases meet the >= {GOAL_RATIO:g}x goal; tcpsim/htsim from {worst['ratio']:.2f}x ({worst['case']}) "
        f"to {best['ratio']:.2f}x ({best['case']})" + (f"; {failed} case(s) failed" if failed else "")
    )


def markdown(report: dict) -> str:
    header, rows = table_rows(report["results"])
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in rows:
        row = list(row)
        if row[-1] == "NO":
            row[8] = f"**{row[8]}**"
        lines.append("| " + " | ".join(row) + " |")
    m = report.get("machine", {})
    lines.append("")
    lines.append(
        f"{report['date']}, {m.get('cpu')} ×{m.get('cpus')}, repo {m.get('git_commit')}; tcpsim newreno-sbs (core {report.get('tcpsim_core_version')}"
        + (f", binding built {report['tcpsim_binding_built']}" if report.get("tcpsim_binding_built") else "")
        + ") "
        f"vs htsim {report.get('htsim_commit', '')}; {report['args']['reps']} alternating repetitions per case, medians; "
        f"{report.get('elapsed_s', 0) / 60:.1f} min in all. Mpkt/wall-s: whole-run bottleneck packets per second of event loop. "
        "Bold: under the 5x goal."
    )
    lines.append("")
    lines.append("Summary: " + summary_line(report["results"]) + ".")
    return "\n".join(lines)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description="tcpsim vs htsim side by side on the htsim peer's matrix (A, B, C, D).")
    p.add_argument(
        "--cases",
        default="A,B,C,D",
        help="comma-separated case names (A64, C1_10G, ...) or group letters (default A,B,C,D)",
    )
    p.add_argument(
        "--reps",
        type=int,
        default=3,
        help="timed repetitions per case and simulator, alternating the order (default 3)",
    )
    p.add_argument(
        "--quiet-arm",
        action="store_true",
        help="add compare.py's third arm: htsim with its per-timeout stdout line silenced",
    )
    p.add_argument(
        "--timeout",
        type=float,
        default=900,
        help="per-case limit for compare.py, all repetitions together, s (default 900)",
    )
    p.add_argument("--peer", default=str(PEER), help=f"the htsim peer directory (default {PEER})")
    p.add_argument(
        "--htsim-work",
        default=str(DEFAULT_WORK),
        help=f"where htsim is built and compare.py writes (default {DEFAULT_WORK.relative_to(REPO)})",
    )
    p.add_argument("--build", action="store_true", help="rebuild htsim even if htsim_dumbbell exists")
    p.add_argument("--python", help="Python with tcpsim for compare.py's tcpsim runs (default: this one)")
    p.add_argument("--json", help="write the results here (default bench-results/htsim-side-<date>.json)")
    p.add_argument("--from", dest="from_json", help="read results from this JSON instead of running")
    p.add_argument("--markdown", action="store_true", help="print the docs table (markdown)")
    p.add_argument(
        "--strict", action="store_true", help="exit 1 if a case misses the 5x goal (default: 0 unless a case fails)"
    )
    a = p.parse_args(argv)
    if a.reps < 1:
        p.error("--reps must be at least 1")
    return a


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if hasattr(sys.stdout, "reconfigure"):
        sys.stdout.reconfigure(line_buffering=True)
    bench = _load("tcplab_simulator_bench", HERE / "bench.py")
    if args.from_json:
        report = json.loads(Path(args.from_json).read_text())
    else:
        peer = Path(args.peer)
        if not (peer / "compare.py").exists():
            print(f"htsim_side: the htsim peer is not at {peer} (../shared/peers/htsim beside the repository): skipped")
            return 0
        python = args.python or sys.executable
        probe = "import tcpsim, pathlib; print(max(p.stat().st_mtime for p in pathlib.Path(tcpsim.__file__).parent.glob('_core*.so')))"
        r = subprocess.run([python, "-c", probe], capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(
                f"htsim_side: {python} cannot import tcpsim (run `make install`): {r.stderr.strip().splitlines()[-1:]}"
            )
        try:
            binding_built = dt.datetime.fromtimestamp(float(r.stdout.strip()), dt.UTC).isoformat(timespec="seconds")
        except ValueError:
            binding_built = None
        work = Path(args.htsim_work).resolve()
        ensure_htsim(peer, work, args.build)
        cases = peer_cases(peer)
        names = select(cases, args.cases)
        started = dt.datetime.now(dt.UTC)
        tag = f"side-{started:%Y%m%d-%H%M%S}"
        out = Path(args.json) if args.json else REPO / "bench-results" / f"htsim-side-{started:%Y-%m-%d-%H%M%S}.json"
        info = bench.machine_info()
        htsim_commit = ""
        readme = peer / "src" / "README"
        if readme.exists():
            m = re.search(r"\b[0-9a-f]{40}\b", readme.read_text())
            htsim_commit = m.group(0)[:12] if m else ""
        load0 = os.getloadavg()
        print(f"tcpsim vs htsim side by side, {started:%Y-%m-%d %H:%M} UTC")
        print(f"  machine: {info['cpu']} x{info['cpus']}, {info['mem_gb']} GB, {info['os']}, repo {info['git_commit']}")
        print(f"  peer {peer}, htsim {htsim_commit}, work {work}, tag {tag}; {len(names)} cases x {args.reps} reps")
        bench.print_load_note(load0[0])
        failures = {}
        for i, name in enumerate(names, 1):
            log(f"htsim_side: [{i}/{len(names)}] {name} ...")
            err = run_case(peer, work, python, tag, name, args.reps, args.timeout, args.quiet_arm)
            if err:
                log(f"htsim_side: {name} FAILED: {err}")
                failures[name] = err
        jsonl = work / "results" / f"{tag}.jsonl"
        rows = [json.loads(x) for x in jsonl.read_text().splitlines() if x.strip()] if jsonl.exists() else []
        results = []
        for name in names:
            s = summarize(rows, name)
            if s is None:
                results.append({"case": name, "cfg": cases[name], "error": failures.get(name, "no complete runs")})
            else:
                if name in failures:
                    s["note"] = f"incomplete: {failures[name]}"
                results.append(s)
        report = {
            "date": started.isoformat(timespec="seconds"),
            "machine": info,
            "peer": str(peer),
            "htsim_commit": htsim_commit,
            "htsim_work": str(work),
            "jsonl": str(jsonl),
            "tag": tag,
            "args": {"cases": names, "reps": args.reps, "quiet_arm": args.quiet_arm, "timeout": args.timeout},
            "tcpsim_core_version": next((r.get("tcpsim_core_version") for r in results if "error" not in r), None),
            "tcpsim_binding_built": binding_built,
            "load_average_start": load0,
            "load_average_end": os.getloadavg(),
            "elapsed_s": (dt.datetime.now(dt.UTC) - started).total_seconds(),
            "results": results,
        }
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(report, indent=1) + "\n")
        header, trows = table_rows(results)
        print()
        print(bench.table(trows, header))
        print("\n  " + summary_line(results))
        print(f"\nAll figures: {out} (runs: {jsonl}; {report['elapsed_s'] / 60:.1f} min)")
    if args.markdown:
        print(markdown(report))
    results = report["results"]
    if any("error" in r for r in results):
        return 2
    if args.strict and not all(r["meets_goal"] for r in results):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
