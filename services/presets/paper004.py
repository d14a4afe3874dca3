"""Paper 004's experiments as presets: Subedi, Najiminaini & Trajković, "Performance Evaluation
of TCP Tahoe, Reno, Reno with SACK, and NewReno Using OPNET Modeler", §3-4.

- `paper004-wired-one-loss` (§4.2.1, Fig. 6), `paper004-wired-two-losses` (§4.2.2, Fig. 7),
  `paper004-table3-wired-random-loss` (§4.2.3, Table 3, Figs. 8-10): a 10 MB FTP download over
  a 1.5 Mb/s wired path with one loss, two losses in a window, or 0.05 % packet loss.
- `paper004-table2-wireless-attenuation` (§4.1, Table 2, Figs. 3-5): a 50 MB download to a
  mobile client whose link loses packets during an attenuation period (a constant-rate `outage`
  loss, the stand-in from before the core had a wireless link).
- `paper004-table2-wireless-80211` (the same experiment over an 802.11b link, issue 18): the
  client is a station of the base station's 802.11b network at 1 Mb/s, and the attenuation is
  its SNR falling for the same period; MAC retries, ACKs and contention are modelled.

Each preset is one flow; the paper's four variants are `flows[0].variant` (tahoe, reno, sack,
newreno-sbs), so a sweep of that path gives a table's four rows. Every TCP parameter of the
paper's Table 1 (§4) is the `opnet` TCP profile, which each flow's `tcp` names (`opnet_tcp()`
reads the table; a test keeps the two equal); `bench/reproduce.py 004` runs them all
and docs/validation/paper004.md compares them with the paper.
"""

from __future__ import annotations

import math
from typing import Any

from services.presets.published import read_json
from services.presets.registry import Parameter, Preset, Published, PublishedColumn, PublishedTable, Reference
from services.scenarios.schema import SNR_DB_RANGE

__all__ = [
    "ATTENUATION_S",
    "CLEAR_SNR_DB",
    "CLOUD_LATENCY",
    "DEFAULT_FADE_SNR_DB",
    "FADE_SNR",
    "DATA_FILE",
    "LOSS_FRACTION",
    "MSS_BYTES",
    "PRESETS",
    "VARIANT",
    "VARIANTS",
    "WIRED_FILE_BYTES",
    "WIRELESS_FILE_BYTES",
    "opnet_tcp",
    "wired_scenario",
    "wireless_80211_scenario",
    "wireless_scenario",
]

CITATION = (
    'L. Subedi, M. Najiminaini, Lj. Trajković, "Performance Evaluation of TCP Tahoe, Reno, Reno '
    'with SACK, and NewReno Using OPNET Modeler" (OPNET Modeler study, Simon Fraser University)'
)
DATA_FILE = "004_tables.json"
SOURCE = "paper 004 (Subedi, Najiminaini & Trajković, OPNET), transcribed in services/presets/data/" + DATA_FILE

VARIANTS: dict[str, str] = {"Tahoe": "tahoe", "Reno": "reno", "SACK": "sack", "NewReno": "newreno-sbs"}
"""The paper's names (and the data file's keys) -> the core's variants. NewReno is RFC 3782's
Slow-but-Steady, the core's default; with one or two losses per window the Impatient variant
behaves identically (docs/simulator.md)."""

# The override keys the presets declare and the reproduction sweeps or sets
# (services/reproductions/paper004.py): spelled here only.
VARIANT = "flows[0].variant"
"""The one flow's variant: what every experiment of the paper sweeps."""
CLOUD_LATENCY = "cloud_latency_ms"
"""The wired presets' own parameter: one-way latency through the Internet cloud."""
FADE_SNR = "fade_snr_db"
"""The 802.11 preset's own parameter: the client's SNR during the attenuation."""

# Not given by the paper: Ethernet's 1460-byte segments (OPNET sizes the MSS from the
# interface MTU) and decimal megabytes.
MSS_BYTES = 1460
HEADER_BYTES = 40
WIRED_FILE_BYTES = 10_000_000
"""§3: "FTP application is used to transfer 10 MB file"."""
WIRELESS_FILE_BYTES = 50_000_000
"""§3: "A 50 MB file is transferred"."""

LOSS_FRACTION = 107 / 164
"""§4.2.1: the single loss "occurs at 1 min 47 s" of a download that Table 3 puts at about
164 s; we drop the data packet at the same fraction of the file (our download is shorter)."""

ATTENUATION_S = (5 * 60 + 33.0, 6 * 60 + 54.0)
"""§4.1: the window drops "at 5 min 33 sec" and recovers when "the signal strength increases at
6 min 54 sec"."""

WIRED_DURATION_S = 300.0
WIRELESS_DURATION_S = 900.0


