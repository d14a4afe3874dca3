"""Request and response bodies of `/v1/runs`."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any, Self

from pydantic import BaseModel, ConfigDict, Field, StrictBool, model_validator

from services.db.models import Run, RunStatus
from services.scenarios import Scenario


class RunSubmission(BaseModel):
    """Either a full `scenario`, or a `preset` name with optional `overrides` (scenario JSON
    paths such as `flows[*].loss.m` or `duration_s`, and the preset's own parameters)."""

    model_config = ConfigDict(extra="forbid")

    scenario: Scenario | None = Field(
        default=None, description="A scenario; the schema checks each field, the core the rest."
    )
    preset: str | None = Field(default=None, max_length=100, description="A preset name (GET /v1/presets).")
    overrides: dict[str, Any] | None = Field(default=None, description="Overrides for the preset.")
    shared: StrictBool = Field(default=False, description="Visible to the whole lab (else to you and admins).")

    @model_validator(mode="after")
    def one_of_scenario_or_preset(self) -> Self:
        if (self.scenario is None) == (self.preset is None):
            raise ValueError("give either `scenario` or `preset`")
        if self.overrides and self.preset is None:
            raise ValueError("`overrides` apply to a `preset`")
        return self


class RunOut(BaseModel):
    id: uuid.UUID
    status: RunStatus
    preset: str | None
    variants: list[str]
    seed: int
    cache_key: str
    core_version: str
    created_at: dt.datetime
    started_at: dt.datetime | None
    finished_at: dt.datetime | None
    attempts: int
    worker: str | None
    error: str | None
    error_kind: str | None
    core_wall_s: float | None = Field(description="The core's own wall time for the run.")
    events: int | None
    owner: str | None = Field(default=None, description="Who submitted it (null: before users).")
    shared: bool = Field(default=False, description="Visible to the whole lab.")
    cached: bool = Field(default=False, description="Answered from a stored identical run.")
    tags: list[str] = Field(default_factory=list, description="Labels to find it by (docs/experiments.md).")
    note: str | None = Field(default=None, description="The owner's free text about it.")
    archived_at: dt.datetime | None = Field(default=None, description="Archived since (null: not archived).")
    result_url: str | None = None

    @classmethod
    def of(cls, run: Run, *, cached: bool = False, owner: str | None = None) -> RunOut:
        """`owner`: the owner's name when the caller knows it (the submitter), sparing a query."""
        fields = {name: getattr(run, name) for name in cls.model_fields if name != "owner" and hasattr(run, name)}
        url = f"/v1/runs/{run.id}/result" if run.status == RunStatus.succeeded else None
        if owner is None and run.owner_id is not None:
            owner = run.owner.name if run.owner is not None else None
        return cls(**{**fields, "owner": owner, "cached": cached, "result_url": url})


class RunList(BaseModel):
    items: list[RunOut]
    total: int
    limit: int
    offset: int
