"""`tcplab schedules …`: sweeps fired on a cron line (UTC) — list, show, create from a file,
enable, disable, fire now, the history across firings with its shift flags, delete."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from tcplab_client.cli import Format, Usage, emit, err, fmt, handled, out, print_json, state, table
from tcplab_client.errors import TcplabError
from tcplab_client.files import load_mapping

schedules_app = typer.Typer(
    help="Sweeps fired on a cron line (UTC), and their history across firings.", no_args_is_help=True
)

Json = Annotated[bool, typer.Option("--json", help="Print the server's answer as JSON.")]
ScheduleId = Annotated[str, typer.Argument(metavar="ID", help="A schedule id.")]


def _check_id(identifier: str) -> str:
    try:
        return str(uuid.UUID(identifier))
    except ValueError:
        raise Usage(f"{identifier!r} is not a schedule id (a UUID)") from None


def _when(value: str | None) -> str | None:
    return value[:19].replace("T", " ") if value else None


def _summary(s: dict[str, Any]) -> str:
    state_text = "enabled" if s["enabled"] else "disabled"
    nxt = f", next firing {_when(s['next_fire_at'])} UTC" if s.get("next_fire_at") else ""
    return f"schedule {s['id']} ({s['name']}): {state_text}, cron '{s['cron']}' (UTC){nxt}"


@schedules_app.command("list")
@handled
def schedules_list(
    ctx: typer.Context,
    mine: Annotated[bool, typer.Option("--mine", help="Only your own.")] = False,
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, max=500)] = 50,
    as_json: Json = False,
) -> None:
    """The schedules you see (yours and the lab's shared ones), newest first."""
    with state(ctx).client() as lab:
        items = lab.schedules(limit=limit, mine=mine)
    if as_json:
        print_json(items)
        return
    rows = [
        [
            s["id"],
            s["name"],
            s["cron"],
            "yes" if s["enabled"] else "no",
            _when(s.get("next_fire_at")),
            s["firings"],
            s.get("owner"),
            s.get("last_error"),
        ]
        for s in items
    ]
    columns = ["id", "name", "cron (UTC)", "enabled", "next firing (UTC)", "firings", "owner", "last error"]
    out().print(table(columns, rows, title="schedules"))


@schedules_app.command("show")
@handled
def schedules_show(ctx: typer.Context, identifier: ScheduleId, as_json: Json = False) -> None:
    """One schedule: its cron line, template, next and last firing, and its latest sweeps."""
    identifier = _check_id(identifier)
    with state(ctx).client() as lab:
        s = lab.schedule(identifier)
        firings = lab.schedule_sweeps(identifier, limit=10)
    if as_json:
        print_json({"schedule": s, "sweeps": firings})
        return
    out().print(
        f"[bold]{escape(s['name'])}[/] {s['id']}" + (f" (built-in {escape(s['builtin'])})" if s.get("builtin") else "")
    )
    out().print(
        f"cron '{escape(s['cron'])}' (UTC), {'enabled' if s['enabled'] else 'disabled'}, "
        f"owner {escape(str(s.get('owner')))}, {'shared' if s['shared'] else 'private'}; {s['firings']} firings"
    )
    out().print(
        f"next firing {fmt(_when(s.get('next_fire_at')))} · last fired {fmt(_when(s.get('last_fired_at')))} (UTC)"
    )
    if s.get("last_error"):
        out().print(f"[red]last error: {escape(s['last_error'])}[/]")
    out().print("template:", style="dim")
    out().print(escape(json.dumps(s["template"], indent=2)), highlight=False)
    rows = []
    for w in firings:
        p = w["progress"]
        rows.append([_when(w.get("fired_for")), w["id"], w["status"], f"{p['succeeded']}/{p['total']}", p["failed"]])
    out().print(table(["fired for (UTC)", "sweep", "status", "succeeded", "failed"], rows, title="latest firings"))


@schedules_app.command("create")
@handled
def schedules_create(
    ctx: typer.Context,
    file: Annotated[
        str, typer.Argument(help="{name, cron, template, enabled?, shared?} as YAML or JSON; - for stdin.")
    ],
    as_json: Json = False,
) -> None:
    """Create a schedule from a file; print its id."""
    spec = load_mapping(file)
    with state(ctx).client() as lab:
        made = lab.create_schedule(spec)
    if as_json:
        print_json(made)
        return
    out().print(made["id"], highlight=False)
    err().print(escape(_summary(made)))


def _set_enabled(ctx: typer.Context, identifier: str, enabled: bool) -> None:
    identifier = _check_id(identifier)
    with state(ctx).client() as lab:
        s = lab.enable_schedule(identifier, enabled)
    err().print(escape(_summary(s)))


@schedules_app.command("enable")
@handled
def schedules_enable(ctx: typer.Context, identifier: ScheduleId) -> None:
    """Enable it: it fires next at the cron's next time."""
    _set_enabled(ctx, identifier, True)


@schedules_app.command("disable")
@handled
def schedules_disable(ctx: typer.Context, identifier: ScheduleId) -> None:
    """Disable it (its history stays)."""
    _set_enabled(ctx, identifier, False)


@schedules_app.command("fire")
@handled
def schedules_fire(
    ctx: typer.Context,
    identifier: ScheduleId,
    wait: Annotated[bool, typer.Option("--wait", help="Follow the sweep with a progress bar.")] = False,
    timeout: Annotated[float | None, typer.Option("--timeout", help="Give up waiting after this many seconds.")] = None,
    as_json: Json = False,
) -> None:
    """Fire it now (enabled or not): print the id of the sweep it created."""
    identifier = _check_id(identifier)
    with state(ctx).client() as lab:
        sweep = lab.fire_schedule(identifier)
        if not as_json:
            out().print(sweep["id"], highlight=False)
            c = sweep.get("created") or {}
            err().print(f"sweep {sweep['id']}: {c.get('runs')} runs ({c.get('cached')} from stored results)")
        if wait:
            sweep = lab.wait_sweep(sweep["id"], progress=not as_json, timeout=timeout)
    if as_json:
        print_json(sweep)
    if wait and sweep["progress"]["failed"]:
        raise TcplabError(f"{sweep['progress']['failed']} runs of sweep {sweep['id']} failed")


SHIFT_TEXT = {"up": "▲ up", "down": "▼ down", None: ""}


def history_table(body: dict[str, Any], *, title: str) -> Any:
    axes = body.get("axes", [])
    columns = [
        "fired for (UTC)",
        *axes,
        "flow",
        "metric",
        "n",
        "mean",
        "95 % CI",
        "baseline",
        "baseline 95 % CI",
        "shift",
    ]
    rows = []
    for r in body["rows"]:
        ci = f"[{fmt(r['ci_low'])}, {fmt(r['ci_high'])}]" if r.get("ci_low") is not None else None
        base = (
            f"[{fmt(r['baseline_ci_low'])}, {fmt(r['baseline_ci_high'])}]"
            if r.get("baseline_ci_low") is not None
            else None
        )
        rows.append(
            [
                _when(r["fired_for"]),
                *(r.get(a) for a in axes),
                r["flow"],
                r["metric"],
                r["n"],
                r["mean"],
                ci,
                r.get("baseline_mean"),
                base,
                SHIFT_TEXT.get(r.get("shift"), r.get("shift")),
            ]
        )
    return table(columns, rows, title=title)


@schedules_app.command("history")
@handled
def schedules_history(
    ctx: typer.Context,
    identifier: ScheduleId,
    metric: Annotated[
        list[str] | None,
        typer.Option(
            "--metric", help="Metrics (repeatable; core_events_per_s and core_wall_s are the core's own speed)."
        ),
    ] = None,
    flow: Annotated[str | None, typer.Option("--flow", help='One flow group ("core" for the core\'s speed).')] = None,
    limit: Annotated[int | None, typer.Option("--limit", "-n", min=1, max=1000, help="The latest firings.")] = None,
    format: Annotated[Format, typer.Option("--format", "-f", help="table, json, csv or parquet.")] = Format.table,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write to this file instead of stdout.")] = None,
) -> None:
    """The history across firings: mean and 95 % CI, the baseline, ▲/▼ where one moved.

    One row per firing, point, flow group and metric; the baseline is the previous firings'
    values. The table shows one metric (throughput_pkts_per_rtt, or core_events_per_s for the
    built-in benchmark) unless --metric."""
    identifier = _check_id(identifier)
    with state(ctx).client() as lab:
        if format == Format.table:
            if not metric:
                metric = [
                    "core_events_per_s"
                    if lab.schedule(identifier).get("builtin") == "core-benchmark"
                    else "throughput_pkts_per_rtt"
                ]
            body = lab.schedule_history(identifier, metric=metric, flow=flow, limit=limit)
            out().print(history_table(body, title=f"schedule {identifier}: {', '.join(metric)}"))
            moved = sum(1 for r in body["rows"] if r.get("shift"))
            err().print(f"{len(body['rows'])} rows, {moved} moved beyond the previous firings")
        elif format == Format.json:
            body = lab.schedule_history(identifier, metric=metric, flow=flow, limit=limit)
            emit(json.dumps(body, indent=2), output, what=f"{len(body['rows'])} history rows")
        else:
            data = lab.schedule_history(identifier, metric=metric, flow=flow, limit=limit, format=format.value)  # type: ignore[arg-type]
            emit(data, output, what=f"schedule {identifier} history")


@schedules_app.command("delete")
@handled
def schedules_delete(ctx: typer.Context, identifier: ScheduleId) -> None:
    """Delete it (owner or admin); the sweeps it fired stay."""
    identifier = _check_id(identifier)
    with state(ctx).client() as lab:
        lab.delete_schedule(identifier)
    err().print(f"schedule {identifier} deleted (its sweeps stay)")
