"""`tcplab`: the command line (Typer + Rich) over `tcplab_client.Client`.

Ids and tables go to stdout, progress and messages to stderr. An expected failure (the server
refused the request, a file that does not parse, the server is down) is one red line with the
server's message — each path and reason for a 422 — and exit code 2 for bad input, 1 otherwise.
"""

from __future__ import annotations

import functools
import itertools
import json
import math
import os
import sys
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from tcplab_client.client import Client, rows_csv, rows_parquet
from tcplab_client.config import Config, load_config, normalize_url, save_config
from tcplab_client.errors import InvalidInput, NotFound, TcplabError
from tcplab_client.files import BadFile, load_mapping, parse_assignment, set_path

app = typer.Typer(
    name="tcplab",
    help="tcplab from the command line: runs, sweeps, results, models and presets.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_show_locals=False,  # a traceback must never print a token
)


def _console(*, stderr: bool = False) -> Console:
    """A Console on the current stdout/stderr (a test runner swaps them). Tables piped to a
    file or another program are not cut to 80 columns."""
    console = Console(stderr=stderr)
    if not console.is_terminal and not os.environ.get("COLUMNS"):
        console = Console(stderr=stderr, width=200)
    return console


def out() -> Console:
    return _console()


def err() -> Console:
    return _console(stderr=True)


EXIT_BAD_INPUT = 2
EXIT_FAILED = 1

F = TypeVar("F", bound=Callable[..., Any])


@dataclass
class State:
    url: str | None = None
    token: str | None = None

    def client(self) -> Client:
        return Client(base_url=self.url, token=self.token)


class Usage(TcplabError):
    """A command used wrongly in a way Typer cannot see (exit 2)."""


def fail(message: str, code: int) -> typer.Exit:
    err().print(f"[bold red]error:[/] [red]{escape(message)}[/]", soft_wrap=True)
    return typer.Exit(code)