def opnet_tcp() -> dict[str, Any]:
    """The paper's Table 1 (§4) in the core's fields, plus the choices it leaves open: what the
    core's `opnet` TCP profile sets, which the presets name.

    Table 1: slow start initial count 1 MSS, receive buffer 65,535 bytes, an ACK per 2 segments
    ("Maximum ACK segment 2"), initial RTO 1 s, minimum 0.5 s, maximum 64 s, RTT gain 0.125,
    deviation gain 0.25, deviation coefficient 4, duplicate-ACK threshold 3. The receive buffer
    holds floor(65535 / 1460) = 44 segments. The delayed-ACK timer (200 ms, OPNET's "Maximum
    ACK Delay") is our choice; the paper does not give it.
    """
    table = read_json(DATA_FILE)["tcp_parameters"]
    return {
        "mss_bytes": MSS_BYTES,
        "header_bytes": HEADER_BYTES,
        "initial_cwnd_pkts": float(table["slow_start_initial_count_mss"]),
        "max_window_pkts": table["receive_buffer_bytes"] // MSS_BYTES,
        "delayed_ack": table["max_ack_segments"] == 2,
        "delack_timeout_s": 0.2,
        "initial_rto_s": float(table["initial_rto_s"]),
        "min_rto_s": float(table["min_rto_s"]),
        "max_rto_s": float(table["max_rto_s"]),
        "rtt_gain": float(table["rtt_gain"]),
        "rttvar_gain": float(table["deviation_gain"]),
        "rttvar_k": float(table["rtt_deviation_coefficient"]),
        "dupack_threshold": table["duplicate_ack_threshold"],
    }


def file_packets(file_bytes: int) -> int:
    """Data segments in a file of `file_bytes`."""
    return math.ceil(file_bytes / MSS_BYTES)


def one_loss_packet() -> int:
    """The data packet dropped in §4.2.1, at 107/164 of the 10 MB file (4469 of 6850)."""
    return round(file_packets(WIRED_FILE_BYTES) * LOSS_FRACTION)


# ---- wired (§3, Fig. 2; §4.2) ----------------------------------------------------------------

CLOUD_LINKS = (1, 2)
"""Indices in `topology.graph.links` of the two 1.5 Mb/s links through the Internet cloud."""
DEFAULT_CLOUD_LATENCY_MS = 1.0
"""§4.2.3: "packet latency of 1 ms" (the only latency the paper gives; used in all three)."""


def wired_scenario(
    loss: dict[str, Any],
    variant: str = "reno",
    seed: int = 1,
    cloud_latency_ms: float = DEFAULT_CLOUD_LATENCY_MS,
    *,
    name: str | None = None,
) -> dict[str, Any]:
    """§3, Fig. 2: server and client each on a 10 Mb/s link to a router, the two routers joined
    through the Internet cloud by 1.5 Mb/s links; one FTP download of 10 MB; `loss` is the
    flow's loss module (scheduled drops or uniform loss just before the client).

    The cloud's latency is split over its two links. Router buffers of 100 packets hold the
    whole 44-segment receive window, so every loss is the loss module's.
    """
    router_queue = {"type": "droptail", "limit_pkts": 100}
    half = cloud_latency_ms / 2
    return {
        "name": name if name is not None else f"paper004-wired-{loss['type']}",
        "duration_s": WIRED_DURATION_S,
        "seed": seed,
        "topology": {
            "graph": {
                "nodes": ["server", "server-router", "cloud", "client-router", "client"],
                "links": [
                    {
                        "name": "server-lan",
                        "from": "server",
                        "to": "server-router",
                        "rate_mbps": 10,
                        "delay_ms": 0,
                        "queue": router_queue,
                    },
                    {
                        "name": "server-router-cloud",
                        "from": "server-router",
                        "to": "cloud",
                        "rate_mbps": 1.5,
                        "delay_ms": half,
                        "queue": router_queue,
                    },
                    {
                        "name": "cloud-client-router",
                        "from": "cloud",
                        "to": "client-router",
                        "rate_mbps": 1.5,
                        "delay_ms": half,
                        "queue": router_queue,
                    },
                    {
                        "name": "client-lan",
                        "from": "client-router",
                        "to": "client",
                        "rate_mbps": 10,
                        "delay_ms": 0,
                        "queue": router_queue,
                    },
                ],
            }
        },
        "flows": [
            {
                "name": "ftp",
                "from": "server",
                "to": "client",
                "variant": variant,
                "app": {"type": "ftp", "bytes": WIRED_FILE_BYTES},
                "tcp": {"profile": "opnet"},
                "loss": loss,
            }
        ],
        "outputs": {"trace_interval_s": 0.1, "trace": ["cwnd", "ssthresh"], "trace_flows": ["ftp"]},
    }


def _expand_cloud_latency(value: Any) -> dict[str, Any]:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
        raise ValueError(f"cloud_latency_ms must be a number of milliseconds >= 0, got {value!r}")
    return {f"topology.graph.links[{i}].delay_ms": value / 2 for i in CLOUD_LINKS}


