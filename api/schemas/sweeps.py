"""Response bodies of `/v1/sweeps` (the request bodies are the domain's `SweepSpec` and
`SweepExtension`)."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

from pydantic import BaseModel, Field

from services.db.models import Run, RunStatus, StopReason, Sweep, SweepPoint
from services.sweeps import Created, Progress, status_of


class CreatedOut(BaseModel):
    runs: int = Field(description="runs this request added")
    cached: int = Field(description="of them, answered at once from stored identical runs")
    enqueued: int = Field(description="of them, sent to the workers to simulate")

    @classmethod
    def of(cls, created: Created) -> CreatedOut:
        return cls(**created.as_dict())


class AxisOut(BaseModel):
    path: str
    values: list[Any]


class StoppingOut(BaseModel):
    """Where the stopping rule stands (services.sweeps.StoppingOutcome)."""

    metric: str
    target_relative_half_width: float
    max_replications: int
    points: int
    by_reason: dict[str, int] = Field(description="points stopped, by reason (see PointOut.stop_reason)")
    growing: int = Field(description="points that may still add replications")
    target_met: bool | None = Field(
        description="true: met at every point; false: not met somewhere; null: still growing"
    )
    message: str = Field(
        description="the same in words, e.g. 'target ±3 % on throughput_pkts_per_rtt NOT met at 2 of 5 points: …'"
    )


class SweepOut(BaseModel):
    id: uuid.UUID
    name: str | None
    preset: str | None
    status: str = Field(description="queued, running, done (nothing queued or running) or cancelled")
    axes: list[AxisOut]
    combine: str
    replications: int = Field(description="replications per point (the stopping rule may add more)")
    seed: int
    points: int
    progress: Progress = Field(description="the runs by status")
    spec: dict[str, Any] = Field(description="the sweep as it stands: the body that would recreate it")
    created_at: dt.datetime
    cancelled_at: dt.datetime | None
    owner: str | None = Field(default=None, description="who created it (null: before users)")
    shared: bool = Field(default=False, description="visible to the whole lab")
    schedule_id: uuid.UUID | None = Field(default=None, description="the schedule that fired it, if any")
    fired_for: dt.datetime | None = Field(default=None, description="the schedule's firing time it answers")
    tags: list[str] = Field(default_factory=list, description="labels to find it by (docs/experiments.md)")
    note: str | None = Field(default=None, description="the owner's free text about it")
    archived_at: dt.datetime | None = Field(default=None, description="archived since (null: not archived)")
    created: CreatedOut | None = Field(default=None, description="what this request added (create, extend)")
    stopping: StoppingOut | None = Field(
        default=None, description="a sweep with a stopping rule, read alone (not in lists): whether its target was met"
    )
    links: dict[str, str]

    @classmethod
    def of(cls, sweep: Sweep, progress: Progress, *, points: int, created: Created | None = None) -> SweepOut:
        spec = sweep.spec
        base = f"/v1/sweeps/{sweep.id}"
        return cls(
            id=sweep.id,
            name=sweep.name,
            preset=sweep.preset,
            status=status_of(sweep, progress),
            axes=[AxisOut(path=a["path"], values=a["values"]) for a in spec["axes"]],
            combine=spec.get("combine", "product"),
            replications=spec.get("replications", 1),
            seed=spec.get("seed", 1),
            points=points,
            progress=progress,
            spec=spec,
            created_at=sweep.created_at,
            cancelled_at=sweep.cancelled_at,
            owner=sweep.owner.name if sweep.owner is not None else None,
            shared=sweep.shared,
            schedule_id=sweep.schedule_id,
            fired_for=sweep.fired_for,
            tags=list(sweep.tags or []),
            note=sweep.note,
            archived_at=sweep.archived_at,
            created=CreatedOut.of(created) if created is not None else None,
            links={
                "self": base,
                "points": f"{base}/points",
                "runs": f"{base}/runs",
                "summary": f"{base}/summary",
                "dashboard": f"/dashboard/sweeps/{sweep.id}",
            },
        )


class SweepList(BaseModel):
    items: list[SweepOut]
    total: int
    limit: int
    offset: int


class PointOut(BaseModel):
    point: int
    values: dict[str, Any]
    flow_groups: list[dict[str, Any]]
    progress: Progress = Field(description="the runs by status")
    stop_reason: str | None = Field(
        default=None,
        description="why the stopping rule stopped adding replications here: "
        + ", ".join(f'"{r.value}"' for r in StopReason)
        + " (a capped point resumes when the sweep is extended); null while it may still grow, or without a rule",
    )

    @classmethod
    def of(cls, point: SweepPoint, progress: Progress) -> PointOut:
        return cls(
            point=point.index,
            values=point.values,
            flow_groups=point.flow_groups,
            progress=progress,
            stop_reason=point.stop_reason,
        )


class PointList(BaseModel):
    items: list[PointOut]


class SweepRunOut(BaseModel):
    point: int
    replication: int
    run_id: uuid.UUID
    seed: int
    status: RunStatus
    error: str | None

    @classmethod
    def of(cls, run: Run) -> SweepRunOut:
        assert run.sweep_point is not None and run.replication is not None
        return cls(
            point=run.sweep_point,
            replication=run.replication,
            run_id=run.id,
            seed=run.seed,
            status=run.status,
            error=run.error,
        )
