"""What a preset is, the registry of them, and how a preset plus overrides becomes a scenario.

A preset is a ready scenario for one of the papers' experiments, with what a researcher needs
beside it: what the paper did and what we had to choose (`description`), where in the paper
(`reference`), the values one typically changes (`parameters`, with the paper's range) and the
paper's published numbers (`published`), loaded from the files in `data/`.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from services.scenarios.errors import FieldError, ScenarioInvalid
from services.scenarios.paths import PathError, apply_overrides
from services.scenarios.schema import Scenario

__all__ = [
    "Column",
    "Parameter",
    "Preset",
    "Published",
    "PublishedColumn",
    "PublishedTable",
    "Reference",
    "UnknownPreset",
]


class UnknownPreset(LookupError):
    """No preset has this name."""

    def __init__(self, name: str, known: list[str]) -> None:
        self.name = name
        self.known = known
        super().__init__(f"no preset named {name!r}; known: {', '.join(known)}")


@dataclass(frozen=True)
class Reference:
    """Where in which paper the experiment comes from, or, for a study (`paper` None), which
    sources its claims come from."""

    paper: str | None
    """The paper's number in the papers folder ("000"); None for a study."""
    citation: str
    """Authors, title, venue, year."""
    where: str
    """Section, figure, table: "§IV-B, Fig. 2(a)"."""


@dataclass(frozen=True)
class Parameter:
    """A value researchers typically change, and the paper's range for it.

    `name` is a scenario path (`flows[*].loss.m`, see `services.scenarios.paths`) or, for the
    few values that span several paths, a preset parameter (`background_flows`) that the
    preset turns into paths (`expands_to`). Either is an override key.
    """

    name: str
    meaning: str
    unit: str | None
    default: Any
    """The preset's value."""
    paper_range: tuple[float, float] | None = None
    """The smallest and largest value the paper used."""
    paper_values: tuple[Any, ...] | None = None
    """The exact values the paper used, when it lists them."""
    expands_to: tuple[str, ...] = ()
    """For a preset parameter: the scenario paths it sets."""

    @property
    def is_path(self) -> bool:
        return not self.expands_to


@dataclass(frozen=True)
class Column:
    """A column of a table of numbers: of the paper's (a preset's published table) or of ours
    beside the paper's (a reproduction's table, ``services.reproductions.model.Table``) — one
    type for both."""

    name: str
    label: str
    """What the column holds, in words: a sentence for the paper's ("loss event rate of the SBS
    flow"), a header for ours ("ours p")."""
    unit: str | None = None

    @property
    def meaning(self) -> str:
        """`label` under the name the presets API gives it (``columns[].meaning``), as a
        Parameter's meaning."""
        return self.label


PublishedColumn = Column
"""The published tables' name for `Column`."""


@dataclass(frozen=True)
class PublishedTable:
    """A table of the paper, row by row, as transcribed in a data file."""

    name: str
    caption: str
    columns: tuple[Column, ...]
    rows: tuple[Mapping[str, float | int], ...]


@dataclass(frozen=True)
class Published:
    """The paper's published numbers and stated findings for one experiment."""

    source: str
    """Which data file (in services/presets/data) they come from, and from which paper."""
    setup: str
    """The setup as the paper states it."""
    findings: tuple[str, ...] = ()
    values: Mapping[str, Any] = field(default_factory=dict)
    """Machine-readable numbers (regions, crossovers, error ranges), as in the data file."""
    tables: tuple[PublishedTable, ...] = ()


Expander = Callable[[Any], dict[str, Any]]


def _tcp_profiles(template: Mapping[str, Any]) -> set[str | None]:
    """The `tcp.profile` of every TCP flow of a scenario (None where a flow names none)."""
    return {(f.get("tcp") or {}).get("profile") for f in template.get("flows", []) if f.get("type", "tcp") == "tcp"}


@dataclass(frozen=True)
class Preset:
    name: str
    title: str
    description: str
    reference: Reference
    parameters: tuple[Parameter, ...]
    published: Published | None
    template: Mapping[str, Any] = field(repr=False)
    """The scenario as written (read it through `scenario`, a copy)."""
    warmup_fraction: float | None = None
    """When an override sets `duration_s` but not `warmup_s`, the warm-up is this fraction of
    the new duration (paper 000 measures the last 750 of 1000 s: 0.25)."""
    expanders: Mapping[str, Expander] = field(default_factory=dict, repr=False)
    """Preset parameters (`background_flows`) -> the function that turns a value into paths."""

    def __post_init__(self) -> None:
        profiles = _tcp_profiles(self.template)
        if len(profiles) != 1 or None in profiles:
            raise ValueError(
                f"preset {self.name}: every TCP flow must name the same TCP profile "
                f"(its paper's simulator; docs/simulator.md), got {sorted(map(str, profiles))}"
            )

    @property
    def tcp_profile(self) -> str:
        """The TCP profile every TCP flow uses: the defaults of the simulator its paper used."""
        profile = next(iter(_tcp_profiles(self.template)))
        assert profile is not None  # __post_init__ rejects a flow without one
        return profile

    @property
    def scenario(self) -> dict[str, Any]:
        """The preset's full scenario (a fresh copy: changing it changes nothing here)."""
        return copy.deepcopy(dict(self.template))

    @cached_property
    def _base(self) -> dict[str, Any]:
        """The scenario with every default filled in, built once: every submission of the
        preset started by validating and dumping it again (half of build_scenario's 106 us)."""
        return Scenario.model_validate(self.scenario).model_dump(mode="json", exclude_none=True)

    def parameter(self, name: str) -> Parameter | None:
        return next((p for p in self.parameters if p.name == name), None)

    def build(self, overrides: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The preset's scenario with `overrides` applied: a fresh dict, every default filled
        in (so every field is a path that exists), not yet checked by the core.

        `overrides` maps scenario paths (`flows[*].loss.m`) and preset parameters
        (`background_flows`) to values. Preset parameters are expanded first, then every path
        is set in the order given; a path given explicitly wins over the same path set by a
        preset parameter. Raises `ScenarioInvalid` naming the override that does not apply.
        Validate the result with `services.scenarios.validate_scenario`.
        """
        overrides = dict(overrides or {})
        paths: dict[str, Any] = {}
        for key, value in overrides.items():
            expander = self.expanders.get(key)
            if expander is not None:
                try:
                    paths.update(expander(value))
                except (TypeError, ValueError) as e:
                    raise ScenarioInvalid([_override_error(key, str(e))]) from None
        for key, value in overrides.items():
            if key not in self.expanders:
                paths[key] = value
        duration_keys = [k for k in paths if _top_level(k) == "duration_s"]
        if self.warmup_fraction is not None and duration_keys and not any(_top_level(k) == "warmup_s" for k in paths):
            duration = paths[duration_keys[-1]]
            if isinstance(duration, int | float) and not isinstance(duration, bool) and math.isfinite(duration):
                paths["warmup_s"] = duration * self.warmup_fraction
        try:
            return apply_overrides(self._base, paths)  # a deep copy: the base is never changed
        except PathError as e:
            raise ScenarioInvalid([_override_error(e.path, e.reason)]) from None


def _top_level(key: Any) -> str | None:
    """`duration_s` for both `duration_s` and `$.duration_s`."""
    if not isinstance(key, str):
        return None
    return key[2:] if key.startswith("$.") else key


def _override_error(key: str, reason: str) -> FieldError:
    path = key if key.startswith("$") else f"$.{key}" if not key.startswith("[") else f"${key}"
    return FieldError(path=path, reason=reason, source="overrides", kind="override")
