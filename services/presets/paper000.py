"""Paper 000's experiments as presets: Parvez, Mahanti & Williamson, "TCP NewReno:
Slow-but-Steady or Impatient?" (IEEE ICC 2006), §IV.

- `paper000-fig2a`, `paper000-fig2b` (§IV-B, Fig. 2): Bernoulli loss events (p, m) on two
  otherwise lossless foreground flows, one Slow-but-Steady and one Impatient.
- `paper000-table2-droptail`, `paper000-fig3-red` (§IV-C, Fig. 3, Table II): the same two
  foreground flows among FTP and HTTP background traffic, through a Drop-Tail or RED
  bottleneck.

The scenario builders are public (`fig2_scenario`, `background_scenario`) so scripts build the
same scenarios: `fig2_scenario` is exactly what `simulator/validation/fig2.py` builds.
"""

from __future__ import annotations

from typing import Any

from services.presets.published import read_csv, read_json
from services.presets.registry import (
    Parameter,
    Preset,
    Published,
    PublishedColumn,
    PublishedTable,
    Reference,
)

__all__ = [
    "BACKGROUND_FLOWS",
    "BACKGROUND_FTP_INDEX",
    "BACKGROUND_HTTP_INDEX",
    "LOSS_M",
    "PRESETS",
    "background_scenario",
    "fig2_scenario",
    "split_background",
]

CITATION = 'K. N. Parvez, A. Mahanti, C. Williamson, "TCP NewReno: Slow-but-Steady or Impatient?", IEEE ICC 2006'
FIG2_FILE = "000_fig2_and_regions.json"
TABLE2_FILE = "000_table2_sbs_droptail.csv"
SOURCE = "paper 000 (Parvez, Mahanti & Williamson, ICC 2006), transcribed in services/presets/data/{}"

LOSS_M = "flows[*].loss.m"
"""Packets per loss event on both foreground flows: Fig. 2's x axis (the Fig. 2 presets)."""
BACKGROUND_FLOWS = "background_flows"
"""The background presets' own parameter: background flows in all, Table II's rows."""

# The paper measures the last 750 of its 1000 simulated seconds.
NS2_TCP = {"profile": "ns2", "max_window_pkts": 100_000}
"""The foreground flows' TCP: the paper ran ns-2 (its Agent/TCP defaults, the `ns2` profile),
with receiver buffers "large enough that the buffer space advertisements do not constrain the
congestion window size" (§IV-A), so not ns-2's `window_` of 20."""
DURATION_S = 1000.0
WARMUP_FRACTION = 0.25
DURATION_PARAMETER = Parameter(
    "duration_s",
    "simulated seconds; unless warmup_s is given too, the warm-up becomes a quarter of it "
    "(the paper measures the last 750 of 1000 s)",
    "s",
    DURATION_S,
    paper_values=(DURATION_S,),
)


# ---- Fig. 2: loss events (p, m) ----------------------------------------------------------------


def fig2_scenario(
    p: float,
    m: int,
    seed: int = 1,
    duration: float = DURATION_S,
    warmup: float | None = None,
    *,
    name: str | None = None,
    spacing: str = "periodic",
) -> dict[str, Any]:
    """Paper 000 §IV-B: two foreground NewReno flows (SBS and IMP), 70 ms round-trip
    propagation, 45 Mb/s bottleneck, a loss-event module (p, m) on each flow's path.

    The same scenario as `simulator/validation/fig2.py`'s `scenario(p, m, seed, duration,
    warmup)` (same arguments, same dict); `warmup` defaults to a quarter of `duration`.
    `spacing` places the events: `periodic` (one every 1/p packets, what the paper's models
    assume and what reproduces its errors in ns-2 and tcpsim alike) or `random` (Bernoulli;
    docs/validation/fig2-model-errors.md).
    """
    if warmup is None:
        warmup = duration * WARMUP_FRACTION

    def tcp() -> dict[str, Any]:
        return dict(NS2_TCP)

    def loss() -> dict[str, Any]:
        return {"type": "bernoulli_events", "p": p, "m": m, "spacing": spacing}

    return {
        "name": name if name is not None else f"paper000-fig2-p{p}-m{m}",
        "duration_s": duration,
        "warmup_s": warmup,
        "seed": seed,
        "topology": {
            "dumbbell": {
                "bottleneck": {
                    "rate_mbps": 45,
                    "delay_ms": 5,
                    "queue": {"type": "droptail", "limit_pkts": 1000},
                }
            }
        },
        "flows": [
            {"name": "sbs", "variant": "newreno-sbs", "rtt_ms": 70, "tcp": tcp(), "loss": loss()},
            {"name": "imp", "variant": "newreno-impatient", "rtt_ms": 70, "tcp": tcp(), "loss": loss()},
        ],
    }


