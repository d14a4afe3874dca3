"""Experiment management on runs and sweeps: tags, notes, archiving, deleting, and two sweeps
side by side. Free of HTTP and Celery; never commits (the request does). docs/experiments.md."""

from __future__ import annotations

import datetime as dt
import math
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy.orm import Session

from services import runs as runs_service
from services import sweeps as sweeps_service
from services.db.models import Run, Sweep
from services.errors import ConflictError, InvalidInputError
from services.experiments import repository as repo
from services.experiments.tags import check_note, merged_tags
from services.runs import repository as runs_repo
from services.runs.dispatch import lock_dispatcher
from services.sweeps.spec import SUMMARY_METRICS, unknown_metric_message, value_key
from services.users import Identity, check_modifiable, check_visible


@dataclass(frozen=True)
class Edit:
    """A PATCH of a run or sweep: each field None leaves it as it is (`note` is set when
    `set_note`, to clear it with None)."""

    shared: bool | None = None
    tags: Sequence[str] | None = None
    add_tags: Sequence[str] = ()
    remove_tags: Sequence[str] = ()
    set_note: bool = False
    note: str | None = None
    archived: bool | None = None

    @property
    def is_empty(self) -> bool:
        return (
            self.shared is None
            and self.tags is None
            and not self.add_tags
            and not self.remove_tags
            and not self.set_note
            and self.archived is None
        )


@dataclass(frozen=True)
class Deleted:
    """What a delete removed: runs, and results no other run shared (with their traces)."""

    runs: int
    results: int


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def _labels(thing: Run | Sweep, edit: Edit) -> None:
    """Tags and note, checked all before any is set."""
    tags = merged_tags(thing.tags or [], replace=edit.tags, add=edit.add_tags, remove=edit.remove_tags)
    note = check_note(edit.note) if edit.set_note else thing.note
    thing.tags, thing.note = tags, note


def update_run(session: Session, run_id: uuid.UUID, viewer: Identity, edit: Edit) -> Run:
    """Shares, tags, notes or archives a run (owner or admin: 403 otherwise). A sweep's run
    follows its sweep for sharing and archiving (409); an unfinished run is not archived
    (409: cancel it first)."""
    if edit.is_empty:
        raise InvalidInputError(
            "nothing to change: give shared, tags, add_tags, remove_tags, note or archived", path="$", kind="empty"
        )
    if edit.shared is not None:
        runs_service.set_shared(session, run_id, viewer, edit.shared)
    run = check_visible(runs_repo.run_for_update(session, run_id), viewer, "run", run_id)
    check_modifiable(run, viewer, "run", "change")
    _labels(run, edit)
    if edit.archived is not None:
        if run.sweep_id is not None:
            raise ConflictError(f"run {run_id} belongs to sweep {run.sweep_id}: archive the sweep")
        if edit.archived and not run.status.is_final:
            raise ConflictError(f"run {run_id} is {run.status.value}: cancel it first (POST /v1/runs/{run_id}/cancel)")
        run.archived_at = (run.archived_at or _now()) if edit.archived else None
    session.flush()
    return run


def _unfinished(session: Session, sweep: Sweep) -> int:
    """The sweep's runs queued or running (none once it is cancelled: its waiting runs will
    never be sent, its runs in flight are marked cancelled by the cancel)."""
    progress, _ = sweeps_service.progress_of(session, [sweep])[sweep.id]
    return progress.queued + progress.running


def update_sweep(session: Session, sweep_id: uuid.UUID, viewer: Identity, edit: Edit) -> Sweep:
    """Shares, tags, notes or archives a sweep (owner or admin: 403 otherwise). A sweep with
    runs queued or running is not archived (409: cancel it first); its runs are archived with it."""
    if edit.is_empty:
        raise InvalidInputError(
            "nothing to change: give shared, tags, add_tags, remove_tags, note or archived", path="$", kind="empty"
        )
    if edit.shared is not None:
        sweeps_service.set_shared(session, sweep_id, viewer, edit.shared)
    sweep = sweeps_service.get_sweep(session, sweep_id, viewer, for_update=True)
    check_modifiable(sweep, viewer, "sweep", "change")
    _labels(sweep, edit)
    if edit.archived is not None:
        if edit.archived and (left := _unfinished(session, sweep)):
            raise ConflictError(
                f"sweep {sweep_id} has {left} runs queued or running: cancel it first (POST /v1/sweeps/{sweep_id}/cancel)"
            )
        sweep.archived_at = (sweep.archived_at or _now()) if edit.archived else None
    session.flush()
    return sweep


def delete_run(session: Session, run_id: uuid.UUID, viewer: Identity) -> Deleted:
    """Deletes a finished run and its result unless another run shares it (owner or admin).
    409 for a run queued or running (cancel it first) or one of a sweep (delete the sweep:
    its summaries rest on every run)."""
    run = check_visible(runs_repo.run_for_update(session, run_id), viewer, "run", run_id)
    check_modifiable(run, viewer, "run", "delete")
    if run.sweep_id is not None:
        raise ConflictError(f"run {run_id} belongs to sweep {run.sweep_id}: delete the sweep")
    if not run.status.is_final:
        raise ConflictError(f"run {run_id} is {run.status.value}: cancel it first (POST /v1/runs/{run_id}/cancel)")
    result_id = run.result_id
    session.expunge(run)
    repo.delete_run_row(session, run_id)
    return Deleted(runs=1, results=repo.delete_unshared_results(session, [result_id] if result_id else []))


