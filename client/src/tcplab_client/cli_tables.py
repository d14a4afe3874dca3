"""`tcplab sweep table ID`: a sweep as one tidy table — a row per run × (flow group | link |
run), every metric, the axes under plain names — as CSV, Parquet or JSON.

`tcplab sweep` becomes a group for it, and `tcplab sweep FILE …` still submits a sweep as it
always has: an argument that is no subcommand's name goes to `submit` (the command `sweep`
was), so scripts written for it keep working."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import click
import typer
from typer.core import TyperGroup

from tcplab_client import cli
from tcplab_client.cli import emit, handled, print_json, state


class SweepGroup(TyperGroup):
    """`tcplab sweep FILE [options]` is `tcplab sweep submit FILE [options]`."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h"):
            args = ["submit", *args]
        return super().parse_args(ctx, args)


sweep_app = typer.Typer(
    cls=SweepGroup,
    no_args_is_help=True,
    help="Submit a sweep (`tcplab sweep FILE`, as `submit`), or read one as a tidy table (`tcplab sweep table ID`).",
)


class TableFormat(StrEnum):
    csv = "csv"
    parquet = "parquet"
    json = "json"


@sweep_app.command("table")
@handled
def table(
    ctx: typer.Context,
    identifier: Annotated[str, typer.Argument(metavar="ID", help="A sweep id.")],
    format: Annotated[
        TableFormat, typer.Option("--format", "-f", help="csv, parquet or json (with the axes' column names).")
    ] = TableFormat.csv,
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="Write it to this file (Parquet needs one unless stdout is redirected)."),
    ] = None,
) -> None:
    """A sweep as one tidy table (CSV, Parquet or JSON).

    A row per succeeded run × (flow group | shared link | the run): run_id, point,
    replication, seed, level, name, type, variant, app, the axes (plain names: loss_m for
    flows[*].loss.m) and every metric."""
    sweep_id = cli._check_id(identifier)
    with state(ctx).client() as lab:
        response = lab.request("GET", f"/v1/sweeps/{sweep_id}/table", params={"format": format.value})
    if format == TableFormat.json and output is None:
        print_json(response.json())
        return
    data: str | bytes = response.content if format == TableFormat.parquet else response.text
    emit(data, output, what=f"sweep {sweep_id} table")


def register(app: typer.Typer) -> None:
    """Moves the `sweep` command under the `sweep` group as `submit`, beside `table`."""
    command = next(c for c in app.registered_commands if c.callback is cli.sweep)
    app.registered_commands.remove(command)
    sweep_app.command("submit")(cli.sweep)
    app.add_typer(sweep_app, name="sweep")
