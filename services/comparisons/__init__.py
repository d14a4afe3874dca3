"""Comparisons: model versus simulation, variant versus variant, and ours versus the paper.

- ``models``: paper 000's Table II for any run or sweep — the models' inputs derived from the
  simulation, each model's prediction and its error (:func:`model_vs_sim`);
- ``ratios``: two flow groups of the same runs, or two values of one axis, paired by
  replication — ratios with Fieller intervals, paired differences, verdicts and the regions
  where one is significantly better (:func:`flow_ratios`, :func:`axis_ratios`, :func:`regions`);
- ``paper``: a sweep of a paper preset beside the numbers the paper published (Table II,
  Fig. 2's regions and crossover) (:func:`against_paper`);
- ``service``: the same for stored runs and sweeps (``load`` then ``compare_*``).

The comparison functions are pure functions of observations (``services.sweeps.Observation``).
docs/comparisons.md describes the statistics and the endpoints.
"""

from services.comparisons.common import METRICS, ObservationLike
from services.comparisons.models import DEFAULT_MODELS, derive_inputs, model_vs_sim, predict
from services.comparisons.paper import COMPARABLE, against_paper
from services.comparisons.ratios import axis_ratios, compare_pairs, flow_ratios, regions
from services.comparisons.service import Source, compare_models, compare_ratios, compare_with_paper, load, models_key
from services.stats import fieller_interval as fieller  # its home is services.stats; the name stays for callers

__all__ = [
    "COMPARABLE",
    "DEFAULT_MODELS",
    "METRICS",
    "ObservationLike",
    "Source",
    "against_paper",
    "axis_ratios",
    "compare_models",
    "compare_pairs",
    "compare_ratios",
    "compare_with_paper",
    "derive_inputs",
    "fieller",
    "flow_ratios",
    "load",
    "model_vs_sim",
    "models_key",
    "predict",
    "regions",
]