FIG2_DESCRIPTION = """\
Paper 000 §IV-B validates its two throughput models in isolation: two foreground NewReno \
flows, one Slow-but-Steady (SBS, newreno-sbs) and one Impatient (IMP, newreno-impatient), \
70 ms round-trip propagation, a 45 Mb/s bottleneck, and on each receiver's path a packet drop \
module with two parameters, p and m: loss events at rate p, each dropping m consecutive \
packets of that flow. Fig. 2{panel} sweeps m from 1 to {m_max} at p = {p_pct} %; \
1000 s simulated, the last 750 s measured. This preset is one point of that sweep (m = 10); \
sweep `flows[*].loss.m` over {m_range} to draw the figure.

What the paper leaves open and we chose (as simulator/validation/fig2.py, whose runs are \
compared with the paper in docs/validation/fig2.md):
- Bottleneck delay 5 ms with a 1000-packet Drop-Tail queue (it never fills: both windows \
together stay far below the 394-packet bandwidth-delay product, so every loss is the module's); \
access links 1 Gb/s, their delays making up the 70 ms.
- ns-2's TCP (the `ns2` profile: 1000-byte segments + 40 header bytes, minimum RTO 200 ms, \
10 ms timer granularity, initial RTO 3 s, an ACK per segment, and ns-2's own ways), receiver \
window unlimited (the paper: large enough never to constrain the window). With the measured \
R = 70.3 ms and RTO = 200 ms, m* = floor(RTO/R) + 2 = 4, as in the paper.
- Loss events one every 1/p packets (`spacing: periodic`, from a seeded place in the first \
period), not at random: the models assume every cycle carries 1/p packets, and only periodic \
events reproduce the paper's model errors (0.15-3.3 %), in ns-2 as in tcpsim; Bernoulli \
(geometric) gaps put both simulators 5-10 % above the models (docs/validation/\
fig2-model-errors.md). `flows[*].loss.spacing = "random"` gives the Bernoulli reading.
- The loss module spares retransmissions and lasts at most one round (the flow's RTT), as \
§III-A's model assumes (fig2.md explains).
- Throughput in the paper's unit is the result's throughput_pkts_per_rtt (data packets per \
mean measured RTT)."""


def _fig2_published(panel: str) -> Published:
    data = read_json(FIG2_FILE)
    fig = data[f"fig2{panel}"]
    p = fig["p"]
    m_t = data["analytic_crossover_m_t"][str(p)]
    sbs_lo, sbs_hi = fig["sbs_superior_m"]
    findings = (
        f"equality region (IMP and SBS alike) for m < {fig['equality_region_m_below']}",
        f"SBS superior for m = {sbs_lo} to {sbs_hi}",
        f"IMP superior from m = {fig['imp_superior_m_from']}",
        "SBS model error {} % to {} %".format(*fig["sbs_model_error_pct"]),
        "IMP model error {} % to {} %".format(*fig["imp_model_error_pct"]),
        f"analytic crossover m_t = {m_t} (where eq. 8 overtakes eq. 4)",
        *(f"Fig. 4 regions: {r}" for r in data["regions"]),
    )
    return Published(
        source=SOURCE.format(FIG2_FILE),
        setup=data["fig2_setup"],
        findings=findings,
        values={**fig, "analytic_crossover_m_t": m_t},
    )


