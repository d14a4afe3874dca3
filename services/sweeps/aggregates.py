"""A sweep's summaries kept as its runs succeed: per point × flow group × metric, the runs
and observations counted, the finite values' count, and their exact sum and sum of squares
(table `sweep_aggregates`).

An observation is what `observations.py` has always summarised — one flow group of one
succeeded run, its metric the mean over the group's flows — computed by the very same code
here. The sums are exact: each float goes in as its exact decimal expansion (`Decimal(x)` is
exact; so is its square under `EXACT`, a context that raises rather than rounds) and
PostgreSQL's numeric adds without rounding. So adding runs one at a time, in batches, in any
order, gives the same digits as `recompute` (a full pass over runs × flow_results), and a
summary read from them does not depend on the order runs finished in. The mean, standard
deviation and interval are derived at read time (`read_cells`): the exact
count·Σx² − (Σx)² can never go negative, so the spread of constant values is exactly 0.

Who calls `add_succeeded`: whoever moves runs to succeeded, in the same transaction, with
only the runs that moved (a redelivered result, or a result stored for a run cancelled
meanwhile, moves nothing and must add nothing): `services.runs.service.complete` (and its
batched sibling), and `services.sweeps.service._store` for runs answered from the cache when
they are created. Cancelled and failed runs never count.

Link and run metrics (`LINK_METRICS`, `RUN_METRICS`) are summed the same way, under the
link's name or "run" where a flow metric has its group's name, with `type` "link" or "run"
(observations.py's `level_observations`); their metric names are their own, so their keys
never meet a flow group's. Runs counted before they were (sweeps older than these metrics)
have none: `levels_complete` says so and the summary then reads them from the results.

What sums cannot give: medians, percentiles, and anything paired by replication (the ratio
comparisons, the paper comparison's paired verdicts) — those still read observations.
"""

from __future__ import annotations

import decimal
import math
import uuid
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, cast

from sqlalchemy import delete, func, select, text
from sqlalchemy.orm import Session

from services.db.models import FLOW_METRICS, FlowResult, Run, RunStatus, SweepAggregate, SweepPoint
from services.runs import repository as runs_repo
from services.stats import Summary, summary_of_moments
from services.sweeps import repository as repo
from services.sweeps.spec import NUMERIC_METRICS, RUN_GROUP, RUN_METRICS, level_of, metric_bounds

EXACT = decimal.Context(
    prec=decimal.MAX_PREC,
    Emax=decimal.MAX_EMAX,
    Emin=decimal.MIN_EMIN,
    traps=[decimal.Inexact, decimal.Rounded, decimal.InvalidOperation, decimal.Overflow],
)
"""Additions and squares of floats' expansions, never rounded (a rounding would raise)."""

Key = tuple[uuid.UUID, str, int, str]
"""(sweep, metric, point, flow group name): the table's primary key."""


@dataclass
class Sums:
    """One key's counts and exact sums (also the shape `stored` and `computed` compare)."""

    position: int
    type: str
    variant: str | None
    app: str | None
    runs: int = 0
    observations: int = 0
    count: int = 0
    sum: Decimal = Decimal(0)
    sum_squares: Decimal = Decimal(0)

    def totals(self) -> tuple[int, int, int, Decimal, Decimal]:
        return (self.runs, self.observations, self.count, self.sum, self.sum_squares)


# ---- writing ------------------------------------------------------------------------------------


def add_succeeded(session: Session, run_ids: Iterable[uuid.UUID]) -> None:
    """Adds the runs `run_ids` — which the caller has just moved to succeeded, in this
    transaction — to their sweeps' aggregates. Runs of no sweep are skipped; so are runs not
    succeeded (a safeguard, not a licence: a run already counted must not be passed again)."""
    counted = _counted_in_this_transaction(session)
    ids = [i for i in dict.fromkeys(run_ids) if i not in counted]
    if not ids:
        return
    counted.update(ids)
    session.flush()  # the caller's status changes are what the query below reads
    sums = _sums(session, [runs_repo.among(ids)])
    _upsert(session, sums)


