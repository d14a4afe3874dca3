"""The service as the README starts it (`python -m infra.launch`, nothing configured: embedded
PostgreSQL and Redis, one worker), driven over real HTTP."""

from __future__ import annotations

import time

import httpx


def test_the_readme_service_runs_a_fig2_preset_and_serves_its_result(launched_service):
    base = launched_service.base_url
    assert httpx.get(f"{base}/v1/presets").status_code == 401  # the launcher made a token: use it
    http = httpx.Client(headers=launched_service.headers)
    assert "paper000-fig2a" in [p["name"] for p in http.get(f"{base}/v1/presets").json()]
    submitted = http.post(
        f"{base}/v1/runs", json={"preset": "paper000-fig2a", "overrides": {"duration_s": 20, "warmup_s": 5}}
    )
    assert submitted.status_code == 201, submitted.text
    run_id = submitted.json()["id"]
    deadline = time.monotonic() + 120
    while (run := http.get(f"{base}/v1/runs/{run_id}").json())["status"] in ("queued", "running"):
        assert time.monotonic() < deadline, run
        time.sleep(0.2)
    assert run["status"] == "succeeded", run
    result = http.get(f"{base}/v1/runs/{run_id}/result").json()
    sbs, imp = result["flows"]
    assert (sbs["variant"], imp["variant"]) == ("newreno-sbs", "newreno-impatient")
    assert sbs["packets_sent"] > 1000 and sbs["loss_events"] >= 1
    assert result["cache_key"] == run["cache_key"]
    assert "core_version" in result and result["stats"]["events"] == run["events"]


def test_the_launched_worker_runs_beat_and_its_reconciler(launched_service):
    """`make run` is a lab of one machine: its worker embeds beat, which sends the reconciler
    (`tcplab.reconcile`) every `reconcile_interval_s` (2 s for this fixture)."""
    import re

    from tests.support import wait_for

    done = re.compile(r"Task tcplab\.reconcile\[[0-9a-f-]+\] succeeded")
    wait_for(lambda: done.search(launched_service.log()), timeout_s=60)
    assert "beat: Starting" in launched_service.log()
