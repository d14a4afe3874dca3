"""The API's dispatcher works with the settings and the database its app was built with, not
the process's (issue 16: settings passed, not fetched): an app whose window differs from the
process's fills its own."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy import Engine

from api.main import create_app
from services.db.session import create_session_factory
from services.runs.dispatch import in_flight_count
from services.settings import Settings, get_settings
from tests.conftest import AUTH
from tests.support import wait_for

RUN = {"preset": "paper000-fig2a", "overrides": {"duration_s": 5}}


def test_an_app_built_with_its_own_dispatch_window_fills_that_window_not_the_processes(
    test_settings: Settings, clean_db: Engine
) -> None:
    assert get_settings().effective_dispatch_window != 3  # the process's window is another
    # One run a batch, so that the window (which counts batches) counts these runs.
    app = create_app(test_settings.model_copy(update={"dispatch_window": 3, "batch_max_runs": 1}))
    factory = create_session_factory(clean_db)

    def in_flight() -> int:
        with factory() as session:
            return in_flight_count(session)

    with TestClient(app, headers=AUTH) as client:  # no worker consumes: dispatched runs stay in flight
        for seed in range(6):
            response: Any = client.post("/v1/runs", json={**RUN, "overrides": {**RUN["overrides"], "seed": seed}})
            assert response.status_code == 201, response.text
        wait_for(lambda: in_flight() == 3, timeout_s=30)
