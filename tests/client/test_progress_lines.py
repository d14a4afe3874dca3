"""Progress when stderr is not a terminal (issue 15): plain lines — at most one every few
seconds, and always the final state — instead of a Rich bar that only shows at the end. The
clock is passed in, so the rate limit is checked without sleeping."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
import yaml
from rich.console import Console
from typer.testing import CliRunner

from tcplab_client.cli import app
from tcplab_client.progress import plain_lines, reproduction_bar, sweep_bar, sweep_line
from tests.client.helpers import TINY_SWEEP
from tests.support import LaunchedService

SWEEP_ID = "3f2a1b2c-0000-4000-8000-000000000000"


def _sweep(done: int, failed: int = 0, total: int = 400, status: str = "running") -> dict:
    queued = total - done - 8 if done + 8 <= total else 0
    return {
        "status": status,
        "progress": {
            "total": total,
            "succeeded": done - failed,
            "failed": failed,
            "cancelled": 0,
            "running": total - done - queued,
            "queued": queued,
        },
    }


def _log() -> tuple[Console, io.StringIO]:
    buffer = io.StringIO()
    return Console(file=buffer, force_terminal=False, width=200), buffer


def test_a_sweep_line_says_runs_done_of_total_the_percentage_and_the_failures() -> None:
    assert sweep_line(SWEEP_ID, _sweep(120, failed=2)) == (
        "sweep 3f2a1b2c: 120/400 runs done (30 %), 2 failed, 8 running, 272 queued · running"
    )


def test_plain_lines_print_at_most_one_per_interval_and_always_the_last_state() -> None:
    console, buffer = _log()
    now = [0.0]
    with plain_lines(console, lambda s: sweep_line(SWEEP_ID, s), interval_s=5, clock=lambda: now[0]) as show:
        for t, done in ((0, 0), (1, 10), (2, 20), (4.9, 30), (5.0, 40), (5.5, 40), (7, 50), (11, 60)):
            now[0] = t
            show(_sweep(done))
        now[0] = 12
        show(_sweep(400, status="done"))
    lines = buffer.getvalue().splitlines()
    assert [line.split(":")[1].split(" runs")[0].strip() for line in lines] == ["0/400", "40/400", "60/400", "400/400"]
    assert lines[-1].endswith("(100 %), 0 failed, 0 running, 0 queued · done")


def test_an_unchanged_state_is_not_repeated_and_a_printed_end_is_not_printed_twice() -> None:
    console, buffer = _log()
    now = [0.0]
    with plain_lines(console, lambda s: sweep_line(SWEEP_ID, s), interval_s=5, clock=lambda: now[0]) as show:
        for t in (0, 6, 12, 18):
            now[0] = t
            show(_sweep(400, status="done"))
    assert len(buffer.getvalue().splitlines()) == 1


def test_off_a_terminal_the_bars_write_plain_lines_and_on_one_a_rich_bar() -> None:
    console, buffer = _log()
    with sweep_bar(SWEEP_ID, console=console) as show:
        show(_sweep(400, status="done"))
    assert buffer.getvalue() == "sweep 3f2a1b2c: 400/400 runs done (100 %), 0 failed, 0 running, 0 queued · done\n"

    state = {
        "batch": "b2d61ff0",
        "status": "running",
        "runs": 40,
        "runs_done": 10,
        "sweeps": [{"status": "running", "progress": {"failed": 1}}, {"status": "done", "progress": {"failed": 0}}],
    }
    console, buffer = _log()
    with reproduction_bar("002", console=console) as show:
        show(state)
    assert buffer.getvalue().strip() == (
        "paper 002 reproduction b2d61ff0: 10/40 runs done (25 %), 1 failed, 1/2 sweeps finished · running"
    )

    terminal = io.StringIO()
    with sweep_bar(SWEEP_ID, console=Console(file=terminal, force_terminal=True, width=120)) as show:
        show(_sweep(200))
    assert "━" in terminal.getvalue() and "runs done" not in terminal.getvalue()


def test_tcplab_sweep_wait_with_stderr_in_a_file_logs_plain_progress_lines(
    launched_service: LaunchedService, isolated_config: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("TCPLAB_TOKEN", launched_service.token)
    spec = tmp_path / "tiny.yaml"
    spec.write_text(yaml.safe_dump({**TINY_SWEEP, "overrides": {"duration_s": 6}}))
    result = CliRunner().invoke(app, ["--url", launched_service.base_url, "sweep", str(spec), "--wait"])
    assert result.exit_code == 0, result.output
    sweep_id = result.stdout.splitlines()[0]
    progress = [line for line in result.stderr.splitlines() if line.startswith(f"sweep {sweep_id[:8]}: ")]
    assert progress and progress[-1].startswith(f"sweep {sweep_id[:8]}: 4/4 runs done (100 %), 0 failed")
    assert "━" not in result.stderr