def handled(command: F) -> F:
    """Expected errors become one red line and an exit code, never a traceback."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except InvalidInput as exc:
            lines = [str(e) for e in exc.errors] or [exc.message]
            if len(lines) == 1:
                raise fail(f"invalid input: {lines[0]}", EXIT_BAD_INPUT) from None
            err().print(f"[bold red]error:[/] [red]invalid input ({len(lines)} problems):[/]")
            for line in lines:
                err().print(f"  [red]{escape(line)}[/]", soft_wrap=True)
            raise typer.Exit(EXIT_BAD_INPUT) from None
        except (BadFile, Usage) as exc:
            raise fail(exc.message, EXIT_BAD_INPUT) from None
        except TcplabError as exc:
            raise fail(exc.message, EXIT_FAILED) from None
        except KeyboardInterrupt:
            err().print("[yellow]interrupted[/] (what was submitted goes on: `tcplab cancel ID` stops it)")
            raise typer.Exit(130) from None

    return wrapper  # type: ignore[return-value]


def state(ctx: typer.Context) -> State:
    return ctx.find_object(State) or State()


@app.callback()
def _global(
    ctx: typer.Context,
    url: Annotated[
        str | None,
        typer.Option("--url", help="The server (else TCPLAB_URL, else `tcplab login`'s, else http://127.0.0.1:8000)."),
    ] = None,
    token: Annotated[
        str | None, typer.Option("--token", help="The API token (else TCPLAB_TOKEN, else `tcplab login`'s).")
    ] = None,
) -> None:
    ctx.obj = State(url=url, token=token)


# ---- formatting ---------------------------------------------------------------------------------


def fmt(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if not math.isfinite(value):
            return str(value)
        if value == 0 or 1e-3 <= abs(value) < 1e6:
            return f"{value:.4g}" if abs(value) < 1 else f"{value:,.4g}".replace(",", "")
        return f"{value:.3e}"
    if isinstance(value, list | dict):
        return json.dumps(value)
    return str(value)


def table(columns: list[str], rows: list[list[Any]], *, title: str | None = None) -> Table:
    t = Table(title=title, show_lines=False, header_style="bold")
    for column in columns:
        t.add_column(column, overflow="fold")
    for row in rows:
        t.add_row(*(escape(fmt(v)) for v in row))
    return t


FLOW_COLUMNS = (
    ("flow", "name"),
    ("variant", "variant"),
    ("pkts/RTT", "throughput_pkts_per_rtt"),
    ("goodput Mb/s", "goodput_bps"),
    ("loss rate", "loss_rate"),
    ("loss event rate", "loss_event_rate"),
    ("drops/event", "drops_per_loss_event"),
    ("timeouts", "timeouts"),
    ("mean RTT s", "mean_rtt_s"),
)


def flows_table(result: dict[str, Any]) -> Table:
    rows = []
    for f in result["flows"]:
        row = []
        for _, key in FLOW_COLUMNS:
            v = f.get(key)
            row.append(v / 1e6 if key == "goodput_bps" and isinstance(v, int | float) else v)
        rows.append(row)
    return table([c for c, _ in FLOW_COLUMNS], rows, title=f"run {result.get('run_id', '')}")


def summary_table(body: dict[str, Any], *, title: str | None = None) -> Table:
    axes = [a["path"] for a in body.get("axes", [])]
    columns = ["point", *axes, "flow", "metric", "n", "mean", "95 % CI"]
    rows = []
    for r in body["rows"]:
        ci = f"[{fmt(r['ci_low'])}, {fmt(r['ci_high'])}]" if r.get("ci_low") is not None else None
        rows.append([r["point"], *(r.get(a) for a in axes), r["flow"], r["metric"], r["count"], r["mean"], ci])
    return table(columns, rows, title=title)


def emit(data: str | bytes, output: Path | None, *, what: str) -> None:
    """Text or bytes to `output`, or to stdout (binary refused on a terminal)."""
    if output is not None:
        if isinstance(data, str):
            output.write_text(data)
        else:
            output.write_bytes(data)
        err().print(f"wrote {escape(what)} to {escape(str(output))}")
        return
    if isinstance(data, bytes):
        if sys.stdout.isatty():
            raise Usage("Parquet is binary: give --output FILE (or redirect stdout)")
        sys.stdout.flush()
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
        return
    sys.stdout.write(data if data.endswith("\n") else data + "\n")


def print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2) + "\n")


# ---- login --------------------------------------------------------------------------------------


@app.command()
@handled
def login(
    ctx: typer.Context,
    url: Annotated[str | None, typer.Option("--url", help="The server to use from now on.")] = None,
    token: Annotated[
        str | None, typer.Option("--token", help="Its API token (prompted for on a terminal when absent).")
    ] = None,
    check: Annotated[bool, typer.Option("--check/--no-check", help="Check /healthz before saving.")] = True,
) -> None:
    """Store the server's URL and token (config file, mode 0600) once both are checked."""
    import os

    s = state(ctx)
    existing = load_config()
    url = normalize_url(url or s.url or os.environ.get("TCPLAB_URL") or existing.url or "http://127.0.0.1:8000")
    token = token or s.token
    if token is None and sys.stdin.isatty():
        token = typer.prompt("token (empty for none)", default="", hide_input=True, show_default=False) or None
    who = None
    if check:
        with Client(base_url=url, token=token) as lab:
            health = lab.health()
            err().print(
                f"{escape(url)}: tcplab {escape(str(health.get('version')))} (core {escape(str(health.get('core_version')))})"
            )
            if token:
                who = lab.me()
    path = save_config(Config(url=url, token=token))
    as_whom = f" as {escape(str(who['name']))}" if who else (" with a token" if token else " (no token)")
    err().print(f"logged in to {escape(url)}{as_whom}; saved in {escape(str(path))}")


# ---- runs ---------------------------------------------------------------------------------------


def _submission(file: str | None, preset: str | None, sets: list[str]) -> dict[str, Any]:
    """The body of POST /v1/runs from a file (a scenario, or `{preset, overrides}` /
    `{scenario}`), --preset and --set."""
    body: dict[str, Any] = {}
    if file is not None:
        data = load_mapping(file)
        if "scenario" in data or "preset" in data:
            body = dict(data)
        else:
            body = {"scenario": data}
    if preset is not None:
        if "scenario" in body:
            raise Usage("give a scenario file or --preset, not both")
        body["preset"] = preset
    if not body:
        raise Usage("give a scenario file (YAML or JSON, - for stdin) or --preset NAME")
    for assignment in sets:
        path, value = parse_assignment(assignment)
        if "preset" in body:
            body["overrides"] = {**(body.get("overrides") or {}), path: value}
        else:
            set_path(body["scenario"], path, value)
    return body


