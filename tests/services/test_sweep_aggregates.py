"""A sweep's aggregates (services/sweeps/aggregates.py) on the test PostgreSQL: kept as runs
succeed, they equal a full recomputation exactly (==, digit for digit) whatever the order runs
finish in, after a redelivered completion, after cancellations before and after a result, and
with runs answered from the cache; and the summary and model comparison read from them give
the values the old pass over every observation gave.

Results are made here, not simulated: well-formed per-flow rows whose values a seeded
generator (or hypothesis) draws — None, integers, subnormals, 1e300s, values that overflow
a group's mean — so the sums meet what a float can be, not only what the core returns.
"""

from __future__ import annotations

import math
import random
import uuid
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from services import comparisons, sweeps
from services.db.models import FLOW_METRICS, FlowResult, Run, RunStatus
from services.db.session import create_session_factory, session_scope
from services.runs import cancel, claim, complete
from services.settings import get_settings
from services.sweeps import SweepSpec, aggregates
from tests.services.test_schedules import identity, make_user

INT_METRICS = {c.name for c in FlowResult.__table__.columns if c.name in FLOW_METRICS and str(c.type) == "BIGINT"}
FLOAT_METRICS = [m for m in sweeps.NUMERIC_METRICS if m not in INT_METRICS]

# Three groups: `a` (one flow), `b` (two flows: their mean is the observation), a UDP `u`.
SCENARIO = {
    "duration_s": 2.0,
    "warmup_s": 0.5,
    "topology": {"dumbbell": {"bottleneck": {"rate_mbps": 10, "delay_ms": 5}}},
    "flows": [
        {"name": "a", "variant": "newreno-sbs", "rtt_ms": 40, "loss": {"type": "bernoulli_events", "p": 0.01, "m": 2}},
        {"name": "b", "variant": "newreno-impatient", "rtt_ms": 40, "count": 2},
        {"name": "u", "type": "udp", "rtt_ms": 40, "app": {"type": "cbr", "rate_mbps": 1}},
    ],
}
FLOWS = 4  # a, b, b, u


@pytest.fixture
def factory(clean_db: Any) -> sessionmaker[Session]:
    return create_session_factory(clean_db)


def spec(seed: int, points: int = 3, replications: int = 3) -> SweepSpec:
    return SweepSpec.model_validate(
        {
            "scenario": SCENARIO,
            "axes": [{"path": "flows[0].loss.m", "values": list(range(2, 2 + points))}],
            "replications": replications,
            "seed": seed,
        }
    )


def new_sweep(
    factory: sessionmaker[Session], owner_id: uuid.UUID, test_settings: Any, sweep_spec: SweepSpec
) -> tuple[uuid.UUID, dict[str, int]]:
    with session_scope(factory) as session:
        sweep, created = sweeps.create(session, sweep_spec, owner=identity(session, owner_id, test_settings))
        return sweep.id, created.as_dict()


def run_ids(factory: sessionmaker[Session], sweep_id: uuid.UUID, *statuses: RunStatus) -> list[uuid.UUID]:
    conditions = [Run.sweep_id == sweep_id] + ([Run.status.in_(statuses)] if statuses else [])
    with factory() as session:
        return list(
            session.execute(select(Run.id).where(*conditions).order_by(Run.sweep_point, Run.replication)).scalars()
        )


def value(rng: random.Random, metric: str) -> Any:
    if metric in INT_METRICS:
        return rng.choice([0, 1, 7, rng.randrange(10**12)])
    return rng.choice(
        [
            None,
            0.0,
            1.0,
            rng.random(),
            rng.uniform(-1e6, 1e6),
            5e-324,
            rng.random() * 1e-310,
            1e300,
            1.7e308,
            rng.random() * 1e-3,
        ]
    )


LINK_FIELDS = [sweeps.spec.LINK_FIELDS.get(m, (m,)) for m in sweeps.LINK_METRICS]
"""Where the core's result holds each link metric: a field, or one nested (`("wifi", "mac_retries")`)."""


