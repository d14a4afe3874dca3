"""services.schedules on the test PostgreSQL, with a chosen `now`: cron lines, next firings,
the beat pass (`fire_due`: once per firing, concurrent passes, disabled and edited schedules,
broken templates), the built-in benchmark, `reuse_results`, and the history's shift flag —
on hand-built values (hypothesis) and on runs simulated in-process by the real core."""

from __future__ import annotations

import datetime as dt
import json
import math
import threading
import uuid
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError
from scipy import stats as scipy_stats
from sqlalchemy import func, select, update
from sqlalchemy.orm import Session, sessionmaker

import tcpsim
from services import schedules, sweeps
from services.db.models import Run, RunStatus, Schedule, Sweep, User
from services.db.session import create_session_factory, session_scope
from services.errors import ConflictError, InvalidInputError, NotFoundError, PermissionDeniedError
from services.runs import claim, complete, submit
from services.scenarios import ScenarioInvalid
from services.schedules import ScheduleSpec, ScheduleUpdate, check_cron, exact_shift, next_fire, welch_shift
from services.schedules.builtin import BUILTIN_SCHEDULES, CORE_BENCHMARK, REFERENCE_DUMBBELL
from services.settings import REPO_ROOT, Settings, get_settings
from services.sweeps import SweepSpec
from services.users import identity_of

UTC = dt.UTC
T0 = dt.datetime(2030, 1, 1, 0, 0, tzinfo=UTC)


