"""Paper 000's model maps and the papers' reproductions from the command line:
`tcplab crossover`, `tcplab regions`, `tcplab reproductions [PAPER]`, `tcplab reproduce PAPER`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from tcplab_client.cli import Format, Usage, _number, emit, err, fmt, handled, out, print_json, state, table
from tcplab_client.errors import TcplabError
from tcplab_client.files import parse_assignment

Json = Annotated[bool, typer.Option("--json", help="Print the server's answer as JSON.")]
Timeout = Annotated[float | None, typer.Option("--timeout", help="Give up waiting after this many seconds.")]


def _values(option: str, text: str) -> Any:
    """`0.001`, `0.001,0.01` (a list) or `START:STOP:NUM[:log]` (a range the server expands)."""
    if ":" not in text:
        return _number(option, text)
    parts = text.split(":")
    scale = parts.pop() if parts[-1] in ("log", "linear") else "linear"
    try:
        start, stop, num = float(parts[0]), float(parts[1]), int(parts[2])
        if len(parts) != 3:
            raise ValueError
    except (ValueError, IndexError):
        raise Usage(f"{option} {text!r}: expected START:STOP:NUM or START:STOP:NUM:log") from None
    return {"start": start, "stop": stop, "num": num, "scale": scale}


def _warnings(answer: dict[str, Any]) -> None:
    for w in answer.get("warnings") or []:
        err().print(f"[yellow]warning:[/] {escape(w['parameter'])}: {escape(w['reason'])} ({w['points']} points)")


P = Annotated[str, typer.Option("--p", help="Loss event rate(s): 0.001, 0.001,0.01 or 1e-4:0.1:20:log.")]
Rtt = Annotated[float, typer.Option("--rtt", help="Mean round-trip time R [s].")]
Rto = Annotated[float, typer.Option("--rto", help="Mean duration of the first timeout [s].")]
MStar = Annotated[
    float | None, typer.Option("--m-star", help="Impatient's timeout threshold (default floor(RTO/R) + 2).")
]


def crossover(ctx: typer.Context, p: P, rtt: Rtt, rto: Rto, m_star: MStar = None, as_json: Json = False) -> None:
    """Paper 000: per p, the crossover m_t where Impatient overtakes Slow-but-Steady.

    tcplab crossover --p 0.0005,0.001,0.005 --rtt 0.07 --rto 0.35"""
    with state(ctx).client() as lab:
        answer = lab.crossover(p=_values("--p", p), rtt_s=rtt, rto_s=rto, m_star=m_star)
    if as_json:
        print_json(answer)
        return
    keys = ("p", "rtt_s", "rto_s", "m_star", "m_t", "m_t_int", "status", "w_sbs_at_m_t", "w_imp")
    columns = ["p", "R s", "RTO s", "m*", "m_t", "IMP from m", "status", "W_SBS at m_t", "W_IMP"]
    rows = [list(row) for row in zip(*(answer[k] for k in keys), strict=True)]
    out().print(table(columns, rows, title="crossover of Slow-but-Steady and Impatient (paper 000)"))
    _warnings(answer)


REGION_MARKS = {
    "equality": ("=", "dim"),
    "sbs_superior": ("S", "green"),
    "imp_superior": ("I", "magenta"),
    "outside_model": ("·", "red"),
}


def regions(
    ctx: typer.Context,
    p: P,
    m: Annotated[str, typer.Option("--m", help="Losses per loss event: 1,2,4,8 or 1:40:40.")],
    rtt: Rtt,
    rto: Rto,
    m_star: MStar = None,
    as_json: Json = False,
) -> None:
    """Paper 000 Fig. 4: which model is superior at each (p, m), as a map.

    tcplab regions --p 1e-4:0.1:12:log --m 1:30:30 --rtt 0.07 --rto 0.35"""
    with state(ctx).client() as lab:
        answer = lab.regions(p=_values("--p", p), m=_values("--m", m), rtt_s=rtt, rto_s=rto, m_star=m_star)
    if as_json:
        print_json(answer)
        return
    title = f"regions (paper 000 Fig. 4): R = {fmt(answer['rtt_s'])} s, RTO = {fmt(answer['rto_s'])} s, m* = {fmt(answer['m_star'])}"
    t = Table(title=title, header_style="bold")
    t.add_column("p", justify="right")
    for value in answer["m"]:
        t.add_column(escape(fmt(value)), justify="center")
    t.add_column("m_t", justify="right")
    t.add_column("W_IMP − 3", justify="right")
    for i, value in enumerate(answer["p"]):
        cells = []
        for label in answer["labels"][i]:
            mark, style = REGION_MARKS.get(label, ("?", ""))
            cells.append(f"[{style}]{mark}[/]" if style else mark)
        t.add_row(escape(fmt(value)), *cells, escape(fmt(answer["m_t"][i])), escape(fmt(answer["w_imp_minus_3"][i])))
    out().print(t)
    legend = [
        [REGION_MARKS.get(k, ("?", ""))[0], k, answer["counts"].get(k, 0), meaning]
        for k, meaning in answer["legend"].items()
    ]
    out().print(table(["mark", "region", "cells", "meaning"], legend, title="columns: m · rows: p"))
    _warnings(answer)


# ---- reproductions ------------------------------------------------------------------------------

VERDICT_MARKS = {"agree": "✓", "partly": "◐", "disagree": "✗", "no_data": "?", "not_run": "…"}
CONCLUSION_COLUMNS = (
    ("", "verdict"),
    ("id", "id"),
    ("experiment", "experiment"),
    ("conclusion", "conclusion"),
    ("verdict", "verdict"),
    ("ours", "ours"),
    ("reason", "reason"),
)


def _progress_text(r: dict[str, Any] | None) -> str | None:
    if not r or r.get("status") == "none":
        return None
    return f"{r['status']} ({r['runs_done']}/{r['runs']} runs, batch {r['batch']})"


def _conclusions(lab: Any, paper: str) -> dict[str, Any]:
    body = lab.reproduction(paper)
    rows = [[VERDICT_MARKS.get(r["verdict"], ""), *(r.get(k) for _, k in CONCLUSION_COLUMNS[1:])] for r in body["rows"]]
    out().print(table([c for c, _ in CONCLUSION_COLUMNS], rows, title=f"paper {body['paper']}: {body['title']}"))
    counts = ", ".join(f"{n} {v}" for v, n in body["verdicts"].items() if n)
    err().print(
        f"paper {body['paper']}: {counts or 'no conclusions'}; reproduction {_progress_text(body.get('reproduction')) or 'not started'}"
    )
    return body


def reproductions(
    ctx: typer.Context,
    paper: Annotated[str | None, typer.Argument(help="One paper (000, 002, …): its conclusions, judged.")] = None,
    table_key: Annotated[
        str | None, typer.Option("--table", help="One table of ours beside the paper's (its key).")
    ] = None,
    format: Annotated[Format, typer.Option("--format", "-f", help="table, json, csv or parquet.")] = Format.table,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write to this file instead of stdout.")] = None,
    wait: Annotated[bool, typer.Option("--wait", help="First wait for your newest reproduction to finish.")] = False,
    timeout: Timeout = None,
) -> None:
    """The papers that can be reproduced, or one paper's conclusions judged against your runs."""
    with state(ctx).client() as lab:
        if paper is None:
            if table_key is not None or wait:
                raise Usage("--table and --wait need a PAPER")
            items = lab.reproductions()
            if format != Format.table:
                if format != Format.json:
                    raise Usage("the list of papers is a table or JSON")
                emit(json.dumps(items, indent=2), output, what=f"{len(items)} papers")
                return
            rows = [
                [
                    i["paper"],
                    i["title"],
                    len(i["experiments"]),
                    sum(e["runs"] for e in i["experiments"]),
                    _progress_text(i.get("reproduction")) or "not started",
                ]
                for i in items
            ]
            out().print(
                table(["paper", "title", "experiments", "runs", "your reproduction"], rows, title="reproductions")
            )
            return
        if wait:
            lab.wait_reproduction(paper, timeout=timeout)
        if table_key is not None:
            if format == Format.table:
                body = lab.reproduction_table(paper, table_key)
                columns = [c["name"] for c in body["columns"]]
                rows = [[r.get(c) for c in columns] for r in body["rows"]]
                out().print(table(columns, rows, title=f"paper {body['paper']}: {body['title']}"))
            elif format == Format.json:
                emit(json.dumps(lab.reproduction_table(paper, table_key), indent=2), output, what=f"table {table_key}")
            else:
                data = lab.reproduction_table(paper, table_key, format=format.value)  # type: ignore[arg-type]
                emit(data, output, what=f"table {table_key}")
            return
        if format == Format.table:
            _conclusions(lab, paper)
        elif format == Format.json:
            body = lab.reproduction(paper)
            emit(json.dumps(body, indent=2), output, what=f"{len(body['rows'])} conclusions")
        else:
            emit(lab.reproduction(paper, format=format.value), output, what=f"paper {paper}'s conclusions")  # type: ignore[arg-type]


