"""`tcplab open [WHAT] [--browser]`: a single-use sign-in link to a dashboard page, so a script
or notebook can open (or screenshot) it in a browser without a login cookie."""

from __future__ import annotations

import uuid
import webbrowser
from typing import Annotated

import typer
from rich.markup import escape

from tcplab_client.cli import err, handled, out, state
from tcplab_client.client import Client
from tcplab_client.errors import NotFound, TcplabError


def page_path(lab: Client, what: str | None) -> str:
    """The dashboard path WHAT names: a path as it is, a run or sweep id, else a page under
    /dashboard (`regions`, `papers/002`, `comparisons?sweep_id=…`)."""
    if not what or what == "dashboard":
        return "/dashboard"
    if what.startswith("/"):
        return what
    try:
        identifier = str(uuid.UUID(what))
    except ValueError:
        return "/dashboard/" + what
    for kind, fetch in (("sweeps", lab.sweep), ("runs", lab.run), ("schedules", lab.schedule)):
        try:
            fetch(identifier)
        except NotFound:
            continue
        return f"/dashboard/{kind}/{identifier}"
    raise NotFound(f"no run, sweep or schedule has the id {identifier}", status=404)


def open_page(
    ctx: typer.Context,
    what: Annotated[
        str | None,
        typer.Argument(
            help="A run, sweep or schedule id, a page (regions, papers/002) or a path; default the home page."
        ),
    ] = None,
    browser: Annotated[bool, typer.Option("--browser", help="Also open it in the default web browser.")] = False,
) -> None:
    """Print a sign-in link to a dashboard page: it signs a browser in as you, once, within a minute."""
    with state(ctx).client() as lab:
        link = lab.sign_in_link(page_path(lab, what))
    out().print(link["url"], highlight=False, soft_wrap=True)
    err().print(
        f"signs in as {escape(link['user'])} and opens {escape(link['path'])}: once, within {link['expires_in_s']} s"
    )
    if browser and not webbrowser.open(link["url"]):
        raise TcplabError("no web browser to open here: open the link above yourself")


def register(app: typer.Typer) -> None:
    app.command("open")(handled(open_page))
