"""The comparisons of stored runs and sweeps: load their observations, compare, add context.

Each function returns ``(context, rows)``: ``context`` is what a JSON body carries beside the
rows (the sweep or run, its preset and axes, the metric, the confidence, the regions …). Read
only: nothing here writes, so nothing needs committing.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.orm import Session

from services.comparisons import models as model_cmp
from services.comparisons import paper as paper_cmp
from services.comparisons import ratios as ratio_cmp
from services.comparisons.common import ObservationLike, axis_paths, check_metric, higher_is_better
from services.errors import ConflictError, InvalidInputError
from services.presets import UnknownPreset, get_preset
from services.stats import DEFAULT_CONFIDENCE
from services.users import Identity


@dataclass
class Source:
    """What is compared: a sweep's or a run's observations, and what a reader needs beside them.

    A sweep's observations are read only when a comparison needs them one by one (ratios,
    the paper): the model comparison reads the sweep's aggregates (`model_groups`)."""

    _observations: list[ObservationLike] | None = None
    sweep_id: uuid.UUID | None = None
    run_id: uuid.UUID | None = None
    preset: str | None = None
    axes: list[dict[str, Any]] = field(default_factory=list)
    overrides: dict[str, Any] = field(default_factory=dict)
    replications: int | None = None
    session: Session | None = None
    """Where a sweep's observations or aggregates are read from, when first asked for."""
    _version: Any = field(default=None, repr=False, compare=False)
    """The sweep's aggregates' version once read (`aggregates_version`)."""

    @property
    def observations(self) -> list[ObservationLike]:
        if self._observations is None:
            from services import sweeps

            assert self.session is not None and self.sweep_id is not None
            self._observations = list(sweeps.observations(self.session, self.sweep_id))
        return self._observations

    _level_observations: list[ObservationLike] | None = field(default=None, repr=False, compare=False)

    def observations_for(self, metric: str) -> list[ObservationLike]:
        """The observations a comparison of `metric` reads: the flow groups', or for a link
        metric the links', for a run metric the runs' (`services.sweeps.level_observations`)."""
        from services import sweeps
        from services.sweeps.spec import level_of

        level = level_of(metric)
        if level == "flow":
            return self.observations
        if self._level_observations is None:  # a sweep's, read when first asked for (a run's come with it)
            assert self.session is not None and self.sweep_id is not None
            self._level_observations = list(sweeps.level_observations(self.session, self.sweep_id))
        return [o for o in self._level_observations if o.type == level]

    def aggregates_version(self) -> Any:
        """A sweep's aggregates' version (`aggregates.Version`), read once; None for a run."""
        if (
            self._version is None
            and self._observations is None
            and self.session is not None
            and self.sweep_id is not None
        ):
            from services.sweeps import aggregates

            self._version = aggregates.version(self.session, self.sweep_id)
        return self._version

    def observation_count(self) -> int:
        version = self.aggregates_version()
        if version is not None:
            return int(version.observations)
        return len(self.observations)

    def model_groups(self) -> list[model_cmp.Group]:
        """The TCP groups with the model inputs' summaries: from the aggregates for a sweep."""
        if self._observations is None and self.session is not None and self.sweep_id is not None:
            from services.sweeps import aggregates

            values_at = aggregates.point_values(self.session, self.sweep_id)
            return [
                model_cmp.Group(c.point, values_at.get(c.point, {}), c.flow, c.variant, c.app, c.runs, c.summaries)
                for c in aggregates.read_cells(self.session, self.sweep_id, model_cmp.INPUT_METRICS, tcp_only=True)
            ]
        return model_cmp.groups_of(self.observations)

    def context(self) -> dict[str, Any]:
        return {
            "sweep_id": str(self.sweep_id) if self.sweep_id else None,
            "run_id": str(self.run_id) if self.run_id else None,
            "preset": self.preset,
            "axes": self.axes,
            "replications": self.replications,
            "observations": self.observation_count(),
        }


