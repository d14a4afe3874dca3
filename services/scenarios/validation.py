"""Validating a scenario: the service's schema first, then the core, one error type out.

The Pydantic models catch what a single field can tell (types, unknown fields, ranges) and
report every such problem at once; the core then checks everything else (warm-up below
duration, RTTs against the bottleneck delay, flow names, routes, trace sizes) exactly as a run
would. Either way the caller gets `ScenarioInvalid` with core-style JSON paths.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from services.scenarios.canonical import canonical_dict
from services.scenarios.errors import FieldError, ScenarioInvalid, from_validation_error
from services.scenarios.schema import Scenario
from services.traces.builtin import builtin_trace_file
from services.traces.refs import TraceFiles

__all__ = ["validate_scenario"]


def validate_scenario(
    data: Mapping[str, Any] | Scenario, traces: TraceFiles = builtin_trace_file
) -> tuple[Scenario, dict[str, Any]]:
    """Check `data` completely; return the model and the canonical scenario. `traces` resolves
    the trace names its links follow (default: the built-in traces; a user's own through
    `services.traces.service.trace_files`).

    The canonical scenario is the core's reading of it (every default filled in, numbers
    normalised: `canonical.canonical_dict`), the form to store, hash and run.

    Raises `ScenarioInvalid` (a `ValueError`) listing every problem the schema finds, or else
    the first one the core finds.
    """
    if isinstance(data, Scenario):
        model = data
    elif isinstance(data, Mapping):
        try:
            model = Scenario.model_validate(dict(data))
        except ValidationError as e:
            raise from_validation_error(e) from None
    else:
        raise ScenarioInvalid(
            [
                FieldError(
                    path="$",
                    reason=f"a scenario is a JSON object, got {type(data).__name__}",
                    source="schema",
                    kind="model_type",
                )
            ]
        )
    return model, canonical_dict(model, traces)