def link_result(name: str, rng: random.Random) -> dict[str, Any]:
    """A link's result with every field a link metric reads drawn (an 802.11 link's too)."""
    link: dict[str, Any] = {"name": name}
    for path in LINK_FIELDS:
        *parents, field = path
        counted = field in ("packets", "drops", "queue_drops", "loss_drops") or bool(parents)
        node = link
        for parent in parents:
            node = node.setdefault(parent, {})
        node[field] = value(rng, "drops" if counted else field)
    return link


def fake_result(values: list[dict[str, Any]], rng: random.Random | None = None) -> dict[str, Any]:
    """A well-formed result whose flows carry `values` (one dict of metrics per flow); with
    `rng`, its shared links, a flow's access link and its fairness carry drawn values too."""
    kinds = [
        ("a", "tcp", "newreno-sbs"),
        ("b", "tcp", "newreno-impatient"),
        ("b", "tcp", "newreno-impatient"),
        ("u", "udp", None),
    ]
    flows = [{"name": n, "type": t, "variant": v, **metrics} for (n, t, v), metrics in zip(kinds, values, strict=True)]
    result = {"core_version": "test", "stats": {"wall_s": 0.001, "events": 1}, "flows": flows}
    if rng is not None:
        result["links"] = [link_result(name, rng) for name in ("bottleneck", "bottleneck-rev", "a.src-access")]
        result["fairness"] = {m: value(rng, m) for m in sweeps.RUN_METRICS}
    return result


def random_result(rng: random.Random) -> dict[str, Any]:
    return fake_result([{m: value(rng, m) for m in sweeps.NUMERIC_METRICS} for _ in range(FLOWS)], rng)


def assert_exact(factory: sessionmaker[Session], sweep_id: uuid.UUID) -> dict[aggregates.Key, aggregates.Sums]:
    """The stored aggregates equal a full recomputation and, independently, the exact sums
    of the observations as Fractions."""
    with factory() as session:
        stored = aggregates.stored(session, sweep_id)
        assert stored == aggregates.computed(session, sweep_id)
        by_cell: dict[tuple[int, str], list[Any]] = {}
        for o in sweeps.observations(session, sweep_id):
            by_cell.setdefault((o.point, o.flow), []).append(o)
        for o in sweeps.level_observations(session, sweep_id):
            assert not o.flow.endswith(".src-access"), "a flow's own access link is left out"
            by_cell.setdefault((o.point, o.flow), []).append(o)
    level_metrics = {"link": sweeps.LINK_METRICS, "run": sweeps.RUN_METRICS}
    metrics_of = {cell: level_metrics.get(members[0].type, sweeps.NUMERIC_METRICS) for cell, members in by_cell.items()}
    assert len(stored) == sum(len(m) for m in metrics_of.values())
    for (point, flow), members in by_cell.items():
        for metric in metrics_of[(point, flow)]:
            finite = [
                o.metrics[metric] for o in members if o.metrics[metric] is not None and math.isfinite(o.metrics[metric])
            ]
            sums = stored[(sweep_id, metric, point, flow)]
            assert (sums.observations, sums.runs, sums.count) == (
                len(members),
                len({o.run_id for o in members}),
                len(finite),
            )
            assert Fraction(sums.sum) == sum(map(Fraction, finite), Fraction(0))
            assert Fraction(sums.sum_squares) == sum((Fraction(x) ** 2 for x in finite), Fraction(0))
    return stored


def play(factory: sessionmaker[Session], owner: Any, ids: list[uuid.UUID], rng: random.Random) -> dict[str, int]:
    """Finishes the runs in `ids`' order as workers would, some with a twist: cancelled before
    their result, cancelled between claim and result (the result is kept, the run stays
    cancelled), or completed twice (a redelivery)."""
    seen = {"cancelled_before": 0, "cancelled_after": 0, "redelivered": 0, "succeeded": 0}
    for rid in ids:
        twist = rng.choice(["plain", "plain", "plain", "cancel_before", "cancel_after", "redeliver"])
        with session_scope(factory) as session:
            if twist == "cancel_before":
                cancel(session, rid, owner(session))
                seen["cancelled_before"] += 1
                continue
            if claim(session, rid, "test", get_settings()) is None:
                continue
        result = random_result(rng)
        if twist == "cancel_after":
            with session_scope(factory) as session:
                cancel(session, rid, owner(session))
            seen["cancelled_after"] += 1
        with session_scope(factory) as session:
            complete(session, rid, result)
        if twist == "redeliver":
            with session_scope(factory) as session:
                complete(session, rid, result)
            seen["redelivered"] += 1
        seen["succeeded"] += twist != "cancel_after"
    return seen


