"""The worker's logs in tcplab's format (infra/logging.py: JSON lines, or text on a terminal),
each line of a task carrying its ``task_id`` and, for a simulation, its ``run_id``.

Celery configures its handlers as usual; the ``after_setup_*logger`` signals then give them
tcplab's formatter, redaction and ids. ``task_prerun`` / ``task_postrun`` set and clear the
ids in context variables around each task, in the pool process that runs it. The lines Celery
writes about a task outside that span (``Task … received``, in the main process) carry the
task id from their own arguments, and the run id from the task's argument when the task is
one of RUN_TASKS.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from celery.signals import (
    after_setup_logger,
    after_setup_task_logger,
    task_postrun,
    task_prerun,
)

from infra.logging import ContextFilter, adopt_handler, run_id_var, task_id_var

# Tasks whose first argument is a run id (worker/tasks.py).
RUN_TASKS = frozenset({"tcplab.simulate"})

_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.IGNORECASE)
_TOKENS = "tcplab.worker.logging.tokens"


class CeleryContextFilter(ContextFilter):
    """The ids of the current task; for Celery's own lines about a task (whose arguments are a
    dict with its ``id``, ``name`` and ``args``), the ids of that task."""

    def filter(self, record: logging.LogRecord) -> bool:
        context = record.args if isinstance(record.args, dict) else None
        if context and "id" in context and "name" in context:
            if getattr(record, "task_id", None) is None:
                record.task_id = str(context["id"])
            if getattr(record, "run_id", None) is None and context["name"] in RUN_TASKS:
                match = _UUID.search(str(context.get("args", "")))
                if match:
                    record.run_id = match.group(0)
        return super().filter(record)


def _adopt(logger: logging.Logger) -> None:
    for handler in logger.handlers:
        if not any(isinstance(f, CeleryContextFilter) for f in handler.filters):
            handler.addFilter(CeleryContextFilter())
        adopt_handler(handler)  # its ContextFilter is the one above


@after_setup_logger.connect
def _format_worker_logs(logger: logging.Logger, **_: Any) -> None:
    _adopt(logger)


@after_setup_task_logger.connect
def _format_task_logs(logger: logging.Logger, **_: Any) -> None:
    _adopt(logger)


def run_id_of(task_name: str | None, args: Any, kwargs: Any) -> str | None:
    if isinstance(kwargs, dict) and kwargs.get("run_id"):
        return str(kwargs["run_id"])
    if task_name in RUN_TASKS and args:
        return str(args[0])
    return None


@task_prerun.connect
def _enter_task(task_id: str, task: Any, args: Any = None, kwargs: Any = None, **_: Any) -> None:
    tokens = (task_id_var.set(task_id), run_id_var.set(run_id_of(task.name, args, kwargs)))
    setattr(task.request, _TOKENS, tokens)


@task_postrun.connect
def _leave_task(task: Any, **_: Any) -> None:
    tokens = getattr(task.request, _TOKENS, None)
    if tokens is None:
        task_id_var.set(None)
        run_id_var.set(None)
        return
    for var, token in zip((task_id_var, run_id_var), tokens, strict=True):
        try:
            var.reset(token)
        except ValueError:  # set in another context (a thread pool): just clear it
            var.set(None)
