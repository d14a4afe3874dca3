"""Fast admission stores what the per-run path stored (issue 12, Admission): every run of a sweep
created or extended by COPY has the columns `new_run` and `answer_from_cache` give it — the
canonical scenario with its replication's seed, the same cache key, variants, owner, sharing —
the cache answers exactly the runs it has results for (looked up after the runs streamed in,
or before them when the owner's queue could not take every run), a refused sweep stores
nothing, and a cancel ends every unfinished run. On the test PostgreSQL."""

from __future__ import annotations

import time
import uuid
from typing import Any

import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

import tcpsim
from services import sweeps
from services.db.models import PendingCancel, Result, Run, RunStatus, Sweep, SweepPoint
from services.db.session import create_session_factory, session_scope
from services.errors import QuotaExceededError
from services.runs.dispatch import ONE_RUN, pick_batches
from services.runs.repository import queued_count, scenarios_of
from services.runs.service import new_run
from services.scenarios import ScenarioInvalid, key_of_canonical
from services.sweeps import SweepExtension, SweepSpec
from services.sweeps.grid import axis_values, grid_points, plan_point, replication_seed, with_seed
from tests.services.test_schedules import identity, make_user, tiny_template

TINY = tiny_template()["scenario"]


@pytest.fixture
def factory(clean_db: Any) -> sessionmaker[Session]:
    return create_session_factory(clean_db)


def tiny_sweep(points: int = 4, replications: int = 3, **changes: Any) -> SweepSpec:
    return SweepSpec.model_validate(
        {
            "scenario": {**TINY, "name": "tiny", "description": "a dumbbell"},
            "axes": [{"path": "flows[0].loss.p", "values": [0.01 * (i + 1) for i in range(points)]}],
            "replications": replications,
            "seed": 21,
            **changes,
        }
    )


def create(
    factory: sessionmaker[Session], owner_id: uuid.UUID, spec: SweepSpec, settings: Any
) -> tuple[uuid.UUID, sweeps.Created]:
    with session_scope(factory) as session:
        sweep, created = sweeps.create(
            session, spec, owner=identity(session, owner_id, settings), max_queued=settings.max_queued_runs
        )
        return sweep.id, created


def runs_of(factory: sessionmaker[Session], sweep_id: uuid.UUID) -> list[Run]:
    with factory() as session:
        return list(
            session.execute(
                select(Run).where(Run.sweep_id == sweep_id).order_by(Run.sweep_point, Run.replication)
            ).scalars()
        )


def expected_runs(
    spec: SweepSpec, sweep_id: uuid.UUID, owner_id: uuid.UUID, replications: range | None = None
) -> list[Run]:
    """The runs the per-run path (`new_run` per replication of `with_seed`) makes for `spec`."""
    out = []
    for i, values in enumerate(grid_points(axis_values(spec), spec.combine)):
        canonical = plan_point(spec, values).canonical
        for r in replications or range(spec.replications):
            out.append(
                new_run(
                    with_seed(canonical, replication_seed(spec.seed, r)),
                    preset=spec.preset,
                    sweep_id=sweep_id,
                    sweep_point=i,
                    replication=r,
                    owner_id=owner_id,
                    shared=spec.shared,
                )
            )
    return out


COLUMNS = (
    "status",
    "preset",
    "variants",
    "seed",
    "cache_key",
    "core_version",
    "sweep_id",
    "sweep_point",
    "replication",
    "owner_id",
    "shared",
)


def columns(run: Run) -> tuple[Any, ...]:
    return tuple(getattr(run, c) for c in COLUMNS)


def scenarios(factory: sessionmaker[Session], runs: list[Run]) -> list[dict[str, Any]]:
    """The runs' scenarios as a worker reads them (a sweep run's: its point's, with its seed)."""
    with factory() as session:
        by_id = scenarios_of(session, [r.id for r in runs])
    return [by_id[r.id] for r in runs]


