"""The runs domain. Services never commit: the API request or the worker task does."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import tcpsim
from sqlalchemy.orm import Session

from services import admission
from services.db.models import FLOW_METRICS, Run, RunStatus
from services.errors import ConflictError, InvalidInputError, NotFoundError
from services.presets import UnknownPreset, build_scenario
from services.runs import repository as repo
from services.scenarios import key_of_canonical, validate_scenario
from services.settings import get_settings
from services.users import Identity, Quotas, check_modifiable, check_visible, visible_to


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def submit(
    session: Session,
    *,
    owner: Identity,
    scenario: Mapping[str, Any] | None = None,
    preset: str | None = None,
    overrides: Mapping[str, Any] | None = None,
    shared: bool = False,
    max_queued: int | None = None,
) -> tuple[Run, bool]:
    """Validates and stores `owner`'s run; returns it and whether a stored result already
    answers it.

    A cached run is stored as succeeded, pointing at the existing result: nothing to enqueue.
    Raises `ScenarioInvalid` (bad scenario or override), `InvalidInputError` (unknown preset,
    more flows than the owner's quota) or `QuotaExceededError` (too much queued).
    """
    if (scenario is None) == (preset is None):
        raise InvalidInputError("give either a scenario or a preset", path="$", kind="missing")
    if preset is not None:
        try:
            scenario = build_scenario(preset, overrides or {})
        except UnknownPreset as e:
            raise InvalidInputError(str(e), path="$.preset", kind="unknown_preset") from None
    elif overrides:
        raise InvalidInputError("overrides apply to a preset", path="$.overrides", kind="unexpected")
    assert scenario is not None
    _, canonical = validate_scenario(scenario)
    check_scenario_size(canonical, owner, path="$.scenario.flows" if preset is None else "$.overrides")
    run = new_run(canonical, preset=preset, owner_id=owner.id, shared=shared)
    answer_from_cache(run, repo.result_id_by_key(session, run.cache_key))
    admission.check(session, owner, queued=int(run.result_id is None), max_queued=max_queued)
    session.add(run)
    session.flush()
    return run, run.result_id is not None


def check_scenario_size(canonical: Mapping[str, Any], owner: Identity, *, path: str) -> None:
    """InvalidInputError (422) when the scenario has more flows than `owner` may simulate."""
    flows = sum(int(flow.get("count", 1)) for flow in canonical["flows"])
    if flows > owner.quotas.max_flows:
        raise InvalidInputError(
            f"the scenario has {flows} flows; {owner.name} may simulate at most "
            f"{owner.quotas.max_flows} in one run (ask an admin to raise max_flows)",
            path=path,
            kind="quota.max_flows",
        )


def new_run(canonical: dict[str, Any], *, preset: str | None, **fields: Any) -> Run:
    """A queued run of a validated (canonical) scenario on this core version, not yet added
    to a session; `fields` set further columns (a sweep's point and replication)."""
    core_version = tcpsim.__version__
    variants = sorted({f.get("variant") for f in canonical["flows"] if f.get("type", "tcp") == "tcp"} - {None})
    return Run(
        status=RunStatus.queued,
        scenario=canonical,
        preset=preset,
        variants=variants,
        seed=canonical["seed"],
        cache_key=key_of_canonical(canonical, core_version),
        core_version=core_version,
        **fields,
    )


def answer_from_cache(run: Run, result_id: uuid.UUID | None) -> None:
    """With a stored result for the run's cache key, the run is succeeded at once: nothing
    to simulate."""
    if result_id is not None:
        now = _now()
        run.status, run.result_id, run.started_at, run.finished_at = RunStatus.succeeded, result_id, now, now


def get_run(session: Session, run_id: uuid.UUID, viewer: Identity) -> Run:
    """The run if `viewer` may see it; NotFoundError otherwise, as if it did not exist."""
    return check_visible(repo.run_by_id(session, run_id), viewer, "run", run_id)


def set_shared(session: Session, run_id: uuid.UUID, viewer: Identity, shared: bool) -> Run:
    """Shares a run with the lab, or makes it private again (owner or admin)."""
    run = get_run(session, run_id, viewer)
    check_modifiable(run, viewer, "run", "re-share")
    if run.sweep_id is not None:
        raise ConflictError(f"run {run_id} belongs to sweep {run.sweep_id}: share the sweep")
    run.shared = shared
    session.flush()
    return run


def claim(session: Session, run_id: uuid.UUID, worker: str) -> dict[str, Any] | None:
    """Marks the run running for `worker` (its first heartbeat) and returns its scenario; None
    when there is nothing to do: the run is finished or cancelled (a duplicate or late
    delivery), or another worker is running it and alive (a redelivered message of a run the
    reconciler already handed on). A running run whose worker fell silent is taken over."""
    run = repo.run_for_update(session, run_id)
    if run is None or run.status.is_final:
        return None
    beat_at = repo.database_now(session)
    if run.status == RunStatus.running and run.worker != worker and not _silent(run, beat_at):
        return None
    run.status = RunStatus.running
    run.started_at = _now()
    run.heartbeat_at = beat_at
    run.attempts += 1
    run.worker = worker
    if run.owner is None:
        return run.scenario
    # The owner's cap on events as it stands now, the tighter of it and the scenario's own
    # (the worker then applies the server's caps the same way).
    cap = Quotas.of(run.owner, get_settings()).max_events_per_run
    limits = dict(run.scenario.get("limits") or {})
    limits["max_events"] = min(limits.get("max_events") or cap, cap)
    return {**run.scenario, "limits": limits}


def _silent(run: Run, database_now: dt.datetime) -> bool:
    """Whether the worker running `run` has not been heard of for TCPLAB_WORKER_DEAD_AFTER_S
    (heartbeats are PostgreSQL's clock; a run claimed before heartbeats has its start)."""
    last = run.heartbeat_at or run.started_at
    return last is None or (database_now - last).total_seconds() > get_settings().worker_dead_after_s


def check_in(session: Session, run_id: uuid.UUID, worker: str, *, beat: bool) -> bool:
    """Whether `worker` should go on simulating the run — False once the run was cancelled,
    finished, or handed to another worker because this one had fallen silent. With `beat`, it
    is also the worker's heartbeat (a write; the check alone is a read)."""
    if beat:
        return repo.beat(session, run_id, worker)
    return repo.still_running_for(session, run_id, worker)


def release(session: Session, run_id: uuid.UUID, worker: str) -> bool:
    """`worker` is shutting down and stopped the run: it goes back to the queue, keeping its
    place in the dispatch window (the caller sends it again). False when it is no longer
    `worker`'s to give back."""
    run = repo.run_for_update(session, run_id)
    if run is None or run.status != RunStatus.running or run.worker != worker:
        return False
    run.status = RunStatus.queued
    run.dispatched_at = repo.database_now(session)  # the dispatcher's clock
    run.heartbeat_at = None
    return True


def reclaim_abandoned(session: Session) -> list[uuid.UUID]:
    """Running runs whose worker has been silent for TCPLAB_WORKER_DEAD_AFTER_S (killed, its
    machine gone) go back to the queue, keeping their place in the dispatch window; returns
    them, for the caller to send once this is committed. Their old message may come back
    later: `claim` then finds them finished or running elsewhere and skips it."""
    return repo.requeue_silent(session, get_settings().worker_dead_after_s)


def complete(session: Session, run_id: uuid.UUID, result: dict[str, Any]) -> None:
    """Stores the core's result (once per cache key) and marks the run succeeded, unless it
    was cancelled meanwhile: then the result is kept for the cache and the run stays cancelled."""
    run = repo.run_for_update(session, run_id)
    if run is None:
        return
    result_id = repo.insert_result(session, run.cache_key, result["core_version"], result)
    if run.status in (RunStatus.cancelled, RunStatus.succeeded):
        return
    stats = result.get("stats", {})
    run.status = RunStatus.succeeded
    run.result_id = result_id
    run.finished_at = _now()
    run.core_wall_s = stats.get("wall_s")
    run.events = stats.get("events")
    run.error = run.error_kind = None
    from services.sweeps.aggregates import add_succeeded  # here: services.sweeps imports this module

    add_succeeded(session, [run.id])


def fail(session: Session, run_id: uuid.UUID, error: str, kind: str) -> None:
    run = repo.run_for_update(session, run_id)
    if run is None or run.status.is_final:
        return
    run.status = RunStatus.failed
    run.finished_at = _now()
    run.error = error
    run.error_kind = kind


def cancel(session: Session, run_id: uuid.UUID, viewer: Identity) -> Run:
    """Owner or admin only (403 for another's shared run; 404 for a private one)."""
    run = check_visible(repo.run_for_update(session, run_id), viewer, "run", run_id)
    check_modifiable(run, viewer, "run", "cancel")
    if run.status.is_final:
        raise ConflictError(f"run {run_id} is already {run.status.value}")
    run.status = RunStatus.cancelled
    run.finished_at = _now()
    return run


@dataclass(frozen=True)
class RunFilters:
    status: RunStatus | None = None
    variant: str | None = None
    preset: str | None = None
    created_after: dt.datetime | None = None
    created_before: dt.datetime | None = None
    mine_only: bool = False


def list_runs(
    session: Session, filters: RunFilters, viewer: Identity, *, limit: int, offset: int
) -> tuple[Sequence[Run], int]:
    """The runs `viewer` sees (their own, the lab's shared ones; all for an admin)."""
    return repo.page_of_runs(
        session,
        visible=visible_to(Run, viewer),
        mine_only=viewer.id if filters.mine_only else None,
        status=filters.status,
        variant=filters.variant,
        preset=filters.preset,
        created_after=filters.created_after,
        created_before=filters.created_before,
        limit=limit,
        offset=offset,
    )


def succeeded_run(session: Session, run_id: uuid.UUID, viewer: Identity) -> Run:
    """The run if `viewer` may see it and it has a result; ConflictError while it has none."""
    run = get_run(session, run_id, viewer)
    if run.status != RunStatus.succeeded or run.result_id is None:
        raise ConflictError(f"run {run_id} has no result: it is {run.status.value}")
    return run


def result_of(session: Session, run_id: uuid.UUID, viewer: Identity) -> dict[str, Any]:
    """The stored result of a succeeded run: summary and per-flow rows (its traces are read
    in pieces: services/runs/traces.py)."""
    run = succeeded_run(session, run_id, viewer)
    flows = [{m: getattr(f, m) for m in FLOW_METRICS} for f in repo.flows_of(session, run.result_id)]
    return {"run_id": str(run.id), "cache_key": run.cache_key, **repo.summary_of(session, run.result_id), "flows": flows}

