"""The sweeps domain: create, follow, cancel, extend, and the stopping rule. Services never
commit: the API request or the worker task does, then enqueues the ids returned here."""

from __future__ import annotations

import datetime as dt
import logging
import math
import uuid
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.orm import Session

import tcpsim
from services import admission
from services.db.models import Run, RunStatus, StopReason, Sweep, SweepPoint
from services.errors import InvalidInputError, NotFoundError, QuotaExceededError
from services.experiments.search import Search, SweepStatus, sweep_conditions, sweep_status_condition
from services.runs import repository as runs_repo
from services.runs.service import check_scenario_size
from services.scenarios.canonical import SeedTemplate
from services.settings import Settings
from services.stats import summarize, t_quantile
from services.sweeps import aggregates
from services.sweeps import repository as repo
from services.sweeps.grid import (
    axis_values,
    grid_points,
    plan_points,
    replication_seed,
)
from services.sweeps.observations import observations
from services.sweeps.spec import StoppingRule, SweepExtension, SweepSpec, metric_bounds, point_key, value_key
from services.traces.builtin import builtin_trace_file
from services.traces.service import trace_files
from services.users import Identity, check_modifiable, identity_of, visible_to
from services.users.access import can_see

log = logging.getLogger("tcplab.sweeps")


@dataclass
class Created:
    """What a create or an extension added: `runs` new runs, `cached` of them answered from
    stored results, the rest (`to_enqueue`) waiting to be sent once the transaction commits."""

    runs: int = 0
    cached: int = 0
    to_enqueue: list[uuid.UUID] = field(default_factory=list)

    def as_dict(self) -> dict[str, int]:
        return {"runs": self.runs, "cached": self.cached, "enqueued": len(self.to_enqueue)}

    def add(self, other: Created) -> None:
        self.runs += other.runs
        self.cached += other.cached
        self.to_enqueue += other.to_enqueue


@dataclass(frozen=True)
class Progress:
    total: int
    queued: int
    running: int
    succeeded: int
    failed: int
    cancelled: int

    @classmethod
    def of(cls, counts: dict[str, int] | None, *, cancelled: bool = False) -> Progress:
        """From the runs' counts by status. In a `cancelled` sweep a queued run is cancelled
        (it will never be sent), whether or not the dispatcher has marked it yet."""
        counts = counts or {}
        values = {s.value: counts.get(s.value, 0) for s in RunStatus}
        if cancelled:
            values["cancelled"] += values["queued"]
            values["queued"] = 0
        return cls(total=sum(values.values()), **values)

    @property
    def done(self) -> int:
        return self.succeeded + self.failed + self.cancelled


def status_of(sweep: Sweep, progress: Progress) -> str:
    """cancelled, done (nothing queued or running), running, or queued (nothing started)."""
    if sweep.cancelled_at is not None:
        return "cancelled"
    if progress.queued == 0 and progress.running == 0:
        return "done"
    if progress.running == 0 and progress.done == 0:
        return "queued"
    return "running"


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


# ---- create and extend --------------------------------------------------------------------------