def iso(moment: dt.datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


def at(day: int, hour: int, minute: int = 0, second: int = 0) -> dt.datetime:
    return dt.datetime(2030, 1, day, hour, minute, second, tzinfo=UTC)


def tiny_template(**changes: Any) -> dict[str, Any]:
    """Two points × two seeds of a 2-second one-flow dumbbell: milliseconds of core time."""
    scenario = {
        "duration_s": 2.0,
        "warmup_s": 0.5,
        "topology": {"dumbbell": {"bottleneck": {"rate_mbps": 10, "delay_ms": 5}}},
        "flows": [
            {
                "name": "a",
                "variant": "newreno-sbs",
                "rtt_ms": 40,
                "loss": {"type": "bernoulli_events", "p": 0.01, "m": 2},
            }
        ],
    }
    return {"scenario": scenario, "axes": [{"path": "flows[0].loss.m", "values": [2, 4]}], "replications": 2, **changes}


@pytest.fixture
def factory(clean_db: Any) -> sessionmaker[Session]:
    return create_session_factory(clean_db)


def make_user(factory: sessionmaker[Session], name: str, **quotas: Any) -> uuid.UUID:
    with session_scope(factory) as session:
        user = User(name=name, **quotas)
        session.add(user)
        session.flush()
        return user.id


def identity(session: Session, user_id: uuid.UUID, settings: Settings) -> Any:
    return identity_of(session.get(User, user_id), settings)


def new_schedule(
    factory: sessionmaker[Session], owner_id: uuid.UUID, test_settings: Settings, *, now: dt.datetime = T0, **body: Any
) -> uuid.UUID:
    spec = ScheduleSpec.model_validate({"name": "nightly", "cron": "0 3 * * *", "template": tiny_template(), **body})
    with session_scope(factory) as session:
        return schedules.create(session, spec, owner=identity(session, owner_id, test_settings), now=now).id


def load(factory: sessionmaker[Session], schedule_id: uuid.UUID) -> Schedule:
    with factory() as session:
        schedule = session.get(Schedule, schedule_id)
        assert schedule is not None
        session.expunge(schedule)
        return schedule


def firings_of(factory: sessionmaker[Session], schedule_id: uuid.UUID) -> list[Sweep]:
    with factory() as session:
        rows = (
            session.execute(select(Sweep).where(Sweep.schedule_id == schedule_id).order_by(Sweep.fired_for))
            .scalars()
            .all()
        )
        for row in rows:
            session.expunge(row)
        return list(rows)


def simulate(factory: sessionmaker[Session], run_ids: list[uuid.UUID]) -> None:
    """What a worker does, in this process: claim, run the core, complete."""
    for run_id in run_ids:
        with session_scope(factory) as session:
            scenario = claim(session, run_id, "test", get_settings())
        assert scenario is not None
        result = tcpsim.run(scenario)
        with session_scope(factory) as session:
            complete(session, run_id, result)


# ---- cron lines ----------------------------------------------------------------------------------


def test_a_cron_line_has_five_valid_fields_and_must_fire_some_day():
    assert check_cron("  0   3 * *  * ") == "0 3 * * *"
    for bad, fragment in [
        ("0 3 * *", "5 fields"),
        ("0 0 3 * * *", "5 fields"),
        ("61 * * * *", "not a valid cron line"),
        ("@daily", "5 fields"),
        ("0 0 30 2 *", "never fires"),
    ]:
        with pytest.raises(ValueError, match=fragment):
            check_cron(bad)
    with pytest.raises(ValidationError) as info:
        ScheduleSpec.model_validate({"name": "x", "cron": "every day", "template": tiny_template()})
    assert info.value.errors()[0]["loc"] == ("cron",)


def test_the_next_firing_is_strictly_after_and_in_utc():
    assert next_fire("0 3 * * *", at(1, 2, 59)) == at(1, 3)
    assert next_fire("0 3 * * *", at(1, 3)) == at(2, 3)  # strictly after
    assert next_fire("*/15 * * * *", at(1, 10, 7)) == at(1, 10, 15)
    assert next_fire("0 3 * * 1", at(1, 0)) == at(7, 3)  # 2030-01-07 is a Monday
    # An offset clock names the same instant.
    paris = dt.timezone(dt.timedelta(hours=1))
    assert next_fire("0 3 * * *", dt.datetime(2030, 1, 1, 3, 30, tzinfo=paris)) == at(1, 3)
    with pytest.raises(ValueError):
        next_fire("0 3 * * *", dt.datetime(2030, 1, 1))


def test_a_patch_with_a_null_or_nothing_is_refused():
    with pytest.raises(ValidationError) as info:
        ScheduleUpdate.model_validate({"cron": None})
    assert info.value.errors()[0]["loc"] == ("cron",)
    with pytest.raises(ValidationError):
        ScheduleUpdate.model_validate({})
    assert ScheduleUpdate.model_validate({"enabled": False}).changes() == {"enabled": False}


# ---- create, change, delete ------------------------------------------------------------------------


def test_a_template_is_built_when_the_schedule_is_made_and_errors_name_their_path(factory, test_settings):
    owner = make_user(factory, "ana")
    with factory() as session:
        me = identity(session, owner, test_settings)
        bad_point = SweepSpec.model_validate(tiny_template(axes=[{"path": "flows[0].loss.m", "values": [2, 0]}]))
        with pytest.raises(ScenarioInvalid) as info:
            schedules.check_template(bad_point, me)
        assert [e.path for e in info.value.errors] == ["$.template.scenario.flows[0].loss.m"]
        assert "at the point flows[0].loss.m = 0" in info.value.errors[0].reason
        bad_preset = SweepSpec.model_validate({"preset": "gone", "axes": [{"path": "duration_s", "values": [5]}]})
        with pytest.raises(InvalidInputError) as info2:
            schedules.check_template(bad_preset, me)
        assert info2.value.path == "$.template.preset"
        too_many = SweepSpec.model_validate(
            tiny_template(axes=[{"path": "duration_s", "range": {"start": 1, "stop": 9999}}], replications=10)
        )
        with pytest.raises(InvalidInputError) as info3:
            schedules.check_template(too_many, me)
        assert info3.value.path == "$.template.axes" and info3.value.kind == "too_many_runs"


def test_enabled_schedules_get_their_next_firing_disabled_ones_none(factory, test_settings):
    owner = make_user(factory, "ana")
    on = load(factory, new_schedule(factory, owner, test_settings, now=at(1, 5)))
    off = load(factory, new_schedule(factory, owner, test_settings, now=at(1, 5), enabled=False))
    assert on.next_fire_at == at(2, 3) and on.enabled
    assert off.next_fire_at is None and not off.enabled
    assert "shared" not in on.template and on.template["replications"] == 2


def test_patching_recomputes_the_next_firing_and_checks_the_owner(factory, test_settings):
    owner, other = make_user(factory, "ana"), make_user(factory, "bob")
    sid = new_schedule(factory, owner, test_settings, now=at(1, 0), shared=True)
    with session_scope(factory) as session:
        me = identity(session, owner, test_settings)
        s = schedules.update(session, sid, ScheduleUpdate(cron="30 * * * *"), me, test_settings, now=at(1, 10, 40))
        assert s.next_fire_at == at(1, 11, 30)
        s = schedules.update(session, sid, ScheduleUpdate(enabled=False), me, test_settings, now=at(1, 10, 41))
        assert s.next_fire_at is None
        s = schedules.update(session, sid, ScheduleUpdate(enabled=True), me, test_settings, now=at(1, 12, 0))
        assert s.next_fire_at == at(1, 12, 30)
        # A name alone leaves the next firing as it is.
        s = schedules.update(session, sid, ScheduleUpdate(name="renamed"), me, test_settings, now=at(1, 12, 10))
        assert s.next_fire_at == at(1, 12, 30) and s.name == "renamed"
    with session_scope(factory) as session:
        bob = identity(session, other, test_settings)
        assert schedules.get_schedule(session, sid, bob).id == sid  # shared: visible
        with pytest.raises(PermissionDeniedError):
            schedules.update(session, sid, ScheduleUpdate(enabled=False), bob, test_settings)
        with pytest.raises(PermissionDeniedError):
            schedules.delete(session, sid, bob)


def test_a_private_schedule_is_not_found_by_others_and_deleting_keeps_the_sweeps(factory, test_settings):
    owner, other = make_user(factory, "ana"), make_user(factory, "bob")
    sid = new_schedule(factory, owner, test_settings)
    with session_scope(factory) as session:
        with pytest.raises(NotFoundError):
            schedules.get_schedule(session, sid, identity(session, other, test_settings))
        _, sweep, _ = schedules.fire_now(
            session, sid, identity(session, owner, test_settings), test_settings, now=at(1, 1)
        )
        sweep_id = sweep.id
    with session_scope(factory) as session:
        schedules.delete(session, sid, identity(session, owner, test_settings))
    with factory() as session:
        kept = session.get(Sweep, sweep_id)
        assert kept is not None and kept.schedule_id is None and kept.fired_for == at(1, 1)


# ---- the beat pass ---------------------------------------------------------------------------------


def test_a_due_schedule_fires_once_for_its_time_and_waits_for_the_next(factory, test_settings):
    owner = make_user(factory, "ana")
    sid = new_schedule(factory, owner, test_settings, now=at(1, 0))
    sent: list[list[uuid.UUID]] = []

    assert schedules.fire_due(factory, at(1, 2, 59, 59), test_settings, enqueue=sent.append) == []
    fired = schedules.fire_due(factory, at(1, 3, 0, 20), test_settings, enqueue=sent.append)
    assert len(fired) == 1 and fired[0].fired_for == at(1, 3) and fired[0].error is None
    assert schedules.fire_due(factory, at(1, 3, 0, 20), test_settings, enqueue=sent.append) == []
    assert schedules.fire_due(factory, at(1, 3, 0, 35), test_settings, enqueue=sent.append) == []

    [sweep] = firings_of(factory, sid)
    assert sweep.fired_for == at(1, 3) and sweep.name == "nightly · 2030-01-01 03:00 UTC"
    assert sweep.spec["replications"] == 2 and len(sweep.spec["axes"][0]["values"]) == 2
    schedule = load(factory, sid)
    assert schedule.next_fire_at == at(2, 3) and schedule.last_fired_at == at(1, 3, 0, 20)
    assert schedule.last_error is None
    # Its four runs were handed to `enqueue` after the commit, once.
    with factory() as session:
        run_ids = set(session.execute(select(Run.id).where(Run.sweep_id == sweep.id)).scalars())
    assert len(sent) == 1 and set(sent[0]) == run_ids and len(run_ids) == 4


def test_a_schedule_down_for_days_fires_once_not_once_per_missed_time(factory, test_settings):
    owner = make_user(factory, "ana")
    sid = new_schedule(factory, owner, test_settings, now=at(1, 0))
    fired = schedules.fire_due(factory, at(5, 7), test_settings)
    assert [f.fired_for for f in fired] == [at(1, 3)]
    assert load(factory, sid).next_fire_at == at(6, 3)
    assert len(firings_of(factory, sid)) == 1


def test_a_disabled_schedule_does_not_fire_and_an_edited_cron_counts_at_the_next_pass(factory, test_settings):
    owner = make_user(factory, "ana")
    off = new_schedule(factory, owner, test_settings, now=at(1, 0), enabled=False)
    on = new_schedule(factory, owner, test_settings, now=at(1, 0))
    # The disabled one has no time at all; even one forced in does not make it fire.
    with session_scope(factory) as session:
        session.execute(update(Schedule).where(Schedule.id == off).values(next_fire_at=at(1, 1)))
    assert schedules.fire_due(factory, at(1, 2), test_settings) == []
    # The cron line changes through the service; the very next pass uses it.
    with session_scope(factory) as session:
        schedules.update(
            session,
            on,
            ScheduleUpdate(cron="15 1 * * *"),
            identity(session, owner, test_settings),
            test_settings,
            now=at(1, 1),
        )
    assert load(factory, on).next_fire_at == at(1, 1, 15)
    fired = schedules.fire_due(factory, at(1, 1, 16), test_settings)
    assert [(f.schedule_id, f.fired_for) for f in fired] == [(on, at(1, 1, 15))]
    assert firings_of(factory, off) == []


def test_two_passes_at_once_fire_each_firing_once(factory, test_settings):
    owner = make_user(factory, "ana")
    ids = [new_schedule(factory, owner, test_settings, now=at(1, 0)) for _ in range(4)]
    barrier = threading.Barrier(3)
    results: list[list[Any]] = []
    errors: list[BaseException] = []

    def run_pass() -> None:
        try:
            barrier.wait()
            results.append(schedules.fire_due(factory, at(1, 4), test_settings))
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=run_pass) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not errors, errors
    fired = [f for r in results for f in r]
    assert sorted(f.schedule_id for f in fired) == sorted(ids)  # each fired by exactly one pass
    for sid in ids:
        assert len(firings_of(factory, sid)) == 1


