"""Browser tests: the real app served by uvicorn on a free port (test PostgreSQL and Redis),
data made through the HTTP API and simulated by a real Celery worker, pages opened in Debian's
headless Chromium through Playwright.

- ``chromium_path``: the browser `make install` installs (``TCPLAB_CHROMIUM`` overrides). Missing
  is a failure, never a skip.
- ``browser``: one Chromium for the session.
- ``server``: the app on ``http://127.0.0.1:<port>`` (one per module).
- ``lab``: a short run with traces and a small sweep, finished, made once per module.
- ``tab``: the module's one page, recording the requests and JS errors of one test; the test
  fails if the page asked any host but the server, or logged an error.

Screenshots go to ``artifacts/screenshots/`` (``harness.SCREENSHOTS``).
"""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from services.settings import Settings
from tests.browser.harness import READY_MS, SWEEP, Lab, Server, Tab
from tests.conftest import ADMIN_TOKEN, AUTH, truncate_all
from tests.support import free_port, wait_for

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="session")
def chromium_path() -> str:
    path = os.environ.get("TCPLAB_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if not path or not Path(path).exists():
        pytest.fail(
            "Chromium is not installed: `make install` installs Debian's `chromium` "
            "(apt-get install chromium); or point TCPLAB_CHROMIUM at a Chromium binary."
        )
    return path


@pytest.fixture(scope="session")
def browser(chromium_path: str) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium_path, headless=True, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


# ------------------------------------------------------------------------------ the server


@pytest.fixture(scope="module")
def server(app: Any) -> Iterator[Server]:
    """The session's app (``create_app(test_settings)``) under uvicorn, in a thread."""
    import uvicorn

    port = free_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="off")
    uv = uvicorn.Server(config)
    thread = threading.Thread(target=uv.run, name="uvicorn-browser-tests", daemon=True)
    thread.start()
    wait_for(lambda: uv.started, timeout_s=20)
    base = f"http://127.0.0.1:{port}"
    with httpx.Client(base_url=base, timeout=30, headers=AUTH) as client:
        try:
            yield Server(base, client)
        finally:
            uv.should_exit = True
            thread.join(timeout=10)


# ------------------------------------------------------------------------------ the data

RUN_DURATION_S = 10


def _finished_run(server: Server, run_id: str) -> dict[str, Any]:
    def poll() -> dict[str, Any] | None:
        run = server.get(f"/v1/runs/{run_id}")
        return run if run["status"] in ("succeeded", "failed", "cancelled") else None

    run = wait_for(poll, timeout_s=90, interval_s=0.2)
    assert run["status"] == "succeeded", run
    return run


@pytest.fixture(scope="module")
def lab(server: Server, db_engine: Any, start_worker: Any, test_settings: Settings) -> Iterator[Lab]:
    """On an emptied database: a run of the Fig. 2 preset with cwnd/ssthresh/queue traces, the
    same without traces, and a 3-point × 3-seed sweep, all finished by a worker of our own."""
    from worker.app import app as celery_app

    truncate_all(db_engine)  # what the clean_db fixture does, once for the module
    celery_app.control.purge()
    worker = start_worker(f"browser-{os.getpid()}")
    try:
        scenario = server.get("/v1/presets/paper000-fig2a")["scenario"]
        scenario = {**scenario, "duration_s": RUN_DURATION_S, "warmup_s": 2}
        traced = {
            **scenario,
            "outputs": {"trace_interval_s": 0.1, "trace": ["cwnd", "ssthresh", "queue"]},
        }
        r = server.client.post("/v1/runs", json={"scenario": traced})
        assert r.status_code == 201, r.text
        run_id = r.json()["id"]
        r = server.client.post("/v1/runs", json={"scenario": {**scenario, "seed": 7}})
        assert r.status_code == 201, r.text
        plain_id = r.json()["id"]
        r = server.client.post("/v1/sweeps", json=SWEEP)
        assert r.status_code == 201, r.text
        sweep_id = r.json()["id"]
        _finished_run(server, run_id)
        _finished_run(server, plain_id)
        done = wait_for(
            lambda: (s := server.get(f"/v1/sweeps/{sweep_id}"))["status"] == "done" and s,
            timeout_s=180,
            interval_s=0.3,
        )
        assert done["progress"]["succeeded"] == done["progress"]["total"] == 9, done["progress"]
    finally:
        worker.stop(grace_s=5)
    yield Lab(run_id=run_id, plain_run_id=plain_id, sweep_id=sweep_id)


# ------------------------------------------------------------------------------ pages


def signed_in_cookie(base_url: str, token: str) -> dict[str, Any]:
    """The cookie /login sets, for a context that skips the login page."""
    return {"name": "tcplab_token", "value": token, "url": base_url, "httpOnly": True, "sameSite": "Strict"}


@pytest.fixture(scope="module")
def browser_page(browser: Any, server: Server) -> Iterator[Any]:
    """One page for the module, which each test navigates: a new page compiles Plotly (4.8 MB)
    anew, about 2.5 s here; a page that has loaded it once loads the next page in 0.3 s.
    Signed in as the bootstrap admin (the login cookie; test_dashboards.py's sign-in test goes
    through the login page itself)."""
    context = browser.new_context(accept_downloads=True, viewport={"width": 1280, "height": 900})
    context.add_cookies([signed_in_cookie(server.base_url, ADMIN_TOKEN)])
    page = context.new_page()
    page.set_default_timeout(READY_MS)  # every wait and click: a loaded machine is slow, not broken
    yield page
    context.close()


@contextmanager
def watched(page: Any, server: Server) -> Iterator[Tab]:
    """`page` as a Tab recording its requests and JS errors until the block ends; then the
    block fails if the page asked any host but the server, or logged an error."""
    tab = Tab(page, server)
    handlers = {
        "request": lambda request: tab.requests.append(request.url),
        "pageerror": lambda error: tab.errors.append(f"pageerror: {error}"),
        "console": lambda msg: msg.type == "error" and tab.errors.append(f"console: {msg.text}"),
    }
    for event, handler in handlers.items():
        page.on(event, handler)
    try:
        yield tab
        page.wait_for_timeout(100)  # late console messages
        ours = urlsplit(server.base_url).netloc
        foreign = [
            u
            for u in tab.requests
            if urlsplit(u).scheme not in ("data", "blob", "about") and urlsplit(u).netloc != ours
        ]
        assert not foreign, f"the page asked other hosts: {foreign}"
        errors = [e for e in tab.errors if not any(a in e for a in tab.allowed_errors)]
        assert not errors, errors
    finally:
        for event, handler in handlers.items():
            page.remove_listener(event, handler)


@pytest.fixture
def tab(browser_page: Any, server: Server) -> Iterator[Tab]:
    try:
        with watched(browser_page, server) as tab:
            yield tab
    finally:
        browser_page.goto("about:blank")  # stops the last page's timers (a sweep's refresh)
