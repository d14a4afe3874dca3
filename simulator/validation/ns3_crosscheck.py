#!/usr/bin/env python3
"""Cross-check of tcpsim's variants against ns-3.44 on the same dumbbells.

    .venv/bin/python simulator/validation/ns3_crosscheck.py                  # everything, ~12 min
    .venv/bin/python simulator/validation/ns3_crosscheck.py --variants cubic --seeds 1
    .venv/bin/python simulator/validation/ns3_crosscheck.py --dry-run        # scenarios and commands only
    .venv/bin/python simulator/validation/ns3_crosscheck.py --cases highbdp  # sack, cubic, bbr: 1 flow, 100 Mb/s x 100 ms, ~6 min

For each variant that ns-3 has (newreno, sack, vegas, cubic, bbr) and each dumbbell of
SHAPES, both simulators run the same scenario with the same TCP settings (those of
simulator/scenarios/reference-dumbbell.json, which match ns-3's defaults: 1000-byte segments
with 54 header bytes, initial window 10, an ACK per segment, timestamps on every ACK,
limited transmit, initial and minimum RTO 1 s, 1 ms timer granularity) and the recovery
ns-3 has closest to ours (VARIANTS says which and why). Reported per variant, averaged over
the seeds: aggregate goodput, per-flow goodput (min / max), Jain's index, the time-averaged
bottleneck queue and the drops, each as tcpsim, ns-3 and the difference.

`--cases highbdp` runs the high-BDP cases instead (HIGHBDP: one sack, cubic or bbr flow on a
100 Mb/s path with a 100 or 200 ms RTT, a 1-BDP buffer, 10 s from the start, no warm-up) and
judges each on goodput and timeouts, within 10 % of ns-3, or else names the documented ns-3
deviation that accounts for the difference (KNOWN_DEVIATIONS).

tcpsim runs in-process (the `tcpsim` package); ns-3 runs one process at a time through
ns3_dumbbell_probe.py (the peer's dumbbell.py plus a queue meter and attribute defaults),
with the helpers of simulator/bench/bench.py (venv discovery, --install-ns3, the measured
process runner, the scenario -> dumbbell.py option mapping). docs/validation/ns3-crosscheck.md
has the table and the reasons for the differences that remain.
"""

from __future__ import annotations

import argparse
import copy
import datetime as dt
import json
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO / "simulator" / "bench"))
import bench  # noqa: E402  (simulator/bench/bench.py: standard library only)

PROBE = HERE / "ns3_dumbbell_probe.py"
TOLERANCE_PCT = 10.0

# Our variant and the ns-3 configuration compared with it. ns-3 separates congestion control
# (SocketType) from loss recovery (RecoveryType) and SACK (a socket attribute).
# ns-3's TcpClassicRecovery sets cwnd = ssthresh on entry and sends while BytesInFlight (the
# RFC 6675 pipe, from the SACK scoreboard or, with SACK off, from one "Reno SACK" per
# duplicate ACK) is below cwnd; a partial ACK retransmits the next hole. In recovery only the
# FIRST partial ACK restarts the retransmission timer (ns-3.44 tcp-socket-base.cc:2109,
# `NewAck(ackNumber, m_isFirstPartialAck)`), with SACK on or off: NewReno's Impatient timer
# rule (RFC 6582), not RFC 6298 (5.3)'s restart on every new ACK. That is our `sack` (RFC 6675)
# with SACK on and, with SACK off, NewReno's one-hole-per-partial-ACK: our `newreno-sbs`, whose
# cwnd inflation by one per duplicate ACK admits one segment per duplicate ACK, as the shrinking
# pipe does in ns-3 (its timer is Slow-but-Steady's; docs/validation/ns3-crosscheck.md says why
# the pairing stays). ns-3's default recovery, PRR (RFC 6937), is tcpsim's `sack_recovery:
# "prr"` with SACK on: the --extras pair them (with SACK off tcpsim has no PRR, so newreno/prr
# stays against newreno-sbs and shows how much PRR changes).
VARIANTS: dict[str, dict] = {
    "newreno": {
        "ours": "newreno-sbs",
        "tcp": {"sack": False},
        "ns3": "TcpNewReno",
        "recovery": "TcpClassicRecovery",
        "sack": "off",
        "set": [],
        "about": "newreno-sbs (RFC 6582, timer reset on every partial ACK) vs TcpNewReno + TcpClassicRecovery, SACK off",
    },
    "sack": {
        "ours": "sack",
        "tcp": {"sack": True},
        "ns3": "TcpNewReno",
        "recovery": "TcpClassicRecovery",
        "sack": "on",
        "set": [],
        "about": "sack (RFC 6675) vs TcpNewReno + TcpClassicRecovery, SACK on (RFC 6675 pipe and scoreboard)",
    },
    "vegas": {
        "ours": "vegas",
        # ns-3's Vegas takes diff = cwnd - floor(cwnd * BaseRTT / RTT) in whole segments with
        # Alpha 2, Beta 4, Gamma 1: it grows while the real-valued diff is <= 1 and shrinks
        # once it is > 4, and leaves slow start once it is > 1. Ours compares the real value,
        # so alpha 1, beta 4, gamma 1 is the same rule.
        "tcp": {"sack": False, "vegas": {"alpha": 1, "beta": 4, "gamma": 1}},
        "ns3": "TcpVegas",
        "recovery": "TcpClassicRecovery",
        "sack": "off",
        "set": [],
        "about": "vegas (alpha 1, beta 4, gamma 1 on the real-valued diff) vs TcpVegas (Alpha 2, Beta 4, Gamma 1 on the integer diff) + TcpClassicRecovery, SACK off",
    },
    "cubic": {
        "ours": "cubic",
        "tcp": {"sack": True},
        "ns3": "TcpCubic",
        "recovery": "TcpClassicRecovery",
        "sack": "on",
        # Ours has no HyStart (RFC 9438 leaves it optional); ns-3 runs it by default.
        "set": ["ns3::TcpCubic::HyStart=false"],
        "about": "cubic (RFC 9438, no HyStart, SACK recovery) vs TcpCubic with HyStart off + TcpClassicRecovery, SACK on",
    },
    "bbr": {
        "ours": "bbr",
        "tcp": {"sack": True},
        "ns3": "TcpBbr",
        "recovery": "TcpClassicRecovery",
        "sack": "on",
        "set": [],
        "about": "bbr (BBRv1, paced, with ns-3's switches: tcp.bbr = ns3_bbr()) vs TcpBbr (BBRv1, which turns pacing on itself) + TcpClassicRecovery, SACK on",
    },
}

