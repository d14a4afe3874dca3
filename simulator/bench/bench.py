#!/usr/bin/env python3
"""tcplab simulator benchmark: tcpsim against the ns-3.44 peer on the reference dumbbell.

Run from anywhere (paths are resolved from this file):

    .venv/bin/python simulator/bench/bench.py --install-ns3     # what `make bench` runs
    python3 simulator/bench/bench.py --no-ns3                     # tcpsim only

What it measures (docs/benchmarks.md explains the figures and the parameter mapping):

1. The reference scenario simulator/scenarios/reference-dumbbell.json (64 newreno-sbs flows,
   15 Mb/s, 50 ms RTT, 150-packet DropTail, 100 s) with tcpsim, --repeat times after one
   discarded warm-up run: wall time inside the simulator (`stats.wall_s`) and of the whole
   process, events, events/s, bottleneck packets per wall-second, goodput, Jain, drops, and
   the process's peak RSS (GNU time's %M, else wait4 rusage), which must stay under 100 MB.
2. The same scenario in ns-3.44 (../shared/peers/ns3/dumbbell.py, run by the ns-3 venv's
   Python) in three configurations (--ns3-configs): "newreno" (TcpNewReno +
   TcpClassicRecovery, SACK off: nominally the closest match to newreno-sbs), "nosack-prr"
   (SACK off, ns-3's default PRR recovery) and "default" (ns-3's defaults: SACK + PRR).
   Then the ratios: speed-up, events/s, goodput difference, fairness, drops.
3. Extras (skipped with --no-extras): tcpsim's speed on 1, 8 and 64 flows of the same
   dumbbell (ns-3 too with --ns3-scaling), and the 2-flow 45 Mb/s / 70 ms / p = 0.001
   random-loss scenario of the ns-3 README, in both simulators.

Everything is also written as JSON (--json PATH; default bench-results/bench-<date>.json).
Standard library only, Python 3.11+.
"""

from __future__ import annotations

import argparse
import copy
import datetime as dt
import hashlib
import json
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SIM_DIR = REPO / "simulator"
REFERENCE = SIM_DIR / "scenarios" / "reference-dumbbell.json"
TARGET_BIN = SIM_DIR / "target" / "release" / "tcpsim"
DEFAULT_NS3_VENV = REPO / ".venv-ns3"
DEFAULT_NS3_SCRIPT = REPO.parent / "shared" / "peers" / "ns3" / "dumbbell.py"
NS3_PIP_SPEC = "ns3==3.44.post0"
NS3_EXPECTED_VERSION = "3.44.post0"
RSS_LIMIT_MB = 100.0

# ns-3 configurations compared with tcpsim's newreno-sbs.
NS3_CONFIGS = {
    "newreno": {
        "label": "ns-3 NewReno",
        "sub": "classic, SACK off",
        "args": ["--recovery", "TcpClassicRecovery", "--sack", "off"],
        "about": "TcpNewReno + TcpClassicRecovery, SACK off (nominally closest to newreno-sbs)",
    },
    "nosack-prr": {
        "label": "ns-3 no-SACK PRR",
        "sub": "PRR, SACK off",
        "args": ["--recovery", "TcpPrrRecovery", "--sack", "off"],
        "about": "TcpNewReno + PRR recovery (RFC 6937), SACK off: ns-3's SACK-off path without classic recovery",
    },
    "default": {
        "label": "ns-3 default",
        "sub": "PRR + SACK",
        "args": ["--recovery", "TcpPrrRecovery", "--sack", "on"],
        "about": "TcpNewReno with ns-3's default recovery (PRR, RFC 6937) and SACK on",
    },
}