def create(
    session: Session,
    spec: SweepSpec,
    *,
    owner: Identity,
    max_queued: int | None = None,
    room_for_every_run: bool = False,
) -> tuple[Sweep, Created]:
    """Validates every point, stores `owner`'s sweep, its points and its runs (cached ones
    already succeeded). Raises `ScenarioInvalid` naming the point, `InvalidInputError` (the
    per-sweep cap: 422) or `QuotaExceededError` (a queue's limit: 429).

    Admission (services/admission.py) comes before the costly part wherever it can: the grid's
    size against the per-sweep cap, and, when every run will be queued (`reuse_results` false,
    or `room_for_every_run`: a schedule's firing, refused without building anything), the
    queues. Otherwise, when the queues have room for every run anyway, the runs are stored as
    the points are validated and the cache answers what it can afterwards; only when they have
    not are the queues checked on the runs no stored result answers, once they are known and
    before any is stored. A refused point (422) rolls back what was stored with the request."""
    values = grid_points(axis_values(spec), spec.combine)
    runs = len(values) * spec.replications
    admission.check_sweep_size(runs)
    if room_for_every_run or not spec.reuse_results:
        admission.check(session, owner, queued=runs, max_queued=max_queued)
        every_run_fits = True
    else:
        every_run_fits = _fits(session, owner, runs, max_queued)
    sweep = Sweep(name=spec.name, preset=spec.preset, spec=_stored_spec(spec), owner_id=owner.id, shared=spec.shared)
    session.add(sweep)
    session.flush()
    points: list[NewPoint] = []

    def batches() -> Iterator[tuple[int, dict[str, Any], Iterable[int]]]:
        for i, p in enumerate(plan_points(spec, values, trace_files(session, owner))):
            check_scenario_size(p.canonical, owner, path="$.axes")
            points.append((i, p.values, p.flow_groups))
            yield i, p.canonical, range(spec.replications)

    if every_run_fits:
        # Nothing to refuse whatever the cache answers: the runs go to PostgreSQL while the
        # next points are validated (the server stores as this process plans), then the cache
        # answers what it can in one statement.
        created = _store(session, sweep, _runs_of(sweep, batches()), look_up=spec.reuse_results, points=points)
    else:
        planned = list(batches())
        created = _admit_and_store(session, sweep, planned, owner, max_queued, points=points)
    _apply_rule(session, sweep, spec, range(len(points)) if created.cached else (), owner, max_queued, created)
    return sweep, created


def _fits(session: Session, owner: Identity, runs: int, max_queued: int | None) -> bool:
    """Whether the queues have room for `runs` more queued runs (then the cache need not be
    asked first: whatever it answers, the sweep is admitted)."""
    try:
        admission.check(session, owner, queued=runs, max_queued=max_queued)
    except QuotaExceededError:
        return False
    return True


def extend(
    session: Session,
    sweep_id: uuid.UUID,
    extension: SweepExtension,
    viewer: Identity,
    settings: Settings,
    *,
    max_queued: int | None = None,
) -> tuple[Sweep, Created]:
    """Adds replications (a new total per point) and/or axis values; only (point,
    replication) pairs that have no run yet become runs. A cancelled sweep is reopened, and
    the stopping rule resumes at the points a limit capped. Owner or admin only; the new runs
    are the sweep owner's, within the owner's quota."""
    sweep = get_sweep(session, sweep_id, viewer, for_update=True)
    check_modifiable(sweep, viewer, "sweep", "extend")
    if sweep.cancelled_at is not None:
        repo.finish_cancel(session, sweep.id)  # its waiting runs stay cancelled once it reopens
    owner = _owner(sweep, viewer, settings)
    spec = SweepSpec.model_validate(sweep.spec)
    replications = extension.replications or spec.replications
    if replications < spec.replications:
        raise InvalidInputError(
            f"the sweep already has {spec.replications} replications per point; give a larger total",
            path="$.replications",
            kind="too_small",
        )
    spec = _with_more_values(spec, extension, replications)
    existing = {point_key(p.values): p for p in repo.points_of(session, sweep.id)}
    have = repo.replications_at(session, sweep.id)
    all_values = grid_points(axis_values(spec), spec.combine)
    new_points = [v for v in all_values if point_key(v) not in existing]
    missing = sum(len(set(range(replications)) - have.get(p.index, set())) for p in existing.values())
    added = missing + len(new_points) * replications
    admission.check_sweep_size(sum(len(r) for r in have.values()) + added)
    if not spec.reuse_results:
        admission.check(session, owner, queued=added, max_queued=max_queued)
    traces = trace_files(session, owner) if owner is not None else builtin_trace_file  # a sweep from before users
    planned_new = list(plan_points(spec, new_points, traces))
    for p in planned_new:
        check_scenario_size(p.canonical, viewer, path="$.axes")

    batches: list[tuple[int, dict[str, Any], Iterable[int]]] = []
    for point in existing.values():
        todo = sorted(set(range(replications)) - have.get(point.index, set()))
        if todo:
            scenario = repo.scenario_of_point(session, sweep.id, point.index)
            assert scenario is not None, "a sweep point without runs"
            batches.append((point.index, scenario, todo))
            point.stop_reason = None  # the rule looks again once these have run
    next_index = max((p.index for p in existing.values()), default=-1) + 1
    stored_points = [(next_index + k, p.values, p.flow_groups) for k, p in enumerate(planned_new)]
    batches += [(next_index + k, p.canonical, range(replications)) for k, p in enumerate(planned_new)]
    created = _admit_and_store(session, sweep, batches, owner, max_queued, points=stored_points)
    sweep.spec = _stored_spec(spec)
    sweep.cancelled_at = None
    again = {index for index, _, _ in batches} if created.cached else set()
    again |= {p.index for p in existing.values() if p.stop_reason is not None and StopReason(p.stop_reason).capped}
    _apply_rule(session, sweep, spec, sorted(again), owner, max_queued, created)
    return sweep, created