# ns-3.44's TcpScalable rule (Linux's tcp_scalable.c is the same), which the core's `ns3` and
# `linux` profiles set (`ScalableParams::ns3_and_linux`): a segment per min(cwnd, 50) ACKs
# (`AIFactor` 50) and 1/8 off at every window (`MDFactor`, TcpScalable::GetSsThresh), where
# tcpsim's default, Kelly's paper, adds 0.01 per ACK and halves at or below 50 segments.
NS3_SCALABLE = {"a": 0.02, "b": 0.125, "legacy_b": 0.125}
# ns-3.44's TcpVeno grows as Reno whatever its backlog N (IncreaseWindow resets m_cntRtt on every
# ACK, so its `m_cntRtt <= 2` test sends all but the first ACK after a recovery to NewReno's
# growth); the core's `ns3` profile sets this, Linux's tcp_veno.c and tcpsim's default do not.
NS3_VENO = {"reno_growth": True}

# The rest of ns-3.44's congestion controls (issue 17), on the `sack` pairing: TcpClassicRecovery
# with SACK on, the variant's own ssthresh and window growth on each side, with ns-3's rule
# where tcpsim has it as a knob (`tcp`). Run them with `--variants family` (or by name); the
# default run keeps the five above.
FAMILY: dict[str, dict] = {
    name: {
        "ours": name,
        "tcp": {"sack": True, **tcp},
        "ns3": ns3,
        "recovery": "TcpClassicRecovery",
        "sack": "on",
        "set": list(sets),
        "about": f"{name} vs {ns3}{' (' + ', '.join(sets) + ')' if sets else ''} + TcpClassicRecovery, SACK on",
    }
    for name, ns3, sets, tcp in (
        ("highspeed", "TcpHighSpeed", (), {}),
        ("scalable", "TcpScalable", (), {"scalable": NS3_SCALABLE}),
        ("bic", "TcpBic", (), {}),
        ("htcp", "TcpHtcp", (), {}),
        # ns-3's RRTT defaults to 50 ms; ours (the paper's and Linux's) is 25 ms.
        ("hybla", "TcpHybla", ("ns3::TcpHybla::RRTT=25ms",), {}),
        ("westwood-plus", "TcpWestwoodPlus", (), {}),
        ("veno", "TcpVeno", (), {"veno": NS3_VENO}),
        ("illinois", "TcpIllinois", (), {}),
        ("ledbat", "TcpLedbat", (), {}),
        ("lp", "TcpLp", (), {}),
        ("yeah", "TcpYeah", (), {}),
    )
}
DEFAULT_VARIANTS = list(VARIANTS)
VARIANTS.update(FAMILY)


def ns3_bbr(mss_bytes: int) -> dict:
    """`tcp.bbr` as ns-3.44's TcpBbr has it by default (tcp-bbr.cc/.h; the core's `BbrParams::ns3`,
    which the `ns3` profile sets for its 536-byte segments): the ACK-aggregation allowance
    (`m_extraAckedGain` 1, a 5-round window, at most 100 ms of BtlBw) with ns-3's whole-second
    epochs (`uint32_t epochProp`) and its epoch reset after 4096 bytes (`AckEpochAckedResetThresh`),
    idle restart (`CwndEvent(CA_EVENT_TX_START)`), +2 segments in the 1.25 phase (`InFlight`), a
    1 % pacing margin (`m_pacingMargin`), a one-segment send quantum (`SetSendQuantum`), the
    lost-segment deduction (`ModulateCwndForRecovery`), and no long-term sampling (ns-3 has none)."""
    return {
        "ack_aggregation": {
            "gain": 1.0,
            "window_rounds": 5,
            "max_s": 0.1,
            "epoch_reset_pkts": 4096 / mss_bytes,
            "whole_second_epochs": True,
        },
        "lost_deduction": True,
        "idle_restart": True,
        "probe_bw_extra_pkts": 2.0,
        "pacing_margin": 0.01,
        "send_quantum_pkts": 1.0,
    }