def log(*a: object) -> None:
    print(*a, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- processes


class Proc:
    """Outcome of one measured child process."""

    def __init__(self, rc: int, out: str, err: str, wall_s: float, maxrss_mb: float, rss_how: str, timed_out: bool):
        self.rc, self.out, self.err = rc, out, err
        self.wall_s, self.maxrss_mb, self.rss_how, self.timed_out = wall_s, maxrss_mb, rss_how, timed_out


_GNU_TIME: list[str | None] = []


def gnu_time() -> str | None:
    """/usr/bin/time if it is GNU time (-f %M -o FILE works), else None. Checked once."""
    if not _GNU_TIME:
        found = None
        exe = shutil.which("time", path="/usr/bin:/bin:/usr/local/bin")
        true = shutil.which("true")
        if exe and true:
            with tempfile.TemporaryDirectory() as d:
                f = Path(d) / "m"
                try:
                    r = subprocess.run([exe, "-f", "%M", "-o", str(f), true], capture_output=True, timeout=30)
                    if r.returncode == 0 and f.read_text().strip().splitlines()[-1].isdigit():
                        found = exe
                except (OSError, subprocess.SubprocessError, IndexError):
                    pass
        _GNU_TIME.append(found)
    return _GNU_TIME[0]


def run_measured(cmd: list[str], *, cwd: Path | None = None, timeout: float | None = None) -> Proc:
    """Runs `cmd`, timing it from spawn to exit, and measures its peak RSS.

    Peak RSS comes from GNU time (-f %M) when /usr/bin/time is GNU time. Otherwise it is the
    child's own rusage from wait4, which is an upper bound: Linux keeps the high-water mark
    of the memory the child had before exec, i.e. this Python's (about 10-20 MB).
    stdout/stderr go to temporary files, not pipes, so a large output cannot block the child."""
    timer_exe = gnu_time()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, tempfile.TemporaryDirectory() as d:
        rss_file = Path(d) / "maxrss"
        full = [timer_exe, "-f", "%M", "-o", str(rss_file), *cmd] if timer_exe else cmd
        t0 = time.perf_counter()
        # Its own process group, so a timeout or Ctrl-C ends the child (and GNU time's child).
        p = subprocess.Popen(full, stdin=subprocess.DEVNULL, stdout=out, stderr=err, cwd=cwd, start_new_session=True)
        killed = threading.Event()

        def kill() -> None:
            killed.set()
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

        timer = threading.Timer(timeout, kill) if timeout else None
        if timer:
            timer.start()
        try:
            _, status, ru = os.wait4(p.pid, 0)
        except BaseException:
            kill()
            p.wait()
            raise
        finally:
            if timer:
                timer.cancel()
        wall = time.perf_counter() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
        # ru_maxrss is KiB on Linux, bytes on macOS.
        rss_mb = ru.ru_maxrss / (1024 * 1024) if sys.platform == "darwin" else ru.ru_maxrss / 1024
        rss_how = "wait4 rusage (upper bound)"
        if timer_exe:
            try:
                rss_mb = int(rss_file.read_text().strip().splitlines()[-1]) / 1024
                rss_how = "GNU time %M"
            except (OSError, ValueError, IndexError):
                pass
        out.seek(0)
        err.seek(0)
        return Proc(
            p.returncode,
            out.read().decode(errors="replace"),
            err.read().decode(errors="replace"),
            wall,
            rss_mb,
            rss_how,
            killed.is_set(),
        )


def tail(text: str, n: int = 15) -> str:
    return "\n".join(text.strip().splitlines()[-n:])


# --------------------------------------------------------------------------- tcpsim


def find_tcpsim(args: argparse.Namespace) -> tuple[Path, str]:
    """The tcpsim executable: --tcpsim, else simulator/target/release/tcpsim (built with cargo
    if missing or if --build), else `tcpsim` on PATH or next to this Python (the venv's)."""
    if args.tcpsim:
        p = Path(args.tcpsim)
        if not p.exists():
            sys.exit(f"bench: --tcpsim {p} does not exist")
        return p, "given with --tcpsim"
    cargo = shutil.which("cargo")
    if cargo and (args.build or not TARGET_BIN.exists()):
        log(f"bench: building tcpsim (cargo build --release -p tcpsim-core in {SIM_DIR}) ...")
        r = subprocess.run([cargo, "build", "--release", "-p", "tcpsim-core"], cwd=SIM_DIR)
        if r.returncode != 0:
            log("bench: cargo build failed" + (" - using the existing binary" if TARGET_BIN.exists() else ""))
    if TARGET_BIN.exists():
        return TARGET_BIN, "cargo release build"
    for cand in (shutil.which("tcpsim"), Path(sys.executable).parent / "tcpsim"):
        if cand and Path(cand).exists():
            return Path(cand), "tcpsim on PATH / Python package console script"
    sys.exit(
        "bench: no tcpsim found: build it with `cd simulator && cargo build --release -p tcpsim-core`, "
        "install the tcpsim Python package, or pass --tcpsim PATH"
    )


def tcpsim_version(binary: Path) -> str:
    try:
        r = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=60)
        return r.stdout.strip() or r.stderr.strip()
    except (OSError, subprocess.SubprocessError) as e:
        return f"unknown ({e})"


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def write_scenario(tmp: Path, scenario: dict, name: str) -> Path:
    path = tmp / f"{name}.json"
    path.write_text(json.dumps(scenario, indent=1))
    return path


def run_tcpsim_once(binary: Path, scenario_path: Path) -> tuple[dict, Proc]:
    p = run_measured([str(binary), "run", str(scenario_path)], timeout=600)
    if p.rc != 0 or p.timed_out:
        sys.exit(f"bench: tcpsim failed on {scenario_path} (exit {p.rc}):\n{tail(p.err)}")
    return json.loads(p.out), p


def summarize_tcpsim(r: dict) -> dict:
    flows = r["flows"]
    g = [f["goodput_bps"] / 1e6 for f in flows]
    bn = next(link for link in r["links"] if link["name"] == "bottleneck")
    st = r["stats"]
    return {
        "events": st["events"],
        "peak_packets": st.get("peak_packets"),
        "aggregate_goodput_mbps": sum(g),
        "per_flow_goodput_mbps": {"min": min(g), "mean": sum(g) / len(g), "max": max(g)},
        "jain": r["fairness"]["jain"],
        "bottleneck_packets_window": bn["packets"],
        "bottleneck_drops_window": bn["drops"],
        "bottleneck_queue_drops_window": bn.get("queue_drops"),
        "bottleneck_loss_drops_window": bn.get("loss_drops"),
        "bottleneck_utilization": bn["utilization"],
        "bottleneck_mean_queue_pkts": bn.get("mean_queue_pkts"),
        "timeouts_window": sum(f.get("timeouts", 0) for f in flows),
        "fast_recoveries_window": sum(f.get("fast_recoveries", 0) for f in flows),
        "retransmits_window": sum(f.get("retransmits", 0) for f in flows),
        "flows_below_10pct_of_fair_share": sum(1 for x in g if x < 0.1 * sum(g) / len(g)),
    }