def finish(factory: sessionmaker[Session], rid: uuid.UUID, rng: random.Random) -> None:
    """A worker's run: claimed, then completed with a random result."""
    with session_scope(factory) as session:
        claim(session, rid, "test", get_settings())
    with session_scope(factory) as session:
        complete(session, rid, random_result(rng))


def test_aggregates_equal_a_full_recomputation_exactly_whatever_the_order_redeliveries_and_cancellations(
    factory, test_settings
):
    owner_id = make_user(factory, "agg")

    def owner(session: Session) -> Any:
        return identity(session, owner_id, test_settings)

    rng = random.Random(13)  # a seed whose draws meet every twist (asserted below)
    sweep_id, created = new_sweep(factory, owner_id, test_settings, spec(seed=5, points=4, replications=4))
    assert created["cached"] == 0
    ids = run_ids(factory, sweep_id)
    rng.shuffle(ids)
    seen = play(factory, owner, ids[:10], rng)
    assert_exact(factory, sweep_id)  # midway: some runs still queued
    seen2 = play(factory, owner, ids[10:], rng)
    assert all(seen[k] + seen2[k] > 0 for k in seen), (seen, seen2)
    stored = assert_exact(factory, sweep_id)
    with factory() as session:
        succeeded = (
            session.execute(select(Run.id).where(Run.sweep_id == sweep_id, Run.status == RunStatus.succeeded))
            .scalars()
            .all()
        )
    assert sum(s.runs for k, s in stored.items() if k[1] == sweeps.NUMERIC_METRICS[0] and k[3] == "a") == len(succeeded)

    # The same sweep again: every run with a stored result — a cancelled run's too — is
    # answered from the cache, and counts in the new sweep.
    again_id, again = new_sweep(factory, owner_id, test_settings, spec(seed=5, points=4, replications=4))
    assert again["cached"] > 0 and again["enqueued"] > 0
    assert_exact(factory, again_id)
    play(factory, owner, run_ids(factory, again_id, RunStatus.queued), rng)
    assert_exact(factory, again_id)

    # The repair tool rewrites what is there with the same digits.
    with session_scope(factory) as session:
        aggregates.recompute(session, sweep_id)
    with factory() as session:
        assert aggregates.stored(session, sweep_id) == stored


def test_adding_a_run_twice_in_one_transaction_counts_it_once(factory, test_settings):
    owner_id = make_user(factory, "twice")
    sweep_id, _ = new_sweep(factory, owner_id, test_settings, spec(seed=9, points=1, replications=2))
    rid = run_ids(factory, sweep_id)[0]
    with session_scope(factory) as session:
        claim(session, rid, "test", test_settings)
    with session_scope(factory) as session:
        complete(session, rid, random_result(random.Random(1)))
        aggregates.add_succeeded(session, [rid])  # e.g. a batched completion passing it on too
    with factory() as session:
        assert aggregates.stored(session, sweep_id) == aggregates.computed(session, sweep_id)
        assert {s.runs for s in aggregates.stored(session, sweep_id).values()} == {1}


