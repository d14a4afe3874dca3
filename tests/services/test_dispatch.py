"""services.runs.dispatch against a real PostgreSQL: whose runs are handed to the broker next.

Every test builds its users and runs by hand (`new_run`), with explicit creation times, then
reads what `pick` chose: round-robin across owners, least loaded first, the least recently
served owner on a tie, the window respected, runs from before users as one owner, and two
dispatchers at once never overfilling the window.
"""

from __future__ import annotations

import datetime as dt
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import Engine, insert, text
from sqlalchemy.orm import Session

from services.db.models import Run, RunStatus, User
from services.db.session import create_session_factory
from services.presets import build_scenario
from services.runs.dispatch import _PICK as PICK
from services.runs.dispatch import Batching, dispatch, in_flight_count, pick, pick_batches, stale_in_flight
from services.runs.service import new_run
from services.scenarios import validate_scenario
from services.settings import Settings

CANONICAL = validate_scenario(build_scenario("paper000-fig2a", {"duration_s": 5, "warmup_s": 1}))[1]
T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


class Lab:
    """Users and runs with a clock of their own: each run is a millisecond younger than the last."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.tick = 0

    def user(self, name: str) -> uuid.UUID:
        user = User(name=name)
        self.session.add(user)
        self.session.flush()
        return user.id

    def runs(
        self,
        owner: uuid.UUID | None,
        n: int,
        *,
        status: RunStatus = RunStatus.queued,
        dispatched: bool = False,
        **fields: Any,
    ) -> list[uuid.UUID]:
        made = []
        for _ in range(n):
            self.tick += 1
            at = T0 + dt.timedelta(milliseconds=self.tick)
            run = new_run(CANONICAL, preset=None, owner_id=owner, created_at=at, **fields)
            run.status = status
            if dispatched or status != RunStatus.queued:
                run.dispatched_at = fields.get("dispatched_at", at)
            if status == RunStatus.running:
                run.started_at = at
            if status.is_final:
                run.started_at = run.finished_at = at
            self.session.add(run)
            made.append(run)
        self.session.flush()
        return [r.id for r in made]


@pytest.fixture
def lab(db_session: Session) -> Lab:
    return Lab(db_session)


def owners_of(session: Session, run_ids: list[uuid.UUID]) -> list[uuid.UUID | None]:
    owner = dict(session.execute(text("SELECT id, owner_id FROM runs WHERE id = ANY(:ids)"), {"ids": run_ids}).all())
    return [owner[r] for r in run_ids]


def test_round_robin_across_owners_oldest_first_within_each(lab: Lab, db_session: Session) -> None:
    alice, bob, carol = lab.user("alice"), lab.user("bob"), lab.user("carol")
    a = lab.runs(alice, 6)  # the oldest: a sweep submitted first
    b = lab.runs(bob, 3)
    c = lab.runs(carol, 1)
    picked = pick(db_session, window=6)
    assert picked == [a[0], b[0], c[0], a[1], b[1], a[2]]
    # The rest wait in PostgreSQL, unmarked; the picked ones are marked dispatched.
    assert in_flight_count(db_session) == 6
    assert pick(db_session, window=6) == []  # the window is full


def test_the_least_loaded_owner_goes_first_however_old_the_others_runs_are(lab: Lab, db_session: Session) -> None:
    alice, bob = lab.user("alice"), lab.user("bob")
    lab.runs(alice, 2, status=RunStatus.running)
    lab.runs(alice, 1, dispatched=True)
    a = lab.runs(alice, 20)
    b = lab.runs(bob, 5)
    # Alice has 3 in flight, Bob none: with room for 3, all three are Bob's.
    assert pick(db_session, window=6) == b[:3]
    # Level now: they alternate, Alice first (served longer ago than Bob, who just was).
    assert pick(db_session, window=10) == [a[0], b[3], a[1], b[4]]


def test_on_a_tie_the_owner_served_least_recently_goes_first(lab: Lab, db_session: Session) -> None:
    """A window of one: whenever the slot frees, nobody has anything in flight. The sweep's
    runs are older, but its owner was just served: the other owner's run goes next."""
    alice, bob = lab.user("alice"), lab.user("bob")
    lab.runs(alice, 1, status=RunStatus.succeeded)  # alice's run that just finished
    a = lab.runs(alice, 50)
    b = lab.runs(bob, 1)
    assert pick(db_session, window=1) == [b[0]]
    db_session.execute(text("UPDATE runs SET status = 'succeeded', finished_at = now() WHERE id = :id"), {"id": b[0]})
    assert pick(db_session, window=1) == [a[0]]  # bob has nothing more: alice again


def test_two_sweeps_and_a_single_run_share_a_window_of_one_in_turn(lab: Lab, db_session: Session) -> None:
    """Run after run through a window of one, each finishing before the next is picked: the
    owners take turns, whoever submitted first."""
    alice, bob, carol = lab.user("alice"), lab.user("bob"), lab.user("carol")
    lab.runs(alice, 5)
    lab.runs(bob, 5)
    lab.runs(carol, 1)
    order = []
    for _ in range(11):
        (run_id,) = pick(db_session, window=1)
        order.append(owners_of(db_session, [run_id])[0])
        db_session.execute(
            text(
                "UPDATE runs SET status = 'succeeded', started_at = now(), finished_at = clock_timestamp() WHERE id = :id"
            ),
            {"id": run_id},
        )
    assert order[:3] == [alice, bob, carol]
    assert order[3:] == [alice, bob] * 4