@app.command()
@handled
def run(
    ctx: typer.Context,
    file: Annotated[
        str | None, typer.Argument(help="A scenario (or {preset, overrides}) as YAML or JSON; - for stdin.")
    ] = None,
    preset: Annotated[str | None, typer.Option("--preset", help="Run this preset (tcplab presets).")] = None,
    sets: Annotated[
        list[str] | None,
        typer.Option("--set", help="path=value: a preset override, or a change to the scenario (repeatable)."),
    ] = None,
    wait: Annotated[bool, typer.Option("--wait", help="Wait for the run, then print its flows.")] = False,
    timeout: Annotated[float | None, typer.Option("--timeout", help="Give up waiting after this many seconds.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the run (and result) as JSON.")] = False,
) -> None:
    """Submit a run; print its id (with --wait: a spinner, then a table of its flows)."""
    body = _submission(file, preset, sets or [])
    with state(ctx).client() as lab:
        submitted = lab.submit_run(body.get("scenario"), preset=body.get("preset"), overrides=body.get("overrides"))
        run_id = submitted["id"]
        how = "answered from a stored identical run" if submitted.get("cached") else submitted["status"]
        if not as_json:
            out().print(run_id, highlight=False)
            err().print(f"run {run_id}: {how}")
        if not wait:
            if as_json:
                print_json(submitted)
            return
        final = lab.wait_run(run_id, progress=not as_json, timeout=timeout)
        if final["status"] != "succeeded":
            raise TcplabError(f"run {run_id} {final['status']}" + (f": {final['error']}" if final.get("error") else ""))
        result = lab.result(run_id)
    if as_json:
        print_json({"run": final, "result": result})
        return
    out().print(flows_table(result))


