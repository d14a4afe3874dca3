"""Experiment management from the command line (docs/experiments.md): `tcplab tag`, `note`,
`archive`, `delete` on a run or a sweep (found by its id), and `compare sweeps`. The search
options of `tcplab runs` and `tcplab sweeps` (`--tag`, `--name`, `--preset`, `--param`,
`--archived`) are in cli.py, beside those commands."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any, Literal

import typer
from rich.markup import escape

from tcplab_client.cli import Format, Usage, _check_id, emit, err, handled, out, print_json, state, table
from tcplab_client.client import Client
from tcplab_client.errors import NotFound

Kind = Literal["run", "sweep"]
Ids = Annotated[list[str], typer.Argument(metavar="ID...", help="Run or sweep ids.")]
Json = Annotated[bool, typer.Option("--json", help="Print the server's answer as JSON.")]


def _kind(lab: Client, identifier: str) -> tuple[Kind, dict[str, Any]]:
    """Whether the id is a run's or a sweep's, and that object (NotFound when neither)."""
    try:
        return "run", lab.run(identifier)
    except NotFound:
        pass
    try:
        return "sweep", lab.sweep(identifier)
    except NotFound:
        raise NotFound(f"no run or sweep has the id {identifier} (or it is another user's private one)") from None


def _update(lab: Client, kind: Kind, identifier: str, **changes: Any) -> dict[str, Any]:
    return lab.update_run(identifier, **changes) if kind == "run" else lab.update_sweep(identifier, **changes)


def tag(
    ctx: typer.Context,
    identifier: Annotated[str, typer.Argument(metavar="ID", help="A run id or a sweep id.")],
    tags: Annotated[list[str] | None, typer.Argument(metavar="[TAG]...", help="Tags to add.")] = None,
    remove: Annotated[list[str] | None, typer.Option("--remove", "-r", help="A tag to remove (repeatable).")] = None,
    replace: Annotated[
        bool, typer.Option("--replace", help="The TAGs replace all its tags (none: clear them).")
    ] = False,
    as_json: Json = False,
) -> None:
    """Add (or --remove) tags on a run or sweep; without any, print its tags. A tag is a
    letter or digit, then letters, digits and _ . : = / + - (64 at most; 32 tags each)."""
    identifier = _check_id(identifier)
    with state(ctx).client() as lab:
        kind, current = _kind(lab, identifier)
        if replace:
            current = _update(lab, kind, identifier, tags=list(tags or []), remove_tags=list(remove or []))
        elif tags or remove:
            current = _update(lab, kind, identifier, add_tags=list(tags or []), remove_tags=list(remove or []))
    if as_json:
        print_json(current)
        return
    out().print(escape(" ".join(current.get("tags") or [])), highlight=False)


def note(
    ctx: typer.Context,
    identifier: Annotated[str, typer.Argument(metavar="ID", help="A run id or a sweep id.")],
    text: Annotated[str | None, typer.Argument(metavar="[TEXT]", help="The note; - reads it from stdin.")] = None,
    clear: Annotated[bool, typer.Option("--clear", help="Remove the note.")] = False,
    as_json: Json = False,
) -> None:
    """Set (or --clear) the note of a run or sweep; without TEXT, print it."""
    identifier = _check_id(identifier)
    if clear and text is not None:
        raise Usage("give TEXT or --clear, not both")
    if text == "-":
        text = sys.stdin.read()
    with state(ctx).client() as lab:
        kind, current = _kind(lab, identifier)
        if clear or text is not None:
            current = _update(lab, kind, identifier, note=None if clear else text)
    if as_json:
        print_json(current)
        return
    text = current.get("note")
    if text:  # as written, not as Rich would wrap or colour it
        sys.stdout.write(text if text.endswith("\n") else text + "\n")


def archive(
    ctx: typer.Context,
    identifiers: Ids,
    restore: Annotated[bool, typer.Option("--restore", help="Bring them back into the default lists.")] = False,
) -> None:
    """Archive runs or sweeps (with their runs): hidden from `tcplab runs`, `tcplab sweeps` and
    the dashboard's home until --restore; `--archived true` lists them. Only once nothing of
    them is queued or running (`tcplab cancel ID` first)."""
    ids = [_check_id(i) for i in identifiers]
    with state(ctx).client() as lab:
        for identifier in ids:
            kind, _ = _kind(lab, identifier)
            _update(lab, kind, identifier, archived=not restore)
            err().print(f"{kind} {identifier} {'restored' if restore else 'archived'}")


def delete(
    ctx: typer.Context,
    identifiers: Ids,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
    cancel: Annotated[
        bool, typer.Option("--cancel", help="Cancel what is still queued or running first (else it is refused).")
    ] = False,
) -> None:
    """Delete runs or sweeps for good: a sweep with its runs, and the results (with their
    traces) no other run shares. Asks first unless --yes."""
    ids = [_check_id(i) for i in identifiers]
    with state(ctx).client() as lab:
        found = [(_kind(lab, i), i) for i in ids]
        if not yes:
            listed = ", ".join(f"{kind} {i}" + (f" ({o['name']})" if o.get("name") else "") for (kind, o), i in found)
            if not typer.confirm(f"Delete {listed} and their results for good?", err=True):
                raise typer.Exit(1)
        for (kind, obj), identifier in found:
            if cancel and obj["status"] in ("queued", "running") and kind == "run":
                lab.cancel_run(identifier)
            elif cancel and obj["status"] in ("queued", "running"):
                lab.cancel_sweep(identifier)
            gone = lab.delete_run(identifier) if kind == "run" else lab.delete_sweep(identifier)
            err().print(f"deleted {kind} {identifier}: {gone['runs']} runs, {gone['results']} results")


def compare_sweeps(
    ctx: typer.Context,
    a: Annotated[str, typer.Argument(metavar="A", help="The first sweep's id.")],
    b: Annotated[str, typer.Argument(metavar="B", help="The second sweep's id.")],
    metric: Annotated[
        str,
        typer.Option(
            "--metric", help="A metric of the summaries: per flow, per link (p95_queue_delay_s …) or per run (jain)."
        ),
    ] = "throughput_pkts_per_rtt",
    flow: Annotated[str | None, typer.Option("--flow", help="Only this flow group.")] = None,
    format: Annotated[Format, typer.Option("--format", "-f", help="table, json, csv or parquet.")] = Format.table,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write to this file instead of stdout.")] = None,
) -> None:
    """Two sweeps side by side: their means and 95 % CIs of a metric, aligned on the axes
    they share and the flow group, with the difference (b − a) and ratio (b / a)."""
    a, b = _check_id(a), _check_id(b)
    with state(ctx).client() as lab:
        if format in (Format.csv, Format.parquet):
            data = lab.compare_sweeps(a, b, metric=metric, flow=flow, format=format.value)  # type: ignore[arg-type]
            emit(data, output, what=f"sweeps {a} and {b} side by side")
            return
        body = lab.compare_sweeps(a, b, metric=metric, flow=flow)
    if format == Format.json:
        emit(json.dumps(body, indent=2), output, what=f"{len(body['rows'])} rows")
        return
    columns = [*body["axes"], "flow", "a mean", "a ±", "b mean", "b ±", "b − a", "b / a"]
    rows = [
        [
            *(r.get(p) for p in body["axes"]),
            r["flow"],
            r["a_mean"],
            r["a_half_width"],
            r["b_mean"],
            r["b_half_width"],
            r["difference"],
            r["ratio"],
        ]
        for r in body["rows"]
    ]
    title = f"{metric}: a = {_name(body['a'])}, b = {_name(body['b'])}"
    out().print(table(columns, rows, title=title))
    for side in ("a", "b"):
        if body[f"only_{side}"]:
            err().print(f"axes of {side} only: {', '.join(body[f'only_{side}'])}")


def _name(sweep: dict[str, Any]) -> str:
    return sweep["name"] or sweep["id"][:8]


def register(app: typer.Typer, compare_app: typer.Typer) -> None:
    """Adds the commands to `tcplab`, and `sweeps` to `tcplab compare` (beside models, ratios, paper)."""
    for command in (tag, note, archive, delete):
        app.command()(handled(command))
    compare_app.command("sweeps")(handled(compare_sweeps))