def _owner(sweep: Sweep, viewer: Identity | None, settings: Settings) -> Identity | None:
    """Whose quota the sweep's new runs count against: its owner's (an admin extending
    another's sweep adds runs of the owner, with the quotas `settings` give them); nobody's
    for a sweep from before users."""
    if viewer is not None and viewer.owns(sweep.owner_id):
        return viewer
    return identity_of(sweep.owner, settings) if sweep.owner is not None else None


def _apply_rule(
    session: Session,
    sweep: Sweep,
    spec: SweepSpec,
    points: Iterable[int],
    owner: Identity | None,
    max_queued: int | None,
    created: Created,
) -> None:
    """The stopping rule on `points` now, where no worker will apply it: a point whose runs
    were all answered from the cache (so a sweep submitted again grows as the first did), and
    a capped point an extension resumes. What it adds goes into `created`."""
    if spec.stopping is None:
        return
    for index in points:
        created.add(_grow_point(session, sweep, spec.stopping, index, owner=owner, max_queued=max_queued))


def _stored_spec(spec: SweepSpec) -> dict[str, Any]:
    """The spec as stored: every axis as its list of values (a range written out)."""
    data = spec.model_dump(mode="json", exclude_none=True, exclude={"shared"})
    data["axes"] = [{"path": a.path, "values": a.resolved()} for a in spec.axes]
    return data


def _with_more_values(spec: SweepSpec, extension: SweepExtension, replications: int) -> SweepSpec:
    by_path = {a.path: a for a in spec.axes}
    extra = {a.path: a.resolved() for a in extension.axes or []}
    for i, path in enumerate(extra):
        if path not in by_path:
            raise InvalidInputError(
                f"the sweep has no axis {path!r} (its axes: {', '.join(by_path)}); an extension adds values to existing axes",
                path=f"$.axes[{i}].path",
                kind="unknown_axis",
            )
    axes = []
    for axis in spec.axes:
        known = {value_key(v) for v in axis.resolved()}
        added = [v for v in extra.get(axis.path, []) if value_key(v) not in known]
        axes.append({"path": axis.path, "values": axis.resolved() + added})
    data = spec.model_dump(mode="json", exclude_none=True)
    data.update(axes=axes, replications=replications)
    if spec.stopping is not None and spec.stopping.max_replications < replications:
        data["stopping"] = {**data["stopping"], "max_replications": replications}
    return SweepSpec.model_validate(data)


Batches = Sequence[tuple[int, dict[str, Any], Iterable[int]]]
"""(point index, canonical scenario, replications) per point."""

NewPoint = tuple[int, dict[str, Any], list[dict[str, Any]]]
"""A point about to be stored: (index, axis values, flow groups)."""


def _admit_and_store(
    session: Session,
    sweep: Sweep,
    batches: Batches,
    owner: Identity | None,
    max_queued: int | None,
    *,
    points: Sequence[NewPoint] = (),
) -> Created:
    """The runs of `batches`, answered from stored results where possible, refused whole
    (QuotaExceededError) unless the queues have room for the others; then stored, with the
    new `points` among them."""
    runs = _new_runs(session, sweep, batches)
    admission.check(session, owner, queued=sum(r.result_id is None for r in runs), max_queued=max_queued)
    return _store(session, sweep, runs, points=points)


