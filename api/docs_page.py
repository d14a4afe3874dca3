"""/docs: Swagger UI from the installed `fastapi-swagger` package, never a CDN.

FastAPI's own /docs links Swagger UI's script and CSS on jsdelivr, so offline (a laptop on a
train, a lab network without egress) the page stays blank. The same page is built here with
FastAPI's `get_swagger_ui_html`, its assets served from `fastapi_swagger/resources/` as the
dashboard serves Plotly: content-addressed (`?v=`), gzipped when the browser accepts it,
cached for a day. Like /openapi.json, the page is open: it shows what the API offers, and
"Authorize" takes a token for the calls made from it.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from fastapi import APIRouter, Request
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import FileResponse, HTMLResponse, Response

from api.dashboard.pages import file_version, gzipped_file

SWAGGER_DIR = Path(str(resources.files("fastapi_swagger") / "resources"))
ASSETS = {
    "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
    "swagger-ui.css": "text/css; charset=utf-8",
    "favicon-32x32.png": "image/png",
}
ASSET_PREFIX = "/docs/assets"

# Swagger UI's own defaults ask validator.swagger.io about the document; no request leaves.
SWAGGER_PARAMETERS = {"validatorUrl": None, "persistAuthorization": True, "filter": True}

router = APIRouter(include_in_schema=False)


def asset_url(name: str) -> str:
    return f"{ASSET_PREFIX}/{name}?v={file_version(SWAGGER_DIR / name)}"


@router.get("/docs", response_class=HTMLResponse)
def docs(request: Request) -> HTMLResponse:
    root = request.scope.get("root_path", "").rstrip("/")
    return get_swagger_ui_html(
        openapi_url=root + (request.app.openapi_url or "/openapi.json"),
        title=f"{request.app.title} — API docs",
        swagger_js_url=root + asset_url("swagger-ui-bundle.js"),
        swagger_css_url=root + asset_url("swagger-ui.css"),
        swagger_favicon_url=root + asset_url("favicon-32x32.png"),
        swagger_ui_parameters=SWAGGER_PARAMETERS,
    )


@router.get(ASSET_PREFIX + "/{name}")
def asset(name: str, request: Request) -> Response:
    """One of the three files, by name only (nothing else of the package is reachable)."""
    media = ASSETS.get(name)
    if media is None:
        return Response("not found", status_code=404, media_type="text/plain")
    path = SWAGGER_DIR / name
    headers = {"Cache-Control": "public, max-age=86400", "Vary": "Accept-Encoding"}
    if not name.endswith(".png") and "gzip" in request.headers.get("accept-encoding", ""):
        return Response(gzipped_file(path), media_type=media, headers={**headers, "Content-Encoding": "gzip"})
    return FileResponse(path, media_type=media, headers=headers)