def reproduce(
    ctx: typer.Context,
    paper: Annotated[str, typer.Argument(help="The paper: 000, 002, 003 or 004 (tcplab reproductions).")],
    sets: Annotated[
        list[str] | None,
        typer.Option("--set", help="path=value: an override for every experiment's preset (repeatable)."),
    ] = None,
    experiments: Annotated[
        list[str] | None, typer.Option("--experiment", "-e", help="Only this experiment (repeatable; default all).")
    ] = None,
    shared: Annotated[bool, typer.Option("--shared", help="Share the sweeps with the lab.")] = False,
    wait: Annotated[
        bool, typer.Option("--wait", help="Follow it with a progress bar, then print the conclusions.")
    ] = False,
    timeout: Timeout = None,
    as_json: Json = False,
) -> None:
    """Reproduce a paper: one sweep per experiment; print their ids (--wait: progress, then the verdicts).

    tcplab reproduce 000 --set duration_s=100 --wait"""
    overrides = dict(parse_assignment(a) for a in sets or [])
    with state(ctx).client() as lab:
        started = lab.reproduce(paper, overrides=overrides or None, experiments=experiments, shared=shared)
        c = started["created"]
        if not as_json:
            for s in started["sweeps"]:
                out().print(s["sweep_id"], highlight=False)
            err().print(
                f"paper {started['paper']} reproduction {started['batch']}: {len(started['sweeps'])} sweeps, "
                f"{c['runs']} runs ({c['cached']} from stored results, {c['enqueued']} enqueued)"
            )
        if not wait:
            if as_json:
                print_json(started)
            return
        final = lab.wait_reproduction(started["paper"], progress=not as_json, timeout=timeout)
        if as_json:
            print_json({"started": started, "reproduction": final, "conclusions": lab.reproduction(started["paper"])})
            return
        _conclusions(lab, started["paper"])
    failed = sum(s["progress"]["failed"] for s in final.get("sweeps") or [])
    if failed:
        raise TcplabError(f"{failed} runs of the reproduction failed (tcplab sweeps shows its sweeps)")


def register(app: typer.Typer) -> None:
    for command in (crossover, regions, reproductions, reproduce):
        app.command(command.__name__)(handled(command))