# ---- wireless (§3, Fig. 1; §4.1) -------------------------------------------------------------

WIRELESS_LINK = 2
DEFAULT_WIRELESS_MBPS = 1.0
DEFAULT_ATTENUATION_LOSS = 0.15


def wireless_scenario(
    variant: str = "reno",
    seed: int = 1,
    attenuation_loss: float = DEFAULT_ATTENUATION_LOSS,
    wireless_mbps: float = DEFAULT_WIRELESS_MBPS,
    *,
    name: str | None = None,
) -> dict[str, Any]:
    """§3, Fig. 1: FTP server -(10 Mb/s)- wired router -(1.5 Mb/s)- base station -(wireless)-
    mobile client; a 50 MB download; the client's data packets are lost with probability
    `attenuation_loss` from 5 min 33 s to 6 min 54 s (§4.1), an `outage` loss module."""
    start, end = ATTENUATION_S
    queue = {"type": "droptail", "limit_pkts": 100}
    return {
        "name": name if name is not None else "paper004-wireless",
        "duration_s": WIRELESS_DURATION_S,
        "seed": seed,
        "topology": {
            "graph": {
                "nodes": ["server", "router", "base-station", "client"],
                "links": [
                    {
                        "name": "server-router",
                        "from": "server",
                        "to": "router",
                        "rate_mbps": 10,
                        "delay_ms": 0.1,
                        "queue": queue,
                    },
                    {
                        "name": "router-base-station",
                        "from": "router",
                        "to": "base-station",
                        "rate_mbps": 1.5,
                        "delay_ms": 1,
                        "queue": queue,
                    },
                    {
                        "name": "wireless",
                        "from": "base-station",
                        "to": "client",
                        "rate_mbps": wireless_mbps,
                        "delay_ms": 0.1,
                        "queue": queue,
                    },
                ],
            }
        },
        "flows": [
            {
                "name": "ftp",
                "from": "server",
                "to": "client",
                "variant": variant,
                "app": {"type": "ftp", "bytes": WIRELESS_FILE_BYTES},
                "tcp": {"profile": "opnet"},
                "loss": {"type": "outage", "start_s": start, "end_s": end, "rate": attenuation_loss},
            }
        ],
        "outputs": {"trace_interval_s": 0.5, "trace": ["cwnd", "ssthresh"], "trace_flows": ["ftp"]},
    }


# ---- wireless over 802.11 (§3, Fig. 1; §4.1; issue 18) ---------------------------------------

WIFI_STANDARD = "802.11b"
DEFAULT_WIFI_RATE_MBPS = 1.0
"""802.11's 1 Mb/s DSSS rate: the paper does not give one; see WIRELESS_80211_DESCRIPTION."""
CLEAR_SNR_DB = 10.0
"""The client's SNR outside the attenuation: far above 1 Mb/s DBPSK's error region (about -3 to
-5 dB for a 1536-byte frame), so no frame fails for noise there."""
DEFAULT_FADE_SNR_DB = -4.0
"""The SNR during the attenuation: where a 1500-byte packet's frame fails 3 attempts in 5 (0.62,
ns-3's DBPSK error model) and the MAC's 7 attempts no longer hide every loss (0.62^7: about 4 %
are given up; docs/validation/paper004.md). Our choice, as the loss rate of the outage preset
is: the paper gives neither."""


def _client_snr(fade_snr_db: float) -> dict[str, Any]:
    """The client's SNR over the run: clear, `fade_snr_db` from 5 min 33 s, clear from 6 min 54 s (§4.1)."""
    start, end = ATTENUATION_S
    return {"points": [[0.0, CLEAR_SNR_DB], [start, fade_snr_db], [end, CLEAR_SNR_DB]], "shape": "step"}


def wireless_80211_scenario(
    variant: str = "reno",
    seed: int = 1,
    fade_snr_db: float = DEFAULT_FADE_SNR_DB,
    *,
    name: str | None = None,
) -> dict[str, Any]:
    """§3, Fig. 1 with a wireless hop of 802.11: FTP server -(10 Mb/s)- wired router -(1.5 Mb/s)-
    base station, the access point of an 802.11b network at 1 Mb/s whose one station is the
    client; a 50 MB download; the client's SNR falls to `fade_snr_db` from 5 min 33 s to 6 min
    54 s (§4.1). The MAC retries a failed frame up to 7 times; what it gives up on, TCP sees."""
    queue = {"type": "droptail", "limit_pkts": 100}
    scenario = wireless_scenario(variant, seed, name=name if name is not None else "paper004-wireless-80211")
    graph = scenario["topology"]["graph"]
    graph["links"] = graph["links"][:WIRELESS_LINK]
    graph["wifi"] = [
        {
            "name": "wlan",
            "ap": "base-station",
            "stations": [{"node": "client", "snr_db": _client_snr(fade_snr_db)}],
            "standard": WIFI_STANDARD,
            "rate_mbps": DEFAULT_WIFI_RATE_MBPS,
            "queue": queue,
        }
    ]
    del scenario["flows"][0]["loss"]
    return scenario