def _counted_in_this_transaction(session: Session) -> set[uuid.UUID]:
    """The runs added in the session's current transaction: a second call for the same run
    (two layers of a completion both passing it on) adds nothing. Runs of a transaction that
    rolled back are forgotten with it."""
    transaction = session.get_transaction()
    held = session.info.get("tcplab.aggregated_runs")
    if held is None or held[0] is not transaction:
        held = session.info["tcplab.aggregated_runs"] = (transaction, set())
    return held[1]


def recompute(session: Session, sweep_id: uuid.UUID) -> None:
    """Replaces the sweep's aggregates by a full recomputation from its succeeded runs'
    flow results (the repair tool; the migration fills the table with it)."""
    session.flush()
    session.execute(delete(SweepAggregate).where(SweepAggregate.sweep_id == sweep_id))
    _upsert(session, computed(session, sweep_id))


def computed(session: Session, sweep_id: uuid.UUID) -> dict[Key, Sums]:
    """The sweep's aggregates as a full recomputation gives them (nothing written)."""
    session.flush()
    return _sums(session, [Run.sweep_id == sweep_id])


def stored(session: Session, sweep_id: uuid.UUID) -> dict[Key, Sums]:
    """The sweep's aggregates as stored."""
    session.flush()
    rows = session.execute(select(SweepAggregate).where(SweepAggregate.sweep_id == sweep_id)).scalars()
    return {
        (a.sweep_id, a.metric, a.point, a.flow): Sums(
            a.position, a.type, a.variant, a.app, a.runs, a.observations, a.count, a.sum, a.sum_squares
        )
        for a in rows
    }


def _sums(session: Session, conditions: list[Any]) -> dict[Key, Sums]:
    """The observations of the succeeded sweep runs matching `conditions`, summed per key."""
    # Imported here: observations.py reads this module's cells.
    from services.sweeps.observations import _group_observations, _level_observations

    columns = [getattr(FlowResult, m) for m in FLOW_METRICS]
    rows = session.execute(
        select(Run.sweep_id, Run.sweep_point, Run.replication, Run.id, Run.seed, FlowResult.position, *columns)
        .join(FlowResult, FlowResult.result_id == Run.result_id)
        .where(*conditions, Run.status == RunStatus.succeeded, Run.sweep_id.is_not(None))
    ).all()
    by_sweep: dict[uuid.UUID, list[Any]] = defaultdict(list)
    for r in rows:
        by_sweep[r[0]].append((r[1] or 0, r[2] or 0, r[3], r[4], r[5], dict(zip(FLOW_METRICS, r[6:], strict=True))))
    level_rows: dict[uuid.UUID, list[repo.LevelRow]] = defaultdict(list)
    for level_row in repo.level_rows(session, [*conditions, Run.sweep_id.is_not(None)]):
        level_rows[level_row[0]].append(level_row)  # type: ignore[index]
    out: dict[Key, Sums] = {}
    for sweep_id, flow_rows in by_sweep.items():
        points = {p for p, *_ in flow_rows}
        groups_at: dict[int, list[dict[str, Any]]] = dict(
            session.execute(
                select(SweepPoint.index, SweepPoint.flow_groups).where(
                    SweepPoint.sweep_id == sweep_id, SweepPoint.index.in_(points)
                )
            ).all()
        )
        flow_rows.sort(key=lambda r: (r[0], r[1], r[2], r[4]))
        seen: set[tuple[uuid.UUID, str]] = set()  # (run, group name): a run counts once per name
        for obs in _group_observations(flow_rows, groups_at, {}, sweep_id):
            first = _first_group(groups_at[obs.point], obs.flow)
            new_run = (obs.run_id, obs.flow) not in seen
            seen.add((obs.run_id, obs.flow))
            for metric in NUMERIC_METRICS:
                key = (sweep_id, metric, obs.point, obs.flow)
                cell = out.get(key)
                if cell is None:
                    group = groups_at[obs.point][first]
                    cell = out[key] = Sums(first, group["type"], group["variant"], group.get("app"))
                cell.runs += new_run
                cell.observations += 1
                _add(cell, obs.metrics.get(metric))
        positions: dict[int, dict[str, int]] = defaultdict(dict)
        for obs in _level_observations(level_rows.get(sweep_id, []), groups_at, {}, sweep_id):
            # A link's position: its order among the point's links (the "run" after them).
            at_point = positions[obs.point]
            position = at_point.setdefault(obs.flow, len(at_point))
            for metric, value in obs.metrics.items():
                key = (sweep_id, metric, obs.point, obs.flow)
                cell = out.get(key)
                if cell is None:
                    cell = out[key] = Sums(position, obs.type, obs.variant, None)
                cell.runs += 1
                cell.observations += 1
                _add(cell, value)
    return out