def test_every_stored_run_has_what_the_per_run_path_gave_it(factory, test_settings):
    ana = make_user(factory, "ana")
    spec = tiny_sweep(shared=True)
    sid, created = create(factory, ana, spec, test_settings)
    stored = runs_of(factory, sid)
    assert created.as_dict() == {"runs": 12, "cached": 0, "enqueued": 12}
    expected = expected_runs(spec, sid, ana)
    assert [columns(r) for r in stored] == [columns(r) for r in expected]
    assert scenarios(factory, stored) == [r.scenario for r in expected]
    assert sorted(created.to_enqueue) == sorted(r.id for r in stored)
    for run, scenario in zip(stored, scenarios(factory, stored), strict=True):
        assert run.scenario is None  # stored once, on its point
        assert run.cache_key == key_of_canonical(scenario, tcpsim.__version__)
        assert scenario["name"] == "tiny" and scenario["seed"] == run.seed
        assert run.created_at is not None and run.attempts == 0 and run.result_id is None and run.started_at is None
    with factory() as session:
        points = (
            session.execute(select(SweepPoint).where(SweepPoint.sweep_id == sid).order_by(SweepPoint.index))
            .scalars()
            .all()
        )
        assert [(p.index, p.values) for p in points] == [(i, {"flows[0].loss.p": 0.01 * (i + 1)}) for i in range(4)]
        assert points[0].flow_groups == plan_point(spec, points[0].values).flow_groups


def add_results(factory: sessionmaker[Session], keys: list[str]) -> dict[str, uuid.UUID]:
    with session_scope(factory) as session:
        rows = [Result(cache_key=k, core_version=tcpsim.__version__, summary={}) for k in keys]
        session.add_all(rows)
        session.flush()
        return {r.cache_key: r.id for r in rows}


@pytest.mark.parametrize("quota", [100, 7], ids=["room for every run", "room only for those the cache does not answer"])
def test_the_cache_answers_exactly_the_runs_it_has_results_for(factory, test_settings, quota):
    """With room for every run the runs stream in and the cache answers afterwards; with room
    only for the runs it does not answer, it is asked first. Either way: the same runs."""
    spec = tiny_sweep()
    keys = [r.cache_key for r in expected_runs(spec, uuid.uuid4(), uuid.uuid4())]
    results = add_results(factory, keys[::2])  # 6 of 12
    ana = make_user(factory, "ana", max_queued_runs=quota)
    sid, created = create(factory, ana, spec, test_settings)
    assert created.as_dict() == {"runs": 12, "cached": 6, "enqueued": 6}
    stored = runs_of(factory, sid)
    for run in stored:
        if run.cache_key in results:
            assert (run.status, run.result_id) == (RunStatus.succeeded, results[run.cache_key])
            assert run.started_at is not None and run.finished_at == run.started_at
        else:
            assert (run.status, run.result_id, run.finished_at) == (RunStatus.queued, None, None)
    assert sorted(created.to_enqueue) == sorted(r.id for r in stored if r.status == RunStatus.queued)


def test_a_sweep_that_must_simulate_asks_no_cache(factory, test_settings):
    spec = tiny_sweep(reuse_results=False)
    add_results(factory, [r.cache_key for r in expected_runs(spec, uuid.uuid4(), uuid.uuid4())])
    sid, created = create(factory, make_user(factory, "ana"), spec, test_settings)
    assert created.as_dict() == {"runs": 12, "cached": 0, "enqueued": 12}
    assert {r.status for r in runs_of(factory, sid)} == {RunStatus.queued}


def count(factory: sessionmaker[Session], model: Any) -> int:
    with factory() as session:
        return session.execute(select(func.count()).select_from(model)).scalar_one()


def test_a_refused_sweep_stores_nothing(factory, test_settings):
    ana = make_user(factory, "ana", max_queued_runs=11)
    with pytest.raises(QuotaExceededError):
        create(factory, ana, tiny_sweep(), test_settings)
    bad = tiny_sweep(points=1).model_dump(mode="json", exclude_none=True)
    bad["axes"] = [{"path": "flows[0].loss.p", "values": [0.01, 0.02, 7.0, 0.04]}]
    with pytest.raises(ScenarioInvalid) as caught:
        create(factory, make_user(factory, "bo"), SweepSpec.model_validate(bad), test_settings)
    assert "at the point flows[0].loss.p = 7" in str(caught.value)
    assert (count(factory, Sweep), count(factory, SweepPoint), count(factory, Run)) == (0, 0, 0)


