"""The scenario format: schema (Pydantic, mirroring the core), validation, canonical JSON and
cache keys, and JSON paths for overrides and sweep axes.

    from services.scenarios import validate_scenario, cache_key, apply_overrides

    model, canonical = validate_scenario(data)          # raises ScenarioInvalid (422)
    key = cache_key(canonical, tcpsim.__version__)     # the run's key
"""

from __future__ import annotations

from services.scenarios.canonical import cache_key, canonical_dict, canonical_json, key_of_canonical
from services.scenarios.core import CORE_VERSION, CoreScenarioError
from services.scenarios.errors import FieldError, ScenarioInvalid
from services.scenarios.paths import PathError, apply_overrides, expand, get_path, set_path
from services.scenarios.schema import Scenario
from services.scenarios.validation import validate_scenario

__all__ = [
    "CORE_VERSION",
    "CoreScenarioError",
    "FieldError",
    "PathError",
    "Scenario",
    "ScenarioInvalid",
    "apply_overrides",
    "cache_key",
    "canonical_dict",
    "canonical_json",
    "expand",
    "get_path",
    "key_of_canonical",
    "set_path",
    "validate_scenario",
]
