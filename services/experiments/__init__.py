"""Experiment management: tags and notes on runs and sweeps, search by name, tag, preset or
parameter, archive and delete (with their results), and two sweeps side by side. Free of HTTP
and Celery. docs/experiments.md describes the rules.

The package exports its leaf modules only (search, tags): the runs and sweeps lists import
them. The operations are in `services.experiments.service`, which imports those domains.
"""

from services.experiments.search import (
    Archived,
    Param,
    Search,
    SweepStatus,
    make_search,
    parse_param,
    run_conditions,
    sweep_conditions,
    sweep_status_condition,
)
from services.experiments.tags import MAX_NOTE_LENGTH, MAX_TAG_LENGTH, MAX_TAGS, check_note, check_tags

__all__ = [
    "MAX_NOTE_LENGTH",
    "MAX_TAGS",
    "MAX_TAG_LENGTH",
    "Archived",
    "Param",
    "Search",
    "SweepStatus",
    "check_note",
    "check_tags",
    "make_search",
    "parse_param",
    "run_conditions",
    "sweep_conditions",
    "sweep_status_condition",
]
