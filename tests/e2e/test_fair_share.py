"""Fair share, measured: one user's long sweep must not delay another user's single run by
more than about one run's time per worker (docs/fair-share.md).

Alice creates a sweep of 80 runs (about 0.3 s of core time each); once her runs flow through
the workers, Bob submits one run. Bob's wait (``started_at - created_at``) is compared with
the duration of Alice's runs (``finished_at - started_at``), and the runs of Alice still
queued when Bob's finished are counted: first in, first out, Bob would have waited for all of
them. The figures are printed (``pytest -s``).
"""

from __future__ import annotations

import statistics
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import text
from sqlalchemy.orm import Session

from services.settings import get_settings
from tests.e2e.test_runs import finished
from tests.support import make_user, user_client, wait_for

# 5 points x 16 replications; duration_s 600 is about 0.3 s of the core's time per run.
ALICES_SWEEP = {
    "preset": "paper000-fig2a",
    "overrides": {"duration_s": 600},
    "axes": [{"path": "flows[*].loss.m", "values": [2, 4, 8, 16, 32]}],
    "replications": 16,
    "seed": 5150,
}
BOBS_RUN = {"preset": "paper000-fig2a", "overrides": {"duration_s": 600, "seed": 6160}}


@pytest.fixture
def window(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, start_worker: Any, app: Any
) -> Iterator[int]:
    """Worker processes for the test, and the app's dispatcher told the same window (its
    settings' dispatch_window; TCPLAB_DISPATCH_WINDOW for this process's), as a lab server's
    settings would."""
    from worker.app import app as celery_app

    processes: int = request.param
    celery_app.control.purge()  # no earlier test's messages ahead of these
    monkeypatch.setenv("TCPLAB_DISPATCH_WINDOW", str(processes))
    # Set and restored by hand: monkeypatch's undo loses an attribute of Starlette's State.
    app_settings = app.state.settings
    app.state.settings = app_settings.model_copy(update={"dispatch_window": processes})
    get_settings.cache_clear()
    try:
        worker = start_worker(worker_concurrency=processes, dispatch_window=processes)
        try:
            yield processes
        finally:
            worker.stop()
    finally:
        app.state.settings = app_settings
        monkeypatch.undo()
        get_settings.cache_clear()


def _times(session: Session, where: str, **params: Any) -> list[dict[str, Any]]:
    session.expire_all()
    rows = session.execute(
        text(
            "SELECT id, status, extract(epoch FROM created_at) AS created, "
            "extract(epoch FROM dispatched_at) AS dispatched, extract(epoch FROM started_at) AS started, "
            f"extract(epoch FROM finished_at) AS finished FROM runs WHERE {where}"
        ),
        params,
    ).mappings()
    return [dict(r) for r in rows]


@pytest.mark.parametrize("window", [1, 2], indirect=True, ids=["1 worker process", "2 worker processes"])
def test_a_single_run_waits_about_one_run_per_worker_behind_anothers_long_sweep(
    app, client, window, db_session
) -> None:
    alice, bob = make_user(client, "alice"), make_user(client, "bob")
    with user_client(app, alice) as as_alice, user_client(app, bob) as as_bob:
        sweep = as_alice.post("/v1/sweeps", json=ALICES_SWEEP)
        assert sweep.status_code == 201, sweep.text
        sweep_id = sweep.json()["id"]
        assert sweep.json()["created"]["enqueued"] == 80

        def alices_runs_flow() -> bool:
            return as_alice.get(f"/v1/sweeps/{sweep_id}").json()["progress"]["succeeded"] >= 3

        wait_for(alices_runs_flow, timeout_s=60, interval_s=0.05)
        submitted = as_bob.post("/v1/runs", json=BOBS_RUN)
        assert submitted.status_code == 201 and submitted.json()["owner"] == "bob", submitted.text
        bobs = finished(as_bob, submitted.json()["id"], timeout_s=60)
        assert bobs["status"] == "succeeded"
        still_queued = as_alice.get(f"/v1/sweeps/{sweep_id}").json()["progress"]["queued"]
        as_alice.post(f"/v1/sweeps/{sweep_id}/cancel")  # the rest would only prolong the test

    (b,) = _times(db_session, "id = :id", id=bobs["id"])
    alices = _times(db_session, "sweep_id = :sweep", sweep=sweep_id)
    done = [r for r in alices if r["status"] == "succeeded"]
    durations = [float(r["finished"] - r["started"]) for r in done]
    longest, mean = max(durations), statistics.mean(durations)
    wait = float(b["started"] - b["created"])
    # Alice's runs that had not started when Bob submitted: first in, first out, Bob would
    # have waited for every one of them, shared among the worker processes.
    ahead = [r for r in alices if r["started"] is None or r["started"] > b["created"]]
    fifo_wait = len(ahead) * mean / window
    overtaken_by = [r for r in alices if r["started"] is not None and b["created"] < r["started"] < b["started"]]
    print(
        f"\nfair share, {window} worker process(es): Bob waited {wait:.3f} s "
        f"(sent {float(b['dispatched'] - b['created']):.3f} s after submission); Alice's runs took "
        f"{mean:.3f} s on average, {longest:.3f} s at most ({len(done)} finished); "
        f"{len(overtaken_by)} of hers started between Bob's submission and his start; "
        f"{still_queued} of her 80 were still queued when his finished; first in, first out he "
        f"would have waited for {len(ahead)} runs, about {fifo_wait:.1f} s"
    )
    assert wait <= 1.5 * longest + 0.5, (wait, longest)
    assert still_queued >= 40, still_queued  # FIFO would have put Bob behind all of these
    assert fifo_wait > 5 * wait
    # Bob's run was the next one sent once a slot freed: at most the runs already handed to
    # the broker when he submitted (a window's worth) started before his.
    assert len(overtaken_by) <= window


