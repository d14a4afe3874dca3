"""Admission (services/admission.py) on the test PostgreSQL: every path that creates runs keeps
the owner's quota of queued runs and the per-sweep cap — the stopping rule's growth too, which
stops at a limit and says so on the point — and a schedule's firing bound to fail is refused
before anything is built. Runs are simulated in this process by the real core, step by step,
as a worker would (claim, run, complete, `after_run`)."""

from __future__ import annotations

import time
import uuid
from typing import Any

import pytest
from sqlalchemy import func, select, text, update
from sqlalchemy.orm import Session, sessionmaker

import tcpsim
from services import admission, schedules, sweeps
from services.db.models import Run, RunStatus, SweepPoint, User
from services.db.session import create_session_factory, session_scope
from services.errors import QuotaExceededError
from services.runs import claim, complete
from services.runs.dispatch import ONE_RUN, pick_batches
from services.schedules import ScheduleSpec
from services.settings import get_settings
from services.sweeps import SweepExtension, SweepSpec
from tests.services.test_schedules import at, firings_of, identity, make_user, tiny_template
from tests.support import wait_for

TINY = tiny_template()["scenario"]


@pytest.fixture
def factory(clean_db: Any) -> sessionmaker[Session]:
    return create_session_factory(clean_db)


def rule_sweep(points: int, replications: int, max_replications: int) -> SweepSpec:
    """`points` points of the tiny dumbbell with a stopping rule whose target no finite number
    of replications meets: each point grows until a limit or `max_replications` stops it."""
    return SweepSpec.model_validate(
        {
            "scenario": TINY,
            "axes": [{"path": "flows[0].loss.p", "values": [0.01 * (i + 1) for i in range(points)]}],
            "replications": replications,
            "seed": 11,
            "stopping": {"target_relative_half_width": 1e-6, "max_replications": max_replications},
        }
    )


def create_sweep(factory: sessionmaker[Session], owner_id: uuid.UUID, spec: SweepSpec, settings: Any) -> uuid.UUID:
    with session_scope(factory) as session:
        sweep, _ = sweeps.create(
            session, spec, owner=identity(session, owner_id, settings), max_queued=settings.max_queued_runs
        )
        return sweep.id


def run_id(factory: sessionmaker[Session], sweep_id: uuid.UUID, point: int, replication: int) -> uuid.UUID:
    with factory() as session:
        return session.execute(
            select(Run.id).where(Run.sweep_id == sweep_id, Run.sweep_point == point, Run.replication == replication)
        ).scalar_one()


def start(factory: sessionmaker[Session], rid: uuid.UUID) -> dict[str, Any]:
    with session_scope(factory) as session:
        scenario = claim(session, rid, "test", get_settings())
    assert scenario is not None
    return scenario


def finish(factory: sessionmaker[Session], rid: uuid.UUID, scenario: dict[str, Any] | None = None) -> None:
    """The rest of a worker's task: the core's result stored, then the stopping rule."""
    result = tcpsim.run(scenario if scenario is not None else start(factory, rid))
    with session_scope(factory) as session:
        complete(session, rid, result)
    with session_scope(factory) as session:
        sweeps.after_run(session, rid, get_settings())


def queued_of(factory: sessionmaker[Session], owner_id: uuid.UUID) -> int:
    with factory() as session:
        return session.execute(
            select(func.count()).select_from(Run).where(Run.owner_id == owner_id, Run.status == RunStatus.queued)
        ).scalar_one()


def drain(factory: sessionmaker[Session], owner_id: uuid.UUID, quota: int, limit: int = 200) -> None:
    """Simulates the owner's queued runs oldest first, as one worker would, checking after each
    that the owner never has more than `quota` queued."""
    for _ in range(limit):
        with factory() as session:
            rid = session.execute(
                select(Run.id)
                .where(Run.owner_id == owner_id, Run.status == RunStatus.queued)
                .order_by(Run.created_at, Run.sweep_point, Run.replication)
                .limit(1)
            ).scalar_one_or_none()
        if rid is None:
            return
        finish(factory, rid)
        assert queued_of(factory, owner_id) <= quota
    pytest.fail(f"more than {limit} runs")