def _expand_fade_snr(value: Any) -> dict[str, Any]:
    low, high = SNR_DB_RANGE
    if isinstance(value, bool) or not isinstance(value, int | float) or not low <= value <= high:
        raise ValueError(f"{FADE_SNR} must be a number of dB in [{low:g}, {high:g}], got {value!r}")
    return {"topology.graph.wifi[0].stations[0].snr_db": _client_snr(float(value))}


# ---- descriptions ------------------------------------------------------------------------------

COMMON_CHOICES = """\
- TCP: the paper's Table 1 exactly (initial window 1 MSS; an ACK per two segments; initial RTO \
1 s, minimum 0.5 s, maximum 64 s; RTT gain 0.125, deviation gain 0.25, coefficient 4; \
duplicate-ACK threshold 3; a 65,535-byte receive buffer, i.e. 44 segments). Not in the table, \
so chosen: 1460-byte segments (Ethernet's MTU, which OPNET sizes the MSS from) + 40 header \
bytes, a 200 ms delayed-ACK timer, RTT timed once per round (Karn), 10 ms timer granularity \
(the 0.5 s minimum RTO dominates it).
- Variants: the paper's four are `flows[0].variant` = tahoe, reno, sack ("Reno with SACK": \
RFC 6675 recovery with SACK blocks) and newreno-sbs ("NewReno", RFC 3782; with one or two \
losses the Impatient variant is identical). The preset runs reno; sweep the variant for the \
table's rows.
- "MB" is 10^6 bytes."""

WIRED_DESCRIPTION = """\
Paper 004 §3 (Fig. 2) and §4.2{where}: a server and a client, each on a 10 Mb/s link to a \
router, the two routers joined through an Internet cloud by 1.5 Mb/s links; one FTP download \
of a 10 MB file, compared for Tahoe, Reno, Reno with SACK and NewReno on congestion window, \
download response time, throughput and goodput. {what}

What the paper leaves open and we chose:
- Topology: a graph server - server-router - cloud - client-router - client; the cloud is a \
node with 1.5 Mb/s links on both sides, its latency split over them. The paper gives the \
cloud's latency only for the 0.05 % case (1 ms, §4.2.3); we use 1 ms in all three \
(`cloud_latency_ms`). LAN links have no propagation delay. Router buffers of 100 packets (the \
paper gives none) hold the whole receive window, so the only losses are the ones the paper \
puts there.
{loss_choice}
{common}
- Note on time: 10 MB through 1.5 Mb/s takes about 55 s here, while the paper's Table 3 \
times (164-168 s) mean about 0.5 Mb/s and its single loss happens at 107 s; the paper does \
not say what slows its download. With a 1 ms cloud the 44-segment window is far larger than \
the path's bandwidth-delay product (about 2 segments), so the router queue absorbs every window \
reduction and only a timeout costs time. A `cloud_latency_ms` of a few hundred makes the path \
window-limited near the paper's rate instead (300 ms: about 0.6 Mb/s, 136-147 s with 0.05 % \
loss); docs/validation/paper004.md runs both."""

ONE_LOSS_CHOICE = """\
- The loss: §4.2.1 has one packet lost at 1 min 47 s of a download of about 164 s; our download \
is shorter, so a `scheduled` loss module drops data packet {k} of {n}, at the same fraction \
(107/164) of the file, just before the client."""

TWO_LOSS_CHOICE = """\
- The losses: §4.2.2 says only "two-packet losses in a window of data"; a `scheduled` loss \
module drops data packets {k} and {k1} (consecutive, so in the same window), at the same place \
as the single loss of §4.2.1 (107/164 of the file)."""

RANDOM_LOSS_CHOICE = """\
- The loss: 0.05 % of data packets, each independently (`uniform`, rate 0.0005), just before \
the client: the paper's cloud discards packets at that ratio, and an ACK loss does little. A \
10 MB file is 6850 segments, so about 3-4 losses per download: which packets are lost depends \
on the seed, and the differences of Table 3 (164-168 s, 2.4 %) are of the size one loss makes. \
Compare over several seeds."""