# Short runs go in batches (a task claims, simulates and stores many of one owner's runs at
# once): about 2 ms of core time each, 10 points x 300 replications.
ALICES_SHORT_SWEEP = {
    "preset": "paper000-fig2a",
    "overrides": {"duration_s": 2, "warmup_s": 1},
    "axes": [{"path": "flows[*].loss.m", "values": list(range(1, 11))}],
    "replications": 300,
    "seed": 5151,
}
BOBS_SHORT_RUN = {"preset": "paper000-fig2a", "overrides": {"duration_s": 2, "warmup_s": 1, "seed": 6161}}


@pytest.mark.parametrize("window", [1], indirect=True, ids=["1 worker process"])
def test_a_single_run_waits_at_most_one_batch_behind_anothers_sweep_of_short_runs(
    app, client, window, db_session
) -> None:
    """With batches, Bob's single run waits for the batch that holds the slot when he submits
    — never for Alice's next one, nor for her thousands of queued runs."""
    alice, bob = make_user(client, "alice"), make_user(client, "bob")
    with user_client(app, alice) as as_alice, user_client(app, bob) as as_bob:
        sweep = as_alice.post("/v1/sweeps", json=ALICES_SHORT_SWEEP)
        assert sweep.status_code == 201, sweep.text
        sweep_id = sweep.json()["id"]

        def in_batches() -> bool:
            # Her runs flow in batches of many (the first, before any core time is known, is one run).
            return as_alice.get(f"/v1/sweeps/{sweep_id}").json()["progress"]["succeeded"] >= 200

        wait_for(in_batches, timeout_s=120, interval_s=0.05)
        submitted = as_bob.post("/v1/runs", json=BOBS_SHORT_RUN)
        assert submitted.status_code == 201, submitted.text
        bobs = finished(as_bob, submitted.json()["id"], timeout_s=60)
        assert bobs["status"] == "succeeded"
        still_queued = as_alice.get(f"/v1/sweeps/{sweep_id}").json()["progress"]["queued"]
        as_alice.post(f"/v1/sweeps/{sweep_id}/cancel")

    (b,) = _times(db_session, "id = :id", id=bobs["id"])
    batches = db_session.execute(
        text(
            "SELECT batch_id, count(*) AS runs, extract(epoch FROM max(finished_at) - min(started_at)) AS took, "
            "extract(epoch FROM min(started_at)) AS started FROM runs "
            "WHERE sweep_id = :sweep AND status = 'succeeded' GROUP BY batch_id"
        ),
        {"sweep": sweep_id},
    ).all()
    longest = max(float(r.took) for r in batches)
    wait = float(b["started"] - b["created"])
    overtaken_by = [r for r in batches if b["created"] < r.started < b["started"]]
    print(
        f"\nfair share with batches: Bob waited {wait:.3f} s; Alice's {len(batches)} batches held up to "
        f"{max(r.runs for r in batches)} runs and took {longest:.3f} s at most; {still_queued} of her "
        f"3000 runs were still queued when his finished; {len(overtaken_by)} of her batches started between "
        f"his submission and his start"
    )
    assert max(r.runs for r in batches) > 20  # batches, not single runs
    assert wait <= 1.5 * longest + 0.5, (wait, longest)
    assert still_queued >= 1000, still_queued
    assert len(overtaken_by) <= window  # only the batch already handed to the broker, if any
