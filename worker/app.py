"""The Celery app: ``python -m celery -A worker.app worker``.

PostgreSQL is the source of truth, so there is no result backend: a task takes a run id,
writes its outcome to the database and returns nothing anyone waits for. Tasks are
acknowledged late (after they finish) and rejected back to the queue when their worker
process dies, so a killed worker's run is delivered again; the task must therefore be
idempotent (results are keyed by cache_key, see services/db/models.py).
"""

from __future__ import annotations

from typing import Any

from celery import Celery
from kombu import pools

from infra.broker import kombu_url
from infra.embedded import effective_redis_url
from services.settings import Settings, get_settings

# Modules whose tasks every worker imports at start: add new task modules here.
TASK_MODULES: tuple[str, ...] = ("worker.tasks", "worker.reconcile", "worker.schedules", "worker.ping")

# The periodic control tasks. They go to the control queue (`Settings.control_queue`), which a
# worker of their own consumes (the launcher's control worker, compose's beat service): a
# schedule's firing or a reconciler pass never waits behind simulations, and a simulation
# worker never spends its time on them.
CONTROL_TASKS: tuple[str, ...] = ("tcplab.reconcile", "tcplab.fire_schedules")


def celery_config(settings: Settings) -> dict[str, Any]:
    visibility_timeout = settings.broker_visibility_timeout_s
    return {
        "broker_url": kombu_url(effective_redis_url(settings)),
        "broker_connection_retry_on_startup": True,
        "broker_transport_options": {
            # A task not acknowledged within this time goes to another worker: it must
            # exceed the longest run (Settings refuses visibility < 1.5 x run_max_wall_s).
            "visibility_timeout": visibility_timeout,
            # How often a worker looks for the tasks of a dead worker whose visibility
            # timeout has passed (kombu's default is every ~100 s).
            "unacked_restore_interval": max(1, min(10, int(visibility_timeout / 10))),
            "unacked_restore_throttle": 1,
        },
        "result_backend": None,
        "task_ignore_result": True,
        "task_serializer": "json",
        "result_serializer": "json",
        "accept_content": ["json"],
        "task_acks_late": True,
        "task_reject_on_worker_lost": True,
        "worker_prefetch_multiplier": 1,
        # The broker went away: its unacknowledged tasks go back to the queue, so stop
        # running them here rather than simulate them twice.
        "worker_cancel_long_running_tasks_on_connection_loss": True,
        # Simulations (and pings) on the default queue, which a worker consumes unless told
        # otherwise (`--queues`); the control tasks on theirs.
        "task_default_queue": settings.queue,
        "task_routes": {name: {"queue": settings.control_queue} for name in CONTROL_TASKS},
        "worker_concurrency": settings.worker_concurrency,
        "enable_utc": True,
        "timezone": "UTC",
        "imports": TASK_MODULES,
        # Periodic tasks, for `celery beat`, embedded in the control worker (the launcher's,
        # compose's beat service): the reconciler re-sends runs whose broker message was lost;
        # the schedules' tick fires scheduled sweeps. Both go to the control queue.
        "beat_schedule": {
            "tcplab.reconcile": {
                "task": "tcplab.reconcile",
                "schedule": settings.reconcile_interval_s,
                # A pass that waited a whole interval (the control worker was down, or busy
                # firing) is superseded by the next one: drop it rather than pile them up.
                "options": {"expires": settings.reconcile_interval_s},
            },
            # Scheduled sweeps: fire the schedules whose time has come (worker/schedules.py).
            # A tick that waited for four ticks is dropped: the next one fires whatever is due
            # by then, once.
            "tcplab.fire_schedules": {
                "task": "tcplab.fire_schedules",
                "schedule": settings.schedule_tick_s,
                "options": {"expires": 4 * settings.schedule_tick_s},
            },
        },
    }


app = Celery("tcplab")
app.conf.update(celery_config(get_settings()))


def configure(settings: Settings) -> Celery:
    """Point the app at other settings (the launcher and the tests, once the embedded servers
    run); drops the connections made with the old ones."""
    app.conf.update(celery_config(settings))
    # Forget the broker connection pools: the next send connects to the new broker_url. kombu
    # keeps its pools in process-wide registries keyed by the connection: closing the app's pool
    # alone left that closed pool registered, and pointing the app back at the first broker
    # then handed it out again ("Acquire on closed pool"); reset() closes and forgets them all.
    pools.reset()
    app._pool = None  # the app's and its producers' references (tests/infra/test_third_party_internals.py)
    app.amqp._producer_pool = None
    return app


# The worker's log lines in tcplab's format, with the task's and the run's ids (signals).
import worker.logging  # noqa: E402, F401
