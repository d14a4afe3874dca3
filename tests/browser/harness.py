"""What the browser tests share: the served app, the data made for them, a page that records
its requests and errors. Screenshots go to ``artifacts/screenshots/`` (gitignored; CI keeps it)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from services.settings import REPO_ROOT

SCREENSHOTS = REPO_ROOT / "artifacts" / "screenshots"

# How long a page may take to be drawn: Plotly (4.8 MB) compiles in 2.5 s on an idle machine,
# several times that on a loaded 2-core one beside a worker and the tests' servers.
READY_MS = 90_000

# The sweep the tests make (fixture `lab`): Fig. 2(a) at m = 1, 8, 30, three seeds.
SWEEP = {
    "preset": "paper000-fig2a",
    "overrides": {"duration_s": 200},
    "axes": [{"path": "flows[*].loss.m", "values": [1, 8, 30]}],
    "replications": 3,
}


@dataclass
class Server:
    base_url: str
    client: httpx.Client

    def get(self, path: str, **kw: Any) -> Any:
        r = self.client.get(path, **kw)
        assert r.status_code == 200, (path, r.status_code, r.text[:500])
        return r.json()


@dataclass
class Lab:
    run_id: str
    plain_run_id: str
    sweep_id: str


@dataclass
class Tab:
    """A page with what it asked for and what went wrong in it."""

    page: Any
    server: Server
    requests: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    allowed_errors: list[str] = field(default_factory=list)

    def open(self, path: str, *, status: int = 200) -> Any:
        response = self.page.goto(self.server.base_url + path)
        assert response is not None and response.status == status, (
            path,
            response and response.status,
        )
        if status == 200:
            self.page.wait_for_selector("body[data-ready='1']", timeout=READY_MS)
            message = self.page.locator("#message")
            if "error" in (message.get_attribute("class") or ""):
                pytest.fail(f"{path} shows an error: {message.inner_text()}")
        return response

    def plot(self, element_id: str) -> list[dict[str, Any]]:
        """The Plotly traces as the page drew them (the graph div's `data`)."""
        self.page.wait_for_selector(f"#{element_id}[data-state='ready']", timeout=READY_MS)
        return self.page.evaluate(f"document.getElementById('{element_id}').data")

    def screenshot(self, name: str) -> Path:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        path = SCREENSHOTS / f"{name}.png"
        self.page.screenshot(path=str(path), full_page=True)
        assert path.stat().st_size > 5_000
        return path