def bench_tcpsim(binary: Path, scenario: dict, name: str, tmp: Path, repeat: int) -> dict:
    """One discarded warm-up run, `repeat` measured runs, and one run with warmup_s = 0 that
    gives whole-run counts (bottleneck packets and drops) comparable with ns-3's."""
    path = write_scenario(tmp, scenario, name)
    run_tcpsim_once(binary, path)  # warm-up: page cache, CPU frequency
    runs = []
    results = []
    for _ in range(repeat):
        r, p = run_tcpsim_once(binary, path)
        results.append(r)
        runs.append(
            {
                "run_wall_s": r["stats"]["wall_s"],
                "process_wall_s": p.wall_s,
                "peak_rss_mb": p.maxrss_mb,
                "rss_how": p.rss_how,
            }
        )
    # Determinism: the simulated figures of every repetition must agree.
    fingerprints = {json.dumps({k: v for k, v in r.items() if k != "stats"}, sort_keys=True) for r in results}
    events = {r["stats"]["events"] for r in results}
    whole = copy.deepcopy(scenario)
    whole["warmup_s"] = 0
    rw, _ = run_tcpsim_once(binary, write_scenario(tmp, whole, name + "-whole-run"))
    bn_whole = next(link for link in rw["links"] if link["name"] == "bottleneck")

    run_walls = [x["run_wall_s"] for x in runs]
    proc_walls = [x["process_wall_s"] for x in runs]
    s = summarize_tcpsim(results[0])
    med_run = statistics.median(run_walls)
    med_proc = statistics.median(proc_walls)
    s.update(
        {
            "repeat": repeat,
            "runs": runs,
            "deterministic": len(fingerprints) == 1 and len(events) == 1,
            "run_wall_s": {"min": min(run_walls), "median": med_run, "max": max(run_walls)},
            "process_wall_s": {"min": min(proc_walls), "median": med_proc, "max": max(proc_walls)},
            "events_per_s": s["events"] / med_run,
            "events_per_s_best": s["events"] / min(run_walls),
            "bottleneck_packets_run": bn_whole["packets"],
            "bottleneck_drops_run": bn_whole["drops"],
            "whole_run_events_match": rw["stats"]["events"] == s["events"],
            "bottleneck_packets_per_wall_s": bn_whole["packets"] / med_run,
            "bottleneck_packets_per_process_wall_s": bn_whole["packets"] / med_proc,
            "events_per_bottleneck_packet": s["events"] / bn_whole["packets"] if bn_whole["packets"] else None,
            "peak_rss_mb": max(x["peak_rss_mb"] for x in runs),
            "peak_rss_how": runs[0]["rss_how"],
        }
    )
    s["peak_rss_ok"] = s["peak_rss_mb"] < RSS_LIMIT_MB
    return s


# --------------------------------------------------------------------------- scenarios


def load_reference() -> dict:
    s = json.loads(REFERENCE.read_text())
    topo = s.get("topology", {})
    if "dumbbell" not in topo or len(s.get("flows", [])) != 1:
        sys.exit(f"bench: {REFERENCE} is expected to be a dumbbell with one flow group")
    return s


def with_flows(ref: dict, n: int) -> dict:
    s = copy.deepcopy(ref)
    s["name"] = f"{ref.get('name', 'reference')}-{n}flows"
    s["flows"][0]["count"] = n
    return s


def lossy_scenario(ref: dict) -> dict:
    """The ns-3 README's n2_45M_70ms_err row: 2 flows, 45 Mb/s, 70 ms, p = 0.001 on data."""
    s = copy.deepcopy(ref)
    s["name"] = "lossy-2flows-45M-70ms"
    s["description"] = "2 flows, 45 Mb/s, 70 ms RTT, uniform loss 0.001 on the forward bottleneck"
    bn = s["topology"]["dumbbell"]["bottleneck"]
    bn["rate_mbps"] = 45
    # ns-3: bottleneck delay = rtt/2 - 2*access_delay = 35 - 1 = 34 ms; ours keeps 0.5 ms access.
    bn["delay_ms"] = 34
    bn["loss"] = {"type": "uniform", "rate": 0.001}
    s["flows"][0]["count"] = 2
    s["flows"][0]["rtt_ms"] = 70
    return s


def fmt_num(x: float) -> str:
    return f"{x:.6f}".rstrip("0").rstrip(".")


