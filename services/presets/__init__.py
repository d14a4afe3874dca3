"""Ready scenarios for the papers' experiments, with their published numbers.

    from services.presets import build_scenario, get_preset, list_presets

    preset = get_preset("paper000-fig2a")
    scenario = build_scenario("paper000-fig2a", {"flows[*].loss.m": 20, "seed": 2})
    model, canonical = services.scenarios.validate_scenario(scenario)

`build_scenario` takes the overrides of `POST /v1/runs {"preset": ..., "overrides": ...}`:
scenario paths and the preset's own parameters (`background_flows`). docs/presets.md
describes every preset.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from services.presets.paper000 import PRESETS as _PAPER000
from services.presets.paper002 import PRESETS as _PAPER002
from services.presets.paper003 import PRESETS as _PAPER003
from services.presets.paper004 import PRESETS as _PAPER004
from services.presets.registry import (
    Column,
    Parameter,
    Preset,
    Published,
    PublishedColumn,
    PublishedTable,
    Reference,
    UnknownPreset,
)

__all__ = [
    "PRESETS",
    "Column",
    "Parameter",
    "Preset",
    "Published",
    "PublishedColumn",
    "PublishedTable",
    "Reference",
    "UnknownPreset",
    "build_scenario",
    "get_preset",
    "list_presets",
]

PRESETS: dict[str, Preset] = {p.name: p for p in (*_PAPER000, *_PAPER002, *_PAPER003, *_PAPER004)}
"""Every preset by name, in the order the papers present them."""


def list_presets() -> list[Preset]:
    return list(PRESETS.values())


def get_preset(name: str) -> Preset:
    """The preset called `name`; `UnknownPreset` (a `LookupError`) if there is none."""
    try:
        return PRESETS[name]
    except KeyError:
        raise UnknownPreset(name, list(PRESETS)) from None


def build_scenario(name: str, overrides: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The scenario of preset `name` with `overrides` applied (see `Preset.build`).

    Raises `UnknownPreset`, or `ScenarioInvalid` for an override that does not apply. The
    result still has to pass `services.scenarios.validate_scenario`.
    """
    return get_preset(name).build(overrides)
