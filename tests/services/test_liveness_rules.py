"""The rules behind worker liveness (services/runs), against real PostgreSQL: a worker's
check-in is its heartbeat and tells it whether to go on; a silent worker's run is handed back
to the queue with its slot; a redelivered message never takes a run from a live worker."""

from __future__ import annotations

import datetime as dt
import json
import uuid
from typing import Any

from sqlalchemy import text

import tcpsim
from services.db.models import Run, RunStatus
from services.runs import check_in, claim, claim_batch, give_back, reclaim_abandoned

FIG2 = {"preset": "paper000-fig2a", "overrides": {"duration_s": 5, "warmup_s": 1}}


def _queued_run(client: Any, seed: int) -> uuid.UUID:
    run = client.post("/v1/runs", json={**FIG2, "overrides": {**FIG2["overrides"], "seed": seed}}).json()
    return uuid.UUID(run["id"])


def _age_heartbeat(db_session: Any, run_id: uuid.UUID, seconds: float) -> None:
    row = db_session.get(Run, run_id)
    row.heartbeat_at = dt.datetime.now(dt.UTC) - dt.timedelta(seconds=seconds)
    db_session.commit()


def test_a_run_running_on_a_live_worker_is_not_claimed_by_another_but_a_silent_ones_is(
    client, db_session, test_settings
):
    rid = _queued_run(client, 1)
    assert claim(db_session, rid, "a@host", test_settings) is not None
    db_session.commit()
    assert claim(db_session, rid, "b@host", test_settings) is None  # a redelivery while a is alive
    db_session.commit()
    _age_heartbeat(db_session, rid, test_settings.worker_dead_after_s + 1)
    assert claim(db_session, rid, "b@host", test_settings) is not None
    db_session.commit()
    db_session.expire_all()
    row = db_session.get(Run, rid)
    assert (row.worker, row.attempts, row.status) == ("b@host", 2, RunStatus.running)
    # a's check-in now says stop: the run is not its own any more.
    assert check_in(db_session, rid, "a@host", beat=True) is False
    assert check_in(db_session, rid, "b@host", beat=False) is True


def test_a_check_in_beats_the_heartbeat_and_says_stop_once_the_run_is_cancelled(client, db_session, test_settings):
    rid = _queued_run(client, 2)
    claim(db_session, rid, "a@host", test_settings)
    db_session.commit()
    _age_heartbeat(db_session, rid, 5)
    assert check_in(db_session, rid, "a@host", beat=True) is True
    db_session.commit()
    db_session.expire_all()
    assert (dt.datetime.now(dt.UTC) - db_session.get(Run, rid).heartbeat_at).total_seconds() < 5
    assert client.post(f"/v1/runs/{rid}/cancel").json()["status"] == "cancelled"
    assert check_in(db_session, rid, "a@host", beat=False) is False


def test_only_runs_whose_worker_fell_silent_go_back_to_the_queue_with_their_slot(client, db_session, test_settings):
    silent, alive = _queued_run(client, 3), _queued_run(client, 4)
    for rid in (silent, alive):
        claim(db_session, rid, f"{rid}@host", test_settings)
    db_session.commit()
    _age_heartbeat(db_session, silent, test_settings.worker_dead_after_s + 1)
    assert reclaim_abandoned(db_session, test_settings) == [silent]
    db_session.commit()
    db_session.expire_all()
    row = db_session.get(Run, silent)
    assert row.status == RunStatus.queued and row.dispatched_at is not None and row.heartbeat_at is None
    assert db_session.get(Run, alive).status == RunStatus.running
    assert reclaim_abandoned(db_session, test_settings) == []


def test_a_batch_past_its_time_gives_back_only_its_own_unstarted_runs_as_never_dispatched(
    client, db_session, test_settings
):
    first, second, third = (_queued_run(client, seed) for seed in (5, 6, 7))
    claimed = claim_batch(db_session, [first, second, third], "a@host", test_settings)
    assert list(claimed) == [first, second, third]  # in the batch's order
    db_session.execute(text("UPDATE runs SET worker = 'b@host' WHERE id = :id"), {"id": third})  # handed on
    db_session.commit()
    assert sorted(give_back(db_session, [second, third], "a@host")) == [second]
    db_session.commit()
    db_session.expire_all()
    row = db_session.get(Run, second)
    assert (row.status, row.dispatched_at, row.batch_id, row.worker, row.started_at, row.attempts) == (
        RunStatus.queued,
        None,
        None,
        None,
        None,
        0,
    )
    assert db_session.get(Run, first).status == RunStatus.running
    assert db_session.get(Run, third).worker == "b@host"