def _axes_of(spec: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The sweep's axes as [{"path", "values"}], ranges resolved."""
    from services.sweeps import SweepSpec
    from services.sweeps.grid import axis_values

    try:
        return [{"path": p, "values": v} for p, v in axis_values(SweepSpec.model_validate(spec))]
    except Exception:  # noqa: BLE001 - a stored spec from an older format: keep what it says
        return [{"path": a.get("path"), "values": a.get("values")} for a in spec.get("axes", []) if isinstance(a, dict)]


def load(
    session: Session, viewer: Identity, *, run_id: uuid.UUID | None = None, sweep_id: uuid.UUID | None = None
) -> Source:
    """The observations of a sweep or of a single run (exactly one of the two). NotFoundError
    for an unknown id or one `viewer` may not see, ConflictError for a run that has not
    succeeded."""
    from services import sweeps

    if (run_id is None) == (sweep_id is None):
        raise InvalidInputError(
            "give exactly one of run_id (a single run) or sweep_id (every point of a sweep)",
            path="$.sweep_id" if run_id is not None else "$.run_id",
            kind="missing" if run_id is None else "conflict",
        )
    if run_id is not None:
        from services.runs import get_run

        run = get_run(session, run_id, viewer)
        obs = sweeps.run_observations(session, run)
        source = Source(list(obs), run_id=run_id, preset=run.preset, replications=1)
        source._level_observations = list(sweeps.run_level_observations(session, run))
        return source
    assert sweep_id is not None
    sweep = sweeps.get_sweep(session, sweep_id, viewer)
    spec = dict(sweep.spec or {})
    return Source(
        None,
        session=session,
        sweep_id=sweep_id,
        preset=sweep.preset,
        axes=_axes_of(spec),
        overrides=dict(spec.get("overrides") or {}),
        replications=spec.get("replications"),
    )


def models_key(source: Source, *, models: Sequence[str] | None = None, m_from: str = "drops") -> tuple[Any, ...] | None:
    """What `compare_models` of a sweep is a function of, as a key to keep its answer under:
    the sweep, the models and m asked for, what its spec says (preset, axes, replications:
    an extension changes them) and its aggregates' version (`aggregates.Version`: any run
    added moves it). None for a single run. Unknown models or m_from are a 422, as in
    `compare_models`."""
    names = model_cmp.check_models(models)
    how = model_cmp.check_m_from(m_from)
    version = source.aggregates_version()
    if version is None:
        return None
    spec = json.dumps([source.preset, source.axes, source.replications], sort_keys=True, default=str)
    return ("models", source.sweep_id, names, how, spec, version)


def compare_models(
    source: Source, *, models: Sequence[str] | None = None, m_from: str = "drops"
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Model vs simulation (``services.comparisons.models``) for every point and TCP flow."""
    names = model_cmp.check_models(models)
    how = model_cmp.check_m_from(m_from)
    paths = [str(a["path"]) for a in source.axes] if source.sweep_id else axis_paths(source.observations)
    rows = model_cmp.model_rows(source.model_groups(), models=names, m_from=how, paths=paths)
    context = {
        **source.context(),
        "comparison": "models",
        "models": list(names),
        "m_from": how,
        "confidence": DEFAULT_CONFIDENCE,
        "inputs": {
            "p": "loss_event_rate",
            "m": "drops_per_loss_event" if how == "drops" else "loss_rate / loss_event_rate (ratio of the means)",
            "rtt_s": "mean_rtt_s",
            "rto_s": "mean_rto_s",
        },
        "error": "|sim − model| / sim (paper 000 §IV-B); signed_error = (model − sim) / sim",
    }
    return context, rows


def compare_ratios(
    source: Source,
    *,
    metric: str = "throughput_pkts_per_rtt",
    flow_a: str | None = None,
    flow_b: str | None = None,
    axis: str | None = None,
    baseline: str | None = None,
    other: str | None = None,
    flow: str | None = None,
    along: str | None = None,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Flow group vs flow group (``flow_a``, ``flow_b``) or axis value vs axis value (``axis``,
    ``baseline``, ``other``, optionally one ``flow``): exactly one of the two forms."""
    check_metric(metric)
    observed = source.observations_for(metric)
    by_flows = flow_a is not None or flow_b is not None
    by_axis = axis is not None or baseline is not None or other is not None
    if by_flows and by_axis:
        raise InvalidInputError(
            "compare either two flow groups (flow_a, flow_b) or two values of an axis (axis, baseline, other), not both",
            path="$.axis",
            kind="conflict",
        )
    if not by_flows and not by_axis:
        raise InvalidInputError(
            "say what to compare: flow_a and flow_b (two flow groups of the same runs), or axis, "
            "baseline and other (two values of one axis)",
            path="$.flow_a",
            kind="missing",
        )
    if by_flows:
        for name, value in (("flow_a", flow_a), ("flow_b", flow_b)):
            if value is None:
                raise InvalidInputError(
                    f"{name} is required with {'flow_b' if name == 'flow_a' else 'flow_a'}",
                    path=f"$.{name}",
                    kind="missing",
                )
        if flow is not None:
            raise InvalidInputError(
                "flow applies to an axis comparison; use flow_a and flow_b", path="$.flow", kind="unexpected"
            )
        assert flow_a is not None and flow_b is not None
        rows = ratio_cmp.flow_ratios(observed, metric=metric, flow_a=flow_a, flow_b=flow_b, axes=source.axes)
        compared: dict[str, Any] = {"a": {"flow": flow_a}, "b": {"flow": flow_b}}
    else:
        for name, value in (("axis", axis), ("baseline", baseline), ("other", other)):
            if value is None:
                raise InvalidInputError(f"{name} is required for an axis comparison", path=f"$.{name}", kind="missing")
        assert axis is not None and baseline is not None and other is not None
        rows = ratio_cmp.axis_ratios(
            observed, metric=metric, axis=axis, baseline=baseline, other=other, flow=flow, axes=source.axes
        )
        compared = {"a": {"axis": axis, "value": baseline}, "b": {"axis": axis, "value": other}, "flow": flow}
    walked, found = ratio_cmp.ratio_context(
        observed, rows, axis=axis if by_axis else None, along=along, axes=source.axes
    )
    context = {
        **source.context(),
        "comparison": "ratios",
        "metric": metric,
        "higher_is_better": higher_is_better(metric),
        "compared": compared,
        "confidence": DEFAULT_CONFIDENCE,
        "ratio": "mean_b / mean_a with Fieller's interval (paired by replication)",
        "verdict": "from the paired Student-t interval of b − a: a_better, b_better, no_significant_difference, insufficient_data",
        "regions_along": walked,
        "regions": found,
    }
    return context, rows


def compare_with_paper(source: Source) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The sweep beside its preset's published numbers (``services.comparisons.paper``)."""
    if source.sweep_id is None:
        raise InvalidInputError("the comparison with the paper is made for a sweep", path="$.sweep_id", kind="missing")
    try:
        preset = get_preset(source.preset) if source.preset else None
    except UnknownPreset:
        raise ConflictError(str(paper_cmp.not_comparable(source.preset))) from None
    summary, rows = paper_cmp.against_paper(preset, source.observations, axes=source.axes, overrides=source.overrides)
    context = {
        **source.context(),
        "comparison": "paper",
        "confidence": DEFAULT_CONFIDENCE,
        "reference": preset.reference.citation if preset else None,
        "summary": summary,
    }
    return context, rows
