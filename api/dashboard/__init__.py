"""The dashboards: HTML pages drawn with the bundled Plotly (`pages`, open: they send a
browser without a token to /login). The tables they plot are served by the resource routers
(`/v1/runs/{id}/flows|scenario|traces` in api/routers/runs.py, `/v1/regions` in
api/routers/models.py), under /v1 like every other table, so behind a token."""

from api.dashboard import pages

__all__ = ["pages"]
