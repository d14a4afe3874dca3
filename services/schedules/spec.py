"""What a researcher writes to ask for a schedule, and to change one.

    {"name": "nightly fig2a", "cron": "0 3 * * *",
     "template": {"preset": "paper000-fig2a", "axes": [...], "replications": 5}}

The cron line has the five classic fields (minute hour day-of-month month day-of-week) and is
read in UTC, so a schedule fires at the same instants wherever the server runs and daylight
saving never skips or doubles a firing.
"""

from __future__ import annotations

import datetime as dt
from typing import Any, Self

from croniter import CroniterError, croniter
from pydantic import BaseModel, ConfigDict, Field, StrictBool, ValidationInfo, field_validator, model_validator

from services.sweeps import SweepSpec

CRON_FIELDS = 5


def check_cron(cron: str) -> str:
    """The cron line, whitespace normalised; ValueError saying what is wrong otherwise."""
    fields = cron.split()
    if len(fields) != CRON_FIELDS:
        raise ValueError(
            f"a cron line has 5 fields (minute hour day-of-month month day-of-week, UTC), "
            f"e.g. '0 3 * * *'; got {len(fields)}"
        )
    line = " ".join(fields)
    if not croniter.is_valid(line):
        raise ValueError(f"{line!r} is not a valid cron line (minute hour day-of-month month day-of-week)")
    try:
        next_fire(line, dt.datetime(2000, 1, 1, tzinfo=dt.UTC))
    except CroniterError:
        raise ValueError(f"{line!r} never fires (e.g. the 30th of February)") from None
    return line


def next_fire(cron: str, after: dt.datetime) -> dt.datetime:
    """The first instant strictly after `after` that `cron` names (UTC)."""
    if after.tzinfo is None:
        raise ValueError("`after` must be timezone-aware")
    return croniter(cron, after.astimezone(dt.UTC)).get_next(dt.datetime)


class ScheduleSpec(BaseModel):
    """A sweep template fired on a cron line."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=200)
    cron: str = Field(max_length=200, description="five fields, UTC: minute hour day-of-month month day-of-week")
    template: SweepSpec = Field(
        description="The sweep each firing creates (the body of POST /v1/sweeps; its `shared` is the schedule's)."
    )
    enabled: StrictBool = True
    shared: StrictBool = Field(
        default=False, description="The schedule, its history and its sweeps visible to the lab."
    )

    @field_validator("cron")
    @classmethod
    def valid_cron(cls, cron: str) -> str:
        return check_cron(cron)


class ScheduleUpdate(BaseModel):
    """PATCH: the fields given change, the others stay."""

    model_config = ConfigDict(extra="forbid")

    name: str | None = Field(default=None, min_length=1, max_length=200)
    cron: str | None = Field(default=None, max_length=200)
    template: SweepSpec | None = None
    enabled: StrictBool | None = None
    shared: StrictBool | None = None

    @field_validator("name", "cron", "template", "enabled", "shared", mode="before")
    @classmethod
    def not_null(cls, value: Any, info: ValidationInfo) -> Any:
        # Only fields that were given are validated: a null one is a mistake, not "keep".
        if value is None:
            raise ValueError(f"`{info.field_name}` cannot be null: leave it out to keep it")
        return value

    @field_validator("cron")
    @classmethod
    def valid_cron(cls, cron: str | None) -> str | None:
        return None if cron is None else check_cron(cron)

    @model_validator(mode="after")
    def something(self) -> Self:
        if not self.model_fields_set:
            raise ValueError("give at least one of name, cron, template, enabled, shared")
        return self

    def changes(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.model_fields_set}


def stored_template(template: SweepSpec) -> dict[str, Any]:
    """The template as stored: the sweep body, less `shared` (the schedule decides)."""
    return template.model_dump(mode="json", exclude_none=True, exclude={"shared"})
