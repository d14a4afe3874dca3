"""The dashboards: HTML pages drawn with the bundled Plotly (`pages`), and the tables they plot
that no resource router serves (`data`). One router for `api.main.ROUTERS`."""

from fastapi import APIRouter

from api.dashboard import data, pages

router = APIRouter()
router.include_router(data.router)
router.include_router(pages.router)

__all__ = ["router"]