@app.command()
@handled
def runs(
    ctx: typer.Context,
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, max=500)] = 20,
    status: Annotated[
        str | None, typer.Option("--status", help="queued, running, succeeded, failed or cancelled")
    ] = None,
    preset: Annotated[str | None, typer.Option("--preset")] = None,
    name: Annotated[str | None, typer.Option("--name", help="A substring of the name, any case.")] = None,
    tag: Annotated[list[str] | None, typer.Option("--tag", help="Has this tag (repeat: all of them).")] = None,
    param: Annotated[
        list[str] | None, typer.Option("--param", help="PATH=VALUE, e.g. flows[0].variant=cubic (repeat: all).")
    ] = None,
    archived: Annotated[str, typer.Option("--archived", help="false, true (only them) or all.")] = "false",
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Recent runs, newest first; found by name, tags, parameters (docs/experiments.md)."""
    with state(ctx).client() as lab:
        items = lab.find_runs(
            limit=limit,
            status=status,
            preset=preset,
            name=name,
            tags=tag or (),
            params=param,
            archived=_archived(archived),
        )
    if as_json:
        print_json(items)
        return
    rows = [
        [
            r["id"],
            r["status"],
            r.get("preset"),
            ", ".join(r.get("variants") or []),
            r["created_at"][:19],
            r.get("core_wall_s"),
            r.get("error"),
            " ".join(r.get("tags") or []),
        ]
        for r in items
    ]
    columns = ["id", "status", "preset", "variants", "created (UTC)", "core s", "error", "tags"]
    out().print(table(columns, rows, title="runs"))


def _archived(value: str) -> bool | str:
    """--archived false | true | all, as the SDK takes it."""
    if value not in ("false", "true", "all"):
        raise Usage(f"--archived is false, true or all, not {value!r}")
    return value if value == "all" else value == "true"


# ---- sweeps -------------------------------------------------------------------------------------


def _created(sweep: dict[str, Any]) -> str:
    c = sweep.get("created") or {}
    text = f"{sweep['points']} points × {sweep['replications']} replications"
    if c:
        text += f": {c['runs']} runs ({c['cached']} from stored results, {c['enqueued']} enqueued)"
    return text


@app.command()
@handled
def sweep(
    ctx: typer.Context,
    file: Annotated[str, typer.Argument(help="The sweep (docs/sweeps.md) as YAML or JSON; - for stdin.")],
    wait: Annotated[
        bool, typer.Option("--wait", help="Follow it with a progress bar, then print its summary.")
    ] = False,
    timeout: Annotated[float | None, typer.Option("--timeout", help="Give up waiting after this many seconds.")] = None,
    metric: Annotated[
        str, typer.Option("--metric", help="The metric of the summary printed after --wait.")
    ] = "throughput_pkts_per_rtt",
    as_json: Annotated[bool, typer.Option("--json", help="Print the sweep (and summary) as JSON.")] = False,
) -> None:
    """Submit a sweep; print its id (with --wait: a live progress bar, then its summary)."""
    spec = load_mapping(file)
    with state(ctx).client() as lab:
        created = lab.submit_sweep(spec)
        sweep_id = created["id"]
        if not as_json:
            out().print(sweep_id, highlight=False)
            err().print(f"sweep {sweep_id}: {_created(created)}")
        if not wait:
            if as_json:
                print_json(created)
            return
        final = lab.wait_sweep(sweep_id, progress=not as_json, timeout=timeout)
        summary = lab.sweep_summary(sweep_id, metric=metric)
    if as_json:
        print_json({"sweep": final, "summary": summary})
        return
    p = final["progress"]
    err().print(
        f"sweep {sweep_id} {final['status']}: {p['succeeded']} succeeded, {p['failed']} failed, {p['cancelled']} cancelled"
    )
    out().print(summary_table(summary, title=f"sweep {sweep_id}: {metric}"))
    if p["failed"]:
        raise TcplabError(f"{p['failed']} runs of sweep {sweep_id} failed (tcplab results {sweep_id} --format json)")


@app.command()
@handled
def sweeps(
    ctx: typer.Context,
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, max=500)] = 20,
    preset: Annotated[str | None, typer.Option("--preset")] = None,
    name: Annotated[str | None, typer.Option("--name", help="A substring of the name, any case.")] = None,
    tag: Annotated[list[str] | None, typer.Option("--tag", help="Has this tag (repeat: all of them).")] = None,
    param: Annotated[
        list[str] | None, typer.Option("--param", help="PATH=VALUE one of its points has (repeat: all).")
    ] = None,
    archived: Annotated[str, typer.Option("--archived", help="false, true (only them) or all.")] = "false",
    status: Annotated[str | None, typer.Option("--status", help="queued, running, done or cancelled")] = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Recent sweeps with their progress, newest first; found by status, name, tags, parameters."""
    with state(ctx).client() as lab:
        items = lab.find_sweeps(
            limit=limit,
            preset=preset,
            status=status,
            name=name,
            tags=tag or (),
            params=param,
            archived=_archived(archived),
        )
    if as_json:
        print_json(items)
        return
    rows = []
    for s in items:
        p = s["progress"]
        done = p["succeeded"] + p["failed"] + p["cancelled"]
        axes = ", ".join(a["path"] for a in s["axes"])
        rows.append(
            [
                s["id"],
                s.get("name"),
                s.get("preset"),
                s["status"],
                axes,
                s["points"],
                f"{done}/{p['total']}",
                p["failed"],
                s["created_at"][:19],
                " ".join(s.get("tags") or []),
            ]
        )
    columns = ["id", "name", "preset", "status", "axes", "points", "runs done", "failed", "created (UTC)", "tags"]
    out().print(table(columns, rows, title="sweeps"))


# ---- results ------------------------------------------------------------------------------------


class Format(StrEnum):
    table = "table"
    json = "json"
    csv = "csv"
    parquet = "parquet"


def _check_id(identifier: str) -> str:
    try:
        return str(uuid.UUID(identifier))
    except ValueError:
        raise Usage(f"{identifier!r} is not a run or sweep id (a UUID)") from None


