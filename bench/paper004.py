#!/usr/bin/env python3
"""Paper 004's experiments on tcplab's core, beside the paper's numbers and conclusions: every
experiment of `services.reproductions.paper004` run in this process through `tcpsim.run`,
judged by the same code as `GET /v1/reproductions/004` and the dashboard's paper page
(bench/reproduce.py; docs/validation/paper004.md discusses the outcome).

    .venv/bin/python bench/paper004.py [--only KEY …] [--override PATH=JSON] [--markdown bench-results/paper004.md]

A few seconds of wall time.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from reproduce import main  # noqa: E402

if __name__ == "__main__":
    main("004")
