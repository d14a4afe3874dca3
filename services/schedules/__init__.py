"""Schedules: a sweep template fired on a cron line (UTC) by Celery beat's tick over the
database, with the history of every metric across firings and a flag when a firing moved.
Free of HTTP and Celery.

    schedule = create(session, ScheduleSpec.model_validate(body), owner=viewer)
    fired = fire_due(session_factory, now, settings, enqueue=worker.enqueue.enqueue)
    schedule, axes, rows = history(session, schedule.id, viewer, metrics=["core_events_per_s"])

docs/schedules.md describes the format, the firing guarantees and the shift flag.
"""

from services.schedules.builtin import (
    BUILTIN_SCHEDULES,
    CORE_BENCHMARK,
    ensure_builtin_schedules,
    install_builtin_schedules,
)
from services.schedules.firing import Firing, fire_due, fire_one
from services.schedules.history import (
    BASELINE_FIRINGS,
    CORE_FLOW,
    HISTORY_METRICS,
    MEASURED_METRICS,
    exact_shift,
    shift_of,
    welch_shift,
)
from services.schedules.service import (
    check_template,
    create,
    delete,
    fire_now,
    firing_counts,
    firings,
    get_schedule,
    history,
    list_schedules,
    update,
)
from services.schedules.spec import ScheduleSpec, ScheduleUpdate, check_cron, next_fire

__all__ = [
    "BASELINE_FIRINGS",
    "BUILTIN_SCHEDULES",
    "CORE_BENCHMARK",
    "CORE_FLOW",
    "HISTORY_METRICS",
    "MEASURED_METRICS",
    "Firing",
    "ScheduleSpec",
    "ScheduleUpdate",
    "check_cron",
    "check_template",
    "create",
    "delete",
    "ensure_builtin_schedules",
    "exact_shift",
    "fire_due",
    "fire_now",
    "fire_one",
    "firing_counts",
    "firings",
    "get_schedule",
    "history",
    "install_builtin_schedules",
    "list_schedules",
    "next_fire",
    "shift_of",
    "update",
    "welch_shift",
]
