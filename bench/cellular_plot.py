#!/usr/bin/env python3
"""The cellular study's Pantheon view as an SVG, for docs/validation/study-cellular.md: each
scheme's mean throughput against its 95th-percentile one-way delay, one panel per LTE trace, the
delay axis logarithmic and reversed as Pantheon draws it (better is up and to the right). The
study runs in this process (services.reproductions.local, ~2 s).

    .venv/bin/python bench/cellular_plot.py docs/validation/img/study-cellular-pantheon.svg
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from services.presets.study_cellular import CARRIERS  # noqa: E402
from services.reproductions import get_paper  # noqa: E402
from services.reproductions.local import simulate_paper  # noqa: E402

COLOURS = {"CUBIC": "#d62728", "BBR": "#1f77b4", "Vegas": "#2ca02c"}
W, H, PAD = 300, 260, 50


def panel(x0: int, carrier: str, rows: list[dict]) -> list[str]:
    mine = [r for r in rows if r["trace"] == carrier]
    top = max(r["capacity_mbps"] for r in mine) * 1.1
    lo, hi = math.log10(20), math.log10(20000)  # 20 ms .. 20 s

    def x(ms: float) -> float:  # reversed: low delay on the right
        return x0 + PAD + (hi - math.log10(ms)) / (hi - lo) * (W - PAD - 10)

    def y(mbps: float) -> float:
        return H - PAD + 10 - mbps / top * (H - PAD - 20)

    out = [
        f'<rect x="{x0 + PAD}" y="10" width="{W - PAD - 10}" height="{H - PAD - 20}" fill="none" stroke="#888"/>',
        f'<text x="{x0 + W / 2 + 20}" y="24" font-size="12" text-anchor="middle">{carrier}</text>',
        f'<text x="{x0 + W / 2 + 20}" y="{H - 12}" font-size="11" text-anchor="middle">p95 one-way delay (ms, log, reversed)</text>',
    ]
    for ms in (30, 100, 300, 1000, 3000, 10000):
        out.append(f'<text x="{x(ms):.1f}" y="{H - PAD + 24}" font-size="10" text-anchor="middle">{ms}</text>')
    step = 5 if top > 10 else 1
    for v in range(0, int(top) + 1, step):
        out.append(f'<text x="{x0 + PAD - 4}" y="{y(v) + 3:.1f}" font-size="10" text-anchor="end">{v}</text>')
    cap = mine[0]["capacity_mbps"]
    out.append(
        f'<line x1="{x0 + PAD}" x2="{x0 + W - 10}" y1="{y(cap):.1f}" y2="{y(cap):.1f}" stroke="#aaa" stroke-dasharray="4 3"/>'
    )
    for r in mine:
        cx, cy = x(r["p95_delay_ms"]), y(r["goodput_mbps"])
        out.append(f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="5" fill="{COLOURS[r["scheme"]]}"/>')
        out.append(f'<text x="{cx + 7:.1f}" y="{cy - 6:.1f}" font-size="10">{r["scheme"]}</text>')
    return out


def main(path: str) -> None:
    study = get_paper("cellular")
    rows = study.evaluate(simulate_paper(study, only=["alone"])).tables[0].rows
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{3 * W}" height="{H + 10}" font-family="sans-serif">']
    parts.append('<text x="6" y="140" font-size="11" transform="rotate(-90 12 140)">throughput (Mb/s)</text>')
    for i, carrier in enumerate(CARRIERS):
        parts += panel(i * W, carrier, rows)
    parts.append("</svg>")
    Path(path).write_text("\n".join(parts) + "\n")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "study-cellular-pantheon.svg")