def variant_tcp(variant: str) -> dict:
    """The reference TCP settings with the variant's own (and, for bbr, ns-3's switches)."""
    tcp = reference_tcp()
    tcp.update(copy.deepcopy(VARIANTS[variant]["tcp"]))
    if variant == "bbr":
        tcp["bbr"] = ns3_bbr(tcp["mss_bytes"])
    return tcp


# Further ns-3 configurations (--extras), each against its variant's tcpsim run, with `ours`'s
# TCP settings on top where tcpsim has the same mechanism (then a tcpsim run of its own).
EXTRAS: dict[str, dict] = {
    "newreno/prr": {
        "variant": "newreno",
        "recovery": "TcpPrrRecovery",
        "about": "ns-3's default recovery, PRR (RFC 6937), SACK off (tcpsim: newreno-sbs, no PRR without SACK)",
    },
    "sack/prr": {
        "variant": "sack",
        "recovery": "TcpPrrRecovery",
        "ours": {"sack_recovery": "prr"},
        "about": "sack with PRR (RFC 6937) vs ns-3's defaults: PRR + SACK",
    },
    "cubic/hystart": {
        "variant": "cubic",
        "set": ["ns3::TcpCubic::HyStart=true"],
        # ns-3's TcpCubic HyStart is Linux's (delay increase and ACK train, from 16 segments):
        # tcpsim's HyStart++ with Linux's constants has the delay detector, not the ACK train.
        "ours": {"hystart": {"css_rounds": 0, "min_window_pkts": 16}},
        "about": "cubic with HyStart++ as Linux's delay detector vs TcpCubic with HyStart on (ns-3's default)",
    },
    "vegas/sack": {"variant": "vegas", "sack": "on", "about": "TcpVegas with SACK on"},
}

# The dumbbells: N flows, one bottleneck, 50 ms round-trip propagation (24 ms bottleneck,
# 0.5 ms access links on either side), a DropTail buffer of about one BDP of 1054-byte packets.
SHAPES: dict[str, dict] = {
    "4x10M": {"flows": 4, "rate_mbps": 10, "queue_pkts": 60, "duration_s": 60, "warmup_s": 10},
    "8x15M": {"flows": 8, "rate_mbps": 15, "queue_pkts": 90, "duration_s": 60, "warmup_s": 10},
}
RTT_MS = 50
BOTTLENECK_DELAY_MS = 24

# High-BDP cases (issue 13, `--cases highbdp`): one flow from t = 0, 10 s, measured from the
# start (no warm-up: the slow-start overshoot and its recovery are the point), a DropTail buffer
# of one BDP of 1000-byte segments, the bottleneck delay RTT/2 - 1 ms between the same 0.5 ms
# access links. Both sides get a receive window far above cwnd: 10 MiB socket buffers in ns-3,
# max_window_pkts = 10,486 here (10 MiB / 1000 B). ns-3's flow starts at 0 and its first data
# segment leaves after the handshake, one RTT later; ours (no handshake) starts then.
HIGHBDP: dict[str, dict] = {
    "1x100M-100ms": {"flows": 1, "rate_mbps": 100, "rtt_ms": 100, "queue_pkts": 1250, "duration_s": 10, "warmup_s": 0},
    "1x100M-200ms": {"flows": 1, "rate_mbps": 100, "rtt_ms": 200, "queue_pkts": 2500, "duration_s": 10, "warmup_s": 0},
}
HIGHBDP_VARIANTS = ["sack", "cubic", "bbr"]
HIGHBDP_BUFFER_BYTES = 10 * 1024 * 1024
# ns-3's SACK scoreboard work grows with the window: at 200 ms its runs take from 20 minutes
# (sack) to over the benchmark runner's 30-minute limit (cubic), so they get longer.
HIGHBDP_NS3_TIMEOUT_S = 4 * 3600
ACCESS_DELAY_MS = 0.5

# The differences outside the tolerance in the high-BDP cases that were traced to a documented
# ns-3 deviation from the RFCs (docs/validation/ns3-crosscheck.md, the section named here). A
# case listed here that comes out within the tolerance is reported as within it; one that is
# outside and not listed is reported as outside.
KNOWN_DEVIATIONS: dict[tuple[str, str], str] = {
    ("cubic", "1x100M-100ms"): "ns-3's deviation (HighRxt not restarted per recovery, RFC 6675 §5 (4.3)), see §5.1",
}


