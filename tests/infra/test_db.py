"""The tables and the session rules the runs feature builds on."""

from __future__ import annotations

import hashlib
import uuid

import numpy as np
import pytest
from sqlalchemy import Engine, func, select, text
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.engine import make_url
from sqlalchemy.exc import IntegrityError, StatementError
from sqlalchemy.orm import Session

import tcpsim
from services.db import (
    FLOW_METRICS,
    FlowResult,
    Result,
    Run,
    RunStatus,
    Trace,
    TraceChunk,
    create_session_factory,
    run_after_commit,
    session_scope,
    sqlalchemy_url,
)
from services.runs import trace_codec

KEY = hashlib.sha256(b"scenario+seed+core").hexdigest()


def _run(**fields: object) -> Run:
    values: dict[str, object] = {
        "scenario": {"duration_s": 1},
        "variants": ["newreno-sbs"],
        "seed": 1,
        "cache_key": KEY,
        "core_version": tcpsim.__version__,
    }
    values.update(fields)
    return Run(**values)


def test_sqlalchemy_url_picks_psycopg3() -> None:
    assert sqlalchemy_url("postgres://u:p@h/db") == "postgresql+psycopg://u:p@h/db"
    socket = make_url(sqlalchemy_url("postgresql://u@/db?host=/tmp/x"))
    assert (socket.drivername, socket.query["host"]) == ("postgresql+psycopg", "/tmp/x")
    assert sqlalchemy_url("postgresql+psycopg://h/db") == "postgresql+psycopg://h/db"
    with pytest.raises(ValueError):
        sqlalchemy_url("sqlite:///x.db")


def test_a_new_run_is_queued_with_server_defaults(db_session: Session) -> None:
    run = _run()
    db_session.add(run)
    db_session.flush()
    assert isinstance(run.id, uuid.UUID)
    assert run.status is RunStatus.queued and run.attempts == 0
    assert run.created_at is not None and run.created_at.tzinfo is not None
    assert run.started_at is run.finished_at is run.result_id is None


def test_seeds_cover_the_cores_whole_u64_range(db_session: Session) -> None:
    for seed in (0, 2**63, 2**64 - 1):
        db_session.add(_run(seed=seed))
    db_session.commit()
    assert sorted(db_session.scalars(select(Run.seed))) == [0, 2**63, 2**64 - 1]
    db_session.add(_run(seed=2**64))
    with pytest.raises(IntegrityError, match="ck_runs_seed_u64"):
        db_session.flush()


@pytest.mark.parametrize(
    ("fields", "constraint"),
    [
        ({"status": "lost"}, "status"),
        ({"cache_key": "not-a-sha256"}, "ck_runs_cache_key_sha256"),
        ({"attempts": -1}, "ck_runs_attempts_not_negative"),
    ],
)
def test_run_constraints(db_session: Session, fields: dict[str, object], constraint: str) -> None:
    if "status" in fields:  # the ORM refuses it before the database does
        with pytest.raises(StatementError, match="not among the defined enum values"):
            db_session.add(_run(**fields))
            db_session.flush()
        db_session.rollback()
        with pytest.raises(IntegrityError, match="ck_runs_status"):
            db_session.execute(
                text(
                    "INSERT INTO runs (status, scenario, seed, cache_key, core_version) "
                    "VALUES ('lost', '{}', 1, :k, 'x')"
                ),
                {"k": KEY},
            )
        return
    db_session.add(_run(**fields))
    with pytest.raises(IntegrityError, match=constraint):
        db_session.flush()


def test_runs_filter_by_variant(db_session: Session) -> None:
    db_session.add_all(
        [
            _run(variants=["reno"]),
            _run(variants=["newreno-sbs", "newreno-impatient"]),
            _run(variants=[]),
        ]
    )
    db_session.commit()
    found = db_session.scalars(select(Run).where(Run.variants.contains(["newreno-impatient"])))
    assert [r.variants for r in found] == [["newreno-sbs", "newreno-impatient"]]
    overlap = db_session.scalars(select(Run).where(Run.variants.overlap(["reno", "vegas"])))
    assert [r.variants for r in overlap] == [["reno"]]


def test_a_result_is_stored_once_per_cache_key(db_session: Session) -> None:
    statement = (
        insert(Result)
        .values(cache_key=KEY, core_version="0.1.0", summary={"fairness": {"jain": 1.0}})
        .on_conflict_do_nothing(index_elements=[Result.cache_key])
        .returning(Result.id)
    )
    first = db_session.scalar(statement)
    second = db_session.scalar(statement)  # the duplicate delivery
    assert first is not None and second is None
    assert db_session.scalar(select(func.count()).select_from(Result)) == 1


