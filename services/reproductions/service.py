"""Reproductions of stored sweeps: create a paper's sweeps for a user, and judge the paper from
that user's own finished ones. Never commits: the API's request does, then enqueues.

A reproduction is one sweep per experiment, created together and named
"paperNNN reproduction <batch>: <experiment>" ("<study> reproduction ..." for a study; the name is how they are found again: no table
of their own). The report reads, per experiment, the caller's newest finished sweep of it —
only the caller's: another user's reproduction, even shared, never answers for mine. An
experiment with no finished reproduction sweep is judged from the caller's newest finished
sweep of the same preset along the same axes, whatever its name (a researcher who ran the
Fig. 2 sweep by hand need not run it again): `reused` says so, with its overrides.
"""

from __future__ import annotations

import datetime as dt
import re
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from services import sweeps
from services.db.models import Sweep
from services.errors import InvalidInputError, NotFoundError
from services.reproductions.model import Evaluation, Experiment, Paper
from services.reproductions.registry import UnknownPaper, get_paper
from services.sweeps import Created, SweepSpec
from services.users import Identity

NAME = re.compile(
    r"^(?:paper(?P<paper>\d{3})|(?P<study>[a-z][a-z0-9-]*)) reproduction (?P<batch>[0-9a-f]{8}): (?P<experiment>[a-z0-9-]+)$"
)
"""A reproduction's sweep name: "paper003 reproduction <batch>: fig5", or for a study
"bufferbloat reproduction <batch>: same-variant"."""


def sweep_name(paper: Paper, batch: str, experiment: str) -> str:
    return f"{paper.label} reproduction {batch}: {experiment}"


def paper_of(number: str) -> Paper:
    """The paper, or NotFoundError (404) for one without a reproduction."""
    try:
        return get_paper(number)
    except UnknownPaper:
        raise NotFoundError("reproduction of paper", number) from None


@dataclass
class Started:
    paper: str
    batch: str
    sweeps: list[tuple[str, Sweep, Created]]
    created: Created = field(default_factory=Created)


def reproduce(
    session: Session,
    number: str,
    *,
    owner: Identity,
    overrides: Mapping[str, Any] | None = None,
    experiments: Sequence[str] | None = None,
    shared: bool = False,
    max_queued: int | None = None,
) -> Started:
    """Creates `owner`'s sweeps of the paper's experiments (all, or those in `experiments`),
    `overrides` applied to every one (e.g. a shorter `duration_s`). Raises what
    `services.sweeps.create` raises (ScenarioInvalid for an override that does not apply)."""
    paper = paper_of(number)
    keys = [e.key for e in paper.experiments]
    chosen = list(experiments) if experiments else keys
    for i, key in enumerate(chosen):
        if key not in keys:
            raise InvalidInputError(
                f"paper {paper.number} has no experiment {key!r}; its experiments: {', '.join(keys)}",
                path=f"$.experiments[{i}]",
                kind="unknown_experiment",
            )
    batch = uuid.uuid4().hex[:8]
    started = Started(paper.number, batch, [])
    for key in dict.fromkeys(chosen):
        body = paper.experiment(key).spec(overrides) | {"name": sweep_name(paper, batch, key), "shared": shared}
        sweep, created = sweeps.create(session, SweepSpec.model_validate(body), owner=owner, max_queued=max_queued)
        started.sweeps.append((key, sweep, created))
        started.created.add(created)
    return started


# ---- the report --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Source:
    """One sweep of a reproduction, as the report shows it."""

    experiment: str
    batch: str
    sweep: Sweep
    progress: sweeps.Progress
    status: str
    reused: bool = False
    """A sweep of the experiment's preset the caller ran outside a reproduction."""

    def as_dict(self) -> dict[str, Any]:
        spec = self.sweep.spec or {}
        return {
            "experiment": self.experiment,
            "batch": self.batch,
            "sweep_id": str(self.sweep.id),
            "name": self.sweep.name,
            "reused": self.reused,
            "created_at": self.sweep.created_at.isoformat() if self.sweep.created_at else None,
            "status": self.status,
            "overrides": spec.get("overrides") or {},
            "replications": spec.get("replications"),
            "progress": {
                "total": self.progress.total,
                "done": self.progress.done,
                "succeeded": self.progress.succeeded,
                "failed": self.progress.failed,
                "queued": self.progress.queued,
                "running": self.progress.running,
            },
        }