@dataclass(slots=True)
class NewRun:
    """A sweep run about to be stored (by COPY: `repo.copy_runs`), with what `Run` would hold:
    the same columns as `new_run` and `answer_from_cache` give it. It has no scenario of its
    own: its point stores `template.unseeded`, its row its seed."""

    id: uuid.UUID
    sweep_point: int
    replication: int
    seed: int
    cache_key: str
    template: SeedTemplate
    variants: list[str]
    result_id: uuid.UUID | None = None


def _runs_of(sweep: Sweep, batches: Iterable[tuple[int, dict[str, Any], Iterable[int]]]) -> Iterator[NewRun]:
    """One run per (point, replication) of `batches`, lazily, none answered from the cache yet.

    Each point's canonical scenario is written and hashed once: its replications differ only
    by their seed, so their scenario text and cache key are the point's text around the seed
    (`SeedTemplate`: identical to `new_run`'s `key_of_canonical` of `with_seed(...)`). The
    replication seeds are the same at every point (common random numbers): computed once."""
    core_version = tcpsim.__version__
    sweep_seed = _sweep_seed(sweep)
    seeds: dict[int, int] = {}
    for point, canonical, replications in batches:
        template = SeedTemplate(canonical, core_version)
        variants = _variants(canonical)
        for r in replications:
            seed = seeds.get(r)
            if seed is None:
                seed = seeds[r] = replication_seed(sweep_seed, r)
            yield NewRun(uuid.uuid4(), point, r, seed, template.key(seed), template, variants)


def _new_runs(session: Session, sweep: Sweep, batches: Batches) -> list[NewRun]:
    """One run per (point, replication) of `batches`, answered from the cache where possible
    (in one lookup); not stored yet."""
    runs = list(_runs_of(sweep, batches))
    # A sweep that must simulate (a benchmark) looks nothing up; its results still land on the
    # shared row of their cache key (`complete`), with this run's own wall time and events.
    if sweep.spec.get("reuse_results", True):
        cached = repo.result_ids_by_keys(session, [r.cache_key for r in runs])
        for run in runs:
            run.result_id = cached.get(run.cache_key)
    return runs


def _variants(canonical: dict[str, Any]) -> list[str]:
    """The run's TCP variants, as `new_run` lists them."""
    return sorted({f.get("variant") for f in canonical["flows"] if f.get("type", "tcp") == "tcp"} - {None})


def _store(
    session: Session,
    sweep: Sweep,
    runs: Iterable[NewRun],
    *,
    look_up: bool = False,
    points: Sequence[NewPoint] = (),
) -> Created:
    """Stores `runs` (one COPY, taking them as they come): queued, or succeeded at once where
    a stored result answers them (`result_id`), as `answer_from_cache` does. With `look_up`
    (only for a sweep that has no other runs: its creation), the cache is asked once they are
    stored, in one statement, and the runs it answers are set succeeded there. `points` are
    the new points among the runs' (gathered while they streamed, in a creation), stored once
    all are known, each with the scenario its runs' template holds (before the cache's
    answers are counted: the aggregates read their flow groups)."""
    now = _now()
    core_version = tcpsim.__version__
    queued, succeeded = RunStatus.queued.value, RunStatus.succeeded.value
    stored: list[NewRun] = []

    def rows() -> Iterator[tuple[Any, ...]]:
        for r in runs:
            stored.append(r)
            yield (
                r.id,
                queued if r.result_id is None else succeeded,
                None,  # the point's scenario, with the row's seed
                sweep.preset,
                r.variants,
                r.seed,
                r.cache_key,
                core_version,
                None if r.result_id is None else now,
                None if r.result_id is None else now,
                r.result_id,
                sweep.id,
                r.sweep_point,
                r.replication,
                sweep.owner_id,
                sweep.shared,
            )

    repo.copy_runs(session, rows())
    if points:
        unseeded = {r.sweep_point: r.template.unseeded for r in stored}
        repo.copy_points(session, sweep.id, ((i, values, groups, unseeded[i]) for i, values, groups in points))
    if look_up and stored:
        answered = repo.answer_from_cache(session, sweep.id, now)
        if answered:
            for r in stored:
                r.result_id = answered.get(r.id, r.result_id)
    aggregates.add_succeeded(session, [r.id for r in stored if r.result_id is not None])  # answered from the cache
    runs = stored
    return Created(
        runs=len(runs),
        cached=sum(r.result_id is not None for r in runs),
        to_enqueue=[r.id for r in runs if r.result_id is None],
    )