def points(factory: sessionmaker[Session], sweep_id: uuid.UUID) -> dict[int, tuple[int, str | None]]:
    """point -> (its runs, its stop reason)."""
    with factory() as session:
        runs = dict(
            session.execute(
                select(Run.sweep_point, func.count()).where(Run.sweep_id == sweep_id).group_by(Run.sweep_point)
            ).all()
        )
        reasons = session.execute(
            select(SweepPoint.index, SweepPoint.stop_reason).where(SweepPoint.sweep_id == sweep_id)
        )
        return {index: (runs[index], reason) for index, reason in reasons}


def test_the_stopping_rule_never_queues_past_the_owners_quota_and_a_point_without_room_says_capped(
    factory, test_settings
):
    """Two points of two replications for an owner allowed 4 queued runs. Point 0 finishes
    while point 1's last run is running (not queued): point 0 takes the whole quota (4 more,
    not the 6 its rule asks for); then point 1 finishes with no room and stops, "capped:
    quota". Growing to the maximum, point 0 says the target was not met; an extension resumes
    the capped point."""
    ana = make_user(factory, "ana", max_queued_runs=4)
    sid = create_sweep(factory, ana, rule_sweep(points=2, replications=2, max_replications=8), test_settings)
    assert queued_of(factory, ana) == 4
    finish(factory, run_id(factory, sid, 0, 0))
    finish(factory, run_id(factory, sid, 1, 0))
    last_of_0, last_of_1 = run_id(factory, sid, 0, 1), run_id(factory, sid, 1, 1)
    scenario_0 = start(factory, last_of_0)
    scenario_1 = start(factory, last_of_1)  # running while point 0 grows
    finish(factory, last_of_0, scenario_0)
    assert queued_of(factory, ana) == 4, "point 0 grows by the room the quota leaves, no more"
    assert points(factory, sid) == {0: (6, None), 1: (2, None)}
    finish(factory, last_of_1, scenario_1)
    assert queued_of(factory, ana) == 4
    assert points(factory, sid) == {0: (6, None), 1: (2, "capped: quota")}

    drain(factory, ana, quota=4)
    assert points(factory, sid) == {0: (8, "max_replications reached, target not met"), 1: (2, "capped: quota")}

    # An extension (even of nothing new) resumes the capped point, within the quota again.
    with session_scope(factory) as session:
        _, created = sweeps.extend(
            session,
            sid,
            SweepExtension(replications=2),
            identity(session, ana, test_settings),
            test_settings,
            max_queued=None,
        )
    assert created.as_dict() == {"runs": 4, "cached": 0, "enqueued": 4}
    assert points(factory, sid) == {0: (8, "max_replications reached, target not met"), 1: (6, None)}
    drain(factory, ana, quota=4)
    assert points(factory, sid)[1] == (8, "max_replications reached, target not met")


def test_the_stopping_rule_stops_at_the_per_sweep_cap_and_says_so(factory, test_settings, db_session):
    """A sweep one point short of nothing: its other point holds the rest of the 50,000 runs a
    sweep may have (cancelled runs count: the cap is on every run). The rule adds nothing."""
    bo = make_user(factory, "bo")
    sid = create_sweep(factory, bo, rule_sweep(points=2, replications=2, max_replications=1000), test_settings)
    filler = run_id(factory, sid, 1, 0)
    db_session.execute(
        text(
            "INSERT INTO runs (id, status, scenario, seed, cache_key, core_version, sweep_id, sweep_point, replication,"
            " owner_id, finished_at) SELECT gen_random_uuid(), 'cancelled', r.scenario, g,"
            " encode(sha256(convert_to(g::text, 'UTF8')), 'hex'), r.core_version, r.sweep_id, r.sweep_point, g,"
            " r.owner_id, now() FROM runs r, generate_series(2, :last) g WHERE r.id = :filler"
        ),
        {"last": admission.MAX_RUNS_PER_SWEEP - 3, "filler": filler},
    )
    db_session.commit()
    with factory() as session:
        assert session.execute(select(func.count()).select_from(Run).where(Run.sweep_id == sid)).scalar_one() == 50_000
    finish(factory, run_id(factory, sid, 0, 0))
    finish(factory, run_id(factory, sid, 0, 1))
    with factory() as session:
        assert session.execute(select(func.count()).select_from(Run).where(Run.sweep_id == sid)).scalar_one() == 50_000
    assert points(factory, sid)[0] == (2, "capped: sweep cap")


