"""`/v1/reproductions`: a paper's experiments run as the caller's sweeps, our numbers beside the
paper's, and the paper's conclusions judged against the caller's own finished runs
(``services.reproductions``; docs/reproductions.md)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from fastapi import APIRouter, Response, status
from pydantic import BaseModel, ConfigDict, Field, StrictBool

from api.auth import CurrentUser, Submitter
from api.deps import EnqueueDep, SessionDep, SettingsDep
from api.limits import JsonBodyRoute
from api.tabular import FORMAT_QUERY, TableFormat, table_response
from services.db.session import run_after_commit
from services.errors import NotFoundError
from services.reproductions import PAPERS, VERDICTS, Paper
from services.reproductions import service as reproductions

router = APIRouter(prefix="/v1/reproductions", tags=["reproductions"], route_class=JsonBodyRoute)

CONCLUSION_COLUMNS = ("id", "experiment", "conclusion", "where", "verdict", "ours", "reason")


class ReproduceRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    overrides: dict[str, Any] | None = Field(
        default=None, description="Overrides for every experiment's preset (e.g. a shorter `duration_s`)."
    )
    experiments: list[str] | None = Field(
        default=None,
        max_length=50,
        description="Only these experiments (keys from GET /v1/reproductions); default all.",
    )
    shared: StrictBool = Field(default=False, description="Share the sweeps with the lab.")


def _paper(p: Paper) -> dict[str, Any]:
    return {
        "paper": p.number,
        "label": p.label,
        "kind": "paper" if p.number.isdigit() else "study",
        "title": p.title,
        "citation": p.citation,
        "setup": p.setup,
        "presets": p.presets,
        "validation": p.validation,
        "experiments": [
            {
                "key": e.key,
                "title": e.title,
                "preset": e.preset,
                "axes": [dict(a) for a in e.axes],
                "overrides": dict(e.overrides),
                "replications": e.replications,
                "runs": e.runs,
            }
            for e in p.experiments
        ],
    }


@router.get("", summary="The papers that can be reproduced")
def list_papers(session: SessionDep, viewer: CurrentUser) -> list[dict[str, Any]]:
    """Every paper with a reproduction: its experiments (sweeps of its presets) and the state
    of the caller's newest reproduction of it."""
    return [_paper(p) | {"reproduction": reproductions.status(session, p.number, viewer)} for p in PAPERS.values()]


@router.post("/{paper}", status_code=status.HTTP_201_CREATED, summary="Reproduce a paper")
def reproduce(
    paper: str,
    viewer: Submitter,
    session: SessionDep,
    settings: SettingsDep,
    enqueue: EnqueueDep,
    body: ReproduceRequest | None = None,
) -> dict[str, Any]:
    """Creates the caller's sweeps of the paper's experiments (one per experiment, named
    "paperNNN reproduction <batch>: <experiment>"), `overrides` applied to each; runs with a
    stored identical result are answered from it, the rest are enqueued after commit. Follow
    them with GET /v1/reproductions/{paper}. 404 for a paper without a reproduction, 422 for an
    override that does not apply."""
    body = body or ReproduceRequest()
    started = reproductions.reproduce(
        session,
        paper,
        owner=viewer,
        overrides=body.overrides,
        experiments=body.experiments,
        shared=body.shared,
        max_queued=settings.max_queued_runs,
    )
    if started.created.to_enqueue:
        ids = list(started.created.to_enqueue)
        run_after_commit(session, lambda: enqueue(ids))
    return {
        "paper": started.paper,
        "batch": started.batch,
        "created": started.created.as_dict(),
        "sweeps": [
            {"experiment": key, "sweep_id": str(s.id), "name": s.name, "created": c.as_dict()}
            for key, s, c in started.sweeps
        ],
    }


@router.get("/{paper}", summary="The paper's conclusions, judged against the caller's runs")
def get_reproduction(paper: str, session: SessionDep, viewer: CurrentUser, fmt: TableFormat = FORMAT_QUERY) -> Response:
    """The paper's conclusions, one row each: `verdict` (agree, partly, disagree, no_data,
    not_run), what we measured (`ours`) and, where we do not agree, the `reason` we found.
    Judged from the caller's own newest finished sweep of each experiment (another user's are
    never used). The JSON body also has the paper's setup, the newest reproduction's progress
    (`reproduction`: null before any), the sweeps judged (`sources`) and the tables of ours
    beside the paper's (`tables`: each at /v1/reproductions/{paper}/tables/{key})."""
    report = reproductions.report(session, paper, viewer)
    rows = [j.row() for j in report.evaluation.conclusions]
    counts = Counter(r["verdict"] for r in rows)
    body = _paper(report.paper) | {
        "status": report.status,
        "reproduction": report.reproduction(),
        "sources": [s.as_dict() for s in report.used],
        "tables": [t.meta() for t in report.evaluation.tables],
        "verdicts": {v: counts.get(v, 0) for v in VERDICTS},
    }
    return table_response(
        rows, fmt, f"reproduction-{report.paper.label}-conclusions", body=body, first_columns=CONCLUSION_COLUMNS
    )


@router.get("/{paper}/tables/{key}", summary="One table of ours beside the paper's")
def get_table(
    paper: str, key: str, session: SessionDep, viewer: CurrentUser, fmt: TableFormat = FORMAT_QUERY
) -> Response:
    """The rows of one table (`tables[].key` of GET /v1/reproductions/{paper}), from the same
    sweeps; 404 while its experiment has no finished sweep of the caller's."""
    report = reproductions.report(session, paper, viewer)
    table = next((t for t in report.evaluation.tables if t.key == key), None)
    if table is None:
        raise NotFoundError(f"table of paper {report.paper.number}'s reproduction", key)
    body = table.meta() | {
        "paper": report.paper.number,
        "sources": [s.as_dict() for s in report.used if s.experiment in table.experiment],
    }
    return table_response(
        table.rows,
        fmt,
        f"reproduction-{report.paper.label}-{key}",
        body=body,
        first_columns=[c.name for c in table.columns],
    )
