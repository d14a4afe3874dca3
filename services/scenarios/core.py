"""The simulator core as the rest of the service sees it: its version, part of every stored
result's key, and the error it raises for a scenario it refuses. The API reads both from
here, so that only the domain and the worker load the core's binding themselves."""

from __future__ import annotations

import tcpsim

CORE_VERSION: str = tcpsim.__version__
"""The core's version (simulator/Cargo.toml): a result is reused only by the same version."""

CoreScenarioError = tcpsim.ScenarioError
"""What `tcpsim.run` / `tcpsim.validate` raise for a scenario the core refuses (path, kind)."""
