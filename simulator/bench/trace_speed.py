#!/usr/bin/env python3
"""The core's speed on a trace-driven, scheduled or Wi-Fi bottleneck beside the same mean rate
fixed (issue 18).

    python3 simulator/bench/trace_speed.py [--tcpsim PATH] [--traces DIR] [--runs 5] [--links NAME ...]

The reference scenario (`simulator/scenarios/reference-dumbbell.json`: its flows, TCP settings
and access links) over 140 s, one pass of TMobile-LTE-short (16.70 Mb/s mean; data on `.down`,
ACKs on `.up`) against a 16.7 Mb/s fixed bottleneck, with 1 and 64 flows, under Drop-Tail (150
packets, the reference's) and CoDel; and three rate schedules of the same mean: 16.7 Mb/s as a
one-point schedule (the departure rule's arithmetic alone), a handover between 25 and 8.4 Mb/s
every 2 s (steps), and the same as 2-second ramps (linear); and the same flows from a server
through an access point (1 Gb/s, 24 ms) to one 802.11g station at 54 Mb/s and 30 dB, the AP's
queue Drop-Tail 150 (the Wi-Fi link has no other). Each case runs `tcpsim run` `--runs` times; the table shows
the median wall time and events per second of the core's event loop (`stats`, which leaves out
reading the scenario and the trace files).
"""

from __future__ import annotations

import argparse
import copy
import json
import statistics
import subprocess
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "simulator/scenarios/reference-dumbbell.json"
QUEUES = {"Drop-Tail 150": {"type": "droptail", "limit_pkts": 150}, "CoDel": {"type": "codel"}}


def scenario(flows: int, link: dict[str, Any], queue: dict[str, Any]) -> dict[str, Any]:
    """The reference scenario with `flows` flows, 140 s, and `link` (a rate or a trace) as its bottleneck."""
    s = copy.deepcopy(json.loads(REFERENCE.read_text()))
    s["duration_s"] = 140
    s["flows"][0]["count"] = flows
    bottleneck = s["topology"]["dumbbell"]["bottleneck"]
    del bottleneck["rate_mbps"]
    bottleneck.update(link, queue=queue)
    return s


def alternating(shape: str) -> dict[str, Any]:
    """A rate schedule of mean 16.7 Mb/s over the 140 s: 25 and 8.4 Mb/s in turn every 2 s,
    held (`step`) or joined by ramps (`linear`)."""
    points = [[float(t), 25.0 if t % 4 == 0 else 8.4] for t in range(0, 141, 2)]
    return {"schedule": {"rate_mbps": {"points": points, "shape": shape}}}


def wifi_scenario(flows: int) -> dict[str, Any]:
    """The reference's flows from `server` through `ap` to the 802.11g station `sta`."""
    s = copy.deepcopy(json.loads(REFERENCE.read_text()))
    s["duration_s"] = 140
    flow = s["flows"][0]
    del flow["rtt_ms"]
    flow.update(count=flows, **{"from": "server", "to": "sta"})
    s["topology"] = {
        "graph": {
            "nodes": ["server", "ap", "sta"],
            "links": [
                {
                    "from": "server",
                    "to": "ap",
                    "rate_mbps": 1000,
                    "delay_ms": 24,
                    "queue": {"type": "droptail", "limit_pkts": 1000},
                }
            ],
            "wifi": [
                {
                    "name": "wlan",
                    "ap": "ap",
                    "stations": [{"node": "sta", "snr_db": 30}],
                    "standard": "802.11g",
                    "rate_mbps": 54,
                    "queue": QUEUES["Drop-Tail 150"],
                }
            ],
        }
    }
    return s


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tcpsim", default="simulator/target/release/tcpsim")
    p.add_argument("--traces", default="/work/shared/traces/cellular")
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--links", nargs="*", help="only these bottlenecks (by the table's name)")
    a = p.parse_args()
    trace = {
        "trace": {"file": f"{a.traces}/TMobile-LTE-short.down", "reverse_file": f"{a.traces}/TMobile-LTE-short.up"}
    }
    links = {
        "16.7 Mb/s fixed": {"rate_mbps": 16.7},
        "TMobile-LTE-short": trace,
        "16.7 Mb/s schedule": {"schedule": {"rate_mbps": {"points": [[0, 16.7]]}}},
        "25/8.4 Mb/s steps": alternating("step"),
        "25/8.4 Mb/s ramps": alternating("linear"),
    }
    links = {name: link for name, link in links.items() if not a.links or name in a.links}
    print(
        "| flows | queue | bottleneck | events | wall s | events/s | bottleneck pkts per wall-s | timeouts | peak pkts |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    wifi_name = "802.11g 54 Mb/s, 30 dB"
    with tempfile.TemporaryDirectory() as tmp:
        for flows in (1, 64):
            # (queue, bottleneck, scenario, the bottleneck link's name)
            cases = [
                (qname, lname, scenario(flows, link, queue), "bottleneck")
                for qname, queue in QUEUES.items()
                for lname, link in links.items()
            ]
            if not a.links or wifi_name in a.links:
                cases.append(("Drop-Tail 150", wifi_name, wifi_scenario(flows), "wlan-sta"))
            for qname, lname, s, name in cases:
                path = Path(tmp) / "scenario.json"
                path.write_text(json.dumps(s))
                results = [
                    json.loads(subprocess.run([a.tcpsim, "run", str(path)], capture_output=True, check=True).stdout)
                    for _ in range(a.runs)
                ]
                r = results[0]
                wall = statistics.median(x["stats"]["wall_s"] for x in results)
                bottleneck = next(x for x in r["links"] if x["name"] == name)
                timeouts = sum(f["timeouts"] for f in r["flows"])
                print(
                    f"| {flows} | {qname} | {lname} | {r['stats']['events']:,} | {wall:.3f} | "
                    f"{r['stats']['events'] / wall / 1e6:.1f} M | {bottleneck['packets'] / wall / 1e6:.2f} M | "
                    f"{timeouts} | {r['stats']['peak_packets']} |",
                    flush=True,
                )


if __name__ == "__main__":
    main()