def _fig2_preset(panel: str) -> Preset:
    fig = read_json(FIG2_FILE)[f"fig2{panel}"]
    p = fig["p"]
    m_lo, m_hi = fig["m_range"]
    name = f"paper000-fig2{panel}"
    scenario = fig2_scenario(p, 10, name=name)
    scenario["description"] = f"Paper 000 Fig. 2({panel}): periodic loss events, p = {p}, m = 10."
    return Preset(
        name=name,
        title=f"Paper 000 Fig. 2({panel}): NewReno SBS vs Impatient under loss events, p = {p * 100:g} %",
        description=FIG2_DESCRIPTION.format(
            panel=f"({panel})", m_max=m_hi, p_pct=f"{p * 100:.2f}", m_range=f"{m_lo}..{m_hi}"
        ),
        reference=Reference(paper="000", citation=CITATION, where=f"§IV-B, Fig. 2({panel}); regions: §V, Fig. 4"),
        parameters=(
            Parameter(
                LOSS_M,
                "packets dropped per loss event, on both foreground flows: Fig. 2's x axis",
                "packets",
                10,
                paper_range=(m_lo, m_hi),
            ),
            Parameter(
                "flows[*].loss.p",
                "loss event rate: probability that a data packet starts a loss event (both flows); "
                "Fig. 2(a) uses 0.0005, Fig. 2(b) 0.001, and the paper reports similar results up to 0.05",
                "probability",
                p,
                paper_values=(p,),
            ),
            Parameter(
                "flows[*].tcp.min_rto_s",
                "minimum RTO of both foreground flows; with R = 70 ms it sets m* = floor(RTO / R) + 2 "
                "(the paper's m* = 4) and moves the crossover m_t",
                "s",
                0.2,
            ),
            Parameter(
                "flows[*].loss.spacing",
                "where loss events start: periodic (one every 1/p packets, the models' cycle; reproduces "
                "the paper's errors) or random (Bernoulli: geometric gaps)",
                None,
                "periodic",
            ),
            Parameter("seed", "random seed: one replication per seed (fig2.py averages seeds 1-3)", None, 1),
            DURATION_PARAMETER,
        ),
        published=_fig2_published(panel),
        template=scenario,
        warmup_fraction=WARMUP_FRACTION,
    )


# ---- §IV-C: FTP/HTTP background traffic --------------------------------------------------------

BACKGROUND_FTP_INDEX = 2
BACKGROUND_HTTP_INDEX = 3
DEFAULT_BACKGROUND_FLOWS = 64


