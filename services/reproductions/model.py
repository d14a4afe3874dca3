"""What a paper's reproduction is made of: its experiments (sweeps of its presets), the tables
of our numbers beside the paper's, and its conclusions judged against our results.

Pure data and pure functions of observations (``services.sweeps.Observation``): the API, the
dashboard and the bench scripts all judge with the same code, whether the observations come
from stored sweeps (``services.reproductions.service``) or from runs made in the process
(``services.reproductions.local``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from services.comparisons.common import ObservationLike, metric_of, value_key
from services.presets.registry import Column  # one type with the presets' published columns
from services.stats import summarize

AGREE, PARTLY, DISAGREE, NO_DATA, NOT_RUN = "agree", "partly", "disagree", "no_data", "not_run"
VERDICTS: tuple[str, ...] = (AGREE, PARTLY, DISAGREE, NO_DATA, NOT_RUN)
"""agree: our results say what the paper says; partly: in part, or in the means only, or at
some of the settings; disagree: they say otherwise (or show no difference where the paper
claims one); no_data: the runs finished but do not measure it (e.g. a download that did not
complete in a shortened run); not_run: the experiment has no finished sweep yet."""


@dataclass(frozen=True)
class Experiment:
    """One sweep of a preset: what the paper ran, as tcplab runs it."""

    key: str
    """Stable within the paper ("exp1"); names the sweep and the tables."""
    title: str
    preset: str
    axes: tuple[Mapping[str, Any], ...]
    """[{"path", "values"}] as in a sweep spec."""
    overrides: Mapping[str, Any] = field(default_factory=dict)
    replications: int = 1
    combine: str = "product"

    def spec(self, overrides: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The body of `POST /v1/sweeps` for this experiment, `overrides` on top of its own."""
        body: dict[str, Any] = {
            "preset": self.preset,
            "axes": [dict(a) for a in self.axes],
            "replications": self.replications,
            "combine": self.combine,
        }
        merged = {**self.overrides, **(overrides or {})}
        if merged:
            body["overrides"] = merged
        return body

    @property
    def runs(self) -> int:
        sizes = [len(a["values"]) for a in self.axes]
        points = sizes[0] if self.combine == "zip" else _product(sizes)
        return points * self.replications


def _product(values: Sequence[int]) -> int:
    out = 1
    for v in values:
        out *= v
    return out


@dataclass(frozen=True)
class Plot:
    """How the page draws a table: each column of `y` against `x`, one line per value of
    `series`; `paper_y` (a column of the same rows) as markers where the paper gives a number."""

    x: str
    y: tuple[str, ...]
    series: str | None = None
    paper_y: str | None = None
    kind: str = "lines"
    """"lines" (a curve along x), "bars" (one bar per x) or "points" (markers only, one per row,
    x on a log axis growing to the left: Pantheon's throughput against delay)."""
    x_label: str = ""
    y_label: str = ""
    note: str = ""


@dataclass(frozen=True)
class Table:
    """Our numbers beside the paper's for one experiment: one row per point (or variant)."""

    key: str
    title: str
    caption: str
    experiment: str
    columns: tuple[Column, ...]
    rows: list[dict[str, Any]]
    plot: Plot | None = None

    def meta(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "title": self.title,
            "caption": self.caption,
            "experiment": self.experiment,
            "columns": [{"name": c.name, "label": c.label, "unit": c.unit} for c in self.columns],
            "plot": None
            if self.plot is None
            else {k: (list(v) if isinstance(v, tuple) else v) for k, v in vars(self.plot).items()},
            "rows": len(self.rows),
        }


@dataclass(frozen=True)
class Judged:
    """One of the paper's conclusions, and whether our results agree."""

    id: str
    text: str
    where: str
    experiment: str
    verdict: str
    ours: str = ""
    """What we measured, in words and numbers."""
    numbers: Mapping[str, Any] = field(default_factory=dict)
    reason: str | None = None
    """Why we do not agree, where we found out (docs/validation/paper00X.md)."""

    def row(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "experiment": self.experiment,
            "conclusion": self.text,
            "where": self.where,
            "verdict": self.verdict,
            "ours": self.ours,
            "reason": self.reason if self.verdict not in (AGREE, NOT_RUN) else None,
            "numbers": dict(self.numbers),
        }


@dataclass(frozen=True)
class Evaluation:
    tables: list[Table]
    conclusions: list[Judged]


Observations = Mapping[str, Sequence[ObservationLike]]
"""Experiment key -> the observations of its finished sweep (absent: not run)."""