WIRELESS_DESCRIPTION = """\
Paper 004 §3 (Fig. 1) and §4.1 (Table 2, Figs. 3-5): a mobile client downloads a 50 MB file \
by FTP from a server: server -(10 Mb/s)- wired router -(1.5 Mb/s)- wireless router (base \
station) - client. As the client moves, its signal is attenuated and packets are lost from \
5 min 33 s until the signal recovers at 6 min 54 s. Table 2 gives the download response time \
of each variant (Tahoe 491 s, Reno 480 s, Reno with SACK 483 s, NewReno 496 s).

What the paper leaves open and we chose:
- The wireless hop is a 1 Mb/s link (`topology.graph.links[2].rate_mbps`). The paper does not \
give its rate; 1 Mb/s is 802.11's basic rate, and the paper's times imply about it: 50 MB in \
480-496 s is 0.81-0.83 Mb/s with an 81 s attenuation included, while a 1.5 Mb/s bottleneck \
would finish in about 270 s, before the attenuation even starts. This preset keeps the wireless \
hop a wire (no channel access, no link-layer retransmissions): `paper004-table2-wireless-80211` \
runs the same experiment over an 802.11b link.
- The attenuation is an `outage` loss module on the flow, just before the client: from 333 s \
to 414 s every data packet is lost with probability {rate}. The paper gives no loss rate (only \
that the signal is attenuated); {rate} is our choice: it makes our mean download time over the \
four variants and five seeds close to Table 2's mean (about 488 s), and the ranking of the \
variants, which is what the paper concludes, is not used to choose it. The loss rate is \
constant inside the window and ACKs are not lost. Sweep `flows[0].loss.rate` to see how the ranking depends on it.
- Propagation delays: 0.1 ms on the LAN and wireless hops, 1 ms on the 1.5 Mb/s link; router \
and base-station buffers of 100 packets (none is given).
{common}"""


WIRELESS_80211_DESCRIPTION = """\
Paper 004 §3 (Fig. 1) and §4.1 (Table 2, Figs. 3-5) over an 802.11 link (issue 18): a mobile \
client downloads a 50 MB file by FTP from a server: server -(10 Mb/s)- wired router -(1.5 \
Mb/s)- wireless router (base station) - client. As the client moves, its signal is attenuated \
and packets are lost from 5 min 33 s until the signal recovers at 6 min 54 s. Table 2 gives \
the download response time of each variant (Tahoe 491 s, Reno 480 s, Reno with SACK 483 s, \
NewReno 496 s).

What the paper leaves open and we chose:
- The wireless hop is an 802.11b network (`topology.graph.wifi[0]`): the base station is its \
access point and the client its one station, both contending for the air under the DCF (DIFS, \
backoff from CWmin 31 to CWmax 1023, ACKs after SIFS, 7 attempts per frame), data at 1 Mb/s, \
802.11's basic rate, with the long preamble. The paper gives no rate; 1 Mb/s is what its times \
imply: with no attenuation at all the download takes 482 s here, as Table 2's 480-496 s.
- The attenuation is the client's SNR (both ways) falling from {clear:g} dB to `{fade_key}` = \
{fade:g} dB between 333 and 414 s. The paper gives no signal level; at {fade:g} dB a data \
frame fails 3 attempts in 5 (0.62), so the MAC gives up about 4 % of them after 7 attempts and TCP \
sees losses, where at -3 dB it hides all of them. Frames fail by the DSSS error model of ns-3 \
(DBPSK at 1 Mb/s) at the frame's length: a TCP ACK survives a fade a data segment does not.
- Propagation delays: 0.1 ms on the LAN, 1 ms on the 1.5 Mb/s link, none on the air; router \
and access-point buffers of 100 packets (none is given).
{common}"""


# ---- published numbers and conclusions ---------------------------------------------------------

TABLE_COLUMNS = tuple(
    PublishedColumn(
        paper,
        f"download response time with TCP {'Reno with SACK' if paper == 'SACK' else paper} ({VARIANT} = {core})",
        "s",
    )
    for paper, core in VARIANTS.items()
)


def _table(name: str, caption: str, key: str) -> PublishedTable:
    row = read_json(DATA_FILE)[key]
    if list(row) != list(VARIANTS):
        raise ValueError(f"{DATA_FILE}: {key} has {list(row)}, expected {list(VARIANTS)}")
    return PublishedTable(name=name, caption=caption, columns=TABLE_COLUMNS, rows=(dict(row),))


def _conclusion(index: int) -> str:
    return read_json(DATA_FILE)["conclusions"][index]