def _add(cell: Sums, value: float | None) -> None:
    """Adds one observation's value (None, ±inf and NaN count as observations, not values)."""
    if value is not None and math.isfinite(value):
        exact = Decimal(value)
        cell.count += 1
        cell.sum = EXACT.add(cell.sum, exact)
        cell.sum_squares = EXACT.add(cell.sum_squares, EXACT.multiply(exact, exact))


def _first_group(groups: Sequence[Mapping[str, Any]], name: str) -> int:
    return next(i for i, g in enumerate(groups) if g["name"] == name)


# The mean and variance are rounded to float8 once, in PostgreSQL, from the exact sums as they
# stand after each addition. A quotient of numerics has as many decimals as the larger scale of
# its operands (at least 16 significant digits), so the dividends are first multiplied by 1
# written with 30 decimals: the quotients reach float8 with ≥ 30 significant digits. The exact
# count·Σx² − (Σx)² is never negative. Beyond float8's range (absurd inputs) they are null and
# the reader derives them in Python from the sums (`read_cells`).
_ONE = "1." + "0" * 30
_IN_RANGE = "({x} = 0 OR abs({x}) BETWEEN 1e-300 AND 1e300)"


def _derived(n: str, total: str, squares: str) -> tuple[str, str]:
    m = f"({total} * {_ONE} / {n})"
    v = f"(({n} * {squares} - {total} * {total}) * {_ONE} / ({n}::numeric * ({n} - 1)))"
    # Nested: PostgreSQL does not promise to test `n > 0` before dividing by n in an AND.
    return (
        f"CASE WHEN {n} > 0 THEN CASE WHEN {_IN_RANGE.format(x=m)} THEN {m}::float8 END END",
        f"CASE WHEN {n} > 1 THEN CASE WHEN {_IN_RANGE.format(x=v)} THEN {v}::float8 END END",
    )


_NEW_MEAN, _NEW_VARIANCE = _derived("u.count", "u.sum", "u.sum_squares")
_ADDED_MEAN, _ADDED_VARIANCE = _derived(
    "(a.count + excluded.count)", "(a.sum + excluded.sum)", "(a.sum_squares + excluded.sum_squares)"
)
_UPSERT = text(
    f"""
    INSERT INTO sweep_aggregates AS a
        (sweep_id, metric, point, flow, position, type, variant, app, runs, observations, count, sum, sum_squares, mean, variance)
    SELECT u.*, {_NEW_MEAN}, {_NEW_VARIANCE} FROM unnest(
        CAST(:sweep_id AS uuid[]), CAST(:metric AS text[]), CAST(:point AS integer[]), CAST(:flow AS text[]),
        CAST(:position AS integer[]), CAST(:type AS text[]), CAST(:variant AS text[]), CAST(:app AS text[]),
        CAST(:runs AS integer[]), CAST(:observations AS integer[]), CAST(:count AS integer[]),
        CAST(:sum AS numeric[]), CAST(:sum_squares AS numeric[])
    ) AS u(sweep_id, metric, point, flow, position, type, variant, app, runs, observations, count, sum, sum_squares)
    ON CONFLICT (sweep_id, metric, point, flow) DO UPDATE SET
        runs = a.runs + excluded.runs,
        observations = a.observations + excluded.observations,
        count = a.count + excluded.count,
        sum = a.sum + excluded.sum,
        sum_squares = a.sum_squares + excluded.sum_squares,
        mean = {_ADDED_MEAN},
        variance = {_ADDED_VARIANCE}
    """
)


