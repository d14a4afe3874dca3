"""The dashboards: HTML pages drawn with the bundled Plotly (`pages`, open: they send a
browser without a token to /login), and the tables they plot that no resource router serves
(`data`, under /v1 like every other table, so behind a token)."""

from api.dashboard import data, pages

__all__ = ["data", "pages"]
