"""The ``tcpsim`` command line (``tcpsim run|validate|variants``), the same as the Rust binary's.

Installed as the ``tcpsim`` console script; also ``python -m tcpsim``.
"""

from __future__ import annotations

import signal
import sys

from tcpsim._core import cli


def main() -> int:
    # Behave like a native command: Ctrl-C stops a long run at once (Python would otherwise only
    # notice it after the core returns) and a closed pipe (`tcpsim variants | head -1`) ends the
    # process quietly.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    return cli(["tcpsim", *sys.argv[1:]])


if __name__ == "__main__":
    sys.exit(main())
