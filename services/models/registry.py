"""Every model the service answers for, by name (GET /v1/models lists them)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from services.models import cubic, mathis, newreno, pftk
from services.models.common import Evaluation, Mode, Model, UnknownModelError

MODELS: dict[str, Model] = {
    m.name: m
    for m in (newreno.SBS_MODEL, newreno.IMP_MODEL, pftk.FULL_MODEL, pftk.APPROX_MODEL, mathis.MODEL, cubic.MODEL)
}


def get_model(name: str) -> Model:
    try:
        return MODELS[name]
    except KeyError:
        raise UnknownModelError(name, list(MODELS)) from None


def list_models() -> list[dict[str, Any]]:
    return [m.metadata() for m in MODELS.values()]


def evaluate(
    name: str, inputs: Mapping[str, Any], mode: Mode = "broadcast", max_points: int | None = None
) -> Evaluation:
    """Evaluate model ``name`` on ``inputs`` (each a number or an array). Raises
    UnknownModelError, or ModelDomainError for impossible inputs."""
    return get_model(name).evaluate(inputs, mode, max_points)
