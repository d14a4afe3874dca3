"""`tcplab compare …`: model vs simulation, variant vs variant, a sweep vs the paper
(/v1/comparisons, docs/comparisons.md). The table shows the main columns; `--format json|csv|
parquet` gives every column, as the API does."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from tcplab_client.cli import Format, _check_id, emit, err, fmt, handled, out, state, table
from tcplab_client.client import Client
from tcplab_client.errors import NotFound

compare_app = typer.Typer(
    help="Model vs simulation, variant vs variant, a sweep vs the paper's numbers, two sweeps side by side.",
    no_args_is_help=True,
)

Id = Annotated[str, typer.Argument(metavar="ID", help="A sweep id (every point) or a run id.")]
FormatOpt = Annotated[Format, typer.Option("--format", "-f", help="table, json, csv or parquet.")]
Output = Annotated[Path | None, typer.Option("--output", "-o", help="Write to this file instead of stdout.")]


def _source(lab: Client, identifier: str, call: Callable[..., Any]) -> Any:
    """`call` for a sweep of that id, else a run; NotFound naming the id for neither."""
    identifier = _check_id(identifier)
    try:
        return call(sweep_id=identifier)
    except NotFound:
        pass
    try:
        return call(run_id=identifier)
    except NotFound:
        raise NotFound(f"no run or sweep has the id {identifier}", status=404) from None


def _interval(low: Any, high: Any) -> str | None:
    return None if low is None or high is None else f"[{fmt(low)}, {fmt(high)}]"


def _print(
    body: dict[str, Any],
    columns: list[tuple[str, Callable[[dict[str, Any]], Any]]],
    title: str,
    skip: str | None = None,
) -> None:
    """Rows as a table: the point, the axis values (but `skip`), then `columns` (heading, value of a row)."""
    axes = [a["path"] for a in body.get("axes") or [] if a["path"] != skip]
    heads = ["point", *axes, *(c for c, _ in columns)]
    rows = [
        [r.get("point", r.get("point_b")), *(r.get(a) for a in axes), *(get(r) for _, get in columns)]
        for r in body["rows"]
    ]
    out().print(table(heads, rows, title=title))


def _write(body_or_data: Any, format: Format, output: Path | None, what: str) -> None:
    if format == Format.json:
        emit(json.dumps(body_or_data, indent=2), output, what=what)
    else:
        emit(body_or_data, output, what=what)


def _wire(format: Format) -> str:
    return "json" if format == Format.table else format.value


@compare_app.command("models")
@handled
def compare_models(
    ctx: typer.Context,
    identifier: Id,
    models: Annotated[
        list[str] | None, typer.Option("--model", help="A model to compare with (repeatable; tcplab models).")
    ] = None,
    m_from: Annotated[
        str,
        typer.Option("--m-from", help="drops (measured drops per loss event) or ratio (loss rate / loss event rate)."),
    ] = "drops",
    format: FormatOpt = Format.table,
    output: Output = None,
) -> None:
    """Model vs simulation (paper 000's Table II): predictions from measured p, m, R, RTO.

    Each model's prediction beside the simulated throughput, with the error."""
    with state(ctx).client() as lab:
        body = _source(
            lab,
            identifier,
            lambda **source: lab.compare_models(**source, models=models, m_from=m_from, format=_wire(format)),
        )
    if format != Format.table:
        _write(body, format, output, what="the model comparison")
        return
    columns = [
        ("flow", lambda r: r.get("flow")),
        ("model", lambda r: r.get("model")),
        ("p", lambda r: r.get("p")),
        ("m", lambda r: r.get("m")),
        ("sim pkts/RTT", lambda r: r.get("sim_pkts_per_rtt")),
        ("95 % CI", lambda r: _interval(r.get("sim_ci_low"), r.get("sim_ci_high"))),
        ("model pkts/RTT", lambda r: r.get("model_pkts_per_rtt")),
        ("error %", lambda r: None if r.get("error") is None else 100 * r["error"]),
        ("note", lambda r: r.get("note")),
    ]
    _print(body, columns, title=f"models vs simulation ({body.get('m_from')})")


@compare_app.command("ratios")
@handled
def compare_ratios(
    ctx: typer.Context,
    identifier: Id,
    metric: Annotated[str, typer.Option("--metric", help="A per-flow metric.")] = "throughput_pkts_per_rtt",
    flow_a: Annotated[str | None, typer.Option("--flow-a", help="Flow group a (e.g. sbs), with --flow-b.")] = None,
    flow_b: Annotated[str | None, typer.Option("--flow-b", help="Flow group b (e.g. imp), against a.")] = None,
    axis: Annotated[str | None, typer.Option("--axis", help="An axis of the sweep (e.g. flows[*].variant).")] = None,
    baseline: Annotated[str | None, typer.Option("--baseline", help="With --axis: the value that is a.")] = None,
    other: Annotated[str | None, typer.Option("--other", help="With --axis: the value that is b.")] = None,
    flow: Annotated[str | None, typer.Option("--flow", help="With --axis: only this flow group.")] = None,
    along: Annotated[str | None, typer.Option("--along", help="The axis the regions walk along.")] = None,
    format: FormatOpt = Format.table,
    output: Output = None,
) -> None:
    """Variant vs variant, paired by replication: ratio b/a with its interval, the verdict.

    Two flow groups of the same runs (--flow-a sbs --flow-b imp) or two values of one axis
    (--axis 'flows[*].variant' --baseline newreno --other cubic)."""
    with state(ctx).client() as lab:
        body = _source(
            lab,
            identifier,
            lambda **source: lab.compare_ratios(
                **source,
                metric=metric,
                flow_a=flow_a,
                flow_b=flow_b,
                axis=axis,
                baseline=baseline,
                other=other,
                flow=flow,
                along=along,
                format=_wire(format),
            ),
        )
    if format != Format.table:
        _write(body, format, output, what="the ratio comparison")
        return
    a, b = body["compared"]["a"], body["compared"]["b"]
    name = (lambda side: side["flow"]) if "flow" in a else (lambda side: f"{side['axis']} = {side['value']}")
    columns = [
        *([("flow", lambda r: r.get("flow"))] if "flow" not in a else []),
        ("pairs", lambda r: r.get("pairs")),
        ("mean a", lambda r: r.get("mean_a")),
        ("mean b", lambda r: r.get("mean_b")),
        ("b / a", lambda r: r.get("ratio")),
        ("95 % CI", lambda r: _interval(r.get("ratio_ci_low"), r.get("ratio_ci_high"))),
        ("verdict", lambda r: r.get("verdict")),
        ("note", lambda r: r.get("note")),
    ]
    _print(body, columns, title=f"{metric}: b = {name(b)} against a = {name(a)}", skip=axis)
    along = body.get("regions_along")
    for region in body.get("regions") or []:
        fixed = ", ".join(f"{k} = {fmt(v)}" for k, v in (region.get("fixed") or {}).items())
        where = f"{along} {fmt(region['from'])} … {fmt(region['to'])}" if along else "the run"
        extra = f" ({fixed})" if fixed else ""
        err().print(
            f"region: {escape(where)}{escape(extra)}: {escape(str(region['verdict']))}, {region['points']} points",
            highlight=False,
        )


@compare_app.command("paper")
@handled
def compare_paper(
    ctx: typer.Context,
    identifier: Annotated[str, typer.Argument(metavar="SWEEP_ID", help="A sweep of a paper preset.")],
    format: FormatOpt = Format.table,
    output: Output = None,
) -> None:
    """A sweep of a paper preset beside the numbers the paper published.

    The table has the main columns (no intervals or notes); the summary goes to stderr."""
    identifier = _check_id(identifier)
    with state(ctx).client() as lab:
        body = lab.compare_paper(identifier, format=_wire(format))  # type: ignore[arg-type]
    if format != Format.table:
        _write(body, format, output, what="the comparison with the paper")
        return
    columns = [
        k
        for k in dict.fromkeys(k for r in body["rows"] for k, v in r.items() if not isinstance(v, dict | list))
        if not k.endswith(("_ci_low", "_ci_high", "note"))
    ]
    rows = [[r.get(c) for c in columns] for r in body["rows"]]
    title = (
        f"sweep {identifier[:8]} ({body.get('preset')}) beside the paper (intervals and notes: --format json or csv)"
    )
    out().print(table(columns, rows, title=title))
    for key, value in (body.get("summary") or {}).items():
        err().print(f"{escape(key)}: {escape(fmt(value))}", highlight=False, soft_wrap=True)