@app.command()
@handled
def results(
    ctx: typer.Context,
    identifier: Annotated[str, typer.Argument(metavar="ID", help="A run id or a sweep id.")],
    format: Annotated[Format, typer.Option("--format", "-f", help="table, json, csv or parquet.")] = Format.table,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write to this file instead of stdout.")] = None,
    metric: Annotated[
        list[str] | None, typer.Option("--metric", help="Sweeps: only these metrics (repeatable).")
    ] = None,
    flow: Annotated[str | None, typer.Option("--flow", help="Sweeps: only this flow group.")] = None,
) -> None:
    """A run's flows, or a sweep's summary (per point, flow group and metric, with 95 % CIs)."""
    identifier = _check_id(identifier)
    with state(ctx).client() as lab:
        try:
            result = lab.result(identifier)
        except NotFound:
            result = None
        if result is not None:
            flows = result["flows"]
            if format == Format.table:
                out().print(flows_table(result))
            elif format == Format.json:
                emit(json.dumps(result, indent=2), output, what=f"run {identifier}")
            elif format == Format.csv:
                emit(rows_csv(flows), output, what=f"{len(flows)} flows")
            else:
                emit(rows_parquet(flows), output, what=f"{len(flows)} flows")
            return
        try:
            lab.sweep(identifier)
        except NotFound:
            raise NotFound(f"no run or sweep has the id {identifier}") from None
        if format == Format.table:
            body = lab.sweep_summary(identifier, metric=metric or "throughput_pkts_per_rtt", flow=flow)
            out().print(summary_table(body, title=f"sweep {identifier}"))
        elif format == Format.json:
            body = lab.sweep_summary(identifier, metric=metric, flow=flow)
            emit(json.dumps(body, indent=2), output, what=f"{len(body['rows'])} summary rows")
        else:
            data = lab.sweep_summary(identifier, metric=metric, flow=flow, format=format.value)  # type: ignore[arg-type]
            emit(data, output, what=f"sweep {identifier} summary")


@app.command()
@handled
def cancel(
    ctx: typer.Context,
    identifier: Annotated[str, typer.Argument(metavar="ID", help="A run id or a sweep id.")],
) -> None:
    """Cancel a run, or every queued and running run of a sweep."""
    identifier = _check_id(identifier)
    with state(ctx).client() as lab:
        try:
            r = lab.cancel_run(identifier)
            err().print(f"run {identifier}: {r['status']}")
            return
        except NotFound:
            pass
        try:
            s = lab.cancel_sweep(identifier)
        except NotFound:
            raise NotFound(f"no run or sweep has the id {identifier}") from None
        p = s["progress"]
        err().print(f"sweep {identifier}: {s['status']} ({p['cancelled']} runs cancelled, {p['succeeded']} succeeded)")


# ---- models -------------------------------------------------------------------------------------


def _param_name(option: str, params: list[dict[str, Any]]) -> str:
    """`--rtt` → rtt_s, `--R` → rtt_s, `--mss` → mss_bytes, `--m-star` → m_star."""
    key = option.lstrip("-").replace("-", "_")
    names = [p["name"] for p in params]
    for candidate in (key, key.lower(), f"{key.lower()}_s", f"{key.lower()}_bytes"):
        if candidate in names:
            return candidate
    for p in params:
        symbol = p["symbol"].replace("*", "_star").replace("-", "_")
        if key == symbol or key.lower() == symbol.lower():
            return p["name"]
    prefixed = [n for n in names if n.startswith(key.lower())]
    if len(prefixed) == 1:
        return prefixed[0]
    known = ", ".join(f"--{p['name']}" for p in params)
    raise Usage(f"the model has no parameter {option}; its parameters: {known}")


def _number(option: str, text: str) -> float | list[float]:
    try:
        values = [float(x) for x in text.split(",")]
    except ValueError:
        raise Usage(f"{option} {text!r}: expected a number or numbers separated by commas") from None
    return values if "," in text else values[0]