def test_an_extension_stores_what_the_per_run_path_gave(factory, test_settings):
    ana = make_user(factory, "ana")
    spec = tiny_sweep(points=2, replications=2)
    sid, _ = create(factory, ana, spec, test_settings)
    extension = SweepExtension.model_validate(
        {"replications": 3, "axes": [{"path": "flows[0].loss.p", "values": [0.05]}]}
    )
    with session_scope(factory) as session:
        _, created = sweeps.extend(session, sid, extension, identity(session, ana, test_settings), test_settings)
    assert created.as_dict() == {"runs": 5, "cached": 0, "enqueued": 5}
    wider = tiny_sweep(points=2, replications=3).model_dump(mode="json", exclude_none=True)
    wider["axes"] = [{"path": "flows[0].loss.p", "values": [0.01, 0.02, 0.05]}]
    stored, expected = runs_of(factory, sid), expected_runs(SweepSpec.model_validate(wider), sid, ana)
    assert [columns(r) for r in stored] == [columns(r) for r in expected]
    assert scenarios(factory, stored) == [r.scenario for r in expected]


def test_a_sweep_submitted_again_is_answered_whole_and_a_cancel_ends_every_unfinished_run(factory, test_settings):
    ana = make_user(factory, "ana")
    spec = tiny_sweep()
    first, _ = create(factory, ana, spec, test_settings)
    add_results(factory, [r.cache_key for r in runs_of(factory, first)])
    again, created = create(factory, ana, spec, test_settings)
    assert created.as_dict() == {"runs": 12, "cached": 12, "enqueued": 0}
    with session_scope(factory) as session:
        _, cancelled = sweeps.cancel(session, first, identity(session, ana, test_settings))
    assert cancelled == 12
    dispatcher_pass(factory)
    assert {r.status for r in runs_of(factory, first)} == {RunStatus.cancelled}
    assert {r.status for r in runs_of(factory, again)} == {RunStatus.succeeded}


def dispatcher_pass(factory: sessionmaker[Session], window: int = 0) -> list[list[uuid.UUID]]:
    """One pass of the dispatcher (which first finishes the pending cancels); with the default
    window of 0 it sends nothing."""
    with session_scope(factory) as session:
        return pick_batches(session, window, ONE_RUN)


@pytest.mark.parametrize(
    ("key", "accepted"),
    [
        ("0" * 64, True),
        ("ab" * 32, True),
        ("AB" * 32, False),
        ("a" * 63, False),
        ("a" * 65, False),
        ("g" + "a" * 63, False),
        ("a" * 63 + "\n", False),
        ("é" * 32, False),
    ],
)
def test_the_cache_key_check_accepts_exactly_64_lowercase_hex_digits(factory, key, accepted):
    """Migration 0010's cheaper check (octet_length and a negated class) keeps the regex's rule."""
    from sqlalchemy import text
    from sqlalchemy.exc import IntegrityError

    with factory() as session:
        statement = text(
            "INSERT INTO runs (status, scenario, seed, cache_key, core_version) VALUES ('queued', '{}', 1, :key, 'v')"
        )
        if accepted:
            session.execute(statement, {"key": key})
        else:
            with pytest.raises(IntegrityError, match="ck_runs_cache_key_sha256"):
                session.execute(statement, {"key": key})
        session.rollback()


def test_a_cancel_crossing_a_transaction_that_locks_its_runs_in_another_order_still_cancels_them(
    factory, test_settings
):
    """A worker's transaction holds the sweep's second run (both in flight) and then wants its
    first, which the cancel (locking in id order) holds while it waits for the second: PostgreSQL breaks the
    deadlock; whichever side it aborts, the cancel goes through (a cancel picked as the victim
    runs its statement again from a savepoint)."""
    import threading

    from sqlalchemy import text
    from sqlalchemy.exc import DBAPIError

    ana = make_user(factory, "ana")
    sid, _ = create(factory, ana, tiny_sweep(points=1, replications=2), test_settings)
    first, second = sorted(r.id for r in runs_of(factory, sid))
    with session_scope(factory) as session:  # both sent to a worker: in flight
        session.execute(text("UPDATE runs SET dispatched_at = now() WHERE sweep_id = :s"), {"s": sid})
    outcome: dict[str, Any] = {}

    def cancel() -> None:
        try:
            with session_scope(factory) as session:
                outcome["cancelled"] = sweeps.cancel(session, sid, identity(session, ana, test_settings))[1]
        except Exception as e:  # noqa: BLE001 - reported below
            outcome["error"] = e

    with factory() as worker:
        worker.execute(text("SET LOCAL statement_timeout = '20s'"))
        worker.execute(text("SELECT id FROM runs WHERE id = :id FOR UPDATE"), {"id": second})
        thread = threading.Thread(target=cancel)
        thread.start()
        deadline = time.monotonic() + 10
        while not _waiting_for_a_lock(factory) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _waiting_for_a_lock(factory), "the cancel should be waiting for the second run"
        try:
            worker.execute(text("UPDATE runs SET heartbeat_at = now() WHERE id = :id"), {"id": first})
            worker.commit()
            outcome["victim"] = "cancel"
        except DBAPIError:
            worker.rollback()  # the worker was the victim
            outcome["victim"] = "worker"
        thread.join(timeout=30)
    assert "error" not in outcome, outcome.get("error")
    assert outcome["cancelled"] == 2
    assert {r.status for r in runs_of(factory, sid)} == {RunStatus.cancelled}


