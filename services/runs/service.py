"""The runs domain. Services never commit: the API request or the worker task does."""

from __future__ import annotations

import datetime as dt
import json
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy.orm import Session

import tcpsim
from services import admission
from services.db.models import FLOW_METRICS, Run, RunStatus
from services.errors import ConflictError, InvalidInputError
from services.experiments.search import Search, run_conditions
from services.presets import UnknownPreset, build_scenario
from services.runs import repository as repo
from services.scenarios import Scenario, key_of_canonical, validate_scenario
from services.settings import Settings
from services.traces.files import scenario_for_the_core
from services.traces.service import trace_files
from services.users import Identity, check_modifiable, check_visible, visible_to


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def submit(
    session: Session,
    *,
    owner: Identity,
    scenario: Mapping[str, Any] | Scenario | None = None,
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
    _, canonical = validate_scenario(scenario, trace_files(session, owner))
    check_scenario_size(canonical, owner, path="$.scenario.flows" if preset is None else "$.overrides")
    run = new_run(canonical, preset=preset, owner_id=owner.id, shared=shared)
    answer_from_cache(run, repo.result_id_by_key(session, run.cache_key))
    session.add(run)
    session.flush()  # before the admission's lock, which is then held for less (admission.check)
    admission.check(session, owner, queued=int(run.result_id is None), max_queued=max_queued, added=True)
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


def scenario_of(session: Session, run_id: uuid.UUID, viewer: Identity) -> tuple[Run, dict[str, Any]]:
    """The run (if `viewer` may see it) and the canonical scenario it ran — a sweep run's is
    its point's with its own seed — so a page can show it or submit it again."""
    run = get_run(session, run_id, viewer)
    return run, repo.scenarios_of(session, [run.id])[run.id]


def set_shared(session: Session, run_id: uuid.UUID, viewer: Identity, shared: bool) -> Run:
    """Shares a run with the lab, or makes it private again (owner or admin)."""
    run = get_run(session, run_id, viewer)
    check_modifiable(run, viewer, "run", "re-share")
    if run.sweep_id is not None:
        raise ConflictError(f"run {run_id} belongs to sweep {run.sweep_id}: share the sweep")
    run.shared = shared
    session.flush()
    return run


def claim(session: Session, run_id: uuid.UUID, worker: str, settings: Settings) -> dict[str, Any] | None:
    """Marks the run running for `worker` and returns its scenario as the core must run it;
    None when there is nothing to do (see `claim_batch`)."""
    text = claim_batch(session, [run_id], worker, settings).get(_uuid(run_id))
    return None if text is None else json.loads(text)


def claim_batch(
    session: Session, run_ids: Sequence[uuid.UUID], worker: str, settings: Settings
) -> dict[uuid.UUID, str]:
    """Marks the runs running for `worker` (their first heartbeat) and returns the scenarios to
    simulate, in `run_ids`' order, as JSON text for the core — each scenario's limits the
    tighter of its own and the caps as they stand now: the server's wall-clock time and events
    (`settings`' TCPLAB_RUN_MAX_WALL_S, TCPLAB_RUN_MAX_EVENTS) and its owner's quota of events.
    A run is left out when there is nothing to do: it is finished or cancelled (a duplicate or
    late delivery), or another worker is running it and alive (a redelivered message of a run
    the reconciler already handed on). A running run whose worker fell silent (for
    TCPLAB_WORKER_DEAD_AFTER_S) is taken over."""
    run_ids = _uuids(run_ids)
    claimed: dict[uuid.UUID, str] = dict(
        repo.claim_runs(
            session,
            run_ids,
            worker,
            started_at=_now(),
            dead_after_s=settings.worker_dead_after_s,
            max_wall_s=settings.run_max_wall_s,
            max_events=settings.run_max_events,
        )
    )
    cache_dir = settings.effective_trace_cache_dir  # traces' content as files, just before the core runs
    return {
        run_id: scenario_for_the_core(session, claimed[run_id], cache_dir) for run_id in run_ids if run_id in claimed
    }


def _uuid(run_id: uuid.UUID | str) -> uuid.UUID:
    """A run id as a UUID (callers may hold the text an API response gave them)."""
    return run_id if isinstance(run_id, uuid.UUID) else uuid.UUID(str(run_id))


def _uuids(run_ids: Sequence[uuid.UUID | str]) -> list[uuid.UUID]:
    return [_uuid(run_id) for run_id in run_ids]


def check_in(session: Session, run_id: uuid.UUID, worker: str, *, beat: bool) -> bool:
    """Whether `worker` should go on simulating the run (see `check_in_batch`)."""
    return _uuid(run_id) in check_in_batch(session, [run_id], worker, beat=beat)


def check_in_batch(session: Session, run_ids: Sequence[uuid.UUID], worker: str, *, beat: bool) -> set[uuid.UUID]:
    """Those of `run_ids` that `worker` should go on with — a run drops out once it was
    cancelled, finished, or handed to another worker because this one had fallen silent. With
    `beat`, it is also the worker's heartbeat on them (a write; the check alone is a read)."""
    if beat:
        return repo.beat_batch(session, _uuids(run_ids), worker)
    return repo.running_for(session, _uuids(run_ids), worker)


def release(session: Session, run_id: uuid.UUID, worker: str) -> bool:
    """`worker` is shutting down and stopped the run: see `release_batch`."""
    return bool(release_batch(session, [run_id], worker))


def release_batch(session: Session, run_ids: Sequence[uuid.UUID], worker: str) -> list[uuid.UUID]:
    """`worker` is shutting down: its runs go back to the queue, keeping their place in the
    dispatch window and their batch (the caller sends them again, as one message). Returns
    those released: a run no longer `worker`'s is not given back."""
    released = []
    beat_at = repo.database_now(session)  # the dispatcher's clock
    for run in repo.runs_for_update(session, run_ids):
        if run.status != RunStatus.running or run.worker != worker:
            continue
        run.status = RunStatus.queued
        run.dispatched_at = beat_at
        run.heartbeat_at = None
        released.append(run.id)
    return released


def give_back(session: Session, run_ids: Sequence[uuid.UUID], worker: str) -> list[uuid.UUID]:
    """`worker` claimed these runs in a batch and did not start them (the batch ran past its
    time budget): they wait in PostgreSQL again, for the dispatcher to hand out in their turn."""
    return repo.give_back(session, _uuids(run_ids), worker)


def reclaim_abandoned(session: Session, settings: Settings) -> list[uuid.UUID]:
    """Running runs whose worker has been silent for `settings`' TCPLAB_WORKER_DEAD_AFTER_S
    (killed, its machine gone) go back to the queue, keeping their place in the dispatch
    window; returns them, for the caller to send once this is committed. Their old message may
    come back later: `claim` then finds them finished or running elsewhere and skips it."""
    return repo.requeue_silent(session, settings.worker_dead_after_s)


def complete(session: Session, run_id: uuid.UUID, result: dict[str, Any]) -> None:
    """Stores the core's result and marks the run succeeded (see `complete_batch`)."""
    complete_batch(session, [(run_id, result)])


def complete_batch(session: Session, completed: Sequence[tuple[uuid.UUID, dict[str, Any]]]) -> list[uuid.UUID]:
    """Stores the core's results (once per cache key, in a few statements for the whole batch)
    and marks their runs succeeded — unless a run was cancelled meanwhile: then its result is
    kept for the cache and the run stays cancelled. Returns the runs that became succeeded now
    (not those a redelivery finds succeeded already)."""
    completed = [(_uuid(run_id), result) for run_id, result in completed]
    keys = repo.cache_keys_of(session, [run_id for run_id, _ in completed], lock=True)
    present = [(run_id, keys[run_id], result) for run_id, result in completed if run_id in keys]
    result_ids = repo.insert_results(session, [(key, result["core_version"], result) for _, key, result in present])
    succeeded = repo.mark_succeeded(
        session,
        [
            (run_id, result_ids[key], result.get("stats", {}).get("wall_s"), result.get("stats", {}).get("events"))
            for run_id, key, result in present
        ],
        finished_at=_now(),
    )
    from services.sweeps.aggregates import add_succeeded  # here: services.sweeps imports this module

    add_succeeded(session, succeeded)
    return succeeded


def fail(session: Session, run_id: uuid.UUID, error: str, kind: str) -> None:
    fail_batch(session, [(run_id, error, kind)])


def fail_batch(session: Session, failures: Sequence[tuple[uuid.UUID, str, str]]) -> None:
    """Records the core's verdicts (run, message, kind) on runs not yet finished."""
    verdicts = {_uuid(run_id): (error, kind) for run_id, error, kind in failures}
    now = _now()
    for run in repo.runs_for_update(session, list(verdicts)):
        if run.status.is_final:
            continue
        run.status = RunStatus.failed
        run.finished_at = now
        run.error, run.error_kind = verdicts[run.id]


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
    search: Search = Search()  # name, tags, parameters, archived (default: not archived)


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
        extra=run_conditions(filters.search),
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
    return {"run_id": str(run.id), "cache_key": run.cache_key, **stored_result(session, run.result_id)}


def stored_result(session: Session, result_id: uuid.UUID | None) -> dict[str, Any]:
    """A stored result's summary and per-flow rows. A result never changes once stored (the
    runs that share it differ only by their own fields): callers may keep it."""
    assert result_id is not None
    flows = [{m: getattr(f, m) for m in FLOW_METRICS} for f in repo.flows_of(session, result_id)]
    return {**repo.summary_of(session, result_id), "flows": flows}