def test_a_core_result_maps_onto_the_tables(db_session: Session) -> None:
    scenario = {
        "duration_s": 2,
        "topology": {"dumbbell": {"bottleneck": {"rate_mbps": 10, "delay_ms": 5}}},
        "flows": [
            {"name": "tcp", "variant": "newreno-sbs", "rtt_ms": 40},
            {"name": "cbr", "type": "udp", "rtt_ms": 40, "app": {"type": "cbr", "rate_mbps": 1}},
        ],
        "outputs": {"trace_interval_s": 0.5, "trace": ["cwnd", "queue"]},
    }
    core = tcpsim.run(scenario)
    assert set(core["flows"][0]) == set(FLOW_METRICS), "docs/simulator.md's Result changed"
    summary = {k: v for k, v in core.items() if k not in ("flows", "traces")}
    result = Result(cache_key=KEY, core_version=core["core_version"], summary=summary)
    result.flows = [
        FlowResult(position=i, **{m: flow[m] for m in FLOW_METRICS}) for i, flow in enumerate(core["flows"])
    ]
    layout, chunks = trace_codec.encode(core["traces"])
    result.trace = Trace(**layout)
    db_session.add(result)
    db_session.add(_run(result=result, status=RunStatus.succeeded))
    db_session.flush()
    db_session.add_all(TraceChunk(result_id=result.id, **c) for c in chunks)
    db_session.commit()
    db_session.expunge_all()

    stored = db_session.scalar(select(Run)).result
    assert [f.name for f in stored.flows] == ["tcp", "cbr"]
    assert stored.flows[1].variant is None and stored.flows[1].mean_rtt_s is None
    assert stored.flows[0].goodput_bps == core["flows"][0]["goodput_bps"]
    rows = db_session.scalars(select(TraceChunk).order_by(TraceChunk.series, TraceChunk.chunk)).all()
    values = [
        np.concatenate([trace_codec.decode(r.data, s["dtype"]) for r in rows if r.series == i])
        for i, s in enumerate(stored.trace.series)
    ]
    assert trace_codec.assemble(stored.trace.series, stored.trace.items, values) == core["traces"]

    # Deleting a result takes its flows and trace along, and unlinks its runs.
    db_session.delete(stored)
    db_session.commit()
    assert db_session.scalar(select(func.count()).select_from(FlowResult)) == 0
    assert db_session.scalar(select(func.count()).select_from(Trace)) == 0
    assert db_session.scalar(select(func.count()).select_from(TraceChunk)) == 0
    assert db_session.scalar(select(Run.result_id)) is None


def test_nan_in_json_is_refused(db_session: Session) -> None:
    db_session.add(Result(cache_key=KEY, core_version="x", summary={"jain": float("nan")}))
    with pytest.raises(Exception, match="JSON compliant"):
        db_session.flush()


def test_after_commit_callbacks_wait_for_the_commit(clean_db: Engine) -> None:
    calls: list[str] = []
    factory = create_session_factory(clean_db)
    with session_scope(factory) as session:
        session.add(_run())
        run_after_commit(session, lambda: calls.append("sent"))
        with session.begin_nested():  # releasing a savepoint is not the commit
            session.execute(text("SELECT 1"))
        session.flush()
        assert calls == []
    assert calls == ["sent"]

    with pytest.raises(RuntimeError), session_scope(factory) as session:
        run_after_commit(session, lambda: calls.append("rolled back"))
        raise RuntimeError
    with session_scope(factory) as session:  # a later commit does not run stale callbacks
        session.execute(text("SELECT 1"))
    session = factory()
    run_after_commit(session, lambda: calls.append("no SQL, rolled back"))
    session.rollback()
    session.commit()
    session.close()
    assert calls == ["sent"]


def test_session_scope_rolls_back_on_error(clean_db: Engine) -> None:
    factory = create_session_factory(clean_db)
    with pytest.raises(ZeroDivisionError), session_scope(factory) as session:
        session.add(_run())
        session.flush()
        1 / 0  # noqa: B018
    with session_scope(factory) as session:
        assert session.scalar(select(func.count()).select_from(Run)) == 0


def test_each_test_starts_with_empty_tables(db_session: Session) -> None:
    for table in ("runs", "results", "flow_results", "traces", "trace_chunks"):
        assert db_session.scalar(text(f"SELECT count(*) FROM {table}")) == 0


@pytest.mark.parametrize("idle_enough", [True, False], ids=["idle-pinged", "busy-not-pinged"])
def test_a_pooled_connection_is_pinged_after_a_pause_only(
    postgres_server, migrated_database: str, monkeypatch: pytest.MonkeyPatch, idle_enough: bool
) -> None:
    """Across a PostgreSQL restart: a connection idle past PING_AFTER_IDLE_S is replaced
    unseen; one used moments ago is handed out as it is, its first statement fails, and the
    pool then opens fresh ones (services/db/session.py)."""
    from sqlalchemy.exc import OperationalError

    from services.db import session as db_session_module
    from services.db.session import create_db_engine

    if postgres_server is None:
        pytest.skip("needs the embedded test PostgreSQL, which this test restarts (an external one is configured)")
    monkeypatch.setattr(db_session_module, "PING_AFTER_IDLE_S", 0.0 if idle_enough else 3600.0)
    engine = create_db_engine(migrated_database, pool_size=1, max_overflow=0)
    try:
        with engine.connect() as conn:
            before = conn.execute(text("SELECT pg_backend_pid()")).scalar_one()
        postgres_server.stop()
        postgres_server.start()
        if not idle_enough:
            with pytest.raises(OperationalError), engine.connect() as conn:
                conn.execute(text("SELECT 1"))
        with engine.connect() as conn:
            after = conn.execute(text("SELECT pg_backend_pid()")).scalar_one()
        assert after != before
    finally:
        engine.dispose()
