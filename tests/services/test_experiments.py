"""Experiment management in the services, on the test PostgreSQL: a sweep deleted after its
cancel while a worker still holds some of its runs leaves nothing behind for admission or the
dispatcher — the owner's queue is empty, the window is free for the next owner, the worker's
late result and check-in find nothing and fail nothing; parameters parse to jsonpaths."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

import tcpsim
from services import sweeps
from services.db.models import PendingCancel, Result, Run, SweepAggregate
from services.db.session import create_session_factory, session_scope
from services.errors import ConflictError, InvalidInputError
from services.experiments import check_tags, parse_param
from services.experiments.service import delete_sweep
from services.runs import check_in_batch, claim_batch, complete_batch, submit
from services.runs.dispatch import ONE_RUN, in_flight_count, pick_batches
from services.runs.repository import queued_count
from tests.services.test_schedules import identity, make_user, tiny_template
from tests.services.test_sweep_admission_store import create, tiny_sweep


@pytest.fixture
def factory(clean_db: Any) -> sessionmaker[Session]:
    return create_session_factory(clean_db)


def dispatch(factory: sessionmaker[Session], window: int) -> list[uuid.UUID]:
    with session_scope(factory) as session:
        return [batch[0] for batch in pick_batches(session, window, ONE_RUN)]


def test_a_sweep_deleted_after_its_cancel_frees_the_queue_and_the_window_and_its_worker_finds_nothing(
    factory, test_settings
):
    ana, bob = make_user(factory, "ana"), make_user(factory, "bob")
    sid, _ = create(factory, ana, tiny_sweep(points=3, replications=2), test_settings)
    sent = dispatch(factory, window=2)
    assert len(sent) == 2
    with session_scope(factory) as session:  # a worker runs the first two: one done, one still simulating
        scenarios = claim_batch(session, sent, "w1", test_settings)
    result = tcpsim.run(scenarios[sent[0]])
    with session_scope(factory) as session:
        complete_batch(session, [(sent[0], result)])

    with session_scope(factory) as session:
        viewer = identity(session, ana, test_settings)
        with pytest.raises(ConflictError, match="5 runs queued or running: cancel it first"):
            delete_sweep(session, sid, viewer)
    with session_scope(factory) as session:
        sweeps.cancel(session, sid, identity(session, ana, test_settings))
    with session_scope(factory) as session:
        deleted = delete_sweep(session, sid, identity(session, ana, test_settings))
    assert (deleted.runs, deleted.results) == (6, 1)

    with factory() as session:
        assert queued_count(session, owner_id=ana) == 0 and queued_count(session) == 0
        assert in_flight_count(session) == 0
        for model in (Run, Result, SweepAggregate, PendingCancel):
            assert session.execute(select(func.count()).select_from(model)).scalar_one() == 0, model
    # The worker still simulating the second run: told to stop, and its result stored nowhere.
    with session_scope(factory) as session:
        assert check_in_batch(session, [sent[1]], "w1", beat=True) == set()
        assert complete_batch(session, [(sent[1], tcpsim.run(scenarios[sent[1]]))]) == []
    with factory() as session:
        assert session.execute(select(func.count()).select_from(Result)).scalar_one() == 0

    # Bob's run takes the window at once; Ana's quota counts nothing of the deleted sweep.
    with session_scope(factory) as session:
        run, cached = submit(session, owner=identity(session, bob, test_settings), scenario=runs_scenario())
    assert not cached
    assert dispatch(factory, window=1) == [run.id]
    with session_scope(factory) as session:
        _, created = sweeps.create(
            session, tiny_sweep(points=1, replications=2), owner=identity(session, ana, test_settings), max_queued=None
        )
        assert created.runs == 2 and queued_count(session, owner_id=ana) == 2


def runs_scenario() -> dict[str, Any]:
    return {**tiny_template()["scenario"], "seed": 3}


def test_a_parameter_becomes_a_jsonpath_and_a_bad_one_is_named() -> None:
    assert parse_param("flows[0].variant=cubic").jsonpath() == '$."flows"[0]."variant" == "cubic"'
    assert parse_param("flows[*].loss.m=8").jsonpath() == '$."flows"[*]."loss"."m" == 8'
    assert parse_param('name="20"').value == "20" and parse_param("name=20").value == 20
    assert parse_param("topology.dumbbell.bottleneck.queue.type=red").value == "red"
    assert parse_param('flows[0]["odd key"]=true').jsonpath() == '$."flows"[0]."odd key" == true'
    for bad, reason in (
        ("duration_s", "PATH=VALUE"),
        ("=3", "PATH=VALUE"),
        ("flows[x=1", "PATH=VALUE"),
        ("a={}", "string, number"),
    ):
        with pytest.raises(InvalidInputError) as e:
            parse_param(bad, 2)
        assert e.value.path == "$.param[2]" and reason in e.value.reason, (bad, e.value.reason)


def test_tags_are_checked_one_by_one_and_kept_once_in_order() -> None:
    assert check_tags(["b", "a", "b", "x.y:z=1/2+3-4_5"]) == ["b", "a", "x.y:z=1/2+3-4_5"]
    for tags, where in (
        (["ok", ""], "$.tags[1]"),
        (["-lead"], "$.tags[0]"),
        (["a,b"], "$.tags[0]"),
        (["ok", "é"], "$.tags[1]"),
    ):
        with pytest.raises(InvalidInputError) as e:
            check_tags(tags)
        assert e.value.path == where


def test_deleting_a_finished_sweep_leaves_the_dispatcher_free_and_a_pending_cancel_holds_it(factory, test_settings):
    from sqlalchemy import text

    from services.runs.dispatch import DISPATCH_LOCK

    def dispatcher_free() -> bool:
        with factory() as other:
            return bool(other.execute(text("SELECT pg_try_advisory_xact_lock(:k)"), {"k": DISPATCH_LOCK}).scalar_one())

    ana = make_user(factory, "ana")
    done, _ = create(factory, ana, tiny_sweep(points=1, replications=2), test_settings)
    pending, _ = create(factory, ana, tiny_sweep(points=2, replications=2), test_settings)
    with session_scope(factory) as session:
        ids = [r.id for r in session.execute(select(Run).where(Run.sweep_id == done)).scalars()]
        scenarios = claim_batch(session, ids, "w1", test_settings)
    with session_scope(factory) as session:
        complete_batch(session, [(rid, tcpsim.run(scenarios[rid])) for rid in ids])
        sweeps.cancel(session, pending, identity(session, ana, test_settings))
    with session_scope(factory) as session:
        assert delete_sweep(session, done, identity(session, ana, test_settings)).runs == 2
        assert dispatcher_free()  # while the delete's transaction is open
    with session_scope(factory) as session:
        assert delete_sweep(session, pending, identity(session, ana, test_settings)).runs == 4
        assert not dispatcher_free()
    assert dispatcher_free()
