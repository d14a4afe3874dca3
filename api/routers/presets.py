"""`/v1/presets`: the papers' experiments as ready scenarios, with their published numbers.

Read-only, from `services.presets`. A preset is run with
`POST /v1/runs {"preset": name, "overrides": {path or parameter: value}}`.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, HTTPException, status
from pydantic import BaseModel, Field

from services.presets import Preset, UnknownPreset, get_preset, list_presets
from services.scenarios import Scenario

router = APIRouter(prefix="/v1/presets", tags=["presets"])


class ReferenceOut(BaseModel):
    paper: str | None = Field(
        description="The paper's number in tcplab's papers (\"000\"); null for a study, whose `citation` lists "
        "its sources."
    )
    citation: str = Field(description="Authors, title, venue, year.")
    where: str = Field(description='Section, figure, table ("§IV-B, Fig. 2(a)").')


class ParameterOut(BaseModel):
    name: str = Field(
        description="Override key: a scenario path (`flows[*].loss.m`) or a preset parameter "
        "(`background_flows`) that sets the paths in `expands_to`."
    )
    meaning: str
    unit: str | None = None
    default: Any = Field(description="The preset's value.")
    paper_range: list[int | float] | None = Field(
        default=None, description="Smallest and largest value the paper used."
    )
    paper_values: list[Any] | None = Field(default=None, description="The exact values the paper used, if listed.")
    expands_to: list[str] = Field(default_factory=list, description="Scenario paths a preset parameter sets.")


class ColumnOut(BaseModel):
    name: str
    meaning: str
    unit: str | None = None


class TableOut(BaseModel):
    name: str = Field(description='The paper\'s name for it ("Table II").')
    caption: str
    columns: list[ColumnOut]
    rows: list[dict[str, float | int | str | None]] = Field(
        description="One object per row, keyed by column name: a number, or a label such as the "
        "algorithm's name (null where the paper prints none)."
    )


class PublishedOut(BaseModel):
    source: str = Field(description="The paper, and the data file the numbers were read from.")
    setup: str = Field(description="The experiment's setup as the paper states it.")
    findings: list[str] = Field(description="The paper's stated results, one sentence each.")
    values: dict[str, Any] = Field(default_factory=dict, description="Published numbers by name.")
    tables: list[TableOut] = Field(default_factory=list)


class PresetSummary(BaseModel):
    name: str
    title: str
    description: str = Field(description="What the paper did, and what we chose where it is silent.")
    reference: ReferenceOut
    tcp_profile: str = Field(
        description='The TCP profile every TCP flow uses (docs/simulator.md, "TCP profiles"): '
        "the defaults of the simulator the paper used (ns2, opnet)."
    )
    parameters: list[ParameterOut] = Field(description="The values researchers typically override.")
    published: PublishedOut | None = Field(default=None, description="The paper's numbers, where it has them.")


class PresetDetail(PresetSummary):
    scenario: Scenario = Field(description="The full scenario, every default spelled out.")


def _summary_fields(p: Preset) -> dict[str, Any]:
    published = None
    if p.published is not None:
        published = PublishedOut(
            source=p.published.source,
            setup=p.published.setup,
            findings=list(p.published.findings),
            values=dict(p.published.values),
            tables=[
                TableOut(
                    name=t.name,
                    caption=t.caption,
                    columns=[ColumnOut(name=c.name, meaning=c.meaning, unit=c.unit) for c in t.columns],
                    rows=[dict(r) for r in t.rows],
                )
                for t in p.published.tables
            ],
        )
    return {
        "name": p.name,
        "title": p.title,
        "description": p.description,
        "reference": ReferenceOut(paper=p.reference.paper, citation=p.reference.citation, where=p.reference.where),
        "tcp_profile": p.tcp_profile,
        "parameters": [
            ParameterOut(
                name=q.name,
                meaning=q.meaning,
                unit=q.unit,
                default=q.default,
                paper_range=list(q.paper_range) if q.paper_range is not None else None,
                paper_values=list(q.paper_values) if q.paper_values is not None else None,
                expands_to=list(q.expands_to),
            )
            for q in p.parameters
        ],
        "published": published,
    }


@router.get("", response_model=list[PresetSummary], response_model_exclude_none=True, summary="List the presets")
async def list_all() -> list[PresetSummary]:
    """Every preset: what it reproduces, its parameters and the paper's published numbers."""
    return [PresetSummary(**_summary_fields(p)) for p in list_presets()]


@router.get(
    "/{name}",
    response_model=PresetDetail,
    response_model_exclude_none=True,
    summary="One preset, with its full scenario",
    responses={status.HTTP_404_NOT_FOUND: {"description": "No preset has this name."}},
)
async def get_one(name: str) -> PresetDetail:
    """The preset and its full scenario (every default spelled out, as the core reads it)."""
    try:
        p = get_preset(name)
    except UnknownPreset as e:
        raise HTTPException(status_code=status.HTTP_404_NOT_FOUND, detail=str(e)) from None
    return PresetDetail(**_summary_fields(p), scenario=Scenario.model_validate(p.scenario))