CONCLUSIONS: dict[str, tuple[dict[str, Any], ...]] = {
    # §4.1, §5: "TCP Reno outperforms the remaining three"; "Reno with SACK performs better
    # than Tahoe and NewReno while NewReno and Tahoe algorithms show similar performance".
    "wireless": (
        {
            "id": "wireless-reno-shortest",
            "metric": "download_time_s",
            "claim": "best",
            "variant": "reno",
            "text": "Reno has the shortest download response time (Table 2: 480 s)",
            "where": "§4.1, Table 2",
        },
        {
            "id": "wireless-reno-highest-goodput",
            "metric": "goodput_bps",
            "claim": "best",
            "variant": "reno",
            "text": "Reno has the highest throughput and goodput",
            "where": "§4.1, Figs. 4-5",
        },
        {
            "id": "wireless-sack-second",
            "metric": "download_time_s",
            "claim": "better_than",
            "variant": "sack",
            "others": ["tahoe", "newreno-sbs"],
            "text": "Reno with SACK does better than Tahoe and NewReno",
            "where": "§4.1, §5",
        },
        {
            "id": "wireless-tahoe-newreno-similar",
            "metric": "download_time_s",
            "claim": "similar",
            "variants": ["tahoe", "newreno-sbs"],
            "tolerance": 0.02,
            "text": "Tahoe and NewReno are similar (Table 2: 491 s, 496 s)",
            "where": "§4.1, §5",
        },
    ),
    "one-loss": (
        {
            "id": "one-loss-identical-time",
            "metric": "download_time_s",
            "claim": "similar",
            "variants": list(VARIANTS.values()),
            "tolerance": 0.005,
            "text": "The four algorithms have identical download response time",
            "where": "§4.2.1",
        },
        {
            "id": "one-loss-recovery",
            "claim": "one_loss_recovery",
            "text": "Tahoe slow-starts after the loss; Reno, SACK and NewReno fast retransmit and recover",
            "where": "§4.2.1, Fig. 6",
        },
    ),
    "two-losses": (
        {
            "id": "two-losses-sack-shortest",
            "metric": "download_time_s",
            "claim": "best",
            "variant": "sack",
            "text": "Reno with SACK has the shortest download response time",
            "where": "§4.2.2, Fig. 7",
        },
        {
            "id": "two-losses-reno-worst",
            "metric": "download_time_s",
            "claim": "worst",
            "variant": "reno",
            "text": "Reno has the worst download response time",
            "where": "§4.2.2",
        },
        {
            "id": "two-losses-newreno-before-tahoe",
            "metric": "download_time_s",
            "claim": "better_than",
            "variant": "newreno-sbs",
            "others": ["tahoe"],
            "text": "NewReno downloads faster than Tahoe",
            "where": "§4.2.2",
        },
    ),
    "random-loss": (
        {
            "id": "random-loss-sack-shortest",
            "metric": "download_time_s",
            "claim": "best",
            "variant": "sack",
            "text": "Reno with SACK has the shortest download response time (Table 3: 164 s)",
            "where": "§4.2.3, Table 3",
        },
        {
            "id": "random-loss-tahoe-worst",
            "metric": "download_time_s",
            "claim": "worst",
            "variant": "tahoe",
            "text": "Tahoe performs the worst (Table 3: 168 s)",
            "where": "§4.2.3, Table 3",
        },
        {
            "id": "random-loss-reno-slower-than-sack-newreno",
            "metric": "download_time_s",
            "claim": "worse_than",
            "variant": "reno",
            "others": ["sack", "newreno-sbs"],
            "text": "Reno takes longer than SACK and NewReno, which are comparable",
            "where": "§4.2.3",
        },
        {
            "id": "random-loss-sack-highest-goodput",
            "metric": "goodput_bps",
            "claim": "best",
            "variant": "sack",
            "text": "Reno with SACK has the highest throughput and goodput",
            "where": "§4.2.3, Figs. 9-10",
        },
    ),
}
"""Each paper conclusion in a form services/reproductions/paper004.py can check: `best`/`worst` (the variant's
mean is the best/worst of the four), `better_than`/`worse_than` (than each of `others`),
`similar` (means within `tolerance`, relative), `one_loss_recovery` (per-variant counts)."""


def _published(
    kind: str, conclusion_index: int, extra: tuple[str, ...], tables: tuple[PublishedTable, ...], values: dict[str, Any]
) -> Published:
    data = read_json(DATA_FILE)
    setup = data["setups"]["wireless" if kind == "wireless" else "wired"]
    return Published(
        source=SOURCE,
        setup=setup,
        findings=(_conclusion(conclusion_index), *extra),
        values={
            "tcp_parameters": dict(data["tcp_parameters"]),
            "conclusions": [dict(c) for c in CONCLUSIONS[kind]],
            **values,
        },
        tables=tables,
    )


def _common_parameters(seeded: bool) -> tuple[Parameter, ...]:
    table = read_json(DATA_FILE)["tcp_parameters"]
    params = [
        Parameter(
            VARIANT,
            "TCP variant: the paper's Tahoe (tahoe), Reno (reno), Reno with SACK (sack), NewReno (newreno-sbs)",
            None,
            "reno",
            paper_values=tuple(VARIANTS.values()),
        ),
        Parameter(
            "flows[0].tcp.initial_rto_s",
            "initial retransmission timeout (Table 1)",
            "s",
            1.0,
            paper_values=(float(table["initial_rto_s"]),),
        ),
        Parameter(
            "flows[0].tcp.min_rto_s",
            "minimum retransmission timeout (Table 1)",
            "s",
            0.5,
            paper_values=(float(table["min_rto_s"]),),
        ),
        Parameter(
            "flows[0].tcp.max_rto_s",
            "maximum retransmission timeout (Table 1)",
            "s",
            64.0,
            paper_values=(float(table["max_rto_s"]),),
        ),
        Parameter(
            "flows[0].tcp.max_window_pkts",
            "receive window in 1460-byte segments (Table 1: a 65,535-byte receive buffer)",
            "packets",
            table["receive_buffer_bytes"] // MSS_BYTES,
        ),
    ]
    if seeded:
        params.append(Parameter("seed", "random seed: one replication per seed (which packets are lost)", None, 1))
    return tuple(params)


