"""Built-in schedules, made at the API's start when missing (disabled): today one, the core
benchmark. An admin enables it (`PATCH /v1/schedules/{id}` `{"enabled": true}`); edits are
kept across restarts, since an existing one is never overwritten.

The core benchmark runs the reference dumbbell of `simulator/bench/bench.py`
(`simulator/scenarios/reference-dumbbell.json`: 64 NewReno flows, 15 Mb/s, 150-packet
Drop-Tail, 50 ms, 100 s) at bench.py's scaling points of 1, 8 and 64 flows, 5 seeds each,
with `reuse_results` false: every firing simulates its 15 runs (about 2 s of core time), so
the history of `core_events_per_s` and `core_wall_s` (flow "core") tracks the core's own
speed, and the simulated metrics, answered identically while the core is unchanged, move
(and are flagged) when a new core version simulates differently.

The scenario is written out here rather than read from `simulator/` (not in the service's
image); tests/services/test_schedules.py checks that it is still the reference file.
"""

from __future__ import annotations

import copy
import logging
from typing import Any

from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from services.db.session import session_scope
from services.schedules import repository as repo
from services.users import BOOTSTRAP_ADMIN
from services.users import repository as users_repo

log = logging.getLogger("tcplab.schedules")

CORE_BENCHMARK = "core-benchmark"

REFERENCE_DUMBBELL: dict[str, Any] = {
    "name": "reference-dumbbell",
    "description": (
        "The speed benchmark: 64 newreno-sbs flows through a 15 Mb/s, 150-packet Drop-Tail bottleneck, "
        "50 ms round-trip propagation, 100 s. Configured as ../shared/peers/ns3/dumbbell.py --flows 64 runs "
        "ns-3 by default: 1000-byte segments with 54 header bytes on the wire (timestamps), RTT measured from "
        "timestamps on every ACK, limited transmit, initial window 10, initial and minimum RTO 1 s, 1 ms timer "
        "granularity, an ACK per segment, flows starting uniformly in the first second."
    ),
    "duration_s": 100,
    "warmup_s": 10,
    "seed": 1,
    "topology": {
        "dumbbell": {
            "bottleneck": {"rate_mbps": 15, "delay_ms": 24, "queue": {"type": "droptail", "limit_pkts": 150}},
            "access": {"rate_mbps": 1000, "queue": {"type": "droptail", "limit_pkts": 1000}},
        }
    },
    "flows": [
        {
            "name": "f",
            "count": 64,
            "variant": "newreno-sbs",
            "rtt_ms": 50,
            "start_s": {"uniform": [0, 1]},
            "tcp": {
                "mss_bytes": 1000,
                "header_bytes": 54,
                "initial_cwnd_pkts": 10,
                "min_rto_s": 1.0,
                "timer_granularity_s": 0.001,
                "max_window_pkts": 4000,
                "initial_rto_s": 1.0,
                "rtt_sampling": "timestamps",
                "limited_transmit": True,
            },
        }
    ],
}

BENCHMARK_FLOWS = [1, 8, 64]
"""bench.py's scaling points."""
BENCHMARK_REPLICATIONS = 5

BUILTIN_SCHEDULES: dict[str, dict[str, Any]] = {
    CORE_BENCHMARK: {
        "name": "core benchmark",
        "cron": "0 3 * * *",
        "shared": True,
        "template": {
            "name": "core benchmark",
            "scenario": REFERENCE_DUMBBELL,
            "axes": [{"path": "flows[0].count", "values": BENCHMARK_FLOWS}],
            "replications": BENCHMARK_REPLICATIONS,
            "seed": 1,
            "reuse_results": False,
        },
    },
}


def ensure_builtin_schedules(session: Session) -> None:
    """Adds every missing built-in schedule, disabled, owned by the bootstrap admin (made if
    missing; left as it is otherwise: a disabled admin stays disabled)."""
    admin = users_repo.user_by_name(session, BOOTSTRAP_ADMIN) or users_repo.ensure_admin(session, BOOTSTRAP_ADMIN)
    for key, definition in BUILTIN_SCHEDULES.items():
        repo.insert_builtin(
            session,
            {
                "builtin": key,
                "name": definition["name"],
                "cron": definition["cron"],
                "shared": definition["shared"],
                "template": copy.deepcopy(definition["template"]),
                "owner_id": admin.id,
                "enabled": False,
                "next_fire_at": None,
            },
        )


def install_builtin_schedules(session_factory: sessionmaker[Session] | None) -> None:
    """At the API's start: `ensure_builtin_schedules` in a transaction of its own. A database
    that is not there (or not migrated) yet is logged, not fatal: the API still serves."""
    if session_factory is None:
        return
    try:
        with session_scope(session_factory) as session:
            ensure_builtin_schedules(session)
    except SQLAlchemyError as e:
        log.warning("built-in schedules not checked (%s: %s)", type(e).__name__, str(e).splitlines()[0])