def test_a_locked_schedule_is_skipped_and_a_repeated_firing_cannot_be_stored(factory, test_settings):
    owner = make_user(factory, "ana")
    sid = new_schedule(factory, owner, test_settings, now=at(1, 0))
    holder = factory()
    try:
        assert schedules.fire_one(holder, at(1, 4), test_settings) is not None  # holds the row lock
        with factory() as other:
            assert schedules.fire_one(other, at(1, 4), test_settings) is None  # skipped, not waited for
            other.rollback()
        holder.commit()
    finally:
        holder.close()
    # A pass that read the schedule before that commit and fires the same time again (set the
    # clock back): the unique (schedule_id, fired_for) index refuses the second sweep.
    with session_scope(factory) as session:
        session.execute(update(Schedule).where(Schedule.id == sid).values(next_fire_at=at(1, 3)))
    [again] = schedules.fire_due(factory, at(1, 4), test_settings)
    assert again.duplicate and again.sweep_id is None and again.error is None
    assert len(firings_of(factory, sid)) == 1
    assert load(factory, sid).next_fire_at == at(2, 3)


def test_a_broken_template_or_a_full_quota_is_recorded_and_the_others_still_fire(factory, test_settings):
    owner = make_user(factory, "ana")
    broken = new_schedule(factory, owner, test_settings, now=at(1, 0), name="broken")
    fine = new_schedule(factory, owner, test_settings, now=at(1, 0), name="fine")
    with session_scope(factory) as session:  # its preset was removed since
        session.execute(
            update(Schedule)
            .where(Schedule.id == broken)
            .values(template={"preset": "removed-preset", "axes": [{"path": "duration_s", "values": [5]}]})
        )
    fired = {f.schedule_id: f for f in schedules.fire_due(factory, at(1, 4), test_settings)}
    assert fired[fine].error is None and fired[fine].sweep_id is not None
    assert "no preset named 'removed-preset'" in (fired[broken].error or "")
    schedule = load(factory, broken)
    assert schedule.last_error == fired[broken].error and schedule.last_error.startswith("$.preset")
    assert schedule.next_fire_at == at(2, 3)  # waits for its next time, does not retry every tick
    assert firings_of(factory, broken) == []

    # The owner's queue quota: a 429 for a request, a recorded error for the beat. The 4-run
    # template fits the quota of 4, but not beside the run already queued.
    greedy = make_user(factory, "greedy", max_queued_runs=4)
    capped = new_schedule(factory, greedy, test_settings, now=at(1, 0), name="capped")
    with session_scope(factory) as session:
        submit(session, owner=identity(session, greedy, test_settings), scenario=tiny_template()["scenario"])
    [firing] = schedules.fire_due(factory, at(1, 4), test_settings)
    assert firing.schedule_id == capped
    assert "quota" in (firing.error or "") and firings_of(factory, capped) == []
    with factory() as session:
        assert (
            session.execute(
                select(func.count()).select_from(Run).join(Sweep).where(Sweep.owner_id == greedy)
            ).scalar_one()
            == 0
        )

    # A later success clears the error.
    with session_scope(factory) as session:
        session.execute(update(Schedule).where(Schedule.id == broken).values(template=tiny_template()))
    schedules.fire_due(factory, at(2, 4), test_settings)
    assert load(factory, broken).last_error is None


