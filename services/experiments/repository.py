"""Every query of experiment management. No commits here: the caller's boundary commits."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from sqlalchemy import text
from sqlalchemy.orm import Session


def cancel_pending(session: Session, sweep_id: uuid.UUID) -> bool:
    """Whether the sweep's cancel waits for the dispatcher to mark its waiting runs."""
    return (
        session.execute(text("SELECT 1 FROM pending_cancels WHERE sweep_id = :sweep"), {"sweep": sweep_id}).first()
        is not None
    )


def lock_sweep_runs(session: Session, sweep_id: uuid.UUID) -> list[uuid.UUID]:
    """Locks the sweep's runs in id order — the order a worker's batch is claimed and a cancel
    locks them in, so a delete never crosses them — and returns their results' ids."""
    rows = session.execute(
        text("SELECT result_id FROM runs WHERE sweep_id = :sweep ORDER BY id FOR UPDATE"), {"sweep": sweep_id}
    ).scalars()
    return sorted({r for r in rows if r is not None})


def delete_sweep_rows(session: Session, sweep_id: uuid.UUID) -> int:
    """Deletes the sweep's runs, then the sweep (its points, aggregates and pending cancel go
    with it: ON DELETE CASCADE); returns how many runs."""
    runs = session.execute(text("DELETE FROM runs WHERE sweep_id = :sweep"), {"sweep": sweep_id}).rowcount  # type: ignore[attr-defined]
    session.execute(text("DELETE FROM sweeps WHERE id = :sweep"), {"sweep": sweep_id})
    return int(runs)


def delete_run_row(session: Session, run_id: uuid.UUID) -> None:
    session.execute(text("DELETE FROM runs WHERE id = :run"), {"run": run_id})


def delete_unshared_results(session: Session, result_ids: Sequence[uuid.UUID]) -> int:
    """Deletes those of the results no run points at any more (their per-flow rows, traces and
    trace chunks go with them: ON DELETE CASCADE); a result another run shares — the cache
    answers identical runs with one result, whoever's they are — stays. Returns how many.

    The results are locked first (FOR UPDATE, id order), and only then is "no run points at
    it" read, by a later statement that sees every run committed meanwhile: a run given one of
    them by the cache either committed before, and keeps the result, or its foreign-key check
    waits for this transaction and then fails (its request is refused, nothing points at a
    deleted result)."""
    if not result_ids:
        return 0
    ids = sorted(set(result_ids))
    session.execute(text("SELECT id FROM results WHERE id = ANY(:ids) ORDER BY id FOR UPDATE"), {"ids": ids})
    return int(
        session.execute(
            text(
                "DELETE FROM results r WHERE r.id = ANY(:ids) "
                "AND NOT EXISTS (SELECT 1 FROM runs WHERE runs.result_id = r.id)"
            ),
            {"ids": ids},
        ).rowcount  # type: ignore[attr-defined]
    )