def _sweep_seed(sweep: Sweep) -> int:
    return int(sweep.spec.get("seed", 1))


# ---- read, cancel ------------------------------------------------------------------------------


def get_sweep(session: Session, sweep_id: uuid.UUID, viewer: Identity | None, *, for_update: bool = False) -> Sweep:
    """The sweep if `viewer` may see it (None: the system itself, e.g. the worker); else
    NotFoundError, as if it did not exist."""
    sweep = repo.sweep_by_id(session, sweep_id, for_update=for_update)
    if sweep is None or (viewer is not None and not can_see(sweep, viewer)):
        raise NotFoundError("sweep", sweep_id)
    return sweep


def set_shared(session: Session, sweep_id: uuid.UUID, viewer: Identity, shared: bool) -> Sweep:
    """Shares the sweep (and its runs) with the lab, or makes it private (owner or admin)."""
    sweep = get_sweep(session, sweep_id, viewer, for_update=True)
    check_modifiable(sweep, viewer, "sweep", "re-share")
    sweep.shared = shared
    repo.share_runs(session, sweep_id, shared)
    return sweep


def list_sweeps(
    session: Session,
    viewer: Identity,
    *,
    preset: str | None,
    mine_only: bool = False,
    search: Search = Search(),
    status: SweepStatus | None = None,
    limit: int,
    offset: int,
) -> tuple[Sequence[Sweep], int]:
    """The sweeps `viewer` sees, newest first, of one `status` if given; `search` by default
    leaves out archived ones."""
    return repo.page_of_sweeps(
        session,
        visible=visible_to(Sweep, viewer),
        owner_id=viewer.id if mine_only else None,
        preset=preset,
        extra=[*sweep_conditions(search), *([sweep_status_condition(status)] if status else [])],
        limit=limit,
        offset=offset,
    )


def progress_of(session: Session, sweeps: Sequence[Sweep]) -> dict[uuid.UUID, tuple[Progress, int]]:
    """Per sweep: its runs' progress and its number of points."""
    ids = [s.id for s in sweeps]
    counts = repo.status_counts(session, ids)
    points = repo.point_counts(session, ids)
    return {
        s.id: (Progress.of(counts.get(s.id), cancelled=s.cancelled_at is not None), points.get(s.id, 0)) for s in sweeps
    }


def points_with_progress(session: Session, sweep_id: uuid.UUID, viewer: Identity) -> list[tuple[SweepPoint, Progress]]:
    cancelled = get_sweep(session, sweep_id, viewer).cancelled_at is not None
    counts = repo.status_counts(session, [sweep_id], by_point=True)
    return [
        (p, Progress.of(counts.get((sweep_id, p.index)), cancelled=cancelled))
        for p in repo.points_of(session, sweep_id)
    ]


def stop_reasons(session: Session, sweep: Sweep) -> dict[int, str | None] | None:
    """Per point, why the stopping rule stopped there (None: not stopped); None for a sweep
    without a stopping rule. The caller has checked that its viewer may see `sweep`."""
    if sweep.spec.get("stopping") is None:
        return None
    return repo.stop_reasons(session, sweep.id)


@dataclass(frozen=True)
class StoppingOutcome:
    """Where a sweep's stopping rule stands, over all its points: how many stopped for which
    reason, and in words whether the target was met — a rule that ended at its cap must say
    the target was not met, not just stop."""

    metric: str
    target_relative_half_width: float
    max_replications: int
    points: int
    by_reason: dict[str, int]
    growing: int
    target_met: bool | None
    message: str


