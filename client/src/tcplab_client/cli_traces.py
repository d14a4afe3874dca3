"""`tcplab traces …`: Mahimahi link traces stored on the server under a name — list, show,
upload a file, download one, delete (`docs/traces.md`). A scenario's link follows a stored
trace with `"trace": {"name": NAME}`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from tcplab_client.cli import Usage, err, fmt, handled, out, print_json, state, table

traces_app = typer.Typer(help="Link traces (Mahimahi) stored on the server by name.", no_args_is_help=True)

Json = Annotated[bool, typer.Option("--json", help="Print the server's answer as JSON.")]
TraceName = Annotated[str, typer.Argument(metavar="NAME", help="A trace's name.")]

_COLUMNS = ["name", "built in", "lines", "span (s)", "mean (Mb/s)", "sha256"]


def _row(t: dict) -> list[object]:
    return [t["name"], "yes" if t["builtin"] else "", t["lines"], t["span_ms"] / 1000, t["mean_mbps"], t["sha256"][:12]]


@traces_app.command("list")
@handled
def traces_list(ctx: typer.Context, as_json: Json = False) -> None:
    """The lab's built-in traces, then yours."""
    with state(ctx).client() as lab:
        items = lab.traces()
    if as_json:
        print_json(items)
        return
    out().print(table(_COLUMNS, [_row(t) for t in items], title="traces"))


@traces_app.command("show")
@handled
def traces_show(ctx: typer.Context, name: TraceName, as_json: Json = False) -> None:
    """One trace: its size, span, mean rate and content hash."""
    with state(ctx).client() as lab:
        t = lab.trace(name)
    if as_json:
        print_json(t)
        return
    kind = "built-in" if t["builtin"] else "yours"
    out().print(
        f"[bold]{escape(t['name'])}[/] ({kind}): {t['lines']} opportunities over {fmt(t['span_ms'] / 1000)} s, "
        f"mean {fmt(t['mean_mbps'])} Mb/s; sha256 {t['sha256']}"
    )


@traces_app.command("upload")
@handled
def traces_upload(
    ctx: typer.Context,
    name: TraceName,
    file: Annotated[Path, typer.Argument(help="A Mahimahi trace file: one millisecond per line.")],
    as_json: Json = False,
) -> None:
    """Store FILE as your trace NAME (replacing yours of that name)."""
    if not file.is_file():
        raise Usage(f"{file}: no such file")
    with state(ctx).client() as lab:
        t = lab.upload_trace(name, file)
    if as_json:
        print_json(t)
        return
    err().print(
        escape(f"trace {t['name']}: {t['lines']} opportunities, {t['mean_mbps']:.2f} Mb/s mean; sha256 {t['sha256']}")
    )


@traces_app.command("download")
@handled
def traces_download(
    ctx: typer.Context,
    name: TraceName,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write it here (default: stdout).")] = None,
) -> None:
    """A trace's text."""
    with state(ctx).client() as lab:
        text = lab.trace_content(name)
    if output is None:
        typer.echo(text, nl=False)
    else:
        output.write_text(text)
        err().print(escape(f"wrote {output}"))


@traces_app.command("delete")
@handled
def traces_delete(ctx: typer.Context, name: TraceName) -> None:
    """Delete your trace NAME (runs already stored keep its content's hash)."""
    with state(ctx).client() as lab:
        t = lab.delete_trace(name)
    err().print(escape(f"deleted trace {t['name']}"))