def log(*a: object) -> None:
    print(*a, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- scenarios


def reference_tcp() -> dict:
    """The reference dumbbell's TCP settings: the ones aligned with ns-3's defaults."""
    return copy.deepcopy(bench.load_reference()["flows"][0]["tcp"])


def shape_of(shape: str) -> dict:
    return SHAPES[shape] if shape in SHAPES else HIGHBDP[shape]


def build_scenario(variant: str, shape: str, seed: int, extra: str | None = None) -> dict:
    """Our scenario for one variant on one dumbbell (SHAPES) or high-BDP case (HIGHBDP), with
    an --extras configuration's own TCP settings (`ours`) on top."""
    if shape in HIGHBDP:
        return build_highbdp_scenario(variant, shape, seed)
    v, sh = VARIANTS[variant], SHAPES[shape]
    tcp = variant_tcp(variant)
    tcp.update(copy.deepcopy(EXTRAS[extra].get("ours", {})) if extra else {})
    return {
        "name": f"ns3-crosscheck-{variant}-{shape}-s{seed}",
        "description": f"{sh['flows']} x {v['ours']}, {sh['rate_mbps']} Mb/s, {RTT_MS} ms RTT, DropTail {sh['queue_pkts']} p; compared with ns-3: {v['about']}",
        "duration_s": sh["duration_s"],
        "warmup_s": sh["warmup_s"],
        "seed": seed,
        "topology": {
            "dumbbell": {
                "bottleneck": {
                    "rate_mbps": sh["rate_mbps"],
                    "delay_ms": BOTTLENECK_DELAY_MS,
                    "queue": {"type": "droptail", "limit_pkts": sh["queue_pkts"]},
                },
                "access": {"rate_mbps": 1000, "queue": {"type": "droptail", "limit_pkts": 1000}},
            }
        },
        "flows": [
            {
                "name": "f",
                "count": sh["flows"],
                "variant": v["ours"],
                "rtt_ms": RTT_MS,
                "start_s": {"uniform": [0, 1]},
                "tcp": tcp,
            }
        ],
    }


def build_highbdp_scenario(variant: str, shape: str, seed: int) -> dict:
    v, sh = VARIANTS[variant], HIGHBDP[shape]
    tcp = variant_tcp(variant)
    tcp["max_window_pkts"] = -(-HIGHBDP_BUFFER_BYTES // tcp["mss_bytes"])
    rtt = sh["rtt_ms"]
    return {
        "name": f"ns3-crosscheck-{variant}-{shape}-s{seed}",
        "description": f"{sh['flows']} x {v['ours']}, {sh['rate_mbps']} Mb/s, {rtt} ms RTT, DropTail {sh['queue_pkts']} p (1 BDP), "
                       f"from the start; compared with ns-3: {v['about']}",
        "duration_s": sh["duration_s"],
        "warmup_s": sh["warmup_s"],
        "seed": seed,
        "topology": {
            "dumbbell": {
                "bottleneck": {"rate_mbps": sh["rate_mbps"], "delay_ms": rtt / 2 - 2 * ACCESS_DELAY_MS,
                               "queue": {"type": "droptail", "limit_pkts": sh["queue_pkts"]}},
                "access": {"rate_mbps": 1000, "queue": {"type": "droptail", "limit_pkts": 1000}},
            }
        },
        "flows": [
            {
                "name": "f",
                "count": sh["flows"],
                "variant": v["ours"],
                "rtt_ms": rtt,
                "start_s": rtt / 1000,  # ns-3's handshake: its first data segment leaves one RTT after 0
                "tcp": tcp,
            }
        ],
    }  # fmt: skip


def stored_ns3_runs(path: Path) -> list[dict]:
    """The runs of an earlier invocation's JSON that have an ns-3 side without an error."""
    runs = json.loads(path.read_text())["runs"]
    return [r for r in runs if r.get("ns3") and "error" not in r["ns3"] and r.get("ns3_command")]


def ns3_config(variant: str, extra: str | None = None) -> dict:
    """The ns-3 side of a variant (or of an --extras configuration)."""
    v = VARIANTS[variant]
    c = {"ns3": v["ns3"], "recovery": v["recovery"], "sack": v["sack"], "set": list(v["set"]), "about": v["about"]}
    if extra:
        e = EXTRAS[extra]
        for k in ("recovery", "sack", "set", "about"):
            if k in e:
                c[k] = e[k]
    return c


def ns3_command(scenario: dict, variant: str, extra: str | None = None) -> tuple[list[str], list[str]]:
    """ns3_dumbbell_probe.py's arguments for our scenario; and the mapping notes."""
    c = ns3_config(variant, extra)
    args, notes = bench.ns3_args_for(scenario, c["ns3"])
    notes = [n for n in notes if not n.startswith("variant ")]  # the variant pairing is VARIANTS'
    if scenario["flows"][0]["tcp"].get("max_window_pkts", 4000) > 4000:
        # Beyond the reference's 4000 segments (ns-3: dumbbell.py's 4 MiB default buffers).
        args += ["--buffer-bytes", str(HIGHBDP_BUFFER_BYTES)]
    if isinstance(scenario["flows"][0].get("start_s"), (int, float)):
        # A high-BDP case: ns-3 starts at 0 (--start-spread-s 0), ours after the handshake.
        notes = [n for n in notes if not n.startswith("fixed start ")]
    sets = []
    for s in c["set"]:
        sets += ["--set", s]
    return sets + ["--", *args, "--recovery", c["recovery"], "--sack", c["sack"]], notes


# --------------------------------------------------------------------------- running


def run_ours(scenario: dict) -> dict:
    import tcpsim  # noqa: PLC0415  (the project's .venv)

    t0 = time.perf_counter()
    r = tcpsim.run(scenario)
    wall = time.perf_counter() - t0
    g = [f["goodput_bps"] / 1e6 for f in r["flows"]]
    bn = next(link for link in r["links"] if link["name"] == "bottleneck")
    return {
        "per_flow_mbps": g,
        "aggregate_mbps": sum(g),
        "wire_mbps": sum(f["throughput_bps"] for f in r["flows"]) / 1e6,
        "jain": r["fairness"]["jain"],
        "mean_queue_pkts": bn["mean_queue_pkts"],
        "drops": bn["drops"],
        "utilization": bn["utilization"],
        "timeouts": sum(f.get("timeouts", 0) for f in r["flows"]),
        "fast_recoveries": sum(f.get("fast_recoveries", 0) for f in r["flows"]),
        "retransmits": sum(f.get("retransmits", 0) for f in r["flows"]),
        "wall_s": wall,
    }


def run_ns3(py: Path, peer_script: Path, probe_args: list[str], timeout_s: float | None = None) -> dict:
    """One ns-3 run through the probe: bench.run_ns3 (its 30-minute limit), or with `timeout_s`
    the same measured runner with that limit (ns-3 at 100 Mb/s x 200 ms takes longer)."""
    cmd = [str(py), str(PROBE), "--peer-script", str(peer_script), *probe_args]
    if timeout_s is None:
        n = bench.run_ns3(py, PROBE, cmd[2:], 1)
        if "error" in n:
            return n
    else:
        p = bench.run_measured(cmd, cwd=PROBE.parent, timeout=timeout_s)
        if p.rc != 0 or p.timed_out:
            return {
                "error": f"exit {p.rc}{' (timed out)' if p.timed_out else ''}: {bench.tail(p.err, 8)}",
                "command": cmd,
            }
        line = [x for x in p.out.strip().splitlines() if x.startswith("{")][-1]
        n = {"raw": json.loads(line), "process_wall_s": {"median": p.wall_s}}
    o = n["raw"]
    return {
        "per_flow_mbps": o["per_flow_goodput_mbps"],
        "aggregate_mbps": o["aggregate_goodput_mbps"],
        "jain": o["jain_fairness"],
        "mean_queue_pkts": o.get("mean_queue_pkts"),
        "drops": o["window_queue_drops"] + o["window_error_drops"],
        "utilization": o["link_utilization"],
        "wire_mbps": o["link_utilization"] * o["bottleneck_mbps"],
        "timeouts": o.get("timeouts_window"),
        "fast_recoveries": o.get("fast_recoveries_window"),
        "retransmits": o.get("retransmissions_window"),
        "duplicate_arrivals": o["bneck_data_pkts_rx"] - o["total_segments_received"],
        "wall_s": n["process_wall_s"]["median"],
        "run_wall_s": o["run_wall_s"],
        "config_defaults": o.get("config_defaults"),
        "recovery": o["recovery"],
        "sack": o["sack"],
        "raw": o,
    }


# --------------------------------------------------------------------------- comparing

METRICS = [
    # key, label, how the difference is given
    ("aggregate_mbps", "aggregate goodput Mb/s", "pct"),
    ("flow_min_mbps", "per-flow goodput min Mb/s", "pct"),
    ("flow_max_mbps", "per-flow goodput max Mb/s", "pct"),
    ("jain", "Jain index", "abs"),
    ("mean_queue_pkts", "mean queue pkts", "pct"),
    ("drops", "drops (window)", "pct"),
    ("timeouts", "timeouts (window)", "pct"),
]
SHOWN_ONLY = {"drops", "timeouts"}  # context for the explanations, not held to the tolerance


def seed_mean(runs: list[dict]) -> dict:
    """Per-metric mean over seeds (per-flow min and max taken in each run first)."""

    def m(f):
        xs = [f(r) for r in runs if f(r) is not None]
        return statistics.fmean(xs) if xs else None

    return {
        "aggregate_mbps": m(lambda r: r["aggregate_mbps"]),
        "flow_min_mbps": m(lambda r: min(r["per_flow_mbps"])),
        "flow_max_mbps": m(lambda r: max(r["per_flow_mbps"])),
        "jain": m(lambda r: r["jain"]),
        "mean_queue_pkts": m(lambda r: r["mean_queue_pkts"]),
        "drops": m(lambda r: r["drops"]),
        "timeouts": m(lambda r: r.get("timeouts")),
        "fast_recoveries": m(lambda r: r.get("fast_recoveries")),
        "retransmits": m(lambda r: r.get("retransmits")),
    }


def diff(ours: float | None, ns3: float | None, how: str) -> float | None:
    if ours is None or ns3 is None:
        return None
    if how == "abs":
        return ours - ns3
    return 100.0 * (ours - ns3) / ns3 if ns3 else None


def within(key: str, d: float | None) -> bool | None:
    """The ~10 % rule applies to throughput and queue; Jain by 0.1 absolute; drops and timeouts
    are shown only."""
    if d is None or key in SHOWN_ONLY:
        return None
    if key == "jain":
        return abs(d) <= 0.1
    return abs(d) <= TOLERANCE_PCT


def fmt(x: float | None, key: str) -> str:
    if x is None:
        return "-"
    if key == "jain":
        return f"{x:.3f}"
    if key in SHOWN_ONLY:
        return f"{x:,.0f}"
    if key == "mean_queue_pkts":
        return f"{x:.1f}"
    return f"{x:.3f}"


def fmt_diff(d: float | None, how: str) -> str:
    if d is None:
        return "-"
    return f"{d:+.3f}" if how == "abs" else f"{d:+.1f} %"


def markdown_table(rows: list[dict]) -> str:
    """One row per variant and dumbbell; each cell "tcpsim / ns-3 (difference)", in bold when
    outside the tolerance."""
    head = ["variant", "dumbbell"] + [lab for _, lab, _ in METRICS]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = [r["label"], r["shape"]]
        for key, _, how in METRICS:
            d = diff(r["ours"].get(key), r["ns3"].get(key), how)
            cell = f"{fmt(r['ours'].get(key), key)} / {fmt(r['ns3'].get(key), key)} ({fmt_diff(d, how)})"
            cells.append(f"**{cell}**" if within(key, d) is False else cell)
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out)


# The high-BDP table: judged on goodput and timeouts; the rest is shown for the explanations.
HIGHBDP_METRICS = [
    ("aggregate_mbps", "goodput Mb/s", "pct"),
    ("timeouts", "timeouts", "pct"),
    ("fast_recoveries", "fast recoveries", "pct"),
    ("drops", "drops", "pct"),
    ("retransmits", "retransmissions", "pct"),
]


def timeouts_within(ours: float | None, ns3: float | None) -> bool | None:
    """Within 10 % of ns-3's count: with counts of 0 or 1 per run, the same count."""
    if ours is None or ns3 is None:
        return None
    return abs(ours - ns3) <= TOLERANCE_PCT / 100 * ns3


def highbdp_verdict(variant: str, shape: str, ours: dict, ns3: dict) -> str:
    g = diff(ours.get("aggregate_mbps"), ns3.get("aggregate_mbps"), "pct")
    t = timeouts_within(ours.get("timeouts"), ns3.get("timeouts"))
    if g is None or t is None:
        return "no ns-3 result"
    if abs(g) <= TOLERANCE_PCT and t:
        return "within 10 %"
    outside = " and ".join(w for w, bad in (("goodput", abs(g) > TOLERANCE_PCT), ("timeouts", not t)) if bad)
    known = KNOWN_DEVIATIONS.get((variant, shape))
    return f"differs ({outside}): {known}" if known else f"outside 10 % ({outside})"


def highbdp_cells(r: dict) -> list[str]:
    cells = [r["label"], r["shape"]]
    for key, _, how in HIGHBDP_METRICS:
        a, b = r["ours"].get(key), r["ns3"].get(key)
        d = diff(a, b, how)
        f = (
            (lambda x: "-" if x is None else f"{x:.2f}")
            if key == "aggregate_mbps"
            else (lambda x: "-" if x is None else f"{x:,.0f}")
        )
        cells.append(f"{f(a)} / {f(b)}" + (f" ({fmt_diff(d, how)})" if key == "aggregate_mbps" else ""))
    cells.append(r["verdict"])
    return cells


def highbdp_markdown(rows: list[dict]) -> str:
    head = (
        ["variant", "case"] + [lab for _, lab, _ in HIGHBDP_METRICS] + ["within 10 % of ns-3 on goodput and timeouts"]
    )
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(highbdp_cells(r)) + " |" for r in rows]
    return "\n".join(out)