def _waiting_for_a_lock(factory: sessionmaker[Session]) -> bool:
    from sqlalchemy import text

    with factory() as session:
        return (
            session.execute(
                text(
                    "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%WITH locked%'"
                )
            ).scalar_one()
            > 0
        )


def test_a_cancel_ends_waiting_in_flight_and_running_runs_and_leaves_finished_ones(factory, test_settings):
    from sqlalchemy import text

    ana = make_user(factory, "ana")
    sid, _ = create(factory, ana, tiny_sweep(points=2, replications=3), test_settings)
    ids = [r.id for r in runs_of(factory, sid)]
    with session_scope(factory) as session:
        session.execute(text("UPDATE runs SET dispatched_at = now() WHERE id = ANY(:ids)"), {"ids": ids[:2]})
        session.execute(
            text("UPDATE runs SET status = 'running', dispatched_at = now() WHERE id = :id"), {"id": ids[2]}
        )
        session.execute(text("UPDATE runs SET status = 'failed', finished_at = now() WHERE id = :id"), {"id": ids[3]})
    with session_scope(factory) as session:
        _, cancelled = sweeps.cancel(session, sid, identity(session, ana, test_settings))
    assert cancelled == 5
    # The runs in flight at once; the waiting ones are the dispatcher's, which sends none of them.
    assert [r.status for r in runs_of(factory, sid)] == [RunStatus.cancelled] * 3 + [RunStatus.failed] + [
        RunStatus.queued
    ] * 2
    with factory() as session:
        viewer = identity(session, ana, test_settings)
        progress = sweeps.points_with_progress(session, sid, viewer)
        assert [(p.queued, p.cancelled, p.failed) for _, p in progress] == [(0, 3, 0), (0, 2, 1)]
        assert queued_count(session, owner_id=ana) == 0 and queued_count(session) == 0  # counted in no queue
    assert dispatcher_pass(factory, window=10) == []
    assert [r.status for r in runs_of(factory, sid)] == [RunStatus.cancelled] * 3 + [RunStatus.failed] + [
        RunStatus.cancelled
    ] * 2
    assert all(r.dispatched_at is None for r in runs_of(factory, sid)[4:])
    with factory() as session:
        assert session.execute(select(func.count()).select_from(PendingCancel)).scalar_one() == 0


def test_a_sweep_extended_before_its_cancel_is_finished_keeps_its_waiting_runs_cancelled(factory, test_settings):
    ana = make_user(factory, "ana")
    sid, _ = create(factory, ana, tiny_sweep(points=1, replications=2), test_settings)
    with session_scope(factory) as session:
        assert sweeps.cancel(session, sid, identity(session, ana, test_settings))[1] == 2
    with session_scope(factory) as session:  # no dispatcher pass in between
        sweeps.extend(
            session,
            sid,
            SweepExtension.model_validate({"replications": 3}),
            identity(session, ana, test_settings),
            test_settings,
        )
    assert [(r.replication, r.status) for r in runs_of(factory, sid)] == [
        (0, RunStatus.cancelled),
        (1, RunStatus.cancelled),
        (2, RunStatus.queued),
    ]
    assert [run_id for (run_id,) in dispatcher_pass(factory, window=10)] == [runs_of(factory, sid)[2].id]


def test_a_sweep_cancelled_twice_before_the_dispatcher_passes_counts_its_runs_once(factory, test_settings):
    ana = make_user(factory, "ana")
    sid, _ = create(factory, ana, tiny_sweep(points=1, replications=4), test_settings)
    with session_scope(factory) as session:
        assert sweeps.cancel(session, sid, identity(session, ana, test_settings))[1] == 4
    with session_scope(factory) as session:
        assert sweeps.cancel(session, sid, identity(session, ana, test_settings))[1] == 0
    dispatcher_pass(factory)
    assert {r.status for r in runs_of(factory, sid)} == {RunStatus.cancelled}
