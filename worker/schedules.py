"""The schedules' beat task: every `schedule_tick_s`, fire the schedules whose time has come.

This is tcplab's database-backed scheduler. Beat itself only knows one fixed entry (this
tick); the schedules, their cron lines and their next firing times live in PostgreSQL, so a
schedule created, edited or disabled through the API is seen at the next tick without
restarting anything, and two beats (or a beat and a "fire now") never fire one firing twice:
`services.schedules.fire_due` locks each due schedule and the sweeps table holds at most one
sweep per (schedule, firing time). docs/schedules.md says why this rather than a custom
beat Scheduler class.
"""

from __future__ import annotations

import datetime as dt
import functools
import logging

from services import schedules
from services.settings import get_settings
from worker.app import app
from worker.db import get_session_factory
from worker.enqueue import enqueue

FIRE_SCHEDULES = "tcplab.fire_schedules"

log = logging.getLogger("tcplab.schedules")


@app.task(name=FIRE_SCHEDULES, acks_late=False, ignore_result=True)
def fire_schedules_task() -> dict[str, int]:
    factory, settings = get_session_factory(), get_settings()
    fired = schedules.fire_due(
        factory,
        dt.datetime.now(dt.UTC),
        settings,
        enqueue=functools.partial(enqueue, factory=factory, settings=settings),
    )
    return {
        "fired": sum(f.sweep_id is not None for f in fired),
        "failed": sum(f.error is not None for f in fired),
        "enqueued": sum(len(f.to_enqueue) for f in fired),
    }
