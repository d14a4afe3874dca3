"""Sweeps: a base scenario or preset along axes, with replications; their progress,
extension, stopping rule, and per-point summaries. Free of HTTP and Celery.

    sweep, created = create(session, SweepSpec.model_validate(body))
    # the boundary commits, then enqueues created.to_enqueue
    rows = sweep_summary_rows(session, sweep.id)  # from the aggregates kept as runs succeed

docs/sweeps.md describes the format and the statistics.
"""

from services.sweeps.grid import flow_groups, grid_points, plan_point, point_scenario, replication_seed
from services.sweeps.observations import (
    Observation,
    level_metrics,
    level_observations,
    observations,
    run_level_observations,
    run_observations,
    summary_rows,
    sweep_summary_rows,
)
from services.sweeps.service import (
    Created,
    Progress,
    after_run,
    after_runs,
    cancel,
    create,
    extend,
    get_sweep,
    list_sweeps,
    points_with_progress,
    progress_of,
    runs_of,
    set_shared,
    status_of,
    stop_reasons,
    stopping_outcome,
)
from services.sweeps.spec import (
    LINK_METRICS,
    NUMERIC_METRICS,
    RUN_METRICS,
    SUMMARY_METRICS,
    Axis,
    AxisRange,
    StoppingRule,
    SweepExtension,
    SweepSpec,
)

__all__ = [
    "LINK_METRICS",
    "NUMERIC_METRICS",
    "RUN_METRICS",
    "SUMMARY_METRICS",
    "Axis",
    "AxisRange",
    "Created",
    "Observation",
    "Progress",
    "StoppingRule",
    "SweepExtension",
    "SweepSpec",
    "after_run",
    "after_runs",
    "cancel",
    "create",
    "extend",
    "flow_groups",
    "get_sweep",
    "grid_points",
    "level_metrics",
    "level_observations",
    "list_sweeps",
    "observations",
    "plan_point",
    "point_scenario",
    "points_with_progress",
    "progress_of",
    "replication_seed",
    "run_level_observations",
    "run_observations",
    "runs_of",
    "set_shared",
    "status_of",
    "stop_reasons",
    "stopping_outcome",
    "summary_rows",
    "sweep_summary_rows",
]
