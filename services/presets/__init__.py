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

from services.presets import (
    paper000,
    paper002,
    paper003,
    paper004,
    study_bufferbloat,
    study_cellular,
    study_dctcp,
    study_l4s,
)
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

PRESETS: dict[str, Preset] = {
    p.name: p
    for module in (paper000, paper002, paper003, paper004, study_bufferbloat, study_dctcp, study_l4s, study_cellular)
    for p in module.PRESETS
}
"""Every preset by name: paper by paper in the papers' order, then the studies (a new paper or
study adds its module to the import and the tuple, as `services/reproductions/registry.py`
does), each in its module's order."""


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
