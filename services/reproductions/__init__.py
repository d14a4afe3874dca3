"""Reproductions: a paper's experiments run as sweeps of its presets, our numbers beside the
paper's, and each of the paper's conclusions judged against our results.

    paper = get_paper("002")
    obs = simulate_paper(paper)                  # in process (bench scripts), or
    obs = service.latest_observations(...)       # the caller's finished sweeps (the API)
    evaluation = paper.evaluate(obs)             # tables + conclusions with verdicts

docs/reproductions.md describes the experiments, the verdicts and the endpoints.
"""

from services.reproductions.model import (
    AGREE,
    DISAGREE,
    NO_DATA,
    NOT_RUN,
    PARTLY,
    VERDICTS,
    Evaluation,
    Experiment,
    Judged,
    Paper,
    Plot,
    Table,
)
from services.reproductions.registry import PAPERS, UnknownPaper, get_paper

__all__ = [
    "AGREE",
    "DISAGREE",
    "NOT_RUN",
    "NO_DATA",
    "PAPERS",
    "PARTLY",
    "VERDICTS",
    "Evaluation",
    "Experiment",
    "Judged",
    "Paper",
    "Plot",
    "Table",
    "UnknownPaper",
    "get_paper",
]