def ns3_args_for(s: dict, ns3_variant: str = "TcpNewReno") -> tuple[list[str], list[str]]:
    """dumbbell.py options equivalent to our scenario, with `ns3_variant` as ns-3's congestion
    control (simulator/validation/ns3_crosscheck.py passes the others); and notes on what does
    not map."""
    d = s["topology"]["dumbbell"]
    bn = d["bottleneck"]
    acc = d.get("access", {})
    f = s["flows"][0]
    tcp = f.get("tcp", {})
    notes = []
    rtt = f["rtt_ms"]
    if not isinstance(rtt, (int, float)):
        raise ValueError("ns-3 needs one fixed rtt_ms")
    access_delay = (rtt / 2 - bn["delay_ms"]) / 2
    start = f.get("start_s", 0)
    if isinstance(start, dict):
        lo, hi = start["uniform"]
        if lo != 0:
            notes.append(f"start_s uniform [{lo}, {hi}) has no ns-3 equivalent; ns-3 uses [0, {hi})")
        spread = hi
    else:
        spread = 0
        if start:
            notes.append(f"fixed start {start} s not mapped")
    variant = f.get("variant", "")
    if ns3_variant == "TcpNewReno" and not variant.startswith("newreno"):
        notes.append(f"variant {variant} compared with TcpNewReno")
    q = bn["queue"]
    if q.get("type") != "droptail":
        notes.append(f"bottleneck queue {q.get('type')} compared with ns-3 DropTail")
    header = tcp.get("header_bytes", 40)
    if header == 54:
        timestamps = "on"  # 20 IP + 20 TCP + 12 timestamp option + 2 PPP
    elif header == 42:
        timestamps = "off"
    else:
        timestamps = "on"
        notes.append(f"header_bytes {header}: ns-3 puts 54 (timestamps) or 42 bytes on the wire")
    if tcp.get("rtt_sampling", "per_rtt") != "timestamps":
        notes.append("rtt_sampling per_rtt (Karn, one timed segment per RTT): ns-3 samples every ACK's timestamp")
    if not tcp.get("limited_transmit", False):
        notes.append("limited_transmit off: ns-3 has RFC 3042 limited transmit on")
    args = [
        "--flows", str(f.get("count", 1)),
        "--variant", ns3_variant,
        "--bottleneck-mbps", fmt_num(bn["rate_mbps"]),
        "--rtt-ms", fmt_num(rtt),
        "--queue-pkts", str(q.get("limit_pkts", 150)),
        "--access-mbps", fmt_num(acc.get("rate_mbps", 1000)),
        "--access-delay-ms", fmt_num(access_delay),
        "--access-queue-pkts", str(acc.get("queue", {}).get("limit_pkts", 1000)),
        "--segment-size", str(tcp.get("mss_bytes", 1000)),
        "--initial-cwnd", fmt_num(tcp.get("initial_cwnd_pkts", 2)),
        "--min-rto-ms", fmt_num(tcp.get("min_rto_s", 0.2) * 1000),
        "--clock-granularity-ms", fmt_num(tcp.get("timer_granularity_s", 0.01) * 1000),
        "--delack-count", "2" if tcp.get("delayed_ack") else "1",
        "--timestamps", timestamps,
        "--sim-seconds", fmt_num(s["duration_s"]),
        "--warmup-seconds", fmt_num(s.get("warmup_s", 0)),
        "--start-spread-s", fmt_num(spread),
        "--seed", str(s.get("seed", 1)),
    ]  # fmt: skip
    loss = bn.get("loss")
    if loss:
        if loss.get("type") != "uniform":
            raise ValueError("only uniform bottleneck loss maps to ns-3's RateErrorModel")
        args += ["--error-rate", fmt_num(loss["rate"])]
    return args, notes


# --------------------------------------------------------------------------- ns-3


