#!/usr/bin/env python3
"""A paper's reproduction run in this process, printed as Markdown: every experiment of
`services.reproductions` (the sweeps `POST /v1/reproductions/{paper}` would create) run
directly through `tcpsim.run`, the tables of ours beside the paper's, and each conclusion
judged by the same code as the API and the dashboard.

    .venv/bin/python bench/reproduce.py 002 [--only exp1 exp2-low] [--override duration_s=20] \
        [--markdown bench-results/paper002.md]

Papers 002 and 004 and the DCTCP and L4S studies take a few seconds, the bufferbloat study about 20 s,
003 about a minute; paper 000 (1000 s runs, 5 seeds, up to 256 flows) much longer: run it through the service (bench/paper000_sweeps.py) or with --only.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from services.reproductions import Evaluation, get_paper  # noqa: E402
from services.reproductions.local import simulate_paper  # noqa: E402

MARK = {
    "agree": "✓ agree",
    "partly": "◐ partly",
    "disagree": "✗ disagree",
    "no_data": "? no data",
    "not_run": "… not run",
}


def _cell(x: Any) -> str:
    if x is None:
        return "—"
    if isinstance(x, float):
        return f"{x:.4g}"
    return str(x).replace("|", "/")


def markdown(evaluation: Evaluation) -> list[str]:
    out: list[str] = []
    for t in evaluation.tables:
        out += [
            f"**{t.title}**",
            "",
            t.caption,
            "",
            "| " + " | ".join(c.label + (f" ({c.unit})" if c.unit else "") for c in t.columns) + " |",
            "|" + "---|" * len(t.columns),
        ]
        out += ["| " + " | ".join(_cell(r.get(c.name)) for c in t.columns) + " |" for r in t.rows]
        out.append("")
    out += [
        "**Conclusions**",
        "",
        "| conclusion (paper) | where | experiment | ours | verdict |",
        "|---|---|---|---|---|",
    ]
    for j in evaluation.conclusions:
        out.append(f"| {j.text} | {j.where} | {j.experiment} | {_cell(j.ours)} | **{MARK[j.verdict]}** |")
    return [*out, ""]


def _override(text: str) -> tuple[str, Any]:
    key, _, value = text.partition("=")
    try:
        return key, json.loads(value)
    except ValueError:
        return key, value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("paper", help="000, 002, 003, 004, or a study: bufferbloat, dctcp, l4s")
    parser.add_argument("--only", nargs="*", help="only these experiments (keys)")
    parser.add_argument(
        "--override",
        action="append",
        default=[],
        type=_override,
        metavar="PATH=JSON",
        help="an override for every experiment's preset (repeatable)",
    )
    parser.add_argument("--markdown", type=Path, help="also write the Markdown here")
    args = parser.parse_args()
    p = get_paper(args.paper)
    started = time.perf_counter()
    evaluation = p.evaluate(simulate_paper(p, dict(args.override) or None, only=args.only))
    lines = [
        f"# Paper {p.number}: {p.title}" if p.number.isdigit() else f"# Study: {p.title}",
        "",
        *markdown(evaluation),
        f"wall time: {time.perf_counter() - started:.0f} s",
    ]
    print("\n".join(lines))
    if args.markdown:
        args.markdown.parent.mkdir(parents=True, exist_ok=True)
        args.markdown.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