CLOUD_PARAMETER = Parameter(
    CLOUD_LATENCY,
    "one-way latency through the Internet cloud, split over its two 1.5 Mb/s links (§4.2.3: 1 ms); "
    "a few hundred ms make the path window-limited near the paper's 0.5 Mb/s",
    "ms",
    DEFAULT_CLOUD_LATENCY_MS,
    paper_values=(DEFAULT_CLOUD_LATENCY_MS,),
    expands_to=tuple(f"topology.graph.links[{i}].delay_ms" for i in CLOUD_LINKS),
)


def _wired_preset(kind: str) -> Preset:
    n = file_packets(WIRED_FILE_BYTES)
    k = one_loss_packet()
    if kind == "one-loss":
        name, where = "paper004-wired-one-loss", "§4.2.1, Fig. 6"
        title = "Paper 004 §4.2.1: a 10 MB download over 1.5 Mb/s with a single packet loss"
        loss: dict[str, Any] = {"type": "scheduled", "packets": [k]}
        what = (
            "Here one packet is lost (at 1 min 47 s in the paper): Tahoe slow-starts, the "
            "others fast retransmit and recover, and the paper finds identical download times."
        )
        choice = ONE_LOSS_CHOICE.format(k=k, n=n)
        published = _published(
            kind,
            1,
            (
                "Tahoe reduces its window and slow-starts; Reno, Reno with SACK and NewReno fast retransmit "
                "and fast recover (§4.2.1)",
                "During fast recovery Reno with SACK keeps a constant congestion window; Reno and NewReno "
                "vary it (§4.2.1, Fig. 6(b))",
                "The four have identical download response time and throughput, and comparable goodput (§4.2.1)",
            ),
            (),
            {"loss_time_s": 107.0},
        )
        loss_param = Parameter(
            "flows[0].loss.packets", "data packets dropped (counted from 1 at the client)", "packets", [k]
        )
        seeded = False
    elif kind == "two-losses":
        name, where = "paper004-wired-two-losses", "§4.2.2, Fig. 7"
        title = "Paper 004 §4.2.2: a 10 MB download over 1.5 Mb/s with two losses in one window"
        loss = {"type": "scheduled", "packets": [k, k + 1]}
        what = "Here two packets of one window are lost: the paper finds Reno with SACK fastest and Reno slowest."
        choice = TWO_LOSS_CHOICE.format(k=k, k1=k + 1)
        published = _published(
            kind,
            2,
            (
                "Reno with SACK has the largest congestion window and the shortest download response time (§4.2.2)",
                "NewReno and Tahoe have similar windows except during fast recovery; NewReno downloads faster "
                "than Tahoe (§4.2.2)",
                "Reno has the worst download response time; Tahoe, SACK and NewReno have comparable throughput "
                "and goodput (§4.2.2)",
            ),
            (),
            {},
        )
        loss_param = Parameter(
            "flows[0].loss.packets", "data packets dropped (counted from 1 at the client)", "packets", [k, k + 1]
        )
        seeded = False
    else:
        name, where = "paper004-table3-wired-random-loss", "§4.2.3, Table 3, Figs. 8-10"
        title = "Paper 004 Table 3: a 10 MB download over 1.5 Mb/s with 0.05 % packet loss"
        loss = {"type": "uniform", "rate": 0.0005}
        what = (
            "Here 0.05 % of packets are lost with 1 ms of latency; Table 3 gives the download "
            "response times (Tahoe 168 s, Reno 167 s, Reno with SACK 164 s, NewReno 165 s)."
        )
        choice = RANDOM_LOSS_CHOICE
        published = _published(
            kind,
            3,
            (
                "Reno has a larger download response time than Reno with SACK and NewReno, which are "
                "comparable; Tahoe has a sharp increase and performs the worst (§4.2.3, Table 3)",
                "NewReno frequently reduces its congestion window; Reno, SACK and Tahoe keep larger windows "
                "(§4.2.3, Fig. 8)",
                "Reno with SACK has higher throughput and goodput than the other three (§4.2.3, Figs. 9-10)",
            ),
            (
                _table(
                    "Table 3",
                    "Wired network with 0.05 % packet loss: file download response time",
                    "table3_wired_0.05pct_loss_download_response_time_s",
                ),
            ),
            {"loss_rate": 0.0005},
        )
        loss_param = Parameter(
            "flows[0].loss.rate",
            "probability that a data packet is lost",
            "probability",
            0.0005,
            paper_values=(0.0005,),
        )
        seeded = True
    scenario = wired_scenario(loss, name=name)
    scenario["description"] = f"Paper 004 {where}: reno; sweep {VARIANT} for the four variants."
    return Preset(
        name=name,
        title=title,
        description=WIRED_DESCRIPTION.format(where=f" ({where})", what=what, loss_choice=choice, common=COMMON_CHOICES),
        reference=Reference(paper="004", citation=CITATION, where=where),
        parameters=(loss_param, CLOUD_PARAMETER, *_common_parameters(seeded)),
        published=published,
        template=scenario,
        expanders={CLOUD_LATENCY: _expand_cloud_latency},
    )


