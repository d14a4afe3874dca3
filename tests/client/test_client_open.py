"""`tcplab open` and `Client.sign_in_link` against the launched service (issue 15): the printed
link signs a plain HTTP client in once and points at the page WHAT names; `--browser` hands it
to the browser `$BROWSER` names (here a script that writes down what it was given)."""

from __future__ import annotations

import stat
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from tcplab_client import Client
from tcplab_client.cli import app
from tests.client.helpers import SHORT_RUN
from tests.support import LaunchedService

runner = CliRunner()


@pytest.fixture
def url(launched_service: LaunchedService, isolated_config: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("TCPLAB_TOKEN", launched_service.token)
    return launched_service.base_url


def test_the_sdk_link_signs_in_once_and_lands_on_the_page(lab: Client) -> None:
    link = lab.sign_in_link("/dashboard/regions")
    assert link["url"] == lab.base_url.rstrip("/") + link["link_path"] and link["user"] == "admin"
    with httpx.Client() as browser:
        first = browser.get(link["url"])
        assert first.status_code == 200 and "url=/dashboard/regions" in first.text
        assert browser.get(f"{lab.base_url}/v1/me").json()["name"] == "admin"  # the login cookie
        browser.cookies.clear()
        assert browser.get(link["url"]).status_code == 410


def test_tcplab_open_names_pages_by_id_or_name_and_hands_the_link_to_the_browser(
    url: str, lab: Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = lab.submit_run(preset=SHORT_RUN["preset"], overrides=SHORT_RUN["overrides"])
    result = runner.invoke(app, ["--url", url, "open", run["id"]])
    assert result.exit_code == 0, result.output
    printed = result.stdout.strip()
    assert printed.startswith(f"{url}/sign-in/")
    assert f"opens /dashboard/runs/{run['id']}: once, within 60 s" in result.stderr
    landed = httpx.get(printed)
    assert landed.status_code == 200 and f"url=/dashboard/runs/{run['id']}" in landed.text

    papers = runner.invoke(app, ["--url", url, "open", "papers/002"])
    assert papers.exit_code == 0 and "opens /dashboard/papers/002" in papers.stderr
    unknown = runner.invoke(app, ["--url", url, "open", "00000000-0000-4000-8000-000000000000"])
    assert unknown.exit_code == 1 and "no run, sweep or schedule has the id" in unknown.stderr
    offsite = runner.invoke(app, ["--url", url, "open", "//evil.example/"])
    assert offsite.exit_code == 2 and "$.path" in offsite.stderr

    seen = tmp_path / "opened.txt"
    fake = tmp_path / "browser.sh"
    fake.write_text(f'#!/bin/sh\nprintf "%s" "$1" > {seen}\n')
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("BROWSER", f"{fake} %s")
    import webbrowser

    monkeypatch.setattr(webbrowser, "_tryorder", None)  # read $BROWSER again, as a fresh process would
    opened = runner.invoke(app, ["--url", url, "open", "regions", "--browser"])
    assert opened.exit_code == 0, opened.output
    assert seen.read_text() == opened.stdout.strip() and "/sign-in/" in seen.read_text()
