"""`/v1/comparisons`: model vs simulation, variant vs variant, and a sweep vs the paper.

Read-only views over stored runs and sweeps (``services.comparisons``). Every endpoint returns a
table: JSON (context plus ``rows``), CSV or Parquet (``?format=``). docs/comparisons.md.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator
from typing import Annotated

from fastapi import APIRouter, Query, Response
from fastapi.exceptions import RequestValidationError

from api.auth import CurrentUser
from api.body_cache import BodyCache
from api.deps import SessionDep, UnitOfWorkRoute
from api.tabular import FORMAT_QUERY, TableFormat, finite, json_text, table_response
from services import comparisons
from services.comparisons import models as model_cmp
from services.comparisons import ratios as ratio_cmp
from services.errors import InvalidInputError, json_path_parts

router = APIRouter(prefix="/v1/comparisons", tags=["comparisons"], route_class=UnitOfWorkRoute)

MODEL_BODIES = BodyCache(max_bytes=96 << 20)
"""A sweep's model comparisons as JSON text, by `comparisons.models_key` (its aggregates'
version among it): 4.4 MB for 1,000 points × 2 groups × 4 models."""

RunId = Annotated[uuid.UUID | None, Query(description="A single succeeded run (give this or sweep_id).")]
SweepId = Annotated[uuid.UUID | None, Query(description="A sweep: every grid point (give this or run_id).")]
Name = Annotated[str | None, Query(max_length=200)]


@contextlib.contextmanager
def _query_errors() -> Iterator[None]:
    """A domain error about a query parameter becomes FastAPI's own 422 for that parameter
    (``loc: ["query", name]``), as if the parameter's declared type had refused it."""
    try:
        yield
    except InvalidInputError as e:
        parts = json_path_parts(e.path)
        name = parts[0] if parts else "query"
        raise RequestValidationError(
            [{"type": e.kind, "loc": ("query", name), "msg": e.reason, "input": None}]
        ) from None


@router.get("/models")
def compare_models(
    session: SessionDep,
    viewer: CurrentUser,
    run_id: RunId = None,
    sweep_id: SweepId = None,
    models: Annotated[
        list[str] | None,
        Query(
            max_length=20,
            description="Models to compare with (repeat the parameter or separate by commas); default "
            + ", ".join(model_cmp.DEFAULT_MODELS)
            + ". `GET /v1/models` lists them.",
        ),
    ] = None,
    m_from: Annotated[
        str,
        Query(
            max_length=20,
            description="Where m comes from: `drops` (the measured drops per loss event) or `ratio` "
            "(loss rate / loss event rate, as paper 000's Table II columns give it).",
        ),
    ] = "drops",
    fmt: TableFormat = FORMAT_QUERY,
) -> Response:
    """Model vs simulation, paper 000's Table II automated: for every grid point and TCP flow
    group, the models' inputs derived from the simulation (p = loss event rate, m = drops per
    loss event or the ratio of the rates, R = mean RTT, RTO = mean retransmit timer), averaged
    over the replications, each model's prediction in packets/RTT from the mean inputs, beside
    the simulated throughput (mean and 95 % Student-t interval), with the error
    |sim − model| / sim and the signed (model − sim) / sim.

    One row per point × flow × model; the point's axis values are columns named by their axis
    path. A model that does not apply (an undefined input, p = 0, outside its domain or its
    valid range) says why in `note`. 404 for an unknown run or sweep, 409 for a run that has
    not succeeded, 422 naming the parameter for bad input."""
    with _query_errors():
        source = comparisons.load(session, viewer, run_id=run_id, sweep_id=sweep_id)
        key = comparisons.models_key(source, models=models, m_from=m_from) if fmt == TableFormat.json else None
        body = MODEL_BODIES.get(key) if key is not None else None
        if body is not None:  # a sweep at the same version of its aggregates: the same text
            return Response(body, media_type="application/json")
        context, rows = comparisons.compare_models(source, models=models, m_from=m_from)
    if fmt == TableFormat.json:  # rows made finite by the comparison: one dump, not a pass over every value
        body = json_text({**finite(context), "rows": rows}).encode()
        if key is not None:
            MODEL_BODIES.put(key, body)
        return Response(body, media_type="application/json")
    name = f"comparison-models-{sweep_id or run_id}"
    return table_response(rows, fmt, name, body=context, first_columns=_first(source, model_cmp.FIRST_COLUMNS))


