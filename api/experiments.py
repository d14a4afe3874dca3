"""The search query parameters GET /v1/runs and GET /v1/sweeps share (docs/experiments.md)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Query

from services.experiments import Archived, Search, make_search


def search_query(
    name: Annotated[
        str | None, Query(description="a substring of the name, any case (a run: its scenario's or its sweep's)")
    ] = None,
    tag: Annotated[list[str] | None, Query(description="has all of these tags (repeat: `tag=a&tag=b`)")] = None,
    param: Annotated[
        list[str] | None,
        Query(
            description="a scenario parameter's value, `PATH=VALUE` (`flows[0].variant=cubic`, `duration_s=20`, "
            "`flows[*].loss.m=8`: any flow); repeat for all of several"
        ),
    ] = None,
    archived: Annotated[
        Archived, Query(description="false: the active ones (default); true: the archived ones; all: both")
    ] = Archived.false,
) -> Search:
    """422 naming the parameter (`$.tag[1]`, `$.param[0]`) and the reason for a bad one."""
    return make_search(name=name, tags=tag, params=param, archived=archived)


SearchDep = Annotated[Search, Depends(search_query)]