def test_an_owner_gone_or_disabled_is_recorded(factory, test_settings):
    owner = make_user(factory, "ana")
    sid = new_schedule(factory, owner, test_settings, now=at(1, 0))
    with session_scope(factory) as session:
        session.execute(update(User).where(User.id == owner).values(disabled_at=at(1, 0)))
    [firing] = schedules.fire_due(factory, at(1, 4), test_settings)
    assert "disabled" in (firing.error or "") and firings_of(factory, sid) == []


def test_fire_now_makes_a_linked_sweep_of_the_owner_and_leaves_the_cron_alone(factory, test_settings):
    owner = make_user(factory, "ana")
    admin = make_user(factory, "root", is_admin=True)
    sid = new_schedule(factory, owner, test_settings, now=at(1, 0), enabled=False, shared=True)
    with session_scope(factory) as session:
        _, _, created = schedules.fire_now(
            session, sid, identity(session, admin, test_settings), test_settings, now=at(1, 9)
        )
        assert created.runs == 4
    [s] = firings_of(factory, sid)
    assert s.owner_id == owner and s.shared and s.fired_for == at(1, 9)
    assert load(factory, sid).next_fire_at is None and load(factory, sid).last_fired_at == at(1, 9)


# ---- the built-in benchmark, reuse_results ---------------------------------------------------------


