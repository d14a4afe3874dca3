"""Simulation runs: submit, claim, complete, fail, cancel, read. Free of HTTP and Celery.

    run, cached = submit(session, owner=viewer, scenario=data)   # or preset=..., overrides=...
    # the boundary commits, then enqueues run.id unless `cached`

A run's life is queued → running → succeeded | failed | cancelled. PostgreSQL holds it; the
queue only carries ids. Results are keyed by `cache_key`, so an identical run reuses the
stored result and a task delivered twice stores one result.
"""

from services.runs.service import (
    RunFilters,
    cancel,
    check_in,
    check_in_batch,
    claim,
    claim_batch,
    complete,
    complete_batch,
    fail,
    fail_batch,
    get_run,
    give_back,
    list_runs,
    reclaim_abandoned,
    release,
    release_batch,
    result_of,
    scenario_of,
    set_shared,
    stored_result,
    submit,
    succeeded_run,
)

__all__ = [
    "RunFilters",
    "cancel",
    "check_in",
    "check_in_batch",
    "claim",
    "claim_batch",
    "complete",
    "complete_batch",
    "fail",
    "fail_batch",
    "get_run",
    "give_back",
    "list_runs",
    "reclaim_abandoned",
    "release",
    "release_batch",
    "result_of",
    "scenario_of",
    "set_shared",
    "stored_result",
    "submit",
    "succeeded_run",
]