finite_or_not = st.one_of(
    st.none(),
    st.floats(allow_nan=False, allow_infinity=False, width=64),
    st.sampled_from([0.0, -0.0, 5e-324, 1e-310, 1.7976931348623157e308, 0.1, 1 / 3]),
)


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(
    data=st.lists(
        st.lists(st.tuples(finite_or_not, st.integers(min_value=0, max_value=2**62)), min_size=FLOWS, max_size=FLOWS),
        min_size=4,
        max_size=4,
    ),
    order=st.permutations(range(4)),
)
def test_any_values_in_any_order_sum_exactly(factory, test_settings, data, order):
    owner_id = make_user(factory, f"h{uuid.uuid4().hex[:12]}")
    sweep_id, _ = new_sweep(
        factory, owner_id, test_settings, spec(seed=random.randrange(1, 2**31), points=2, replications=2)
    )
    ids = run_ids(factory, sweep_id)
    for i in order:
        flows = [
            {m: (integer if m in INT_METRICS else real) for m in sweeps.NUMERIC_METRICS} for real, integer in data[i]
        ]
        with session_scope(factory) as session:
            claim(session, ids[i], "test", test_settings)
        with session_scope(factory) as session:
            complete(session, ids[i], fake_result(flows))
    stored = assert_exact(factory, sweep_id)
    # The summaries read from them: the mean is the exact quotient rounded (±inf beyond float8).
    with factory() as session:
        cells = aggregates.read_cells(session, sweep_id, sweeps.NUMERIC_METRICS)
    for cell in cells:
        for metric, summary in cell.summaries.items():
            sums = stored[(sweep_id, metric, cell.point, cell.flow)]
            assert summary.count == sums.count
            if sums.count:
                exact = Fraction(sums.sum) / sums.count
                expected = float(exact) if abs(exact) < 2**1024 else math.copysign(math.inf, exact)
                assert summary.mean == pytest.approx(expected, rel=1e-15, abs=0), (metric, sums)


def test_the_summary_and_the_model_comparison_read_from_aggregates_give_the_old_values(client, factory, test_settings):
    owner_id = make_user(factory, "reader")
    sweep_id, _ = new_sweep(factory, owner_id, test_settings, spec(seed=21, points=3, replications=4))
    rng = random.Random(3)
    for rid in run_ids(factory, sweep_id)[:-1]:  # the last point has one run fewer
        with session_scope(factory) as session:
            claim(session, rid, "test", test_settings)
        flows = [
            {
                m: (rng.randrange(0, 50) if m in INT_METRICS else rng.choice([None, rng.uniform(0.001, 100)]))
                for m in sweeps.NUMERIC_METRICS
            }
            for _ in range(FLOWS)
        ]
        for flow in flows:  # model inputs where the models apply
            flow.update(
                loss_event_rate=rng.uniform(0.001, 0.05),
                drops_per_loss_event=rng.uniform(1, 4),
                mean_rtt_s=0.05,
                mean_rto_s=0.3,
            )
        with session_scope(factory) as session:
            complete(session, rid, fake_result(flows))
    with session_scope(factory) as session:
        sweeps.set_shared(session, sweep_id, identity(session, owner_id, test_settings), True)

    body = client.get(f"/v1/sweeps/{sweep_id}/summary").json()
    with factory() as session:
        old = sweeps.summary_rows(sweeps.observations(session, sweep_id))
    assert len(body["rows"]) == len(old) == 3 * 3 * len(sweeps.NUMERIC_METRICS)
    for new_row, old_row in zip(body["rows"], old, strict=True):
        assert new_row.keys() == old_row.keys()
        for key, expected in old_row.items():
            if isinstance(expected, float):
                # To the last bits of the values' scale: numpy's spread of constant values is
                # rounding noise (8e-18 for 0.05s), the exact sums' is 0.
                scale = 1e-12 * abs(old_row["mean"])
                assert new_row[key] == pytest.approx(expected, rel=1e-12, abs=scale), (key, new_row)
            else:
                assert new_row[key] == expected, (key, new_row)

    # The per-point table, written from the stored JSON texts, is PointList's own rendering.
    from api.schemas.sweeps import PointList, PointOut

    with factory() as session:
        viewer = identity(session, owner_id, test_settings)
        expected_points = PointList(
            items=[PointOut.of(p, pr) for p, pr in sweeps.points_with_progress(session, sweep_id, viewer)]
        )
    assert client.get(f"/v1/sweeps/{sweep_id}/points").json() == expected_points.model_dump(mode="json")

    one = client.get(f"/v1/sweeps/{sweep_id}/summary", params={"metric": "goodput_bps", "flow": "b"}).json()["rows"]
    assert [(r["point"], r["flow"], r["metric"]) for r in one] == [(p, "b", "goodput_bps") for p in range(3)]

    models = client.get("/v1/comparisons/models", params={"sweep_id": str(sweep_id), "m_from": "ratio"}).json()
    with factory() as session:
        obs = sweeps.observations(session, sweep_id)
        source = comparisons.load(session, identity(session, owner_id, test_settings), sweep_id=sweep_id)
        expected = comparisons.models.model_vs_sim(obs, m_from="ratio", axes=source.axes)
    assert models["observations"] == len(obs)
    assert len(models["rows"]) == len(expected) == 3 * 2 * 4  # the UDP group has no model rows
    for new_row, old_row in zip(models["rows"], expected, strict=True):
        assert new_row.keys() == old_row.keys()
        for key, value in old_row.items():
            if isinstance(value, float):
                assert new_row[key] == pytest.approx(value, rel=1e-9), (key, new_row)
            else:
                assert new_row[key] == value, (key, new_row)