def test_the_builtin_benchmark_is_made_once_disabled_shared_and_owned_by_admin(factory, test_settings):
    for _ in range(2):
        with session_scope(factory) as session:
            schedules.ensure_builtin_schedules(session)
    with factory() as session:
        [bench] = session.execute(select(Schedule).where(Schedule.builtin == CORE_BENCHMARK)).scalars().all()
        assert not bench.enabled and bench.next_fire_at is None and bench.shared
        assert bench.owner is not None and bench.owner.name == "admin" and bench.owner.is_admin
        spec = SweepSpec.model_validate(bench.template)
        assert spec.reuse_results is False and spec.replications >= 3
        assert spec.scenario is not None
    # The reference scenario is the one the benchmark script measures.
    reference = json.loads((REPO_ROOT / "simulator" / "scenarios" / "reference-dumbbell.json").read_text())
    assert reference == REFERENCE_DUMBBELL
    # A built-in is disabled rather than deleted.
    with session_scope(factory) as session:
        admin = identity_of(session.execute(select(User).where(User.name == "admin")).scalar_one(), test_settings)
        with pytest.raises(ConflictError):
            schedules.delete(session, bench.id, admin)
    assert BUILTIN_SCHEDULES[CORE_BENCHMARK]["template"]["axes"][0]["values"] == [1, 8, 64]


