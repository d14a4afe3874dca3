"""Closed-form TCP throughput models, vectorised with numpy.

- ``newreno``: paper 000's NewReno Slow-but-Steady (eq. 1-4) and Impatient (eq. 5-8), m*, the
  crossover m_t and the region map of Fig. 4;
- ``pftk``: Padhye et al. 1998, full (eq. 32) and approximate (eq. 33);
- ``mathis``: the square-root law of Mathis et al. 1997;
- ``cubic``: CUBIC's average window, RFC 9438 §5.1;
- ``common``: parameter metadata, checks (errors for impossible inputs, warnings outside the
  range a model is claimed for), broadcast and grid evaluation;
- ``registry``: the models by name.

Inputs in SI units (seconds, probabilities); throughput in packets/s, packets per RTT, and
bit/s when ``mss_bytes`` is given. See docs/models.md.
"""

from services.models.common import (
    DomainIssue,
    Evaluation,
    Model,
    ModelDomainError,
    ModelWarning,
    UnknownModelError,
)
from services.models.newreno import (
    crossover,
    imp_pkts_per_rtt,
    imp_timeout_pkts_per_rtt,
    m_star,
    regions,
    sbs_pkts_per_rtt,
    w_imp,
    w_sbs,
)
from services.models.registry import MODELS, evaluate, get_model, list_models

__all__ = [
    "MODELS",
    "DomainIssue",
    "Evaluation",
    "Model",
    "ModelDomainError",
    "ModelWarning",
    "UnknownModelError",
    "crossover",
    "evaluate",
    "get_model",
    "imp_pkts_per_rtt",
    "imp_timeout_pkts_per_rtt",
    "list_models",
    "m_star",
    "regions",
    "sbs_pkts_per_rtt",
    "w_imp",
    "w_sbs",
]