@router.get("/ratios")
def compare_ratios(
    session: SessionDep,
    viewer: CurrentUser,
    run_id: RunId = None,
    sweep_id: SweepId = None,
    metric: Annotated[
        str,
        Query(
            max_length=100,
            description="A metric per flow group (`throughput_pkts_per_rtt`, `goodput_bps`, …), per link (`utilization`, `p95_queue_delay_s`, …: flow_a, flow_b or flow name links) or per run (`jain`, `uf_percent`: flow `run`).",
        ),
    ] = "throughput_pkts_per_rtt",
    flow_a: Annotated[str | None, Query(max_length=200, description="Flow group a (e.g. `sbs`), with flow_b.")] = None,
    flow_b: Annotated[
        str | None, Query(max_length=200, description="Flow group b (e.g. `imp`), compared with a.")
    ] = None,
    axis: Annotated[
        str | None, Query(max_length=500, description="An axis of the sweep (e.g. `flows[*].variant`).")
    ] = None,
    baseline: Annotated[str | None, Query(max_length=500, description="The axis value that is a.")] = None,
    other: Annotated[str | None, Query(max_length=500, description="The axis value that is b.")] = None,
    flow: Annotated[
        str | None,
        Query(max_length=200, description="With axis: only this flow group (default: each group separately)."),
    ] = None,
    along: Annotated[
        str | None,
        Query(
            max_length=500,
            description="The axis the regions walk along (default: the first swept axis with several values).",
        ),
    ] = None,
    fmt: TableFormat = FORMAT_QUERY,
) -> Response:
    """Variant vs variant: b against a, paired by replication (replication r has the same seed
    at every point). Either two flow groups of the same runs (`flow_a`, `flow_b`: paper 000's
    Slow-but-Steady and Impatient pair) or two values of one axis (`axis`, `baseline` = a,
    `other` = b, the other axes held equal; optionally one `flow`).

    Per point: the means of a and b over the pairs, `ratio` = mean_b / mean_a with Fieller's
    95 % interval, the paired difference b − a with its Student-t interval, and `verdict`:
    `a_better` / `b_better` when that interval excludes 0 (better = higher, or lower for loss
    rates, timeouts, RTTs …), `no_significant_difference`, or `insufficient_data` (fewer than
    two pairs). `regions`: the contiguous runs of points along an axis with the same verdict."""
    with _query_errors():
        source = comparisons.load(session, viewer, run_id=run_id, sweep_id=sweep_id)
        context, rows = comparisons.compare_ratios(
            source,
            metric=metric,
            flow_a=flow_a,
            flow_b=flow_b,
            axis=axis,
            baseline=baseline,
            other=other,
            flow=flow,
            along=along,
        )
    name = f"comparison-ratios-{sweep_id or run_id}"
    if axis is None:
        columns = _first(source, ("point",), ratio_cmp.FLOW_FIRST_COLUMNS)
    else:
        columns = _first(source, ("point_a", "point_b"), ratio_cmp.AXIS_FIRST_COLUMNS, skip=axis)
    return table_response(rows, fmt, name, body=context, first_columns=columns)


@router.get("/paper")
def compare_with_paper(
    session: SessionDep,
    viewer: CurrentUser,
    sweep_id: Annotated[uuid.UUID, Query(description="A sweep of a paper preset.")],
    fmt: TableFormat = FORMAT_QUERY,
) -> Response:
    """A sweep of a paper preset beside the numbers the paper published.

    `paper000-table2-droptail` swept over `background_flows`: one row per row of paper 000's
    Table II — the SBS flow's loss event rate, loss rate, throughput and eq. (4)'s prediction
    (p measured, m = loss rate / loss event rate as in the paper), ours as means with 95 %
    intervals beside the paper's, with the relative differences; rows without a point of ours
    have nulls. `paper000-fig2a`/`paper000-fig2b` swept over `flows[*].loss.m`: per m the SBS
    and IMP throughputs with intervals and the paired verdict, our regions and crossover beside
    the paper's (`summary`), the models' errors and m_t for our measured R and RTO.

    409 when the sweep's preset has no published numbers (or none) or the sweep does not vary
    what they are published against; the message lists the presets that have them."""
    with _query_errors():
        source = comparisons.load(session, viewer, sweep_id=sweep_id)
        context, rows = comparisons.compare_with_paper(source)
    kind = context["summary"]["kind"]
    first = ("background_flows", "in_paper", "point") if kind == "table2" else ("point", "m")
    return table_response(rows, fmt, f"comparison-paper-{sweep_id}", body=context, first_columns=first)


def _first(source: comparisons.Source, *groups: tuple[str, ...], skip: str | None = None) -> list[str]:
    """Columns first in CSV/Parquet: the point, the axis values (but ``skip``, the axis an
    axis comparison is across), then the comparison's own."""
    out: list[str] = [] if skip is None else [skip]
    for group in groups:
        for column in group:
            if column not in out:
                out.append(column)
            if column in ("point", "point_b"):
                out += [a["path"] for a in source.axes if a["path"] not in out]
    return out if skip is None else out[1:]
