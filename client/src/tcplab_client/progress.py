"""Rich displays while waiting, on stderr (stdout stays for ids and tables): a spinner for a
run, a progress bar with counts for a sweep. Disabled, they do nothing."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

Show = Callable[[dict[str, Any]], None]


def _short(identifier: str) -> str:
    return identifier[:8]


@contextlib.contextmanager
def run_spinner(run_id: str, *, enabled: bool = True, console: Console | None = None) -> Iterator[Show]:
    if not enabled:
        yield lambda run: None
        return
    progress = Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        TimeElapsedColumn(),
        console=console or Console(stderr=True),
        transient=True,
    )
    task = progress.add_task(f"run {_short(run_id)} …", total=None)

    def show(run: dict[str, Any]) -> None:
        extra = f" on {run['worker']}" if run.get("worker") and run["status"] == "running" else ""
        progress.update(task, description=f"run {_short(run_id)} [bold]{run['status']}[/]{extra}")

    with progress:
        yield show


@contextlib.contextmanager
def sweep_bar(sweep_id: str, *, enabled: bool = True, console: Console | None = None) -> Iterator[Show]:
    if not enabled:
        yield lambda sweep: None
        return
    progress = Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[counts]}"),
        TimeElapsedColumn(),
        console=console or Console(stderr=True),
    )
    task = progress.add_task(f"sweep {_short(sweep_id)}", total=None, counts="")

    def show(sweep: dict[str, Any]) -> None:
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

    with progress:
        yield show


@contextlib.contextmanager
def reproduction_bar(paper: str, *, enabled: bool = True, console: Console | None = None) -> Iterator[Show]:
    """The runs of a reproduction's sweeps together, and how many sweeps are finished."""
    if not enabled:
        yield lambda state: None
        return
    progress = Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[counts]}"),
        TimeElapsedColumn(),
        console=console or Console(stderr=True),
    )
    task = progress.add_task(f"paper {paper}", total=None, counts="")

    def show(state: dict[str, Any]) -> None:
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

    with progress:
        yield show
