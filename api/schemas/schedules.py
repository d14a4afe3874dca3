"""Response bodies of `/v1/schedules` (the request bodies are the domain's `ScheduleSpec`
and `ScheduleUpdate`)."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

from pydantic import BaseModel, Field

from services.db.models import Schedule


class ScheduleOut(BaseModel):
    id: uuid.UUID
    name: str
    cron: str = Field(description="five fields, UTC")
    template: dict[str, Any] = Field(description="the sweep body each firing creates")
    enabled: bool
    shared: bool = Field(description="the schedule, its history and its sweeps visible to the lab")
    owner: str | None = Field(description="who owns it (its firings run as them)")
    builtin: str | None = Field(description="the key of a built-in schedule (core-benchmark), else null")
    next_fire_at: dt.datetime | None = Field(description="the next firing (null while disabled)")
    last_fired_at: dt.datetime | None = Field(description="when it last fired (by the cron or by hand)")
    last_error: str | None = Field(description="why the last firing created no sweep; null when it did")
    firings: int = Field(description="the sweeps it has fired")
    created_at: dt.datetime
    updated_at: dt.datetime
    links: dict[str, str]

    @classmethod
    def of(cls, schedule: Schedule, firings: int) -> ScheduleOut:
        base = f"/v1/schedules/{schedule.id}"
        return cls(
            id=schedule.id,
            name=schedule.name,
            cron=schedule.cron,
            template=schedule.template,
            enabled=schedule.enabled,
            shared=schedule.shared,
            owner=schedule.owner.name if schedule.owner is not None else None,
            builtin=schedule.builtin,
            next_fire_at=schedule.next_fire_at,
            last_fired_at=schedule.last_fired_at,
            last_error=schedule.last_error,
            firings=firings,
            created_at=schedule.created_at,
            updated_at=schedule.updated_at,
            links={
                "self": base,
                "fire": f"{base}/fire",
                "sweeps": f"{base}/sweeps",
                "history": f"{base}/history",
                "dashboard": f"/dashboard/schedules/{schedule.id}",
            },
        )


class ScheduleList(BaseModel):
    items: list[ScheduleOut]
    total: int
    limit: int
    offset: int