def _model_params(extra: list[str], params: list[dict[str, Any]]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    i = 0
    while i < len(extra):
        option = extra[i]
        if not option.startswith("--"):
            raise Usage(f"unexpected {option!r}: give parameters as --name value")
        if "=" in option:
            option, text = option.split("=", 1)
            i += 1
        elif i + 1 < len(extra):
            text = extra[i + 1]
            i += 2
        else:
            raise Usage(f"{option} needs a value")
        values[_param_name(option, params)] = _number(option, text)
    return values


def _at(value: Any, index: tuple[int, ...]) -> Any:
    for i in index:
        if not isinstance(value, list):
            break
        value = value[i] if len(value) > 1 else value[0]
    return value


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
@handled
def model(
    ctx: typer.Context,
    name: Annotated[
        str, typer.Argument(help="newreno-sbs, newreno-impatient, pftk-full, pftk-approx, mathis (tcplab models).")
    ],
    mode: Annotated[
        str | None, typer.Option("--mode", help="broadcast (lists pair up) or grid (outer product).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the server's answer as JSON.")] = False,
) -> None:
    """Evaluate a closed-form model: tcplab model newreno-sbs --p 0.001 --m 4 --rtt 0.07.

    Each model parameter is an option (--p, --m, --rtt or --rtt_s, --rto, --m-star, --mss, --b);
    a comma-separated value is a list."""
    with state(ctx).client() as lab:
        info = lab.model_info(name)
        # A parameter the model ignores (--rto on newreno-sbs) is sent: the server names it in a warning.
        params = _model_params(list(ctx.args), info["parameters"] + info.get("ignored_parameters", []))
        answer = lab.model(name, mode=mode, **params)
    if as_json:
        print_json(answer)
        return
    units = {p["name"]: p["unit"] for p in info["parameters"]} | {o["name"]: o["unit"] for o in info["outputs"]}
    shape = answer["shape"]
    if not shape:
        rows = [["input", k, v, units.get(k)] for k, v in answer["inputs"].items()]
        rows += [["output", k, v, units.get(k)] for k, v in answer["outputs"].items()]
        out().print(table(["", "name", "value", "unit"], rows, title=f"{name}"))
    else:
        inputs = answer["inputs"]
        varying = [k for k, v in inputs.items() if isinstance(v, list) and len(v) > 1]
        rows = []
        for index in itertools.product(*(range(n) for n in shape)):
            if answer["mode"] == "grid":
                picked = {axis: inputs[axis][index[k]] for k, axis in enumerate(answer["axes"])}
            else:
                picked = {k: _at(inputs[k], index) for k in varying}
            rows.append([picked.get(k) for k in varying] + [_at(v, index) for v in answer["outputs"].values()])
        fixed = ", ".join(
            f"{k} = {fmt(v if not isinstance(v, list) else v[0])}" for k, v in inputs.items() if k not in varying
        )
        out().print(table([*varying, *answer["outputs"]], rows, title=f"{name} ({fixed})"))
    for w in answer.get("warnings") or []:
        err().print(f"[yellow]warning:[/] {escape(w['parameter'])}: {escape(w['reason'])} ({w['points']} points)")


@app.command()
@handled
def models(ctx: typer.Context, as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """The closed-form models and their parameters."""
    with state(ctx).client() as lab:
        items = lab.models()
    if as_json:
        print_json(items)
        return
    rows = []
    for m in items:
        params = ", ".join(p["name"] + ("" if p["required"] and p["default"] is None else "?") for p in m["parameters"])
        rows.append([m["name"], m["title"], params])
    out().print(table(["model", "title", "parameters (? optional)"], rows, title="models"))


# ---- presets ------------------------------------------------------------------------------------


@app.command()
@handled
def presets(
    ctx: typer.Context,
    name: Annotated[str | None, typer.Argument(help="One preset: its parameters, the paper's findings.")] = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """The papers' experiments as ready scenarios (tcplab run --preset NAME)."""
    with state(ctx).client() as lab:
        data = lab.preset(name) if name else lab.presets()
    if as_json:
        print_json(data)
        return
    if name is None:
        rows = [[p["name"], p["title"], p["reference"]["where"], "yes" if p.get("published") else "no"] for p in data]
        out().print(table(["preset", "title", "where in the paper", "published numbers"], rows, title="presets"))
        return
    out().print(f"[bold]{escape(data['name'])}[/]: {escape(data['title'])}")
    out().print(f"{escape(data['reference']['citation'])}, {escape(data['reference']['where'])}", style="dim")
    out().print(escape(data["description"]))
    rows = [
        [q["name"], q.get("default"), q.get("unit"), q.get("paper_range"), q["meaning"]] for q in data["parameters"]
    ]
    out().print(
        table(["parameter", "default", "unit", "paper's range", "meaning"], rows, title="parameters (--set name=value)")
    )
    published = data.get("published")
    if published:
        out().print("[bold]the paper found[/]")
        for finding in published.get("findings", []):
            out().print(f" • {escape(finding)}")


# Command groups of their own modules (they import the helpers above).
from tcplab_client import cli_users  # noqa: E402

cli_users.register(app)
from tcplab_client import cli_schedules  # noqa: E402

app.add_typer(cli_schedules.schedules_app, name="schedules")
from tcplab_client import cli_traces  # noqa: E402

app.add_typer(cli_traces.traces_app, name="traces")
from tcplab_client import cli_compare, cli_experiments, cli_open, cli_papers, cli_tables  # noqa: E402

cli_papers.register(app)
cli_open.register(app)
app.add_typer(cli_compare.compare_app, name="compare")
cli_experiments.register(app, cli_compare.compare_app)
cli_tables.register(app)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
