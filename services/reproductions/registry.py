"""The papers that have a reproduction, by number, then the studies, by key."""

from __future__ import annotations

from services.reproductions import (
    paper000,
    paper002,
    paper003,
    paper004,
    study_bufferbloat,
    study_cellular,
    study_dctcp,
    study_l4s,
)
from services.reproductions.model import Paper


class UnknownPaper(LookupError):
    def __init__(self, number: str, known: list[str]) -> None:
        self.number = number
        self.known = known
        super().__init__(f"no reproduction of paper {number!r}; known: {', '.join(known)}")


PAPERS: dict[str, Paper] = {
    p.number: p
    for p in (
        paper000.PAPER,
        paper002.PAPER,
        paper003.PAPER,
        paper004.PAPER,
        study_bufferbloat.PAPER,
        study_cellular.PAPER,
        study_dctcp.PAPER,
        study_l4s.PAPER,
    )
}


def get_paper(number: str) -> Paper:
    """Paper `number` ("002", or "paper002"); `UnknownPaper` if none."""
    key = number.removeprefix("paper")
    try:
        return PAPERS[key]
    except KeyError:
        raise UnknownPaper(number, list(PAPERS)) from None
