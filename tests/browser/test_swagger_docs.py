"""/docs renders with no network beyond the server (issue 15): Swagger UI's script, CSS and icon
come from the installed fastapi-swagger package. Every request to another host is refused by
the browser context, as a machine offline would, and recorded: the page must not have made one."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import httpx

from tests.browser.harness import SCREENSHOTS, Server


def test_the_docs_page_renders_the_operations_with_every_other_host_unreachable(browser: Any, server: Server) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 900})  # no cookie: /docs is open
    ours = urlsplit(server.base_url).netloc
    asked: list[str] = []
    refused: list[str] = []

    def route(route: Any) -> None:
        url = route.request.url
        asked.append(url)
        if urlsplit(url).scheme in ("data", "blob") or urlsplit(url).netloc == ours:
            route.continue_()
        else:
            refused.append(url)
            route.abort("internetdisconnected")

    context.route("**/*", route)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    try:
        response = page.goto(f"{server.base_url}/docs")
        assert response is not None and response.status == 200
        path = page.locator(".opblock-summary-path[data-path='/v1/models']").first
        path.wait_for(state="visible", timeout=30_000)
        assert path.inner_text().strip().replace("\u200b", "") == "/v1/models"
        assert page.locator(".opblock-summary-path[data-path='/v1/reproductions/{paper}']").count() >= 1
        assert page.title() == "tcplab — API docs"
        assert page.locator(".information-container .title").first.inner_text().startswith("tcplab")
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / "api-docs.png"))
        assert not refused, f"/docs asked other hosts: {refused}"
        assert not errors, errors
        assert any("/docs/assets/swagger-ui-bundle.js" in u for u in asked), asked
        assert any(u.endswith("/openapi.json") for u in asked), asked
    finally:
        context.close()


def test_the_docs_assets_are_served_content_addressed_and_cached_for_a_day(server: Server) -> None:
    html = httpx.get(f"{server.base_url}/docs").text
    for name, media in (
        ("swagger-ui-bundle.js", "text/javascript"),
        ("swagger-ui.css", "text/css"),
        ("favicon-32x32.png", "image/png"),
    ):
        assert f"/docs/assets/{name}?v=" in html, name
        r = httpx.get(f"{server.base_url}/docs/assets/{name}", headers={"Accept-Encoding": "gzip"})
        assert r.status_code == 200 and r.headers["content-type"].startswith(media), (name, r.headers)
        assert r.headers["cache-control"] == "public, max-age=86400"
        assert len(r.content) > 500
    assert "cdn.jsdelivr.net" not in html and "unpkg" not in html
    assert httpx.get(f"{server.base_url}/docs/assets/__init__.py").status_code == 404
    assert httpx.get(f"{server.base_url}/docs/assets/..%2F..%2Fmain.py").status_code == 404