def test_runs_from_before_users_count_as_one_owner(lab: Lab, db_session: Session) -> None:
    alice = lab.user("alice")
    legacy = lab.runs(None, 4)
    a = lab.runs(alice, 4)
    picked = pick(db_session, window=4)
    assert picked == [legacy[0], a[0], legacy[1], a[1]]


def test_finished_and_cancelled_runs_leave_the_window(lab: Lab, db_session: Session) -> None:
    alice = lab.user("alice")
    running = lab.runs(alice, 2, status=RunStatus.running)
    a = lab.runs(alice, 3)
    assert pick(db_session, window=2) == []
    db_session.execute(
        text("UPDATE runs SET status = 'cancelled', finished_at = now() WHERE id = :id"), {"id": running[0]}
    )
    assert pick(db_session, window=2) == [a[0]]
    # A cancelled waiting run is never picked.
    db_session.execute(text("UPDATE runs SET status = 'cancelled', finished_at = now() WHERE id = :id"), {"id": a[1]})
    db_session.execute(
        text("UPDATE runs SET status = 'failed', finished_at = now() WHERE id = :id"), {"id": running[1]}
    )
    assert pick(db_session, window=2) == [a[2]]


def test_the_reconciler_looks_at_dispatched_and_long_running_runs_only(lab: Lab, db_session: Session) -> None:
    alice = lab.user("alice")
    waiting = lab.runs(alice, 2)
    sent = lab.runs(alice, 2, dispatched=True)
    running = lab.runs(alice, 1, status=RunStatus.running)
    lab.runs(alice, 1, status=RunStatus.succeeded)
    late = T0 + dt.timedelta(hours=1)
    assert set(stale_in_flight(db_session, dispatched_before=late, started_before=late)) == set(sent + running)
    assert stale_in_flight(db_session, dispatched_before=T0, started_before=T0) == []
    assert not set(waiting) & set(stale_in_flight(db_session, dispatched_before=late, started_before=late))


def test_a_long_sweep_is_not_sorted_whole(lab: Lab, db_session: Session) -> None:
    """10,000 waiting runs of one owner and one of another: a pick reads a window's worth."""
    alice, bob = lab.user("alice"), lab.user("bob")
    db_session.execute(insert(Run), [_row(alice, T0 + dt.timedelta(microseconds=i)) for i in range(10_000)])
    (b,) = lab.runs(bob, 1)
    db_session.execute(text("ANALYZE runs"))
    start = time.perf_counter()
    picked = pick(db_session, window=4)
    seconds = time.perf_counter() - start
    assert b in picked and len(picked) == 4
    plan = "\n".join(
        db_session.execute(
            text(f"EXPLAIN {PICK.text}"),
            {"room": 4, "memory": 1000, "at": T0, "load_owners": [], "load_counts": [], "load_served": []},
        ).scalars()
    )
    print(f"\npick among 10,001 waiting runs: {seconds * 1000:.1f} ms")
    assert "ix_runs_waiting" in plan  # each owner's oldest, read from the index
    assert seconds < 1.0


def _row(owner: uuid.UUID, at: dt.datetime) -> dict[str, Any]:
    run = new_run(CANONICAL, preset=None, owner_id=owner)
    return {
        "id": uuid.uuid4(),
        "status": RunStatus.queued,
        "scenario": run.scenario,
        "variants": run.variants,
        "seed": run.seed,
        "cache_key": run.cache_key,
        "core_version": run.core_version,
        "created_at": at,
        "owner_id": owner,
    }


# ------------------------------------------------------------------------ batches


def finished_with_core_time(session: Session, lab: Lab, owner: uuid.UUID, n: int, core_s: float) -> None:
    """`n` runs of `owner` that finished, each having taken `core_s` of core time."""
    for run_id in lab.runs(owner, n, status=RunStatus.succeeded):
        session.execute(text("UPDATE runs SET core_wall_s = :s WHERE id = :id"), {"s": core_s, "id": run_id})


def test_an_owner_without_core_times_yet_gets_one_run_per_batch(lab: Lab, db_session: Session) -> None:
    alice = lab.user("alice")
    a = lab.runs(alice, 5)
    assert pick_batches(db_session, 2, Batching(target_s=1.0, max_runs=100)) == [[a[0]], [a[1]]]


