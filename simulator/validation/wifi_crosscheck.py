#!/usr/bin/env python3
"""tcpsim's 802.11b/g link beside ns-3.44's (issue 18): goodput and MAC retries, within 10 %.

    .venv/bin/python simulator/validation/wifi_crosscheck.py [--seeds 3] [--only 54Mbps] [--json PATH]

The cases are ns3_wifi_reference.py's matrix (one station downloading over each rate's SNR
points, TCP and UDP; 2 and 4 stations uploading at 30 dB), its numbers read from
simulator/validation/results/ns3-wifi-reference.json (runs it lacks show tcpsim alone). tcpsim
runs the same network in-process (the `tcpsim` package of this Python): one AP and N stations in
one BSS (`topology.graph.wifi`), the rate, SNR, retry limit (7), short slot (11g) and queue (100
packets) of the ns-3 run, and its contention window kept after a drop (`cw_after_drop: keep`,
ns-3's `Txop::UpdateFailedCw`); TCP as ns-3.44's sockets (`profile: ns3`: IW 10, an ACK per 2 segments,
SACK) with MSS 1448 and 52 bytes of TCP/IP headers (1500-byte packets) and a 4 MiB receive
window, the `sack` variant (RFC 6675 recovery) for TcpNewReno with SACK; UDP at 1.5 × the PHY
rate per station, 1500-byte packets, goodput counted as ns-3's sink does (1472 bytes of payload
each). Flows start at 1 s and are measured from 3 to 17 s, as ns-3's; tcpsim's figures are means
over `--seeds` seeds.

Compared: goodput (all stations) and MAC retries (data frames sent again by the transmitting
side: the AP downlink, the stations uplink) as tcpsim / ns-3 (difference), flagged beyond 10 %;
shown beside them, the retry fraction, frames dropped at the retry limit and (tcpsim) collisions.
docs/simulator.md's Wi-Fi section has the table and the reasons for each disagreement.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import ns3_wifi_reference as ns3  # noqa: E402  (the matrix, the rates, the packet sizes)

TOLERANCE_PCT = 10.0
APP_START_S = 1.0  # ns-3's applications start after association
WINDOW_S = (3.0, 17.0)  # ns-3's: a 2 s warm-up after the start
QUEUE_PKTS = 100  # ns3_wifi_reference.py's --queue-pkts default
RECEIVE_WINDOW_BYTES = 4 * 1024 * 1024


def scenario(case: dict[str, Any], seed: int) -> dict[str, Any]:
    """Our side of one ns-3 run: the same BSS, traffic and window."""
    std = ns3.standard_of(case["rate"])
    n = case["stations"]
    stations = [f"sta{i}" for i in range(n)]
    rate = ns3.STANDARDS[std]["rates"][case["rate"]]
    if case["traffic"] == "tcp":
        app: dict[str, Any] = {
            "variant": "sack",
            "tcp": {
                "profile": "ns3",
                "mss_bytes": ns3.TCP_MSS,
                "header_bytes": ns3.IP_PACKET_BYTES - ns3.TCP_MSS,
                "max_window_pkts": RECEIVE_WINDOW_BYTES // ns3.TCP_MSS,
            },
        }
    else:
        app = {"type": "udp", "app": {"type": "cbr", "rate_mbps": 1.5 * rate, "packet_bytes": ns3.IP_PACKET_BYTES}}
    ends = [("ap", s) if case["direction"] == "down" else (s, "ap") for s in stations]
    return {
        "duration_s": WINDOW_S[1],
        "warmup_s": WINDOW_S[0],
        "seed": seed,
        "topology": {
            "graph": {
                "nodes": ["ap", *stations],
                "links": [],
                "wifi": [
                    {
                        "name": "wlan",
                        "ap": "ap",
                        "stations": [{"node": s, "snr_db": case["snr_db"]} for s in stations],
                        "standard": "802.11b" if std == "11b" else "802.11g",
                        "rate_mbps": rate,
                        "retry_limit": 7,
                        "cw_after_drop": "keep",
                        "queue": {"type": "droptail", "limit_pkts": QUEUE_PKTS},
                    }
                ],
            }
        },
        "flows": [{"name": f"{a}-{z}", "from": a, "to": z, "start_s": APP_START_S, **app} for a, z in ends],
    }


def ours(case: dict[str, Any], seeds: int) -> dict[str, float]:
    """tcpsim's figures for a case, means over the seeds."""
    import tcpsim  # noqa: PLC0415  (the project's .venv)

    payload = 1.0 if case["traffic"] == "tcp" else ns3.UDP_PAYLOAD / ns3.IP_PACKET_BYTES
    uplink = case["direction"] == "up"  # the stations transmit on their `-rev` links
    runs = []
    for seed in range(1, seeds + 1):
        r = tcpsim.run(scenario(case, seed))
        macs = [link["wifi"] for link in r["links"] if "wifi" in link and link["name"].endswith("-rev") == uplink]
        frames = sum(m["frames_sent"] for m in macs)
        retries = sum(m["mac_retries"] for m in macs)
        runs.append(
            {
                "goodput_mbps": payload * sum(f["goodput_bps"] for f in r["flows"]) / 1e6,
                "mac_retries": retries,
                "retry_fraction": retries / frames if frames else 0.0,
                "retry_limit_drops": sum(m["retry_drops"] for m in macs),
                "collisions": sum(m["collisions"] for m in macs),
                "timeouts": sum(f["timeouts"] for f in r["flows"]),
            }
        )
    return {k: statistics.fmean(run[k] for run in runs) for k in runs[0]}


def pct(a: float, b: float | None) -> float | None:
    return None if b is None or b == 0 else 100.0 * (a - b) / b


def cell(a: float, b: float | None, digits: int) -> str:
    """`ours / ns-3 (difference)`, in bold beyond the tolerance."""
    if b is None:
        return f"{a:.{digits}f} / -"
    d = pct(a, b)
    text = f"{a:.{digits}f} / {b:.{digits}f} ({d:+.1f} %)" if d is not None else f"{a:.{digits}f} / {b:.{digits}f}"
    return f"**{text}**" if d is not None and abs(d) > TOLERANCE_PCT else text


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--reference", default=str(ns3.REFERENCE))
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--only", default="", help="cases whose key contains this text")
    p.add_argument("--json", help="also write every case's figures here")
    a = p.parse_args()
    runs = ns3.load_reference(Path(a.reference))["runs"]
    rows = []
    print("| case | goodput Mb/s | MAC retries | retry fraction | dropped at the limit | collisions (tcpsim) |")
    print("|---|---|---|---|---|---|")
    for case in ns3.matrix():
        if a.only not in case["key"]:
            continue
        mine = ours(case, a.seeds)
        theirs = runs.get(case["key"], {}).get("summary", {})
        rows.append({"case": case, "tcpsim": mine, "ns3": theirs or None})
        fraction = theirs.get("retry_fraction")
        print(
            f"| {case['key']} | {cell(mine['goodput_mbps'], theirs.get('goodput_mbps'), 3)} | "
            f"{cell(mine['mac_retries'], theirs.get('mac_retries'), 0)} | "
            f"{mine['retry_fraction']:.3f} / {'-' if fraction is None else f'{fraction:.3f}'} | "
            f"{mine['retry_limit_drops']:.0f} / {theirs.get('retry_limit_drops', '-')} | {mine['collisions']:.0f} |",
            flush=True,
        )
    if a.json:
        Path(a.json).write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