@dataclass(frozen=True)
class Report:
    paper: Paper
    latest: list[Source]
    """The sweeps of the caller's newest reproduction (finished or not)."""
    used: list[Source]
    """Per experiment, the newest finished sweep, whose observations were judged."""
    evaluation: Evaluation

    @property
    def status(self) -> str:
        """none (never reproduced), running (the newest one is not finished) or done."""
        if not self.latest:
            return "none"
        return "done" if all(s.status in ("done", "cancelled") for s in self.latest) else "running"

    def reproduction(self) -> dict[str, Any] | None:
        if not self.latest:
            return None
        total = sum(s.progress.total for s in self.latest)
        done = sum(s.progress.done for s in self.latest)
        created = min(s.sweep.created_at for s in self.latest)
        return {
            "batch": self.latest[0].batch,
            "status": self.status,
            "created_at": _iso(created),
            "runs": total,
            "runs_done": done,
            "sweeps": [s.as_dict() for s in self.latest],
        }


def _iso(t: dt.datetime | None) -> str | None:
    return t.isoformat() if t else None


def _sources(session: Session, paper: Paper, viewer: Identity) -> list[Source]:
    """The caller's own reproduction sweeps of this paper, newest first."""
    rows = (
        session.execute(
            select(Sweep)
            .where(Sweep.owner_id == viewer.id, Sweep.name.like(f"{paper.label} reproduction %"))
            .order_by(Sweep.created_at.desc(), Sweep.id)
        )
        .scalars()
        .all()
    )
    found = [(s, m) for s in rows if (m := NAME.match(s.name or "")) and (m["paper"] or m["study"]) == paper.number]
    progress = sweeps.progress_of(session, [s for s, _ in found])
    return [
        Source(m["experiment"], m["batch"], s, progress[s.id][0], sweeps.status_of(s, progress[s.id][0]))
        for s, m in found
    ]


def report(session: Session, number: str, viewer: Identity) -> Report:
    """The paper judged from `viewer`'s own newest finished sweep of each experiment."""
    paper = paper_of(number)
    sources = _sources(session, paper, viewer)
    latest = [s for s in sources if sources and s.batch == sources[0].batch]
    latest.sort(
        key=lambda s: (
            [e.key for e in paper.experiments].index(s.experiment)
            if s.experiment in {e.key for e in paper.experiments}
            else len(paper.experiments)
        )
    )
    used: list[Source] = []
    observations: dict[str, list[Any]] = {}
    for e in paper.experiments:
        source = next((s for s in sources if s.experiment == e.key and s.status == "done"), None)
        if source is None:
            source = _reusable(session, e, viewer)
        if source is not None:
            used.append(source)
            observations[e.key] = sweeps.observations(session, source.sweep.id)
            if paper.levels:
                observations[e.key] += sweeps.level_observations(session, source.sweep.id)
    return Report(paper, latest, used, paper.evaluate(observations))


REUSE_CANDIDATES = 50
"""Newest sweeps of a preset looked at for one to reuse (the rest are older than these)."""


def _reusable(session: Session, experiment: Experiment, viewer: Identity) -> Source | None:
    """The caller's newest finished sweep of the experiment's preset along the same axis paths
    (values, replications and overrides may differ: the evaluation judges what is there)."""
    paths = sorted(str(a["path"]) for a in experiment.axes)
    rows = (
        session.execute(
            select(Sweep)
            .where(Sweep.owner_id == viewer.id, Sweep.preset == experiment.preset)
            .order_by(Sweep.created_at.desc(), Sweep.id)
            .limit(REUSE_CANDIDATES)
        )
        .scalars()
        .all()
    )
    matching = [s for s in rows if sorted(str(a["path"]) for a in (s.spec or {}).get("axes", [])) == paths]
    progress = sweeps.progress_of(session, matching)
    for s in matching:
        state = sweeps.status_of(s, progress[s.id][0])
        if state == "done" and progress[s.id][0].succeeded:
            return Source(experiment.key, "", s, progress[s.id][0], state, reused=True)
    return None


def status(session: Session, number: str, viewer: Identity) -> dict[str, Any]:
    """The caller's newest reproduction of the paper, without judging it (for lists)."""
    paper = paper_of(number)
    sources = _sources(session, paper, viewer)
    latest = [s for s in sources if s.batch == sources[0].batch] if sources else []
    return Report(paper, latest, [], Evaluation([], [])).reproduction() or {"status": "none"}