def test_short_runs_go_in_batches_sized_by_the_owners_latest_core_times(lab: Lab, db_session: Session) -> None:
    alice = lab.user("alice")
    finished_with_core_time(db_session, lab, alice, 3, 0.002)
    a = lab.runs(alice, 50)
    batches = pick_batches(db_session, 2, Batching(target_s=0.02, max_runs=100))
    # 0.02 s / 2 ms = 10 runs a batch; each batch led by one of the two oldest, then the next oldest.
    assert [len(b) for b in batches] == [10, 10]
    assert batches[0][0] == a[0] and batches[1][0] == a[1]
    assert sorted(batches[0] + batches[1], key=a.index) == a[:20]
    assert in_flight_count(db_session) == 2  # the window counts batches
    assert pick_batches(db_session, 2, Batching(target_s=0.02, max_runs=100)) == []
    # ... and never more than max_runs, however cheap the runs.
    assert [len(b) for b in pick_batches(db_session, 3, Batching(target_s=10.0, max_runs=7))] == [7]


def test_another_owners_single_run_is_next_when_a_batch_ends(lab: Lab, db_session: Session) -> None:
    """Fair share with batches: a long sweep's batch holds the only slot; a single run another
    user submits meanwhile waits for that batch alone, never for the sweep's next one."""
    alice, bob = lab.user("alice"), lab.user("bob")
    finished_with_core_time(db_session, lab, alice, 3, 0.001)
    lab.runs(alice, 500)
    batching = Batching(target_s=0.05, max_runs=100)
    (first,) = pick_batches(db_session, 1, batching)
    assert len(first) == 50
    (b,) = lab.runs(bob, 1)
    assert pick_batches(db_session, 1, batching) == []  # the window is full
    db_session.execute(
        text("UPDATE runs SET status = 'succeeded', finished_at = now() WHERE id = ANY(:ids)"), {"ids": first}
    )
    assert pick_batches(db_session, 1, batching) == [[b]]


# ------------------------------------------------------------------------ concurrency


def test_two_dispatchers_at_once_never_overfill_the_window(
    lab: Lab, db_session: Session, clean_db: Engine, test_settings: Settings
) -> None:
    factory = create_session_factory(clean_db)
    owners = [lab.user(name) for name in ("alice", "bob", "carol")]
    for owner in owners:
        lab.runs(owner, 30)
    db_session.commit()  # the dispatchers run in transactions of their own

    previous = 0
    for window in (3, 7, 8, 20, 45, 90):
        barrier = threading.Barrier(2)
        answers: list[list[uuid.UUID]] = [[], []]

        def run(i: int, window: int = window, barrier: threading.Barrier = barrier) -> None:
            barrier.wait()
            answers[i] = [run_id for batch in dispatch(factory, test_settings, window) for run_id in batch]

        threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=30)
        expected = min(window, 90)
        assert not set(answers[0]) & set(answers[1])
        assert len(answers[0]) + len(answers[1]) == expected - previous, (window, answers)
        db_session.expire_all()
        assert in_flight_count(db_session) == expected
        db_session.rollback()
        previous = expected


# ------------------------------------------------------------------------ the property


@pytest.fixture
def rolled_back(db_session: Session) -> Iterator[Session]:
    yield db_session
    db_session.rollback()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    owners=st.lists(
        st.tuples(st.integers(0, 3), st.integers(0, 6)),  # (in flight, waiting) per owner
        min_size=1,
        max_size=4,
    ),
    legacy=st.tuples(st.integers(0, 2), st.integers(0, 4)),
    window=st.integers(0, 16),
)
def test_any_mix_of_owners_is_filled_level_and_within_the_room(rolled_back: Session, owners, legacy, window) -> None:
    """Whatever the owners' loads: the pick takes min(room, waiting) runs, each owner's oldest,
    and leaves the loads level — an owner that got a run has, after the pick, at most one more
    in flight than any owner that still has runs waiting."""
    session = rolled_back
    session.rollback()
    session.execute(text("DELETE FROM runs"))
    session.execute(text("DELETE FROM users"))
    lab = Lab(session)
    ids: list[uuid.UUID | None] = [lab.user(f"u{i}") for i in range(len(owners))] + [None]
    spec = dict(zip(ids, [*owners, legacy], strict=True))
    waiting: dict[uuid.UUID | None, list[uuid.UUID]] = {}
    for owner, (in_flight, n_waiting) in spec.items():
        lab.runs(owner, in_flight, status=RunStatus.running)
        waiting[owner] = lab.runs(owner, n_waiting)

    picked = pick(session, window)

    room = max(0, window - sum(f for f, _ in spec.values()))
    assert len(picked) == min(room, sum(w for _, w in spec.values()))
    got = Counter(owners_of(session, picked)) if picked else Counter()
    for owner in ids:
        assert picked_set(picked, waiting[owner]) == waiting[owner][: got[owner]]  # oldest first
    load = {o: spec[o][0] + got[o] for o in ids}
    for owner in ids:
        if got[owner] == 0:
            continue
        for other in ids:
            if got[other] < spec[other][1]:  # `other` still has runs waiting
                assert load[owner] <= load[other] + 1, (spec, window, got)
    session.rollback()


def picked_set(picked: list[uuid.UUID], runs: list[uuid.UUID]) -> list[uuid.UUID]:
    """The owner's runs that were picked, in the owner's order."""
    chosen = set(picked)
    return [r for r in runs if r in chosen]