def stopping_outcome(session: Session, sweep: Sweep) -> StoppingOutcome | None:
    """None without a rule. The caller has checked that its viewer may see `sweep`."""
    rule = sweep.spec.get("stopping")
    reasons = stop_reasons(session, sweep)
    if rule is None or reasons is None:
        return None
    by_reason: dict[str, int] = {}
    for reason in reasons.values():
        if reason is not None:
            by_reason[reason] = by_reason.get(reason, 0) + 1
    total, growing = len(reasons), sum(1 for r in reasons.values() if r is None)
    met = by_reason.get(StopReason.target_met, 0)
    missed = {r: n for r, n in by_reason.items() if r != StopReason.target_met}
    target = f"±{100 * rule['target_relative_half_width']:g} % on {rule['metric']}"
    if growing:
        message = f"{growing} of {total} points still growing towards {target}; met at {met} so far"
        target_met = None
    elif not missed:
        message = f"target {target} met at all {total} points"
        target_met = True
    else:
        parts = ", ".join(f"{n} {reason}" for reason, n in sorted(missed.items()))
        advice = " (extend the sweep to resume capped points)" if any(StopReason(r).capped for r in missed) else ""
        message = f"target {target} NOT met at {sum(missed.values())} of {total} points: {parts}{advice}"
        target_met = False
    return StoppingOutcome(
        metric=rule["metric"],
        target_relative_half_width=rule["target_relative_half_width"],
        max_replications=rule["max_replications"],
        points=total,
        by_reason=by_reason,
        growing=growing,
        target_met=target_met,
        message=message,
    )


def runs_of(session: Session, sweep_id: uuid.UUID, viewer: Identity) -> Sequence[Run]:
    get_sweep(session, sweep_id, viewer)
    return repo.runs_of(session, sweep_id)


def cancel(session: Session, sweep_id: uuid.UUID, viewer: Identity) -> tuple[Sweep, int]:
    """Cancels the sweep's queued and running runs (a running simulation finishes; its result
    is kept for the cache). Finished runs stay as they are. Returns how many were cancelled.
    Owner or admin only. Its waiting runs are marked by the dispatcher's next pass, which the
    caller asks for after commit (`repo.cancel_unfinished`); they are never sent meanwhile."""
    sweep = get_sweep(session, sweep_id, viewer, for_update=True)
    check_modifiable(sweep, viewer, "sweep", "cancel")
    sweep.cancelled_at = _now()
    return sweep, repo.cancel_unfinished(session, sweep_id)


# ---- the stopping rule ------------------------------------------------------------------------------


def after_run(session: Session, run_id: uuid.UUID, settings: Settings) -> list[uuid.UUID]:
    """Called once a sweep run has finished: applies the sweep's stopping rule to the run's
    point and returns the ids of the replications it added (to enqueue after commit).

    A point stops growing once every TCP flow group (or the rule's `flow`) has a 95 % CI
    half-width within `target_relative_half_width` of its mean, or it has `max_replications`
    runs. Otherwise it gets the replications the current spread says it needs (n ≈ (t·s /
    (target·|mean|))², at least one more, at most up to the maximum), in one go rather than
    one round trip per replication.

    The replications it adds go through admission like any run (services/admission.py): it
    adds what the owner's quota, the per-sweep cap and the server's queue leave room for, and a
    point where nothing fits stops, its `stop_reason` naming the limit ("capped: quota"). Every
    stop says why on the point (`StopReason`); an extension resumes a capped point.
    """
    return after_runs(session, [run_id], settings)


def after_runs(session: Session, run_ids: Sequence[uuid.UUID], settings: Settings) -> list[uuid.UUID]:
    """`after_run` for a worker's batch of runs: each sweep's rule is read once and each of
    their points looked at once, however many of the batch's runs it holds. `settings` give
    the server's queue limit and the quotas of owners who have none of their own."""
    points: dict[uuid.UUID, set[int]] = {}
    for sweep_id, index in runs_repo.sweep_points_of(session, run_ids):
        points.setdefault(sweep_id, set()).add(index)
    # Locked before anything else is (so the wait holds nothing up): a cancel committing while
    # the rule decides would otherwise leave the replications it adds queued in a cancelled sweep.
    locked = repo.sweeps_for_share(session, points)
    to_enqueue: list[uuid.UUID] = []
    for sweep_id, indexes in points.items():
        sweep = locked.get(sweep_id)
        if sweep is None:  # deleted meanwhile, its runs with it
            continue
        rule = SweepSpec.model_validate(sweep.spec).stopping
        if rule is None or sweep.cancelled_at is not None:
            continue
        owner, max_queued = _owner(sweep, None, settings), settings.max_queued_runs
        for index in sorted(indexes):
            to_enqueue += _grow_point(session, sweep, rule, index, owner=owner, max_queued=max_queued).to_enqueue
    return to_enqueue