@dataclass(frozen=True)
class Paper:
    """A paper of the papers folder ("003"), or a study ("bufferbloat"): experiments whose
    expected outcome comes from several published sources (RFCs, measurement papers) rather
    than from one paper's tables. Both are reproduced, judged and shown the same way."""

    number: str
    title: str
    citation: str
    setup: str
    """What the paper did, and where we had to choose (the presets' descriptions say more)."""
    experiments: tuple[Experiment, ...]
    evaluate: Callable[[Observations], Evaluation] = field(repr=False)
    validation: str
    """The document that discusses the outcome (docs/validation/...)."""
    levels: bool = False
    """Whether `evaluate` reads each run's link and run observations too (a bottleneck's
    queueing delay, Jain's index), beside the flow groups'."""

    @property
    def label(self) -> str:
        """How sweeps and files name it: "paper003" for a paper of the papers folder, the key
        itself for a study ("bufferbloat")."""
        return f"paper{self.number}" if self.number.isdigit() else self.number

    @property
    def presets(self) -> list[str]:
        return list(dict.fromkeys(e.preset for e in self.experiments))

    def experiment(self, key: str) -> Experiment:
        return next(e for e in self.experiments if e.key == key)


# ---- reading observations ---------------------------------------------------------------------


class Cells:
    """One experiment's observations, looked up by flow group and axis values."""

    def __init__(self, observations: Sequence[ObservationLike]) -> None:
        self.observations = list(observations)

    def __bool__(self) -> bool:
        return bool(self.observations)

    def select(self, flow: str, **where: Any) -> list[ObservationLike]:
        """The flow group's observations at the point(s) whose axis values match `where`
        (keys are axis paths with `.`/`[`/`]`/`*` spelled as given: pass them with **{...})."""
        want = {path: value_key(v) for path, v in where.items()}
        return sorted(
            (
                o
                for o in self.observations
                if o.flow == flow and all(value_key((o.values or {}).get(p)) == k for p, k in want.items())
            ),
            key=lambda o: o.replication,
        )

    def values(self, flow: str, metric: str, where: Mapping[str, Any]) -> list[float | None]:
        """Per replication, in order."""
        return [metric_of(o, metric) for o in self.select(flow, **where)]

    def mean(self, flow: str, metric: str, where: Mapping[str, Any]) -> float | None:
        return summarize(self.values(flow, metric, where)).mean

    def axis(self, path: str) -> list[Any]:
        """The values the observations have on an axis, in first-seen order."""
        seen: dict[str, Any] = {}
        for o in self.observations:
            v = (o.values or {}).get(path)
            seen.setdefault(value_key(v), v)
        return list(seen.values())


def weighed(direction: bool, ours: float | None, paper: float | None, tolerance: float) -> str:
    """A verdict on a published figure by its size as well as its direction (or location):
    agree when both hold (|ours − paper| ≤ tolerance, in the figure's own unit), partly when only
    the direction does, disagree when it does not; no_data without our figure."""
    if ours is None or paper is None:
        return NO_DATA
    if not direction:
        return DISAGREE
    return AGREE if abs(ours - paper) <= tolerance else PARTLY


def share(count: int, total: int) -> str:
    """agree when all, partly when some, disagree when none."""
    if total and count == total:
        return AGREE
    return PARTLY if count else DISAGREE


def not_run(paper_conclusions: Sequence[Mapping[str, Any]], experiment: str) -> list[Judged]:
    return [Judged(c["id"], c["text"], c["where"], experiment, NOT_RUN) for c in paper_conclusions]


Rows = dict[str, list[dict[str, Any]]]
"""A study's table rows, by table key."""
Judge = Callable[[Rows], tuple[str, str]]
"""A study's claim judged from its rows: (verdict, what we measured in words)."""


def judge_claims(
    claims: Sequence[Mapping[str, Any]],
    judges: Mapping[str, Judge],
    reasons: Mapping[str, str],
    rows: Rows,
    ran: Callable[[Mapping[str, Any]], bool],
) -> list[Judged]:
    """Each of a study's claims judged (`judges[id]`) where `ran(claim)`, else not run."""
    judged = []
    for claim in claims:
        verdict, ours = judges[claim["id"]](rows) if ran(claim) else (NOT_RUN, "")
        judged.append(
            Judged(
                claim["id"],
                claim["text"],
                claim["where"],
                claim["experiment"],
                verdict,
                ours,
                {},
                reasons.get(claim["id"]),
            )
        )
    return judged


def evaluate_by_experiment(
    observations: Observations,
    experiments: Sequence[Experiment],
    row_builders: Mapping[str, Callable[[Cells], list[dict[str, Any]]]],
    table_builders: Mapping[str, Callable[[list[dict[str, Any]]], Table]],
    claims: Sequence[Mapping[str, Any]],
    judges: Mapping[str, Judge],
    reasons: Mapping[str, str],
) -> Evaluation:
    """A study whose every experiment gives one table (rows keyed by the experiment): the rows of
    each finished experiment, their tables, and the claims judged on the experiments that ran."""
    rows: Rows = {}
    for e in experiments:
        cells = Cells(observations.get(e.key, ()))
        if cells:
            rows[e.key] = row_builders[e.key](cells)
    tables = [table_builders[key](rows[key]) for key in row_builders if rows.get(key)]
    return Evaluation(tables, judge_claims(claims, judges, reasons, rows, lambda c: c["experiment"] in rows))
