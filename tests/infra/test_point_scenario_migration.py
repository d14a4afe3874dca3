"""Migration 0012: a sweep point's scenario stored once. Existing points take it from their runs
(which keep their own), a run reads the same scenario before and after, and a downgrade gives
the runs stored without one their point's scenario with their seed."""

from __future__ import annotations

import hashlib
import json
import uuid

import psycopg
import pytest
from alembic import command
from sqlalchemy import create_engine
from sqlalchemy.orm import Session
from sqlalchemy.pool import NullPool

from services.db.migrate import alembic_config, downgrade, upgrade_to_head
from services.db.session import sqlalchemy_url
from services.runs.repository import scenarios_of
from tests.infra.test_migrations import scratch_database  # noqa: F401  (the fixture)

SEED = 18_446_744_073_709_551_557  # a u64 beyond BIGINT: the seed goes back into JSON exactly


def scenario(m: int, seed: int) -> dict:
    return {"name": "fig", "duration_s": 5, "flows": [{"rtt_ms": 70, "loss": {"m": m}}], "seed": seed}


def key(*parts: object) -> str:
    return hashlib.sha256(repr(parts).encode()).hexdigest()


def scenario_of(url: str, run_id: uuid.UUID) -> dict:
    """The run's scenario as the service reads it (the worker's claim reads it the same way)."""
    engine = create_engine(sqlalchemy_url(url), poolclass=NullPool)
    try:
        with Session(engine) as session:
            return scenarios_of(session, [run_id])[run_id]
    finally:
        engine.dispose()


def test_points_take_their_runs_scenario_and_give_it_back_on_downgrade(scratch_database) -> None:  # noqa: F811
    command.upgrade(alembic_config(scratch_database), "0011")
    runs = {}
    with psycopg.connect(scratch_database, autocommit=True) as conn:
        sweep = conn.execute("INSERT INTO sweeps (spec) VALUES ('{}') RETURNING id").fetchone()[0]
        for point, m in enumerate((2, 9)):
            conn.execute(
                'INSERT INTO sweep_points (sweep_id, "index", "values", flow_groups) VALUES (%s, %s, %s, %s)',
                (sweep, point, json.dumps({"m": m}), "[]"),
            )
            for replication, seed in enumerate((7, SEED)):
                runs[(point, replication)] = conn.execute(
                    "INSERT INTO runs (scenario, seed, cache_key, core_version, sweep_id, sweep_point, replication) "
                    "VALUES (%s, %s, %s, 'x', %s, %s, %s) RETURNING id",
                    (json.dumps(scenario(m, seed)), seed, key(point, replication), sweep, point, replication),
                ).fetchone()[0]

    upgrade_to_head(scratch_database)
    with psycopg.connect(scratch_database, autocommit=True) as conn:
        points = conn.execute('SELECT "index", scenario FROM sweep_points ORDER BY "index"').fetchall()
        assert points == [
            (0, {k: v for k, v in scenario(2, 0).items() if k != "seed"}),
            (1, {k: v for k, v in scenario(9, 0).items() if k != "seed"}),
        ]
        for (point, replication), run in runs.items():
            assert scenario_of(scratch_database, run) == scenario((2, 9)[point], (7, SEED)[replication])
        # A run stored the new way: no scenario of its own.
        new = conn.execute(
            "INSERT INTO runs (seed, cache_key, core_version, sweep_id, sweep_point, replication) "
            "VALUES (%s, %s, 'x', %s, 1, 2) RETURNING id",
            (SEED, key("new"), sweep),
        ).fetchone()[0]
        assert scenario_of(scratch_database, new) == scenario(9, SEED)
        with pytest.raises(psycopg.errors.CheckViolation) as refused:  # a run outside a sweep has its own
            conn.execute("INSERT INTO runs (seed, cache_key, core_version) VALUES (1, %s, 'x')", (key("single"),))
        assert refused.value.diag.constraint_name == "ck_runs_scenario_own_or_its_points"

    downgrade(scratch_database, "0011")
    with psycopg.connect(scratch_database) as conn:
        assert conn.execute("SELECT scenario FROM runs WHERE id = %s", (new,)).fetchone()[0] == scenario(9, SEED)
        assert conn.execute("SELECT count(*) FROM runs WHERE scenario IS NULL").fetchone()[0] == 0