CAPPED = {
    admission.Limit.quota: StopReason.capped_quota,
    admission.Limit.sweep_cap: StopReason.capped_sweep,
    admission.Limit.server_queue: StopReason.capped_server,
}


def _grow_point(
    session: Session, sweep: Sweep, rule: StoppingRule, index: int, *, owner: Identity | None, max_queued: int | None
) -> Created:
    """The stopping rule on one point whose runs have all finished. Replications answered
    from the cache count at once, so the rule is applied again until it stops the point, or
    the point waits for the simulations it enqueued."""
    grown = Created()
    admission.lock(session, owner)  # before the point's row lock: the order every path takes
    while True:
        point = repo.point_for_update(session, sweep.id, index)
        assert point is not None
        runs = repo.runs_of(session, sweep.id, index)
        if any(not r.status.is_final for r in runs):
            return grown
        have = len(runs)
        needed = _replications_needed(session, sweep.id, index, rule, have)
        more = 0
        if needed is None:
            point.stop_reason = StopReason.no_values
        elif needed <= have:
            point.stop_reason = StopReason.target_met
        elif have >= rule.max_replications:
            point.stop_reason = StopReason.max_replications
        else:
            room = admission.room(session, owner, max_queued=max_queued, sweep_runs=repo.run_count(session, sweep.id))
            more = min(min(needed, rule.max_replications) - have, room.runs)
            if more <= 0:
                assert room.limit is not None
                point.stop_reason = CAPPED[room.limit]
                log.info("sweep %s point %d stops at %d replications: %s", sweep.id, index, have, point.stop_reason)
        if more <= 0:
            return grown
        start = max(r.replication for r in runs if r.replication is not None) + 1
        scenario = repo.scenario_of_point(session, sweep.id, index)
        assert scenario is not None
        point.stop_reason = None  # growing again (an extension resumed it)
        created = _store(session, sweep, _new_runs(session, sweep, [(index, scenario, range(start, start + more))]))
        grown.add(created)
        if created.to_enqueue:
            return grown


def _replications_needed(
    session: Session, sweep_id: uuid.UUID, point: int, rule: StoppingRule, have: int
) -> int | None:
    """The runs the point needs (it has `have`) for every watched group's CI to meet the
    target: `have` when they all do (or have nothing to estimate: a zero mean); None when no
    watched group has a value at all (every run failed, or the metric is undefined there).

    A group counts its values, not its runs (a run may leave the metric undefined): one value
    asks for one more run; otherwise n ≈ (t·s / (target·|mean|))² values, at least one more."""
    obs = [
        o
        for o in observations(session, sweep_id, point)
        if o.type == "tcp" and (rule.flow is None or o.flow == rule.flow)
    ]
    needed: int | None = None
    for group in sorted({o.flow for o in obs}):
        # The interval the summary reports, so "target met" there is met here.
        s = summarize((o.metrics.get(rule.metric) for o in obs if o.flow == group), bounds=metric_bounds(rule.metric))
        if s.count == 0:
            continue
        if s.count == 1:
            more = 1
        elif s.mean == 0 or (
            s.relative_half_width is not None and s.relative_half_width <= rule.target_relative_half_width
        ):
            more = 0
        else:
            assert s.std is not None and s.mean is not None
            estimate = math.ceil((t_quantile(s.count) * s.std / (rule.target_relative_half_width * abs(s.mean))) ** 2)
            more = max(estimate - s.count, 1)
        needed = max(needed or 0, have + more)
    return needed