def test_predictions_over_arrays_equal_one_by_one_predictions_with_their_notes():
    from services.comparisons.models import MODELS, Inputs, predict, predict_many

    rng = random.Random(8)

    def maybe(x: float) -> float | None:
        return None if rng.random() < 0.05 else x

    many = [
        Inputs(
            maybe(rng.choice([rng.uniform(1e-4, 0.2), 0.0, -0.01, rng.uniform(0.04, 0.3)])),
            maybe(rng.choice([rng.uniform(1, 8), rng.uniform(8, 200), 0.5])),
            maybe(rng.uniform(0.01, 0.5)),
            maybe(rng.uniform(0.2, 3)),
            3,
            {},
        )
        for _ in range(300)
    ]
    for model in MODELS:
        fast = predict_many(model, many)
        slow = [predict(model, i) for i in many]
        for a, b in zip(fast, slow, strict=True):
            assert (a.in_valid_range, a.note, a.value is None) == (b.in_valid_range, b.note, b.value is None), (
                model,
                a,
                b,
            )
            if a.value is not None:
                assert a.value == pytest.approx(b.value, rel=1e-12)


def test_a_kept_model_comparison_is_answered_again_only_while_the_sweep_stands_still(client, factory, test_settings):
    """The API keeps a sweep's model comparison under its aggregates' version: read again, the
    same text; a run added, a recomputation, an extension of the axes — a new answer, equal to
    one computed afresh."""
    from api.routers.comparisons import MODEL_BODIES

    owner_id = make_user(factory, "cached")
    sweep_id, _ = new_sweep(factory, owner_id, test_settings, spec(seed=5, points=2, replications=3))
    ids = run_ids(factory, sweep_id)
    rng = random.Random(9)

    def version() -> aggregates.Version:
        with factory() as session:
            return aggregates.version(session, sweep_id)

    def fresh() -> dict[str, Any]:
        with factory() as session:
            source = comparisons.load(session, identity(session, owner_id, test_settings), sweep_id=sweep_id)
            context, rows = comparisons.compare_models(source)
        return {**context, "rows": rows}

    def read() -> tuple[bytes, int]:
        hits = MODEL_BODIES.hits
        response = client.get("/v1/comparisons/models", params={"sweep_id": str(sweep_id)})
        assert response.status_code == 200
        return response.content, MODEL_BODIES.hits - hits

    assert version() == aggregates.Version(0, 0, 0)
    for rid in ids[:3]:
        finish(factory, rid, rng)
    v1 = version()
    assert (v1.cells, v1.observations) == (3, 3 * 3)  # point 0 (its 3 runs) × groups a, b, u
    first, hit = read()
    assert hit == 0
    again, hit = read()
    assert (again, hit) == (first, 1)
    assert client.get("/v1/comparisons/models", params={"sweep_id": str(sweep_id)}).json() == fresh()

    with session_scope(factory) as session:  # a cancellation adds nothing: the same version
        cancel(session, ids[-1], identity(session, owner_id, test_settings))
    assert version() == v1
    assert read() == (first, 1)

    finish(factory, ids[3], rng)
    v2 = version()
    assert v2.observations == v1.observations + 3 and v2.writes > v1.writes
    second, hit = read()
    assert hit == 0 and second != first
    assert client.get("/v1/comparisons/models", params={"sweep_id": str(sweep_id)}).json() == fresh()

    with session_scope(factory) as session:  # the same sums written again: a new version
        aggregates.recompute(session, sweep_id)
    v3 = version()
    assert (v3.cells, v3.observations) == (v2.cells, v2.observations) and v3.writes != v2.writes
    assert read() == (second, 0)

    with session_scope(factory) as session:  # another value on the axis: the context changes
        extension = sweeps.SweepExtension.model_validate({"axes": [{"path": "flows[0].loss.m", "values": [9]}]})
        sweeps.extend(session, sweep_id, extension, identity(session, owner_id, test_settings), test_settings)
    assert version() == v3
    third, hit = read()
    assert hit == 0 and b"9" in third and third != second
    assert client.get("/v1/comparisons/models", params={"sweep_id": str(sweep_id)}).json() == fresh()


