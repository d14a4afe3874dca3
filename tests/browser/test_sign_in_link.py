"""`tcplab open`'s sign-in link in Chromium (issue 15): a browser without a cookie opens the
link and lands on the page signed in — typed into the address bar, and clicked in another
site's page (a notebook), where a plain redirect would lose the SameSite=Strict cookie. The
other site is stood in for by a route Playwright answers, so the test needs no network."""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser.harness import Server

PAGE = "/dashboard/regions?rtt_s=0.1&rto_s=0.35"


def _link(server: Server) -> str:
    r = server.client.post("/v1/sign-in-links", json={"path": PAGE})
    assert r.status_code == 201, r.text
    return r.json()["url"]


@pytest.mark.parametrize("how", ["typed", "clicked in another site's page"])
def test_a_browser_without_a_cookie_opens_the_link_and_lands_on_the_page_signed_in(
    browser: Any, server: Server, how: str
) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    try:
        url = _link(server)
        if how == "typed":
            page.goto(url)
        else:
            notebook = f'<a id="open" href="{url}">open the page</a>'
            context.route(
                "http://notebook.example/**", lambda route: route.fulfill(body=notebook, content_type="text/html")
            )
            page.goto("http://notebook.example/lab")
            page.click("#open")
        page.wait_for_url(server.base_url + PAGE, timeout=30_000)
        page.wait_for_selector("body[data-ready='1']", timeout=30_000)
        cookies = {c["name"]: c for c in context.cookies(server.base_url)}
        assert cookies["tcplab_token"]["httpOnly"] and cookies["tcplab_token"]["sameSite"] == "Strict"

        second = context.new_page()
        second.context.clear_cookies()
        response = second.goto(url)
        assert response is not None and response.status == 410
        assert "expired or was already used" in second.inner_text("body")
    finally:
        context.close()