def _wireless_preset() -> Preset:
    name, where = "paper004-table2-wireless-attenuation", "§4.1, Table 2, Figs. 3-5"
    start, end = ATTENUATION_S
    scenario = wireless_scenario(name=name)
    scenario["description"] = f"Paper 004 {where}: reno; sweep {VARIANT} for the four variants."
    published = _published(
        "wireless",
        0,
        (
            "Reno keeps the largest congestion window; Reno with SACK a larger one than Tahoe and NewReno, "
            "which are comparable (§4.1, Fig. 3)",
            "During the attenuation Tahoe and NewReno fall to 1 MSS until the signal recovers at 6 min 54 s; "
            "Reno and Reno with SACK keep larger windows (§4.1, Fig. 3(b)-(c))",
            "Reno has the shortest download response time, then Reno with SACK (§4.1, Table 2)",
            "Reno has the highest throughput and goodput; SACK next; Tahoe and NewReno comparable (§4.1, Figs. 4-5)",
        ),
        (
            _table(
                "Table 2", "Wireless network: file download response time", "table2_wireless_download_response_time_s"
            ),
        ),
        {"attenuation_s": [start, end]},
    )
    return Preset(
        name=name,
        title="Paper 004 Table 2: a 50 MB download to a wireless client through an attenuation period",
        description=WIRELESS_DESCRIPTION.format(rate=DEFAULT_ATTENUATION_LOSS, common=COMMON_CHOICES),
        reference=Reference(paper="004", citation=CITATION, where=where),
        parameters=(
            Parameter(
                "flows[0].loss.rate",
                "probability that a data packet is lost during the attenuation (not given by the paper)",
                "probability",
                DEFAULT_ATTENUATION_LOSS,
            ),
            Parameter(
                "flows[0].loss.start_s",
                "start of the attenuation (§4.1: 5 min 33 s)",
                "s",
                start,
                paper_values=(start,),
            ),
            Parameter(
                "flows[0].loss.end_s", "end of the attenuation (§4.1: 6 min 54 s)", "s", end, paper_values=(end,)
            ),
            Parameter(
                f"topology.graph.links[{WIRELESS_LINK}].rate_mbps",
                "rate of the wireless hop (not given by the paper)",
                "Mb/s",
                DEFAULT_WIRELESS_MBPS,
            ),
            *_common_parameters(seeded=True),
        ),
        published=published,
        template=scenario,
    )


def _wireless_80211_preset() -> Preset:
    name, where = "paper004-table2-wireless-80211", "§4.1, Table 2, Figs. 3-5"
    start, end = ATTENUATION_S
    scenario = wireless_80211_scenario(name=name)
    scenario["description"] = f"Paper 004 {where} over 802.11b: reno; sweep {VARIANT} for the four variants."
    wireless = _wireless_preset()
    return Preset(
        name=name,
        title="Paper 004 Table 2 over 802.11b: a 50 MB download to a station whose signal fades",
        description=WIRELESS_80211_DESCRIPTION.format(
            clear=CLEAR_SNR_DB, fade_key=FADE_SNR, fade=DEFAULT_FADE_SNR_DB, common=COMMON_CHOICES
        ),
        reference=Reference(paper="004", citation=CITATION, where=where),
        parameters=(
            Parameter(
                FADE_SNR,
                f"the client's SNR from {start:g} to {end:g} s (§4.1's attenuation; the level is not given)",
                "dB",
                DEFAULT_FADE_SNR_DB,
                expands_to=("topology.graph.wifi[0].stations[0].snr_db",),
            ),
            Parameter(
                "topology.graph.wifi[0].rate_mbps",
                "802.11b data rate (1, 2, 5.5 or 11; not given by the paper)",
                "Mb/s",
                DEFAULT_WIFI_RATE_MBPS,
            ),
            *_common_parameters(seeded=True),
        ),
        published=wireless.published,
        template=scenario,
        expanders={FADE_SNR: _expand_fade_snr},
    )


PRESETS: tuple[Preset, ...] = (
    _wireless_preset(),
    _wireless_80211_preset(),
    _wired_preset("one-loss"),
    _wired_preset("two-losses"),
    _wired_preset("random-loss"),
)