def _upsert(session: Session, sums: Mapping[Key, Sums]) -> None:
    """Adds `sums` to the table in one statement (the rows as arrays), in key order:
    concurrent transactions lock the rows they share in the same order."""
    if not sums:
        return
    ordered = sorted(sums.items(), key=lambda kv: (str(kv[0][0]), *kv[0][1:]))
    columns: dict[str, list[Any]] = {
        name: []
        for name in (
            "sweep_id",
            "metric",
            "point",
            "flow",
            "position",
            "type",
            "variant",
            "app",
            "runs",
            "observations",
            "count",
            "sum",
            "sum_squares",
        )
    }
    for (sweep_id, metric, point, flow), s in ordered:
        for name, value in zip(
            columns,
            (
                sweep_id,
                metric,
                point,
                flow,
                s.position,
                s.type,
                s.variant,
                s.app,
                s.runs,
                s.observations,
                s.count,
                s.sum,
                s.sum_squares,
            ),
            strict=True,
        ):
            columns[name].append(value)
    session.execute(_UPSERT, columns)


# ---- reading ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Cell:
    """One point × flow group of a sweep, its metrics summarised over its observations."""

    point: int
    flow: str
    type: str
    variant: str | None
    app: str | None
    runs: int
    """Succeeded runs (replications) with this group."""
    observations: int
    """Group observations (runs × groups of this name: the same unless names repeat)."""
    summaries: dict[str, Summary]

    @property
    def level(self) -> str:
        """flow, link or run."""
        return self.type if self.type in ("link", "run") else "flow"


_CELLS = """
SELECT metric, point, flow, type, variant, app, runs, observations, count, mean, variance,
       CASE WHEN mean IS NULL AND count > 0 THEN sum END,
       CASE WHEN variance IS NULL AND count > 1 THEN sum_squares END
FROM sweep_aggregates
WHERE sweep_id = :sweep_id AND metric = ANY(:metrics) {flow} {tcp}
ORDER BY point, CASE type WHEN 'link' THEN 1 WHEN 'run' THEN 2 ELSE 0 END, position
"""


def _beyond_float8(count: int, total: Decimal, squares: Decimal | None) -> tuple[float, float | None]:
    """The mean and variance where float8 cannot hold them: as Python's float() of the exact
    quotients gives them (±inf, or 0 for an underflow)."""
    context = decimal.Context(prec=60)
    mean = float(context.divide(total, count))
    if squares is None:
        return mean, None
    spread = EXACT.subtract(EXACT.multiply(Decimal(count), squares), EXACT.multiply(total, total))
    return mean, float(context.divide(spread, Decimal(count) * (count - 1)))


def read_cells(
    session: Session,
    sweep_id: uuid.UUID,
    metrics: Sequence[str],
    *,
    flow: str | None = None,
    tcp_only: bool = False,
) -> list[Cell]:
    """The sweep's cells in point order, then the scenario's group order, each with the
    summaries of `metrics` (count, mean, sample standard deviation, 95 % Student-t interval)."""
    sql = _CELLS.format(flow="AND flow = :flow" if flow is not None else "", tcp="AND type = 'tcp'" if tcp_only else "")
    params: dict[str, Any] = {"sweep_id": sweep_id, "metrics": list(metrics)}
    if flow is not None:
        params["flow"] = flow
    cells: dict[tuple[int, str, str], Cell] = {}
    for (
        metric,
        point,
        name,
        kind,
        variant,
        app,
        runs,
        observations,
        count,
        mean,
        var,
        total,
        squares,
    ) in session.execute(
        text(sql), params
    ).all():  # fetched at once: row by row, the driver's fetches cost more than the rows
        # Keyed by level too: a flow group and a link may share a name.
        key = (point, level_of(metric), name)
        cell = cells.get(key)
        if cell is None:
            cell = cells[key] = Cell(point, name, kind, variant, app, runs, observations, {})
        if total is not None or squares is not None:
            exact = session.execute(
                select(SweepAggregate.sum, SweepAggregate.sum_squares).where(
                    SweepAggregate.sweep_id == sweep_id,
                    SweepAggregate.metric == metric,
                    SweepAggregate.point == point,
                    SweepAggregate.flow == name,
                )
            ).one()
            beyond_mean, beyond_var = _beyond_float8(count, exact[0], exact[1] if count > 1 else None)
            mean = beyond_mean if mean is None else mean
            var = beyond_var if var is None else var
        cell.summaries[metric] = summary_of_moments(count, mean, var, bounds=metric_bounds(metric))
    return list(cells.values())