def test_an_admin_extending_anothers_sweep_adds_runs_within_the_owners_quota(factory, test_settings):
    ana = make_user(factory, "ana", max_queued_runs=4)
    root = make_user(factory, "root", is_admin=True)
    sid = create_sweep(factory, ana, rule_sweep(points=2, replications=2, max_replications=8), test_settings)
    with pytest.raises(QuotaExceededError, match="ana would have 6 runs queued"), session_scope(factory) as session:
        sweeps.extend(
            session, sid, SweepExtension(replications=3), identity(session, root, test_settings), test_settings
        )
    assert queued_of(factory, ana) == 4


def test_a_firing_past_the_owners_quota_is_refused_without_building_its_sweep(factory, test_settings):
    """A 50,000-run template (1,000 points × 50) whose owner's quota was lowered to 200 since it
    was made: each firing is refused on the count alone, in well under a second (building the
    sweep to find that out took 24-60 s of the worker per firing)."""
    big = make_user(factory, "big")
    template = {
        "scenario": TINY,
        "axes": [{"path": "flows[0].rtt_ms", "range": {"start": 10, "stop": 1009}}],
        "replications": 50,
    }
    spec = ScheduleSpec.model_validate({"name": "every minute", "cron": "* * * * *", "template": template})
    with session_scope(factory) as session:
        sid = schedules.create(session, spec, owner=identity(session, big, test_settings), now=at(1, 0)).id
    with session_scope(factory) as session:
        session.execute(update(User).where(User.id == big).values(max_queued_runs=200))
    times = []
    for minute in (1, 2, 3):
        began = time.perf_counter()
        [firing] = schedules.fire_due(factory, at(1, 0, minute), test_settings)
        times.append(time.perf_counter() - began)
        assert firing.sweep_id is None and "quota of 200" in (firing.error or ""), firing
    assert firings_of(factory, sid) == []
    assert max(times) < 5.0, times  # milliseconds here; 24-60 s when each firing built the sweep


def test_the_stopping_rule_waits_for_a_cancel_in_progress_and_then_adds_nothing(factory, test_settings):
    """The rule locks the sweep (FOR SHARE) before it decides: a cancel that holds the sweep
    when a run finishes makes the rule wait for its commit, and then read the sweep cancelled —
    no replication is queued in a cancelled sweep (before, the rule read the sweep unlocked)."""
    import threading

    bo = make_user(factory, "bo")
    sid = create_sweep(factory, bo, rule_sweep(points=1, replications=2, max_replications=10), test_settings)
    first = run_id(factory, sid, 0, 0)
    scenario = start(factory, first)
    with session_scope(factory) as session:
        complete(session, first, tcpsim.run(scenario))
    outcome: dict[str, Any] = {}

    def stopping_rule() -> None:
        try:
            with session_scope(factory) as session:
                outcome["added"] = sweeps.after_run(session, first, test_settings)
        except Exception as e:  # noqa: BLE001 - reported below
            outcome["error"] = e

    cancelling = factory()
    try:
        sweeps.cancel(cancelling, sid, identity(cancelling, bo, test_settings))  # holds the sweep, uncommitted
        rule = threading.Thread(target=stopping_rule)
        rule.start()

        def rule_waits_for_the_sweep() -> bool:
            with factory() as session:
                return (
                    session.execute(
                        text(
                            "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%FOR SHARE%'"
                        )
                    ).scalar_one()
                    > 0
                )

        wait_for(rule_waits_for_the_sweep, timeout_s=30)
        cancelling.commit()
    finally:
        cancelling.close()
    rule.join(timeout=60)
    assert "error" not in outcome, outcome.get("error")
    assert outcome["added"] == []
    with session_scope(factory) as session:
        pick_batches(session, 10, ONE_RUN)  # the dispatcher's pass marks the waiting replication
    with factory() as session:
        statuses = session.execute(select(Run.status).where(Run.sweep_id == sid)).scalars().all()
    assert sorted(s.value for s in statuses) == ["cancelled", "succeeded"]