def ns3_version_in(py: Path) -> str | None:
    """The ns3 package's version in that interpreter, or None (fast: no ns-3 import)."""
    if not py.exists():
        return None
    code = "import importlib.metadata as m\ntry: print(m.version('ns3'))\nexcept m.PackageNotFoundError: pass"
    try:
        r = subprocess.run([str(py), "-c", code], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    return r.stdout.strip() or None


def install_ns3(venv: Path) -> bool:
    py = venv / "bin" / "python"
    log(f"bench: installing ns-3 ({NS3_PIP_SPEC}) into {venv}: this takes about 2 minutes and ~520 MB ...")
    t0 = time.perf_counter()
    if not py.exists():
        base = getattr(sys, "_base_executable", None) or sys.executable
        r = subprocess.run([base, "-m", "venv", str(venv)], stdout=sys.stderr, stderr=sys.stderr)
        if r.returncode != 0:
            log("bench: creating the venv failed")
            return False
    r = subprocess.run(
        [str(py), "-m", "pip", "install", "--disable-pip-version-check", NS3_PIP_SPEC],
        stdout=sys.stderr,
        stderr=sys.stderr,
    )
    log(f"bench: pip finished in {time.perf_counter() - t0:.0f} s (exit {r.returncode})")
    return r.returncode == 0


def find_ns3(args: argparse.Namespace) -> tuple[Path | None, Path | None, str]:
    """(python, dumbbell.py, message). python is None when the peer is to be skipped."""
    if args.no_ns3:
        return None, None, "ns-3 skipped (--no-ns3)"
    script = Path(args.ns3_script) if args.ns3_script else DEFAULT_NS3_SCRIPT
    if not script.exists():
        return None, None, f"ns-3 skipped: peer script {script} not found (it lives in ../shared beside the repo)"
    py = Path(args.ns3_python) if args.ns3_python else DEFAULT_NS3_VENV / "bin" / "python"
    version = ns3_version_in(py)
    if version is None and args.install_ns3 and not args.ns3_python:
        if install_ns3(DEFAULT_NS3_VENV):
            version = ns3_version_in(py)
    if version is None:
        hint = "" if args.install_ns3 else " (run with --install-ns3, or `make bench`, to create it)"
        return None, script, f"ns-3 skipped: no ns3 package in {py}{hint}"
    if version != NS3_EXPECTED_VERSION:
        log(f"bench: warning: {py} has ns3 {version}, the peer README measured {NS3_EXPECTED_VERSION}")
    return py, script, f"ns3 {version}"


def ns3_supports(py: Path, script: Path, options: list[str]) -> bool:
    """Whether dumbbell.py --help lists every option (its ns-3 import comes after parsing)."""
    try:
        r = subprocess.run([str(py), str(script), "--help"], capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.SubprocessError):
        return False
    return r.returncode == 0 and all(o in r.stdout for o in options)


def run_ns3(py: Path, script: Path, args: list[str], repeat: int) -> dict:
    """Runs the peer `repeat` times (results are deterministic; only timing varies)."""
    cmd = [str(py), str(script), *args]
    outs, procs = [], []
    for _ in range(repeat):
        p = run_measured(cmd, cwd=script.parent, timeout=1800)
        if p.rc != 0 or p.timed_out:
            return {"error": f"exit {p.rc}{' (timed out)' if p.timed_out else ''}: {tail(p.err, 8)}", "command": cmd}
        line = [x for x in p.out.strip().splitlines() if x.startswith("{")][-1]
        outs.append(json.loads(line))
        procs.append(p)
    o = outs[0]
    g = o["per_flow_goodput_mbps"]
    run_walls = [x["run_wall_s"] for x in outs]
    proc_walls = [p.wall_s for p in procs]
    med_run = statistics.median(run_walls)
    return {
        "command": cmd,
        "repeat": repeat,
        "recovery": o["recovery"],
        "sack": o["sack"],
        "timestamps": o["timestamps"],
        "run_wall_s": {"min": min(run_walls), "median": med_run, "max": max(run_walls)},
        "process_wall_s": {"min": min(proc_walls), "median": statistics.median(proc_walls), "max": max(proc_walls)},
        "import_s": statistics.median(x["import_s"] for x in outs),
        "events": o["events"],
        "events_per_s": o["events"] / med_run,
        "aggregate_goodput_mbps": o["aggregate_goodput_mbps"],
        "per_flow_goodput_mbps": {"min": min(g), "mean": sum(g) / len(g), "max": max(g)},
        "jain": o["jain_fairness"],
        "link_utilization": o["link_utilization"],
        "goodput_utilization": o["goodput_utilization"],
        "bottleneck_packets_run": o["bneck_data_pkts_tx"],
        "bottleneck_packets_per_wall_s": o["bneck_data_pkts_tx"] / med_run,
        "events_per_bottleneck_packet": o["events"] / o["bneck_data_pkts_tx"] if o["bneck_data_pkts_tx"] else None,
        "bottleneck_drops_window": o["window_queue_drops"] + o["window_error_drops"],
        "bottleneck_queue_drops_window": o["window_queue_drops"],
        "bottleneck_loss_drops_window": o["window_error_drops"],
        "bottleneck_drops_run": o["queue_drops"] + o["error_drops"],
        "flows_below_10pct_of_fair_share": sum(1 for x in g if x < 0.1 * sum(g) / len(g)),
        "peak_rss_mb": max(p.maxrss_mb for p in procs),
        "peak_rss_how": procs[0].rss_how,
        "deterministic": len({json.dumps(x["per_flow_goodput_mbps"]) for x in outs}) == 1,
        "raw": o,
    }


def compare(t: dict, n: dict) -> dict:
    def ratio(a: float | None, b: float | None) -> float | None:
        return a / b if a and b else None

    return {
        "speedup_run": ratio(n["run_wall_s"]["median"], t["run_wall_s"]["median"]),
        "speedup_process": ratio(n["process_wall_s"]["median"], t["process_wall_s"]["median"]),
        "speedup_ns3_run_vs_tcpsim_process": ratio(n["run_wall_s"]["median"], t["process_wall_s"]["median"]),
        "events_per_s_ratio": ratio(t["events_per_s"], n["events_per_s"]),
        "bottleneck_packets_per_wall_s_ratio": ratio(
            t["bottleneck_packets_per_wall_s"], n["bottleneck_packets_per_wall_s"]
        ),
        "goodput_diff_pct": 100.0
        * (t["aggregate_goodput_mbps"] - n["aggregate_goodput_mbps"])
        / n["aggregate_goodput_mbps"],
        "jain_diff": t["jain"] - n["jain"],
        "drops_window_diff_pct": 100.0
        * (t["bottleneck_drops_window"] - n["bottleneck_drops_window"])
        / n["bottleneck_drops_window"]
        if n["bottleneck_drops_window"]
        else None,
    }


# --------------------------------------------------------------------------- printing


def fnum(x: object, nd: int = 0) -> str:
    if x is None:
        return "-"
    if isinstance(x, bool):
        return "yes" if x else "NO"
    if isinstance(x, int) or nd == 0:
        return f"{x:,.0f}"
    return f"{x:,.{nd}f}"


def fspread(d: dict, nd: int = 3) -> str:
    return f"{d['min']:.{nd}f} / {d['mean']:.{nd}f} / {d['max']:.{nd}f}"


def table(rows: list[list[str]], header: list[str] | None = None) -> str:
    allrows = ([header] if header else []) + rows
    widths = [max(len(r[i]) for r in allrows) for i in range(len(allrows[0]))]
    lines = []
    for k, r in enumerate(allrows):
        cells = [r[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(r[1:], widths[1:], strict=True)]
        lines.append("  " + "  ".join(cells).rstrip())
        if header and k == 0:
            lines.append("  " + "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def sim_table(t: dict, ns: dict[str, dict], rss_rule: bool = True) -> str:
    cols = [("tcpsim", "newreno-sbs", t)]
    for key, n in ns.items():
        if n and "error" not in n:
            cols.append((NS3_CONFIGS[key]["label"], NS3_CONFIGS[key]["sub"], n))
    header = [""] + [c[0] for c in cols]
    sub = [""] + [c[1] for c in cols]

    def row(label: str, f) -> list[str]:
        return [label] + [f(c[2]) for c in cols]

    def rss(x: dict) -> str:
        verdict = ""
        if rss_rule and "peak_rss_ok" in x:
            verdict = " (<100 ok)" if x["peak_rss_ok"] else " (>=100 FAIL)"
        return f"{x['peak_rss_mb']:.1f}{verdict}"

    rows = [
        sub,
        row("run wall s, min / median", lambda x: f"{x['run_wall_s']['min']:.3f} / {x['run_wall_s']['median']:.3f}"),
        row("process wall s, median", lambda x: f"{x['process_wall_s']['median']:.3f}"),
        row(
            "  outside the run (start, import)",
            lambda x: f"{x['process_wall_s']['median'] - x['run_wall_s']['median']:.3f}",
        ),
        row("events", lambda x: fnum(x["events"])),
        row("events / s (median run)", lambda x: fnum(x["events_per_s"])),
        row("events per bottleneck data pkt", lambda x: fnum(x["events_per_bottleneck_packet"], 2)),
        row("bottleneck data pkts (whole run)", lambda x: fnum(x["bottleneck_packets_run"])),
        row("bottleneck pkts / wall-s", lambda x: fnum(x["bottleneck_packets_per_wall_s"])),
        row("aggregate goodput Mb/s", lambda x: f"{x['aggregate_goodput_mbps']:.3f}"),
        row("per-flow Mb/s min / mean / max", lambda x: fspread(x["per_flow_goodput_mbps"])),
        row("flows < 10% of fair share", lambda x: fnum(x["flows_below_10pct_of_fair_share"])),
        row("Jain index", lambda x: f"{x['jain']:.4f}"),
        row("bottleneck drops (window)", lambda x: fnum(x["bottleneck_drops_window"])),
        row("  of which random loss", lambda x: fnum(x["bottleneck_loss_drops_window"])),
        row("bottleneck drops (whole run)", lambda x: fnum(x["bottleneck_drops_run"])),
        row("peak RSS MB", rss),
    ]
    return table(rows, header)


def ratio_lines(c: dict, label: str) -> str:
    def r(x: float | None, suffix: str = "x") -> str:
        return "-" if x is None else f"{x:,.1f}{suffix}"

    rows = [
        ["speed-up: ns-3 Simulator::Run / tcpsim run", r(c["speedup_run"])],
        ["speed-up: ns-3 process / tcpsim process", r(c["speedup_process"])],
        ["speed-up: ns-3 Simulator::Run / tcpsim process", r(c["speedup_ns3_run_vs_tcpsim_process"])],
        ["events/s ratio (events differ in kind, see docs)", r(c["events_per_s_ratio"])],
        ["bottleneck pkts per wall-s ratio", r(c["bottleneck_packets_per_wall_s_ratio"])],
        ["aggregate goodput, tcpsim vs ns-3", f"{c['goodput_diff_pct']:+.2f} %"],
        ["Jain, tcpsim - ns-3", f"{c['jain_diff']:+.4f}"],
        [
            "bottleneck drops in window, tcpsim vs ns-3",
            "-" if c["drops_window_diff_pct"] is None else f"{c['drops_window_diff_pct']:+.1f} %",
        ],
    ]
    return f"  tcpsim vs {label}:\n" + table(rows)


# --------------------------------------------------------------------------- main


def print_load_note(load: float) -> None:
    """Says when other work shares the machine: every timing of the run is then noisy."""
    if load > 0.5:
        print(f"  NOTE: load average {load:.2f} at start: other work is running, timings will be noisy")


def machine_info() -> dict:
    cpu = platform.processor() or ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        mem_gb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 1e9
    except (ValueError, OSError, AttributeError):
        mem_gb = None
    commit = None
    try:
        commit = subprocess.run(
            ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(REPO), "status", "--porcelain", "--", "simulator/core", "simulator/scenarios"],
            capture_output=True,
            text=True,
        ).stdout.strip()
        if dirty:
            commit += " (simulator/core or scenarios modified)"
    except OSError:
        pass
    return {
        "cpu": cpu,
        "cpus": os.cpu_count(),
        "mem_gb": round(mem_gb, 1) if mem_gb else None,
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "git_commit": commit,
    }


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description="Benchmark tcpsim on the reference dumbbell, side by side with ns-3.44.",
    )
    p.add_argument(
        "--repeat",
        type=int,
        default=5,
        help="measured tcpsim repetitions per scenario, after one warm-up run (default 5)",
    )
    p.add_argument(
        "--ns3-repeat",
        type=int,
        default=1,
        help="ns-3 repetitions per configuration; results are deterministic, only timing varies (default 1)",
    )
    p.add_argument("--no-ns3", action="store_true", help="skip the ns-3 peer")
    p.add_argument("--ns3-python", help="Python with the ns3 package (default: .venv-ns3/bin/python at the repo root)")
    p.add_argument(
        "--ns3-script", help="the peer's dumbbell.py (default: ../shared/peers/ns3/dumbbell.py from the repo root)"
    )
    p.add_argument(
        "--install-ns3",
        action="store_true",
        help=f"create .venv-ns3 with pip ({NS3_PIP_SPEC}) if it is missing (~2 min)",
    )
    p.add_argument(
        "--ns3-configs",
        default="newreno,nosack-prr,default",
        help="comma-separated ns-3 configurations (default newreno,nosack-prr,default): "
        + "; ".join(f"{k} = {v['about']}" for k, v in NS3_CONFIGS.items()),
    )
    p.add_argument("--no-extras", action="store_true", help="only the 64-flow reference scenario")
    p.add_argument(
        "--ns3-scaling", action="store_true", help="also run ns-3 (every --ns3-configs configuration) on 1 and 8 flows"
    )
    p.add_argument("--tcpsim", help="tcpsim executable to use (default: simulator/target/release/tcpsim)")
    p.add_argument("--build", action="store_true", help="run cargo build --release first even if the binary exists")
    p.add_argument("--json", help="write all figures here (default: bench-results/bench-<date>.json)")
    a = p.parse_args(argv)
    if a.repeat < 1 or a.ns3_repeat < 1:
        p.error("--repeat and --ns3-repeat must be at least 1")
    a.ns3_configs = [c.strip() for c in a.ns3_configs.split(",") if c.strip()]
    unknown = [c for c in a.ns3_configs if c not in NS3_CONFIGS]
    if unknown or not a.ns3_configs:
        p.error(f"--ns3-configs: unknown {unknown}; choose from {', '.join(NS3_CONFIGS)}")
    return a


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if hasattr(sys.stdout, "reconfigure"):
        sys.stdout.reconfigure(line_buffering=True)  # the report interleaves with stderr progress
    started = dt.datetime.now(dt.UTC)
    load0 = os.getloadavg()

    binary, how = find_tcpsim(args)
    version = tcpsim_version(binary)
    ns3_py, ns3_script, ns3_msg = find_ns3(args)
    ref = load_reference()
    configs: list[str] = []
    if ns3_py:
        if ns3_supports(ns3_py, ns3_script, ["--recovery", "--sack", "--timestamps"]):
            configs = args.ns3_configs
        else:
            log("bench: dumbbell.py has no --recovery/--sack: running its default configuration only")
            configs = ["default"]
            NS3_CONFIGS["default"]["args"] = []

    info = machine_info()
    print(f"tcplab simulator benchmark, {started:%Y-%m-%d %H:%M} UTC")
    print(
        f"  machine: {info['cpu']} x{info['cpus']}, {info['mem_gb']} GB, {info['os']}, Python {info['python']}, repo {info['git_commit']}"
    )
    print(f"  tcpsim:  {binary} ({version}; {how})")
    if ns3_py:
        print(f"  ns-3:    {ns3_py} {ns3_script} ({ns3_msg})")
    else:
        print(f"  NOTE: {ns3_msg}. Only tcpsim figures follow.")
    print_load_note(load0[0])
    print()

    report: dict = {
        "date": started.isoformat(timespec="seconds"),
        "machine": info,
        "tcpsim": {
            "binary": str(binary),
            "version": version,
            "how": how,
            "sha256": file_sha256(binary),
            "mtime": dt.datetime.fromtimestamp(binary.stat().st_mtime, dt.UTC).isoformat(timespec="seconds"),
        },
        "ns3": {
            "python": str(ns3_py) if ns3_py else None,
            "script": str(ns3_script) if ns3_script else None,
            "status": ns3_msg,
            "configs": {k: NS3_CONFIGS[k]["about"] for k in configs},
        },
        "load_average_start": load0,
    }

    with tempfile.TemporaryDirectory(prefix="tcplab-bench-") as tmpdir:
        tmp = Path(tmpdir)

        # ---- 1 + 2: the reference scenario --------------------------------------------
        f = ref["flows"][0]
        bn = ref["topology"]["dumbbell"]["bottleneck"]
        title = (
            f"{f.get('count', 1)} x {f.get('variant')}, {fmt_num(bn['rate_mbps'])} Mb/s, {fmt_num(f['rtt_ms'])} ms RTT, "
            f"DropTail {bn['queue'].get('limit_pkts')} p, {fmt_num(ref['duration_s'])} s (window {fmt_num(ref.get('warmup_s', 0))}-{fmt_num(ref['duration_s'])} s), seed {ref.get('seed', 1)}"
        )
        print(f"== Reference: {REFERENCE.relative_to(REPO)}")
        print(f"   {title}")
        log(f"bench: tcpsim reference, 1 warm-up + {args.repeat} runs ...")
        t_ref = bench_tcpsim(binary, ref, "reference", tmp, args.repeat)
        ns_ref: dict[str, dict] = {}
        ns_args, notes = ns3_args_for(ref)
        for key in configs:
            log(f"bench: ns-3 reference, {key} config: {NS3_CONFIGS[key]['about']} (about 25-75 s) ...")
            ns_ref[key] = run_ns3(ns3_py, ns3_script, ns_args + NS3_CONFIGS[key]["args"], args.ns3_repeat)
        print(sim_table(t_ref, ns_ref))
        if not t_ref["deterministic"] or not t_ref["whole_run_events_match"]:
            print("  WARNING: tcpsim repetitions did not give identical results")
        for key, n in ns_ref.items():
            if "error" in n:
                print(f"  {NS3_CONFIGS[key]['label']} FAILED: {n['error']}")
        comps = {}
        for key, n in ns_ref.items():
            if "error" not in n:
                comps[key] = compare(t_ref, n)
                print()
                print(ratio_lines(comps[key], f"{NS3_CONFIGS[key]['label']} ({NS3_CONFIGS[key]['sub']})"))
        if ns_ref:
            print(
                f"\n  ns-3 command: {' '.join(Path(x).name if i < 2 else x for i, x in enumerate(next(iter(ns_ref.values()))['command']))}"
            )
            for key in ns_ref:
                print(f"    {key}: {' '.join(NS3_CONFIGS[key]['args']) or '(script defaults)'}")
        for n in notes:
            print(f"  mapping note: {n}")
        print(
            f"  tcpsim peak RSS {t_ref['peak_rss_mb']:.1f} MB ({t_ref['peak_rss_how']}): {'under' if t_ref['peak_rss_ok'] else 'OVER'} the {RSS_LIMIT_MB:.0f} MB limit"
        )
        report["reference"] = {
            "scenario": str(REFERENCE.relative_to(REPO)),
            "tcpsim": t_ref,
            "ns3": ns_ref,
            "ns3_args": ns_args,
            "mapping_notes": notes,
            "comparison": comps,
        }

        # ---- 4: extras -----------------------------------------------------------------
        if not args.no_extras:
            print("\n== Scaling with the number of flows (same dumbbell, reference scenario with `count` changed)")
            scaling = []
            for n_flows in (1, 8, 64):
                if n_flows == f.get("count"):
                    t = t_ref
                else:
                    log(f"bench: tcpsim {n_flows} flow(s) ...")
                    t = bench_tcpsim(binary, with_flows(ref, n_flows), f"flows-{n_flows}", tmp, args.repeat)
                entry: dict = {"flows": n_flows, "tcpsim": t, "ns3": {}}
                if ns3_py and args.ns3_scaling:
                    for key in configs:
                        if n_flows == f.get("count"):
                            entry["ns3"][key] = ns_ref.get(key)
                        else:
                            log(f"bench: ns-3 {n_flows} flow(s), {key} config ...")
                            a, _ = ns3_args_for(with_flows(ref, n_flows))
                            entry["ns3"][key] = run_ns3(
                                ns3_py, ns3_script, a + NS3_CONFIGS[key]["args"], args.ns3_repeat
                            )
                scaling.append(entry)
            header = [
                "flows",
                "simulator",
                "run wall s",
                "events",
                "events/s",
                "bneck pkts/wall-s",
                "goodput Mb/s",
                "Jain",
                "drops (window)",
            ]
            rows = []
            for e in scaling:
                sims = [("tcpsim", e["tcpsim"])] + [
                    (NS3_CONFIGS[k]["label"] + f" ({NS3_CONFIGS[k]['sub']})", n) for k, n in e["ns3"].items()
                ]
                for label, x in sims:
                    if not x or "error" in x:
                        rows.append([str(e["flows"]), label] + ["failed"] + [""] * 6)
                        continue
                    rows.append(
                        [
                            str(e["flows"]),
                            label,
                            f"{x['run_wall_s']['median']:.3f}",
                            fnum(x["events"]),
                            fnum(x["events_per_s"]),
                            fnum(x["bottleneck_packets_per_wall_s"]),
                            f"{x['aggregate_goodput_mbps']:.3f}",
                            f"{x['jain']:.4f}",
                            fnum(x["bottleneck_drops_window"]),
                        ]
                    )
            print(table(rows, header))
            for e in scaling:
                for k, n in e["ns3"].items():
                    if n and "error" in n:
                        print(f"  {NS3_CONFIGS[k]['label']} on {e['flows']} flow(s) FAILED: {n['error']}")
            if not args.ns3_scaling and ns3_py:
                print("  (tcpsim only; --ns3-scaling adds ns-3 on 1 and 8 flows)")
            report["scaling"] = [
                {
                    "flows": e["flows"],
                    "tcpsim": {k: v for k, v in e["tcpsim"].items() if k != "runs"},
                    "ns3": {k: v for k, v in e["ns3"].items()},
                }
                for e in scaling
            ]

            lossy = lossy_scenario(ref)
            print(
                "\n== Random loss: 2 flows, 45 Mb/s, 70 ms RTT, uniform p = 0.001 on the forward bottleneck (ns-3 README row n2_45M_70ms_err)"
            )
            log("bench: tcpsim lossy 2-flow scenario ...")
            t_loss = bench_tcpsim(binary, lossy, "lossy", tmp, args.repeat)
            ns_loss: dict[str, dict] = {}
            la, lnotes = ns3_args_for(lossy)
            for key in configs:
                log(f"bench: ns-3 lossy 2-flow scenario, {key} config ...")
                ns_loss[key] = run_ns3(ns3_py, ns3_script, la + NS3_CONFIGS[key]["args"], args.ns3_repeat)
            print(sim_table(t_loss, ns_loss, rss_rule=False))
            lcomps = {}
            for key, n in ns_loss.items():
                if "error" in n:
                    print(f"  {NS3_CONFIGS[key]['label']} FAILED: {n['error']}")
                else:
                    lcomps[key] = compare(t_loss, n)
                    c = lcomps[key]
                    print(
                        f"  vs {NS3_CONFIGS[key]['label']}: speed-up {c['speedup_run']:,.0f}x (run) / {c['speedup_process']:,.0f}x (process), "
                        f"goodput {c['goodput_diff_pct']:+.1f} %"
                    )
            report["lossy"] = {
                "scenario": lossy,
                "tcpsim": t_loss,
                "ns3": ns_loss,
                "ns3_args": la,
                "mapping_notes": lnotes,
                "comparison": lcomps,
            }

    load1 = os.getloadavg()
    report["load_average_end"] = load1
    report["elapsed_s"] = (dt.datetime.now(dt.UTC) - started).total_seconds()
    out = Path(args.json) if args.json else REPO / "bench-results" / f"bench-{started:%Y-%m-%d-%H%M%S}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=1, default=str) + "\n")
    print(
        f"\nAll figures: {out}  (whole benchmark {report['elapsed_s']:.0f} s; load average {load0[0]:.2f} -> {load1[0]:.2f})"
    )
    return 0 if t_ref["peak_rss_ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
