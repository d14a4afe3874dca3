"""GET /v1/runs/{id}/scenario (api/routers/runs.py): the scenario a run ran and its sweep, which
the run page shows and submits again with traces, through the real app on the real database."""

from __future__ import annotations

from tests.api.test_access import TINY_SWEEP
from tests.e2e.test_runs import FIG2_SHORT
from tests.support import make_user, user_client


def test_a_runs_scenario_is_the_one_it_ran_and_runs_again_with_traces(client) -> None:
    run = client.post("/v1/runs", json=FIG2_SHORT).json()
    body = client.get(f"/v1/runs/{run['id']}/scenario").json()
    assert (body["run_id"], body["sweep_id"], body["sweep_point"], body["replication"]) == (run["id"], None, None, None)
    assert body["preset"] == "paper000-fig2a"
    assert body["scenario"]["seed"] == run["seed"]
    assert body["scenario"]["duration_s"] == FIG2_SHORT["overrides"]["duration_s"]
    assert [f["name"] for f in body["scenario"]["flows"]] == ["sbs", "imp"]

    traced = {**body["scenario"], "outputs": {"trace_interval_s": 0.1, "trace": ["cwnd", "ssthresh", "queue"]}}
    again = client.post("/v1/runs", json={"scenario": traced})
    assert again.status_code == 201, again.text
    assert again.json()["seed"] == run["seed"] and again.json()["cache_key"] != run["cache_key"]
    assert (
        client.get(f"/v1/runs/{again.json()['id']}/scenario").json()["scenario"]["outputs"]["trace_interval_s"] == 0.1
    )


def test_a_sweep_runs_scenario_is_its_points_with_its_own_seed_and_names_the_sweep(client) -> None:
    sweep = client.post("/v1/sweeps", json=TINY_SWEEP).json()
    runs = client.get(f"/v1/sweeps/{sweep['id']}/runs").json()
    run = next(r for r in runs if r["point"] == 1)
    body = client.get(f"/v1/runs/{run['run_id']}/scenario").json()
    assert (body["sweep_id"], body["sweep_point"], body["replication"]) == (sweep["id"], 1, run["replication"])
    assert body["scenario"]["seed"] == run["seed"]
    assert [f["loss"]["m"] for f in body["scenario"]["flows"]] == [8, 8]  # m = 1, 8: point 1


def test_another_users_private_runs_scenario_is_a_404(app, client) -> None:
    run = client.post("/v1/runs", json=FIG2_SHORT).json()
    with user_client(app, make_user(client, "carol")) as carol:
        r = carol.get(f"/v1/runs/{run['id']}/scenario")
    assert r.status_code == 404 and r.json()["detail"] == f"run {run['id']} not found"
