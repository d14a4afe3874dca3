"""Storing a core result (services/runs/repository.py `insert_results`): the worker hands the
core's columns (`tcpsim.run(..., columns=True)`: numpy arrays, NaN for null) where other
callers hand its records (a dict per flow, None for null). Both must store the same rows,
bit for bit — per-flow rows, trace chunks, summary — or a result would depend on the path
that stored it."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
from sqlalchemy import text
from sqlalchemy.orm import Session

import tcpsim
from services.presets import build_scenario
from services.runs import repository as repo
from services.scenarios import validate_scenario

SCENARIOS = {
    "two flows, traced every 10 ms": ("paper000-fig2a", {"duration_s": 3, "warmup_s": 1}, 0.01),
    "66 flows with their nulls": ("paper000-table2-droptail", {"duration_s": 1}, None),
}


def _scenario(preset: str, overrides: dict[str, Any], trace_interval_s: float | None) -> dict[str, Any]:
    _, canonical = validate_scenario(build_scenario(preset, overrides))
    if trace_interval_s is not None:
        canonical.setdefault("outputs", {})["trace_interval_s"] = trace_interval_s
    return canonical


def _stored(session: Session, result_id: Any) -> dict[str, Any]:
    """Everything stored for a result but its id and key."""
    one = {"result_id": result_id}
    summary = session.execute(text("SELECT summary FROM results WHERE id = :result_id"), one).scalar_one()
    for timing in ("wall_s", "events_per_s"):  # the core's own clock: the two runs' differ
        summary["stats"].pop(timing)
    return {
        "summary": summary,
        "flows": [
            tuple(r)[1:]
            for r in session.execute(
                text("SELECT * FROM flow_results WHERE result_id = :result_id ORDER BY position"), one
            )
        ],
        "trace": [
            tuple(r)[1:] for r in session.execute(text("SELECT * FROM traces WHERE result_id = :result_id"), one)
        ],
        "chunks": [
            tuple(r)[1:]
            for r in session.execute(
                text("SELECT * FROM trace_chunks WHERE result_id = :result_id ORDER BY chunk, series"), one
            )
        ],
    }


@pytest.mark.parametrize("case", list(SCENARIOS))
def test_a_result_stored_from_the_cores_columns_is_the_one_stored_from_its_records(
    case: str, db_session: Session
) -> None:
    scenario = _scenario(*SCENARIOS[case])
    records, columns = tcpsim.run(scenario), tcpsim.run(scenario, columns=True)
    assert isinstance(columns["flows"], dict) and isinstance(records["flows"], list)
    keys = {path: hashlib.sha256(f"{case}/{path}".encode()).hexdigest() for path in ("records", "columns")}
    ids = repo.insert_results(
        db_session,
        [(keys["records"], records["core_version"], records), (keys["columns"], columns["core_version"], columns)],
    )
    db_session.flush()
    from_records, from_columns = _stored(db_session, ids[keys["records"]]), _stored(db_session, ids[keys["columns"]])
    assert from_columns == from_records
    assert len(from_records["flows"]) == len(records["flows"])
    assert (len(from_records["chunks"]) > 0) == (SCENARIOS[case][2] is not None)
    if case.startswith("66"):
        assert any(None in row for row in from_records["flows"])  # the nulls made it as NULL both ways