def delete_sweep(session: Session, sweep_id: uuid.UUID, viewer: Identity) -> Deleted:
    """Deletes a sweep with its points, runs, aggregates, and the results (with their traces)
    no other run shares (owner or admin). Refused (409) while runs are queued or running:
    cancel it first — then it may be deleted at once, its waiting runs with it.

    Locks as a cancel does: the sweep (FOR NO KEY UPDATE), then — only while its cancel is
    pending, when the dispatcher's next pass would mark its waiting runs — the dispatcher, then
    its runs in id order. A finished sweep's runs are nothing the dispatcher touches, so the
    other users' runs go on being dispatched during the delete (20,000 runs: 1.5 s). The
    queues' counts and the dispatch window are read from the runs: nothing is left behind for
    admission."""
    sweep = sweeps_service.get_sweep(session, sweep_id, viewer, for_update=True)
    check_modifiable(sweep, viewer, "sweep", "delete")
    if left := _unfinished(session, sweep):
        raise ConflictError(
            f"sweep {sweep_id} has {left} runs queued or running: cancel it first (POST /v1/sweeps/{sweep_id}/cancel)"
        )
    if repo.cancel_pending(session, sweep_id):
        lock_dispatcher(session)
    result_ids = repo.lock_sweep_runs(session, sweep_id)
    session.expunge(sweep)
    runs = repo.delete_sweep_rows(session, sweep_id)
    return Deleted(runs=runs, results=repo.delete_unshared_results(session, result_ids))


# ---- two sweeps side by side --------------------------------------------------------------------

_STATS = ("replications", "count", "mean", "std", "ci_low", "ci_high", "half_width")


@dataclass(frozen=True)
class Comparison:
    a: Sweep
    b: Sweep
    axes: list[str]
    only_a: list[str]
    only_b: list[str]
    rows: list[dict[str, Any]]


def compare_sweeps(
    session: Session, a_id: uuid.UUID, b_id: uuid.UUID, viewer: Identity, *, metric: str, flow: str | None = None
) -> Comparison:
    """Sweep `a`'s and sweep `b`'s summaries of `metric`, aligned on the axes they share
    (matched by path, values by value: 8 is 8.0) and the flow group's name. A row per pair of
    summary rows at the same key: `a_*` and `b_*` statistics (null where one sweep has no
    such point), each sweep's own other axes as `a.<path>` / `b.<path>`, and `difference`
    (b − a) and `ratio` (b / a) of the means."""
    if metric not in SUMMARY_METRICS:
        raise InvalidInputError(unknown_metric_message(metric), path="$.metric", kind="unknown_metric")
    a = sweeps_service.get_sweep(session, a_id, viewer)
    b = sweeps_service.get_sweep(session, b_id, viewer)
    paths_a = [x["path"] for x in a.spec["axes"]]
    paths_b = [x["path"] for x in b.spec["axes"]]
    common = [p for p in paths_a if p in paths_b]
    only_a = [p for p in paths_a if p not in common]
    only_b = [p for p in paths_b if p not in common]

    def keyed(sweep: Sweep) -> dict[tuple[str, ...], list[dict[str, Any]]]:
        out: dict[tuple[str, ...], list[dict[str, Any]]] = {}
        for row in sweeps_service.sweep_summary_rows(session, sweep.id, metrics=[metric], flow=flow):
            key = (*(value_key(row.get(p)) for p in common), row["flow"])
            out.setdefault(key, []).append(row)
        return out

    rows_a, rows_b = keyed(a), keyed(b)
    order = list(rows_a) + [k for k in rows_b if k not in rows_a]
    rows: list[dict[str, Any]] = []
    neither: list[dict[str, Any] | None] = [None]  # only iterated
    for key in order:
        for ra in rows_a.get(key) or neither:
            for rb in rows_b.get(key) or neither:
                first = ra if ra is not None else rb
                assert first is not None
                row: dict[str, Any] = {p: first.get(p) for p in common}
                row["flow"] = first["flow"]
                row.update({f"a.{p}": ra.get(p) if ra else None for p in only_a})
                row.update({f"b.{p}": rb.get(p) if rb else None for p in only_b})
                row["a_point"] = ra["point"] if ra else None
                row["b_point"] = rb["point"] if rb else None
                row["a_variant"] = ra["variant"] if ra else None
                row["b_variant"] = rb["variant"] if rb else None
                for stat in _STATS:
                    row[f"a_{stat}"] = ra.get(stat) if ra else None
                    row[f"b_{stat}"] = rb.get(stat) if rb else None
                row["difference"], row["ratio"] = _difference(row["a_mean"], row["b_mean"])
                rows.append(row)
    return Comparison(a=a, b=b, axes=common, only_a=only_a, only_b=only_b, rows=rows)


def _difference(a: float | None, b: float | None) -> tuple[float | None, float | None]:
    if a is None or b is None:
        return None, None
    ratio = b / a if a != 0 else None
    return b - a, ratio if ratio is None or math.isfinite(ratio) else None