def test_ensuring_the_builtins_leaves_a_disabled_admin_and_an_edited_benchmark_alone(factory):
    with session_scope(factory) as session:
        schedules.ensure_builtin_schedules(session)
        session.execute(update(User).where(User.name == "admin").values(disabled_at=T0))
        session.execute(update(Schedule).where(Schedule.builtin == CORE_BENCHMARK).values(cron="0 4 * * *"))
    with session_scope(factory) as session:
        schedules.ensure_builtin_schedules(session)
    with factory() as session:
        assert session.execute(select(User.disabled_at).where(User.name == "admin")).scalar_one() is not None
        assert (
            session.execute(select(Schedule.cron).where(Schedule.builtin == CORE_BENCHMARK)).scalar_one() == "0 4 * * *"
        )


def test_reuse_results_false_simulates_every_run_and_shares_the_result_rows(factory, test_settings):
    owner = make_user(factory, "ana")
    with session_scope(factory) as session:
        me = identity(session, owner, test_settings)
        _, first = sweeps.create(session, SweepSpec.model_validate(tiny_template()), owner=me)
    simulate(factory, first.to_enqueue)
    with session_scope(factory) as session:
        _, cached = sweeps.create(session, SweepSpec.model_validate(tiny_template()), owner=me)
        fresh_sweep, fresh = sweeps.create(
            session, SweepSpec.model_validate(tiny_template(reuse_results=False)), owner=me
        )
        assert fresh_sweep.spec["reuse_results"] is False
    assert (cached.runs, cached.cached) == (4, 4)
    assert (fresh.runs, fresh.cached, len(fresh.to_enqueue)) == (4, 0, 4)
    simulate(factory, fresh.to_enqueue)
    with factory() as session:
        runs = session.execute(select(Run).where(Run.id.in_(fresh.to_enqueue))).scalars().all()
        assert all(r.status == RunStatus.succeeded and r.core_wall_s and r.events for r in runs)
        first_results = set(session.execute(select(Run.result_id).where(Run.id.in_(first.to_enqueue))).scalars())
        assert {r.result_id for r in runs} == first_results  # the same rows, through the cache key


# ---- the shift flag --------------------------------------------------------------------------------

finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False)
seeds_values = st.dictionaries(st.integers(0, 2**63), finite, min_size=1, max_size=8)


@settings(max_examples=200, deadline=None)
@given(values=seeds_values, repeats=st.integers(1, 5))
def test_a_firing_that_repeats_the_previous_ones_is_never_flagged(values, repeats):
    assert schedules.shift_of(values, [dict(values)] * repeats, measured=False) == (None, "exact")
    pooled_order = dict(reversed(list(values.items())))  # same values, other order
    assert schedules.shift_of(pooled_order, [dict(values)] * repeats, measured=True) == (None, "welch")