def levels_complete(session: Session, sweep_id: uuid.UUID) -> bool:
    """Whether every run the sweep's flow aggregates count is counted in its run-level ones
    too (false for runs counted before link and run metrics were aggregated)."""
    return session.execute(
        text(
            "SELECT coalesce(bool_and(r.runs IS NOT NULL AND r.runs = f.runs), true) FROM "
            "(SELECT point, max(runs) AS runs FROM sweep_aggregates WHERE sweep_id = :sweep_id AND metric = :flow "
            "GROUP BY point) f LEFT JOIN sweep_aggregates r ON r.sweep_id = :sweep_id AND r.metric = :run "
            "AND r.point = f.point AND r.flow = :group"
        ),
        {"sweep_id": sweep_id, "flow": NUMERIC_METRICS[0], "run": RUN_METRICS[0], "group": RUN_GROUP},
    ).scalar_one()


def observation_count(session: Session, sweep_id: uuid.UUID) -> int:
    """Every group observation of the sweep (what `len(observations(...))` was)."""
    return session.execute(
        select(func.coalesce(func.sum(SweepAggregate.observations), 0)).where(
            SweepAggregate.sweep_id == sweep_id, SweepAggregate.metric == NUMERIC_METRICS[0]
        )
    ).scalar_one()


@dataclass(frozen=True)
class Version:
    """Where a sweep's aggregates stand: two reads that find the same version read the same
    rows (a cache of what is derived from them may be kept under it)."""

    cells: int
    """Point × flow group cells (rows of one metric)."""
    observations: int
    """Every group observation of the sweep (`observation_count`)."""
    writes: int
    """The sum of the cells' row versions' transaction ids (`xmin`) for one metric.

    Every write rewrites a key's row of every metric (an addition, a recomputation: `_sums`
    sums all of NUMERIC_METRICS), and a row version carries the id of the transaction that
    wrote it — later transactions have larger ids — so a write moves this sum up (a row
    deleted and written again too) while `cells` stays. (Transaction ids wrap after 2^32;
    a read across a wraparound at worst misses the cache. Read outside the transactions that
    write: within one, its own rewrites keep its id.)"""


def version(session: Session, sweep_id: uuid.UUID) -> Version:
    """The sweep's aggregates' `Version`, from one metric's rows (a cell per point and group:
    1,000 points × 2 groups read in about a millisecond)."""
    cells, observations, writes = session.execute(
        text(
            "SELECT count(*), coalesce(sum(observations), 0), coalesce(sum(xmin::text::bigint), 0) "
            "FROM sweep_aggregates WHERE sweep_id = :sweep_id AND metric = :metric"
        ),
        {"sweep_id": sweep_id, "metric": NUMERIC_METRICS[0]},
    ).one()
    return Version(int(cells), int(observations), int(writes))


def variants(session: Session, sweep_id: uuid.UUID) -> list[str]:
    """The TCP variants of the sweep's cells (its summary's rows), sorted."""
    found = session.execute(
        select(SweepAggregate.variant)
        .where(
            SweepAggregate.sweep_id == sweep_id,
            SweepAggregate.metric == NUMERIC_METRICS[0],
            SweepAggregate.type == "tcp",
            SweepAggregate.variant.is_not(None),
        )
        .distinct()
    ).scalars()
    return sorted(cast(Iterable[str], found))  # the query excludes NULL


def point_values(session: Session, sweep_id: uuid.UUID) -> dict[int, dict[str, Any]]:
    """point -> its axis values."""
    return dict(
        session.execute(select(SweepPoint.index, SweepPoint.values).where(SweepPoint.sweep_id == sweep_id)).all()
    )