def test_a_kept_summary_is_answered_again_only_while_the_sweep_stands_still(client, factory, test_settings):
    """The same for the summary: read again, the same text; a run added or a stop reason
    written (the stopping rule decides without a new run), a new answer, equal to one
    computed afresh."""
    from api.routers.sweeps import SUMMARY_BODIES
    from services.db.models import SweepPoint

    owner_id = make_user(factory, "summaries")
    sweep_id, _ = new_sweep(factory, owner_id, test_settings, spec(seed=6, points=2, replications=2))
    ids = run_ids(factory, sweep_id)
    rng = random.Random(4)

    def read(**params: Any) -> tuple[bytes, int]:
        hits = SUMMARY_BODIES.hits
        response = client.get(f"/v1/sweeps/{sweep_id}/summary", params=params)
        assert response.status_code == 200
        return response.content, SUMMARY_BODIES.hits - hits

    def fresh(metrics: list[str]) -> list[dict[str, Any]]:
        with factory() as session:
            rows = sweeps.sweep_summary_rows(session, sweep_id, metrics=metrics)
            sweep = sweeps.get_sweep(session, sweep_id, identity(session, owner_id, test_settings))
            reasons = sweeps.stop_reasons(session, sweep)
        for row in rows:
            if reasons is not None:
                row["stop_reason"] = reasons.get(row["point"])
        return [{k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in r.items()} for r in rows]

    finish(factory, ids[0], rng)
    first, hit = read()
    assert hit == 0 and read() == (first, 1)
    one, hit = read(metric="goodput_bps")
    assert hit == 0 and one != first and read(metric="goodput_bps") == (one, 1)

    finish(factory, ids[1], rng)
    second, hit = read()
    assert hit == 0 and second != first
    assert client.get(f"/v1/sweeps/{sweep_id}/summary").json()["rows"] == fresh(list(sweeps.NUMERIC_METRICS))

    with session_scope(factory) as session:  # a stopping rule's verdict, no run added
        sweep = sweeps.get_sweep(session, sweep_id, identity(session, owner_id, test_settings))
        sweep.spec = {
            **sweep.spec,
            "stopping": {"metric": "goodput_bps", "relative_half_width": 0.1, "max_replications": 4},
        }
        session.execute(
            SweepPoint.__table__.update()
            .where(SweepPoint.sweep_id == sweep_id, SweepPoint.index == 0)
            .values(stop_reason="target met")
        )
    third, hit = read(metric="goodput_bps")
    assert hit == 0 and b"target met" in third
    assert client.get(f"/v1/sweeps/{sweep_id}/summary", params={"metric": "goodput_bps"}).json()["rows"] == fresh(
        ["goodput_bps"]
    )