def highbdp_text(rows: list[dict]) -> str:
    head = ["variant", "case"] + [lab for _, lab, _ in HIGHBDP_METRICS] + ["verdict"]
    return bench.table([highbdp_cells(r) for r in rows], head) + "\n  (tcpsim / ns-3; counts over the whole run)"


def text_table(rows: list[dict]) -> str:
    header = ["variant", "dumbbell"] + [lab for _, lab, _ in METRICS]
    lines = []
    for r in rows:
        cells = [r["label"], r["shape"]]
        for key, _, how in METRICS:
            d = diff(r["ours"].get(key), r["ns3"].get(key), how)
            w = within(key, d)
            flag = "" if w in (None, True) else " !"
            cells.append(f"{fmt(r['ours'].get(key), key)} / {fmt(r['ns3'].get(key), key)} ({fmt_diff(d, how)}){flag}")
        lines.append(cells)
    return bench.table(lines, header) + "\n  (tcpsim / ns-3 (difference); ! = outside the tolerance; means over seeds)"


# --------------------------------------------------------------------------- main


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description="tcpsim against ns-3.44, variant by variant, on the same dumbbells.")
    p.add_argument(
        "--cases",
        choices=["dumbbell", "highbdp"],
        default="dumbbell",
        help="dumbbell: the multi-flow dumbbells of SHAPES (default); highbdp: the high-BDP cases of HIGHBDP, "
        f"variants {', '.join(HIGHBDP_VARIANTS)}, judged on goodput and timeouts",
    )
    p.add_argument(
        "--variants",
        help=f"comma-separated, from {', '.join(VARIANTS)}, or `family` for {', '.join(FAMILY)} "
        f"(default: {', '.join(DEFAULT_VARIANTS)}; {', '.join(HIGHBDP_VARIANTS)} with --cases highbdp)",
    )
    p.add_argument(
        "--shapes",
        help=f"comma-separated, from {', '.join(SHAPES)} (default: all), or with --cases highbdp from {', '.join(HIGHBDP)} (default: {next(iter(HIGHBDP))})",
    )
    p.add_argument("--seeds", help="comma-separated seeds (default 1,2; 1 with --cases highbdp)")
    p.add_argument(
        "--extras",
        nargs="?",
        const=",".join(EXTRAS),
        default="",
        help=f"also run these ns-3 configurations (default when given: all of {', '.join(EXTRAS)})",
    )
    p.add_argument(
        "--extras-only",
        action="store_true",
        help="run only the --extras configurations (their variants' tcpsim runs too)",
    )
    p.add_argument("--no-ns3", action="store_true", help="tcpsim only")
    p.add_argument(
        "--ns3-results",
        help="an earlier run's JSON: take ns-3's side from it wherever it ran the same ns-3 command (ns-3 is deterministic)",
    )
    p.add_argument("--ns3-python", help="Python with the ns3 package (default .venv-ns3/bin/python)")
    p.add_argument("--ns3-script", help="the peer's dumbbell.py (default ../shared/peers/ns3/dumbbell.py)")
    p.add_argument("--install-ns3", action="store_true", help="create .venv-ns3 if it is missing (~2 min)")
    p.add_argument("--dry-run", action="store_true", help="print the scenarios' ns-3 commands and exit")
    p.add_argument("--json", help="write everything here (default bench-results/ns3-crosscheck-<date>.json)")
    p.add_argument("--markdown", action="store_true", help="also print the table as Markdown")
    a = p.parse_args(argv)
    high = a.cases == "highbdp"
    shapes = HIGHBDP if high else SHAPES
    a.variants = a.variants or ",".join(HIGHBDP_VARIANTS if high else DEFAULT_VARIANTS)
    a.variants = a.variants.replace("family", ",".join(FAMILY))
    a.shapes = a.shapes or (next(iter(HIGHBDP)) if high else ",".join(SHAPES))
    a.seeds = a.seeds or ("1" if high else "1,2")
    a.variants = [v.strip() for v in a.variants.split(",") if v.strip()]
    a.shapes = [s.strip() for s in a.shapes.split(",") if s.strip()]
    a.seeds = [int(s) for s in a.seeds.split(",") if s.strip()]
    a.extras = [e.strip() for e in a.extras.split(",") if e.strip()]
    if high and (a.extras or a.extras_only):
        p.error("--extras are for --cases dumbbell")
    for name, given, known in (
        ("--variants", a.variants, VARIANTS),
        ("--shapes", a.shapes, shapes),
        ("--extras", a.extras, EXTRAS),
    ):
        bad = [x for x in given if x not in known]
        if bad:
            p.error(f"{name}: unknown {bad}; choose from {', '.join(known)}")
    a.extras = [e for e in a.extras if EXTRAS[e]["variant"] in a.variants]
    return a


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    started = dt.datetime.now(dt.UTC)
    # (label, variant, extra): the variants, then the extra ns-3 configurations.
    configs = [] if args.extras_only else [(v, v, None) for v in args.variants]
    configs += [(e, EXTRAS[e]["variant"], e) for e in args.extras]

    if args.dry_run:
        for shape in args.shapes:
            for label, v, extra in configs:
                s = build_scenario(v, shape, args.seeds[0], extra)
                cmd, notes = ns3_command(s, v, extra)
                print(
                    f"{label} {shape}: tcpsim {s['flows'][0]['variant']} tcp={json.dumps(s['flows'][0]['tcp'], sort_keys=True)}"
                )
                print(f"  ns-3: ns3_dumbbell_probe.py --peer-script dumbbell.py {' '.join(cmd)}")
                for n in notes:
                    print(f"  mapping note: {n}")
        return 0

    stored = stored_ns3_runs(Path(args.ns3_results)) if args.ns3_results else []
    ns3_py = ns3_script = None
    if not args.no_ns3:
        ns3_py, ns3_script, msg = bench.find_ns3(
            argparse.Namespace(
                no_ns3=False, ns3_script=args.ns3_script, ns3_python=args.ns3_python, install_ns3=args.install_ns3
            )
        )
        log(f"ns3_crosscheck: {msg}")
        if ns3_py is None:
            return 2

    n_ns3 = len(args.shapes) * len(configs) * len(args.seeds)
    each = (
        "1-3 min each at 100 ms, 20 min to over an hour at 200 ms" if args.cases == "highbdp" else "about 20-40 s each"
    )
    log(
        f"ns3_crosscheck: {len(args.shapes)} case(s) x {len(configs)} configuration(s) x {len(args.seeds)} seed(s): {n_ns3} ns-3 runs, one at a time ({each})"
    )
    runs: list[dict] = []
    for shape in args.shapes:
        for label, v, extra in configs:
            for seed in args.seeds:
                s = build_scenario(v, shape, seed, extra)
                entry = {"label": label, "variant": v, "extra": extra, "shape": shape, "seed": seed, "scenario": s}
                # An extra without settings of its own reuses its variant's tcpsim run.
                prior = next((r for r in runs if r["scenario"] == s), None)
                entry["ours"] = prior["ours"] if prior else run_ours(s)
                cmd, notes = ns3_command(s, v, extra)
                kept = next((r["ns3"] for r in stored if r.get("ns3_command") == cmd), None)
                if kept is not None:
                    entry.update(ns3_command=cmd, mapping_notes=notes, ns3=kept, ns3_from=args.ns3_results)
                    log(f"ns3_crosscheck: {label} {shape} seed {seed}: ns-3's side from {args.ns3_results}")
                elif ns3_py:
                    entry["ns3_command"] = cmd
                    entry["mapping_notes"] = notes
                    t0 = time.perf_counter()
                    entry["ns3"] = run_ns3(ns3_py, ns3_script, cmd, HIGHBDP_NS3_TIMEOUT_S if shape in HIGHBDP else None)
                    if "error" in entry["ns3"]:
                        log(f"ns3_crosscheck: ns-3 FAILED for {label} {shape} seed {seed}: {entry['ns3']['error']}")
                    else:
                        log(
                            f"ns3_crosscheck: {label} {shape} seed {seed}: goodput {entry['ours']['aggregate_mbps']:.3f} / "
                            f"{entry['ns3']['aggregate_mbps']:.3f} Mb/s, queue {entry['ours']['mean_queue_pkts']:.1f} / "
                            f"{entry['ns3']['mean_queue_pkts'] or 0:.1f} p, timeouts {entry['ours']['timeouts']} / "
                            f"{entry['ns3']['timeouts']} ({time.perf_counter() - t0:.0f} s)"
                        )
                runs.append(entry)

    rows = []
    for shape in args.shapes:
        for label, v, extra in configs:
            rs = [r for r in runs if r["label"] == label and r["shape"] == shape]
            ok = [r for r in rs if r.get("ns3") and "error" not in r["ns3"]]
            rows.append({
                "label": label, "variant": v, "extra": extra, "shape": shape,
                "about": ns3_config(v, extra)["about"],
                "ours": seed_mean([r["ours"] for r in rs]),
                "ns3": seed_mean([r["ns3"] for r in ok]) if ok else {k: None for k, _, _ in METRICS},
                "seeds": [r["seed"] for r in ok],
            })  # fmt: skip
            if args.cases == "highbdp":
                rows[-1]["verdict"] = highbdp_verdict(v, shape, rows[-1]["ours"], rows[-1]["ns3"])

    sh0 = shape_of(args.shapes[0])
    print(
        f"tcpsim vs ns-3.44: {', '.join(args.shapes)}; seeds {', '.join(map(str, args.seeds))}; "
        f"{sh0.get('rtt_ms', RTT_MS) if args.cases == 'dumbbell' else 'each case its'} ms RTT, DropTail of about one BDP, "
        f"window [{sh0['warmup_s']}, {sh0['duration_s']}] s"
    )
    for label, v, extra in configs:
        print(f"  {label}: {ns3_config(v, extra)['about']}")
    high = args.cases == "highbdp"
    print(highbdp_text(rows) if high else text_table(rows))
    if args.markdown:
        print()
        print(highbdp_markdown(rows) if high else markdown_table(rows))

    tag = "-highbdp" if args.cases == "highbdp" else ""
    out = (
        Path(args.json) if args.json else REPO / "bench-results" / f"ns3-crosscheck{tag}-{started:%Y-%m-%d-%H%M%S}.json"
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    elapsed = (dt.datetime.now(dt.UTC) - started).total_seconds()
    out.write_text(
        json.dumps(
            {
                "date": started.isoformat(timespec="seconds"),
                "elapsed_s": elapsed,
                "machine": bench.machine_info(),
                "cases": args.cases,
                "rows": rows,
                "runs": runs,
            },
            indent=1,
            default=str,
        )
        + "\n"
    )
    print(f"\nAll figures: {out} ({elapsed:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
