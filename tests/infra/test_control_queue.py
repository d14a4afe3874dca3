"""The control queue: the periodic control tasks (the schedules' tick, the reconciler) are
routed to a queue of their own, which only the control worker consumes — the launcher's and
compose's beat service — so they never wait behind simulations and a simulation worker never
runs them."""

from __future__ import annotations

import shlex

import yaml

from services.settings import REPO_ROOT, Settings
from worker.app import CONTROL_TASKS, celery_config
from worker.process import WorkerProcess


def test_the_control_tasks_are_routed_to_the_control_queue_and_beat_sends_them(test_settings: Settings) -> None:
    conf = celery_config(test_settings)
    assert set(CONTROL_TASKS) == {"tcplab.reconcile", "tcplab.fire_schedules"}
    assert conf["task_routes"] == {name: {"queue": f"{test_settings.queue}.control"} for name in CONTROL_TASKS}
    assert {entry["task"] for entry in conf["beat_schedule"].values()} == set(CONTROL_TASKS)
    assert conf["task_default_queue"] == test_settings.queue  # simulations and pings stay there


def test_a_simulation_worker_and_a_control_worker_consume_one_queue_each(test_settings: Settings) -> None:
    settings = test_settings.model_copy(update={"worker_concurrency": 3})
    simulation = WorkerProcess(settings).command
    control = WorkerProcess(settings, control=True).command
    assert simulation[simulation.index("--queues") + 1] == settings.queue
    assert simulation[simulation.index("--concurrency") + 1] == "3"
    assert control[control.index("--queues") + 1] == settings.control_queue == f"{settings.queue}.control"
    assert control[control.index("--concurrency") + 1] == "1"


def test_composes_beat_service_is_the_control_worker() -> None:
    services = yaml.safe_load((REPO_ROOT / "docker-compose.yml").read_text())["services"]
    # The containers set no TCPLAB_QUEUE: the default queue and its control queue.
    defaults = Settings.model_construct(queue=Settings.model_fields["queue"].default)

    def command(name: str) -> list[str]:
        value = services[name]["command"]
        return shlex.split(value) if isinstance(value, str) else [str(c) for c in value]

    beat, worker = command("beat"), command("worker")
    assert beat[beat.index("-A") + 2] == "worker" and "--beat" in beat
    assert beat[beat.index("--queues") + 1] == defaults.control_queue
    assert beat[beat.index("--concurrency") + 1] == "1"
    assert worker[worker.index("--queues") + 1] == defaults.queue
