"""The layers at run time, beside `lint-imports` (.importlinter), which sees only import
statements: the API process never loads the simulate task's body, the worker's processes, or
Celery's task modules, nor the worker process's engine (worker.db), although it sends tasks
(worker.enqueue, by name)."""

from __future__ import annotations

import subprocess
import sys

from services.settings import REPO_ROOT

_PROBE = """
import sys
from api.main import create_app
from services.settings import Settings
create_app(Settings(database_url="postgresql+psycopg://nobody@127.0.0.1:1/none", redis_url="redis://127.0.0.1:1/0"))
import worker.enqueue  # what the routers send with
print(" ".join(sorted(m for m in sys.modules if m.startswith("worker."))))
"""


def test_the_api_process_sends_tasks_without_loading_their_bodies() -> None:
    loaded = subprocess.run(
        [sys.executable, "-c", _PROBE], cwd=REPO_ROOT, capture_output=True, text=True, timeout=120, check=True
    ).stdout.split()
    assert "worker.enqueue" in loaded
    for body in (
        "worker.tasks",
        "worker.reconcile",
        "worker.schedules",
        "worker.watch",
        "worker.process",
        "worker.ping",
        "worker.db",
    ):
        assert body not in loaded, f"the API process loaded {body}"