def test_a_batch_claimed_twice_is_simulated_once_by_the_live_worker(client, db_session, test_settings):
    runs = [_queued_run(client, seed) for seed in (8, 9)]
    assert list(claim_batch(db_session, runs, "a@host", test_settings)) == runs
    db_session.commit()
    assert claim_batch(db_session, runs, "b@host", test_settings) == {}  # a redelivery while a is alive
    assert list(claim_batch(db_session, runs, "a@host", test_settings)) == runs  # a retrying its own task


def test_a_claimed_scenario_carries_the_tighter_caps_and_simulates_as_the_stored_one(client, db_session, test_settings):
    """The worker hands the core the JSON text PostgreSQL writes at the claim: the stored
    scenario with its limits the tighter of its own and the caps — the server's wall time and
    events, the owner's quota of events."""
    settings = test_settings
    plain, own_limit, capped_owner = _queued_run(client, 10), _queued_run(client, 11), _queued_run(client, 12)
    db_session.execute(
        text(
            "UPDATE runs SET scenario = jsonb_set(scenario, '{limits}', '{\"max_events\": 500, \"max_wall_s\": 7.5}') WHERE id = :id"
        ),
        {"id": own_limit},
    )
    db_session.commit()
    claimed = claim_batch(db_session, [plain, own_limit], "a@host", test_settings)
    limits = {run_id: json.loads(scenario)["limits"] for run_id, scenario in claimed.items()}
    assert limits[plain]["max_events"] == settings.run_max_events
    assert limits[plain]["max_wall_s"] == settings.run_max_wall_s
    assert (limits[own_limit]["max_events"], limits[own_limit]["max_wall_s"]) == (500, 7.5)
    # The owner's own quota, lowered meanwhile, binds the next claim.
    db_session.execute(
        text("UPDATE users SET max_events_per_run = 1000 WHERE id = (SELECT owner_id FROM runs WHERE id = :id)"),
        {"id": capped_owner},
    )
    db_session.commit()
    (scenario,) = claim_batch(db_session, [capped_owner], "a@host", test_settings).values()
    assert json.loads(scenario)["limits"]["max_events"] == 1000
    # The text simulates exactly as the stored scenario does, as a dict with the same limits.
    stored = db_session.get(Run, plain).scenario
    as_dict = {**stored, "limits": {**(stored.get("limits") or {}), **limits[plain]}}
    from_text, from_dict = tcpsim.run(claimed[plain]), tcpsim.run(as_dict)
    for result in (from_text, from_dict):
        result["stats"].pop("wall_s"), result["stats"].pop("events_per_s")
    assert from_text == from_dict


def test_a_claim_and_a_reclaim_follow_the_settings_they_are_given_not_the_processs(client, db_session, test_settings):
    """The caps and the silence that hands a run on are the caller's settings (an app or a
    worker built with its own), not whatever this process's environment says."""
    own = test_settings.model_copy(update={"run_max_events": 1234, "run_max_wall_s": 3.5, "worker_dead_after_s": 2.0})
    assert test_settings.worker_dead_after_s > 10 and test_settings.run_max_events != 1234
    rid = _queued_run(client, 13)
    (scenario,) = claim_batch(db_session, [rid], "a@host", own).values()
    db_session.commit()
    assert {k: json.loads(scenario)["limits"][k] for k in ("max_events", "max_wall_s")} == {
        "max_events": 1234,
        "max_wall_s": 3.5,
    }
    _age_heartbeat(db_session, rid, 5)  # silent past own's 2 s, well within the process's
    assert reclaim_abandoned(db_session, test_settings) == []
    assert reclaim_abandoned(db_session, own) == [rid]