@settings(max_examples=200, deadline=None)
@given(
    values=seeds_values,
    repeats=st.integers(1, 5),
    relative=st.floats(1e-6, 10),
    sign=st.sampled_from([1, -1]),
    which=st.integers(0, 7),
)
def test_any_change_of_a_deterministic_value_is_flagged_in_its_direction(values, repeats, relative, sign, which):
    seed = sorted(values)[which % len(values)]
    moved = dict(values)
    moved[seed] = values[seed] + sign * relative * max(abs(values[seed]), 1.0)
    assert schedules.shift_of(moved, [dict(values)] * repeats, measured=False) == (
        "up" if sign > 0 else "down",
        "exact",
    )


@settings(max_examples=200, deadline=None)
@given(
    current=st.lists(st.floats(0.1, 100), min_size=2, max_size=10),
    baseline=st.lists(st.floats(0.1, 100), min_size=2, max_size=25),
)
def test_the_welch_flag_is_welchs_t_test_at_95_percent(current, baseline):
    assume(len(set(current)) > 1 and len(set(baseline)) > 1)
    result = scipy_stats.ttest_ind(current, baseline, equal_var=False)
    assume(abs(result.pvalue - 0.05) > 1e-6)
    expected = None if result.pvalue >= 0.05 else ("up" if result.statistic > 0 else "down")
    assert welch_shift(current, baseline) == expected
    assert welch_shift(baseline, current) == {"up": "down", "down": "up", None: None}[expected]


@settings(max_examples=100, deadline=None)
@given(
    current=st.lists(st.floats(0.1, 100), min_size=1, max_size=10),
    baseline=st.lists(st.floats(0.1, 100), min_size=1, max_size=25),
    sign=st.sampled_from([1, -1]),
)
def test_a_measured_metric_far_outside_the_spread_is_flagged(current, baseline, sign):
    spread = max(current + baseline) - min(current + baseline) + 1
    moved = [v + sign * 1000 * spread for v in current]
    assert welch_shift(moved, baseline) == ("up" if sign > 0 else "down")


def test_exact_shift_compares_each_seed_with_its_latest_previous_value_and_needs_a_shared_seed():
    assert exact_shift({1: 5.0}, [{1: 4.0}, {1: 5.0}]) == (None, True)  # the latest says 5
    assert exact_shift({1: 5.0, 2: 3.0}, [{1: 5.0, 2: 3.0000001}]) == ("down", True)
    assert exact_shift({3: 5.0}, [{1: 5.0}]) == (None, False)
    # No seed in common (the template's seed changed): the Welch test decides.
    assert schedules.shift_of({3: 5.0, 4: 5.1}, [{1: 5.0, 2: 5.1}], measured=False) == (None, "welch")
    assert schedules.shift_of({3: 5.0}, [], measured=False) == (None, None)
    # Sums that cancel take the first differing seed's direction.
    assert exact_shift({1: 2.0, 2: 0.0}, [{1: 1.0, 2: 1.0}]) == ("up", True)


# ---- the history on real runs ----------------------------------------------------------------------