def split_background(total: int) -> tuple[int, int]:
    """(FTP, HTTP) flow counts for `total` background flows: 25 % FTP, 75 % HTTP.

    Exact for multiples of 4 (every value the paper used); otherwise FTP is a quarter rounded
    half up, and at least 1. `total` must be an integer of at least 2 (one of each).
    """
    if isinstance(total, bool) or not isinstance(total, int):
        raise TypeError(f"background_flows must be an integer, got {total!r}")
    if total < 2:
        raise ValueError(f"background_flows must be at least 2 (one FTP and one HTTP), got {total}")
    if total > 100_000:
        raise ValueError(f"background_flows must be at most 100000, got {total}")
    ftp = max(1, (total + 2) // 4)
    return ftp, total - ftp


def background_scenario(
    queue: dict[str, Any],
    background_flows: int = DEFAULT_BACKGROUND_FLOWS,
    seed: int = 1,
    duration: float = DURATION_S,
    warmup: float | None = None,
    *,
    name: str | None = None,
) -> dict[str, Any]:
    """Paper 000 §IV-C: a 15 Mb/s bottleneck with `queue`, two foreground flows (SBS, IMP) at
    50 ms, and `background_flows` background flows, 25 % FTP and 75 % HTTP.

    Flow entries: 0 `sbs`, 1 `imp`, 2 `bg-ftp` (count = the FTP share), 3 `bg-http`.
    """
    if warmup is None:
        warmup = duration * WARMUP_FRACTION
    ftp, http = split_background(background_flows)

    def foreground(flow: str, variant: str) -> dict[str, Any]:
        return {
            "name": flow,
            "variant": variant,
            "rtt_ms": 50,
            "start_s": {"uniform": [0, 1]},
            "app": {"type": "ftp"},
            "tcp": dict(NS2_TCP),
        }

    def background(flow: str, count: int, app: dict[str, Any]) -> dict[str, Any]:
        return {
            "name": flow,
            "count": count,
            "variant": "newreno-sbs",
            "rtt_ms": {"uniform": [20, 460]},
            "start_s": {"uniform": [0, 10]},
            "app": app,
            # 64 KB maximum window of 1 KB packets.
            "tcp": {"profile": "ns2", "max_window_pkts": 64},
        }

    return {
        "name": name if name is not None else f"paper000-background-{queue['type']}-n{background_flows}",
        "duration_s": duration,
        "warmup_s": warmup,
        "seed": seed,
        "topology": {
            "dumbbell": {
                "bottleneck": {"rate_mbps": 15, "delay_ms": 5, "queue": queue},
                "access": {"rate_mbps": 1000, "queue": {"type": "droptail", "limit_pkts": 1000}},
            }
        },
        "flows": [
            foreground("sbs", "newreno-sbs"),
            foreground("imp", "newreno-impatient"),
            background("bg-ftp", ftp, {"type": "ftp"}),
            background("bg-http", http, {"type": "http", "mean_file_bytes": 48000, "shape": 1.2, "mean_think_s": 0.5}),
        ],
    }


def _expand_background(total: Any) -> dict[str, Any]:
    ftp, http = split_background(total)
    return {f"flows[{BACKGROUND_FTP_INDEX}].count": ftp, f"flows[{BACKGROUND_HTTP_INDEX}].count": http}


BACKGROUND_DESCRIPTION = """\
Paper 000 §IV-C: a 15 Mb/s bottleneck with a 150-packet {queue_text}; two foreground NewReno \
flows, one Slow-but-Steady (`sbs`) and one Impatient (`imp`), with 50 ms round-trip \
propagation and receiver windows that never constrain them; background traffic of 4 to 256 \
flows, 25 % FTP (`bg-ftp`, endless transfers) and 75 % HTTP sessions (`bg-http`: a request \
packet on the reverse path, a Pareto-sized response, mean 48 KB, shape 1.2, then an \
exponential think time of mean 0.5 s). Background flows are NewReno Slow-but-Steady with a \
64 KB maximum window (64 segments of 1 KB), round-trip propagation uniform in 20-460 ms, drawn \
per flow from the seed. 1000 s simulated, the last 750 s measured. {result_text} This preset is \
the 64-flow point; set `background_flows` (4..256) to move along the x axis.

What the paper leaves open and we chose:
- Bottleneck propagation delay 5 ms: at most 10 ms is needed for the shortest background RTT \
(20 ms) to be possible, and 5 ms matches the Fig. 2 setup. Access links 1 Gb/s (the paper: \
"high bandwidth") with 1000-packet Drop-Tail queues that never fill; their delays make up \
each flow's RTT.
- Start times: background flows uniform in the first 10 s, foreground flows in the first \
second (so no two flows start in lockstep); the 250 s warm-up covers the start-up.
- Packets: 1000-byte segments + 40 header bytes (ns-2's packet size and TCP/IP header); the \
HTTP request is 100 bytes, and a lost request is sent again after 3 s.
- TCP: ns-2's defaults (the `ns2` profile), as in Fig. 2 (minimum RTO 200 ms, 10 ms timer \
granularity, initial RTO 3 s, initial window 2, an ACK per segment, RTT timed once per round).
- The queue: the paper's 150 packets. Through it the light rows (4-32 background flows) are out \
of reach, in ns-2 with its own web generator as here; ns-2's default 50 packets \
(`topology.dumbbell.bottleneck.queue.limit_pkts`) reproduces them (docs/validation/ns2-table2.md).
{queue_choices}\
- The background size is one preset parameter, `background_flows` = N: it sets the two \
flow-group counts, `flows[2].count` (FTP) = N/4 and `flows[3].count` (HTTP) = 3N/4 (exact for \
multiples of 4, which are all the paper used; otherwise FTP is N/4 rounded half up). The two \
paths can also be set directly."""

DROPTAIL_RESULT = (
    "Table II lists the SBS flow's loss event rate, loss rate, simulated throughput and the "
    "SBS model's prediction for each background size; Fig. 3(a) plots both variants."
)
RED_RESULT = (
    "Fig. 3(b) plots both variants' throughput against the number of background flows; the "
    "paper gives no table for RED, only the findings below."
)
RED_CHOICES = """\
- RED: thresholds at 1/3 and 2/3 of the queue, as the paper says (the core's defaults when \
`min_th_pkts` / `max_th_pkts` are absent, so they follow an override of `limit_pkts`: 50 and \
100 packets at 150). The paper gives no other RED parameter; we use the classic ns-2 values: \
max_p 0.1, averaging weight q_w 0.002, gentle mode on, mean packet size 1000 bytes. Later \
ns-2 releases default to an automatic q_w (1 - exp(-1/C), C the link rate in packets per \
second: a few 1e-4 at 15 Mb/s), and the paper does not say which it ran: try it with \
`topology.dumbbell.bottleneck.queue.weight`.
"""

TABLE2_COLUMNS = (
    PublishedColumn("background_flows", "background flows (25 % FTP, 75 % HTTP)", "flows"),
    PublishedColumn("loss_event_rate", "loss event rate of the SBS flow", "fraction"),
    PublishedColumn("loss_rate", "packet loss rate of the SBS flow", "fraction"),
    PublishedColumn("sim_pkts_per_rtt", "simulated SBS throughput", "packets/RTT"),
    PublishedColumn(
        "model_pkts_per_rtt",
        "SBS model (eq. 4) from the measured loss event rate, with m = loss rate / loss event rate",
        "packets/RTT",
    ),
)


def _table2() -> PublishedTable:
    header, rows = read_csv(TABLE2_FILE)
    if header != tuple(c.name for c in TABLE2_COLUMNS):
        raise ValueError(f"{TABLE2_FILE}: columns {header}, expected {[c.name for c in TABLE2_COLUMNS]}")
    return PublishedTable(
        name="Table II",
        caption="Measured characteristics for the SBS flow under Drop-Tail",
        columns=TABLE2_COLUMNS,
        rows=rows,
    )


def _background_published(with_table: bool) -> Published:
    data = read_json(FIG2_FILE)
    return Published(
        source=SOURCE.format(FIG2_FILE + (f" and {TABLE2_FILE}" if with_table else "")),
        setup=data["fig3_setup"],
        findings=tuple(data["fig3_findings"]),
        tables=(_table2(),) if with_table else (),
    )


def _background_parameters(queue_parameters: tuple[Parameter, ...]) -> tuple[Parameter, ...]:
    _, rows = read_csv(TABLE2_FILE)
    sizes = tuple(int(r["background_flows"]) for r in rows)
    return (
        Parameter(
            BACKGROUND_FLOWS,
            "background flows in all, 25 % FTP and 75 % HTTP: the x axis of Fig. 3 and Table II",
            "flows",
            DEFAULT_BACKGROUND_FLOWS,
            paper_range=(min(sizes), max(sizes)),
            paper_values=sizes,
            expands_to=(f"flows[{BACKGROUND_FTP_INDEX}].count", f"flows[{BACKGROUND_HTTP_INDEX}].count"),
        ),
        Parameter(
            "topology.dumbbell.bottleneck.queue.limit_pkts",
            "bottleneck buffer",
            "packets",
            150,
            paper_values=(150,),
        ),
        *queue_parameters,
        Parameter("seed", "random seed: one replication per seed (background RTTs and start times too)", None, 1),
        DURATION_PARAMETER,
    )


def _background_preset(red: bool) -> Preset:
    if red:
        name = "paper000-fig3-red"
        queue = {
            "type": "red",
            "limit_pkts": 150,
            "max_p": 0.1,
            "weight": 0.002,
            "gentle": True,
            "mean_pkt_bytes": 1000,
        }
        title = "Paper 000 Fig. 3(b): NewReno SBS and Impatient among FTP/HTTP background traffic, RED"
        where = "§IV-C, Fig. 3(b)"
        queue_text = "RED queue (thresholds at 1/3 and 2/3 of it)"
        queue_parameters: tuple[Parameter, ...] = (
            Parameter(
                "topology.dumbbell.bottleneck.queue.weight",
                "RED's averaging weight q_w (not given by the paper)",
                None,
                0.002,
            ),
            Parameter(
                "topology.dumbbell.bottleneck.queue.max_p",
                "RED's drop probability at the maximum threshold (not given by the paper)",
                "probability",
                0.1,
            ),
        )
    else:
        name = "paper000-table2-droptail"
        queue = {"type": "droptail", "limit_pkts": 150}
        title = "Paper 000 Table II / Fig. 3(a): NewReno SBS and Impatient among FTP/HTTP background traffic, Drop-Tail"
        where = "§IV-C, Fig. 3(a), Table II"
        queue_text = "Drop-Tail queue"
        queue_parameters = ()
    scenario = background_scenario(queue, name=name)
    scenario["description"] = f"Paper 000 {where}: {DEFAULT_BACKGROUND_FLOWS} background flows."
    return Preset(
        name=name,
        title=title,
        description=BACKGROUND_DESCRIPTION.format(
            queue_text=queue_text,
            result_text=RED_RESULT if red else DROPTAIL_RESULT,
            queue_choices=RED_CHOICES if red else "",
        ),
        reference=Reference(paper="000", citation=CITATION, where=where),
        parameters=_background_parameters(queue_parameters),
        published=_background_published(with_table=not red),
        template=scenario,
        warmup_fraction=WARMUP_FRACTION,
        expanders={BACKGROUND_FLOWS: _expand_background},
    )


PRESETS: tuple[Preset, ...] = (
    _fig2_preset("a"),
    _fig2_preset("b"),
    _background_preset(red=False),
    _background_preset(red=True),
)
