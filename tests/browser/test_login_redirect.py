"""The sign-in page never sends a browser to another site (issue 11, finding 7): Chromium itself
follows `next` after signing in. It drops tabs and newlines from a URL before reading it, so
`/login?next=/%09/evil.example/` used to land on http://evil.example/ — stood in for here by a
route Playwright answers, so the test needs no network."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.browser.harness import READY_MS, Server
from tests.conftest import ADMIN_TOKEN


@pytest.mark.parametrize(
    "next_param", ["/%09/evil.example/", "/%0A/evil.example/", "/%0D%09/evil.example/x", "//evil.example/"]
)
def test_signing_in_with_a_next_that_a_browser_reads_as_another_host_stays_on_this_server(
    browser: Any, server: Server, next_param: str
) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    visited: list[str] = []
    context.route(
        "http://evil.example/**", lambda route: (visited.append(route.request.url), route.fulfill(body="evil"))[1]
    )
    page = context.new_page()
    try:
        page.goto(f"{server.base_url}/login?next={next_param}")
        page.fill("#token", ADMIN_TOKEN)
        page.click("#login-form button")
        page.wait_for_url(lambda url: "/login" not in url, timeout=READY_MS)
        landed = urlsplit(page.url)
        assert not visited, visited
        assert (f"{landed.scheme}://{landed.netloc}", landed.path) == (server.base_url, "/dashboard"), page.url
        page.wait_for_selector("body[data-ready='1']", timeout=READY_MS)
    finally:
        context.close()


def test_signing_in_with_a_next_on_this_server_goes_there(browser: Any, server: Server) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    try:
        page.goto(f"{server.base_url}/login?next=%2Fdashboard%2Fregions%3Frtt_s%3D0.1")
        page.fill("#token", ADMIN_TOKEN)
        page.click("#login-form button")
        page.wait_for_url(f"{server.base_url}/dashboard/regions?rtt_s=0.1", timeout=READY_MS)
    finally:
        context.close()