def test_the_history_flags_the_firing_whose_values_moved_and_tracks_the_cores_speed(factory, test_settings):
    owner = make_user(factory, "ana")
    sid = new_schedule(factory, owner, test_settings, now=at(1, 0), template=tiny_template(reuse_results=False))
    for day in (1, 2):  # two equal firings, simulated in full each time
        [f] = schedules.fire_due(factory, at(day, 4), test_settings)
        simulate(factory, f.to_enqueue)
    # A firing that simulates something else (as a new core would): a longer run.
    changed = tiny_template(reuse_results=False)
    changed["scenario"]["duration_s"] = 3.0
    with session_scope(factory) as session:
        session.execute(update(Schedule).where(Schedule.id == sid).values(template=changed))
    [f] = schedules.fire_due(factory, at(3, 4), test_settings)
    simulate(factory, f.to_enqueue)

    with factory() as session:
        admin_view = identity(session, owner, test_settings)
        _, axes, rows = schedules.history(
            session, sid, admin_view, metrics=["packets_sent", "core_events_per_s", "core_wall_s"]
        )
    assert axes == ["flows[0].loss.m"]
    sent = [r for r in rows if r["metric"] == "packets_sent"]
    assert [r["fired_for"] for r in sent] == [iso(at(d, 3)) for d in (1, 1, 2, 2, 3, 3)]
    first, second, third = sent[0:2], sent[2:4], sent[4:6]
    assert all(r["shift"] is None and r["test"] is None and r["baseline_n"] == 0 for r in first)
    assert all(r["shift"] is None and r["test"] == "exact" and r["baseline_firings"] == 1 for r in second)
    for r, before in zip(second, first, strict=True):
        assert r["mean"] == before["mean"] and r["n"] == 2 and r["flow"] == "a" and r["variant"] == "newreno-sbs"
    # The longer runs send more packets at every point: flagged up, against both firings before.
    assert all(
        r["shift"] == "up" and r["test"] == "exact" and r["baseline_firings"] == 2 and r["baseline_n"] == 4
        for r in third
    )
    assert [r["flows[0].loss.m"] for r in third] == [2, 4]
    for r, before in zip(third, second, strict=True):
        assert math.isclose(r["baseline_mean"], before["mean"], rel_tol=1e-12)

    speed = [r for r in rows if r["metric"] == "core_events_per_s"]
    assert len(speed) == 6 and all(r["flow"] == "core" and r["n"] == 2 and r["mean"] > 0 for r in speed)
    assert all(r["test"] == ("welch" if r["baseline_firings"] else None) for r in speed)
    # Each value is the run's own events over its own wall time.
    with factory() as session:
        sweep_id = uuid.UUID(speed[0]["sweep_id"])
        runs = session.execute(select(Run).where(Run.sweep_id == sweep_id, Run.sweep_point == 0)).scalars().all()
    assert math.isclose(speed[0]["mean"], sum(r.events / r.core_wall_s for r in runs) / 2, rel_tol=1e-12)


def test_history_of_runs_answered_from_the_cache_has_no_core_timing_and_never_flags(factory, test_settings):
    owner = make_user(factory, "ana")
    sid = new_schedule(factory, owner, test_settings, now=at(1, 0))
    [f] = schedules.fire_due(factory, at(1, 4), test_settings)
    simulate(factory, f.to_enqueue)
    [g] = schedules.fire_due(factory, at(2, 4), test_settings)
    assert g.to_enqueue == []  # every run answered from the first firing's results
    with factory() as session:
        _, _, rows = schedules.history(
            session, sid, identity(session, owner, test_settings), metrics=["throughput_pkts_per_rtt", "core_wall_s"]
        )
        _, _, core_only = schedules.history(
            session, sid, identity(session, owner, test_settings), metrics=list(schedules.HISTORY_METRICS), flow="core"
        )
        _, _, last = schedules.history(
            session, sid, identity(session, owner, test_settings), metrics=["mean_rtt_s"], limit=1
        )
    second = [r for r in rows if r["fired_for"] == iso(at(2, 3))]
    assert [r["metric"] for r in second] == ["throughput_pkts_per_rtt"] * 2  # no timing: nothing was simulated
    assert all(r["shift"] is None and r["test"] == "exact" for r in second)
    assert {r["metric"] for r in core_only} == {"core_wall_s", "core_events_per_s"} and len(core_only) == 4
    assert {r["fired_for"] for r in last} == {iso(at(2, 3))} and all(r["baseline_firings"] == 1 for r in last)
