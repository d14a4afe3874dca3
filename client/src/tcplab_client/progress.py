"""Progress while waiting, on stderr (stdout stays for ids and tables): a spinner for a run, a
progress bar with counts for a sweep or a reproduction. On a terminal they are Rich displays;
when stderr is not one (a log file, CI, a notebook's captured output) they are plain lines —
at most one every `PLAIN_INTERVAL_S` seconds and the final state — instead of a bar that only
shows at the end. Disabled, they do nothing."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)

Show = Callable[[dict[str, Any]], None]

PLAIN_INTERVAL_S = 5.0


def _short(identifier: str) -> str:
    return identifier[:8]


@contextlib.contextmanager
def plain_lines(
    console: Console,
    line: Callable[[dict[str, Any]], str],
    *,
    interval_s: float = PLAIN_INTERVAL_S,
    clock: Callable[[], float] = time.monotonic,
) -> Iterator[Show]:
    """`show(state)` prints `line(state)` when it differs from the last printed line and
    `interval_s` has passed since (the first at once); on leaving, the last state if it was
    not printed yet — so a log gets a line every few seconds and always the end."""
    printed: str | None = None
    pending: str | None = None
    last_at = -float("inf")

    def show(state: dict[str, Any]) -> None:
        nonlocal printed, pending, last_at
        text = line(state)
        if text == printed:
            pending = None
            return
        now = clock()
        if now - last_at >= interval_s:
            console.print(escape(text), highlight=False, soft_wrap=True)
            printed, pending, last_at = text, None, now
        else:
            pending = text

    try:
        yield show
    finally:
        if pending is not None:
            console.print(escape(pending), highlight=False, soft_wrap=True)


def _percent(done: int, total: int) -> str:
    return f"{100 * done / total:.0f} %" if total else "– %"


def run_line(run_id: str, run: dict[str, Any]) -> str:
    extra = f" on {run['worker']}" if run.get("worker") and run["status"] == "running" else ""
    return f"run {_short(run_id)}: {run['status']}{extra}"


def sweep_line(sweep_id: str, sweep: dict[str, Any]) -> str:
    """`sweep 3f2a1b2c: 120/400 runs done (30 %), 2 failed, 8 running, 270 queued · running`."""
    p = sweep["progress"]
    done = p["succeeded"] + p["failed"] + p["cancelled"]
    parts = [f"{done}/{p['total']} runs done ({_percent(done, p['total'])})", f"{p['failed']} failed"]
    if p["cancelled"]:
        parts.append(f"{p['cancelled']} cancelled")
    parts += [f"{p['running']} running", f"{p['queued']} queued"]
    return f"sweep {_short(sweep_id)}: {', '.join(parts)} · {sweep['status']}"


def reproduction_line(paper: str, state: dict[str, Any]) -> str:
    sweeps = state.get("sweeps") or []
    finished = sum(1 for s in sweeps if s["status"] in ("done", "cancelled"))
    failed = sum(s["progress"]["failed"] for s in sweeps)
    done, total = state["runs_done"], state["runs"]
    return (
        f"paper {paper} reproduction {state['batch']}: {done}/{total} runs done ({_percent(done, total)}), "
        f"{failed} failed, {finished}/{len(sweeps)} sweeps finished · {state['status']}"
    )


@contextlib.contextmanager
def _display(
    *,
    enabled: bool,
    console: Console | None,
    line: Callable[[dict[str, Any]], str],
    make: Callable[[Console], Progress],
    description: str,
    update: Callable[[Progress, TaskID, dict[str, Any]], None],
) -> Iterator[Show]:
    """Every display's one shape: nothing when disabled; `line`s (`plain_lines`) when stderr is
    not a terminal; else the Rich display `make` builds, one task updated by `update`."""
    if not enabled:
        yield lambda state: None
        return
    console = console or Console(stderr=True)
    if not console.is_terminal:
        with plain_lines(console, line) as show:
            yield show
        return
    progress = make(console)
    task = progress.add_task(description, total=None, counts="")
    with progress:
        yield lambda state: update(progress, task, state)


def _spinner(console: Console) -> Progress:
    return Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    )


def _bar(console: Console) -> Progress:
    return Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[counts]}"),
        TimeElapsedColumn(),
        console=console,
    )


def run_spinner(
    run_id: str, *, enabled: bool = True, console: Console | None = None
) -> contextlib.AbstractContextManager[Show]:
    def update(progress: Progress, task: TaskID, run: dict[str, Any]) -> None:
        progress.update(task, description=escape(run_line(run_id, run)))

    return _display(
        enabled=enabled,
        console=console,
        line=lambda run: run_line(run_id, run),
        make=_spinner,
        description=f"run {_short(run_id)} …",
        update=update,
    )


def sweep_bar(
    sweep_id: str, *, enabled: bool = True, console: Console | None = None
) -> contextlib.AbstractContextManager[Show]:
    def update(progress: Progress, task: TaskID, sweep: dict[str, Any]) -> None:
        p = sweep["progress"]
        finished = p["succeeded"] + p["failed"] + p["cancelled"]
        parts = [f"{p['running']} running", f"{p['queued']} queued"]
        if p["failed"]:
            parts.append(f"[red]{p['failed']} failed[/]")
        if p["cancelled"]:
            parts.append(f"{p['cancelled']} cancelled")
        progress.update(
            task,
            total=p["total"],
            completed=finished,
            description=f"sweep {_short(sweep_id)} [bold]{sweep['status']}[/]",
            counts=" · ".join(parts),
        )

    return _display(
        enabled=enabled,
        console=console,
        line=lambda sweep: sweep_line(sweep_id, sweep),
        make=_bar,
        description=f"sweep {_short(sweep_id)}",
        update=update,
    )


def reproduction_bar(
    paper: str, *, enabled: bool = True, console: Console | None = None
) -> contextlib.AbstractContextManager[Show]:
    """The runs of a reproduction's sweeps together, and how many sweeps are finished."""

    def update(progress: Progress, task: TaskID, state: dict[str, Any]) -> None:
        sweeps = state.get("sweeps") or []
        finished = sum(1 for s in sweeps if s["status"] in ("done", "cancelled"))
        failed = sum(s["progress"]["failed"] for s in sweeps)
        parts = [f"{finished}/{len(sweeps)} sweeps finished"]
        if failed:
            parts.append(f"[red]{failed} failed[/]")
        progress.update(
            task,
            total=state["runs"],
            completed=state["runs_done"],
            description=f"paper {paper} reproduction {state['batch']} [bold]{state['status']}[/]",
            counts=" · ".join(parts),
        )

    return _display(
        enabled=enabled,
        console=console,
        line=lambda state: reproduction_line(paper, state),
        make=_bar,
        description=f"paper {paper}",
        update=update,
    )
