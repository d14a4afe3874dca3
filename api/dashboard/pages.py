"""The dashboard pages: server-rendered shells (Jinja2) whose scripts fetch the JSON API and
draw with Plotly, served from the installed `plotly` package (never a CDN).

/                                   → /dashboard
/login, /logout                     the token as an HttpOnly cookie (every page needs one)
/dashboard                          recent sweeps and runs, queue state
/dashboard/sweeps/{id}              a metric against an axis, CIs, model and paper overlays,
                                    throughput against delay per variant (Pantheon's view)
/dashboard/compare?a=…&b=…          two sweeps side by side on their common axes
/dashboard/runs/{id}                per-flow and link tables, cwnd / ssthresh / queue /
                                    delivery rate / one-way delay traces
/dashboard/comparisons?sweep_id=…   model-vs-simulation errors, variant ratios, the paper
/dashboard/regions                  paper 000 Fig. 4 for chosen R and RTO, a sweep's points on it
/dashboard/schedules/{id}           a metric across a schedule's firings, the baseline, the shifts
/dashboard/papers/{paper}           a paper's reproduction: ours beside the paper's, its conclusions ✓/✗
/static/…                           plotly.min.js, the pages' CSS and scripts

The pages ask the services only whether what they show exists for the signed-in user (the
same 404 page for what does not exist and what they may not see); every number they draw
comes from the JSON API, in the browser, with the same cookie.
"""

from __future__ import annotations

import gzip
import hashlib
import uuid
from functools import cache
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import quote

import plotly
from fastapi import APIRouter, Depends, HTTPException, Request
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates
from pydantic import BaseModel, Field

from api.auth import TOKEN_COOKIE, identify, set_login_cookie, token_of
from api.deps import SessionDep, SettingsDep
from api.limits import JsonBodyRoute
from services import runs, schedules, sweeps, users
from services.errors import NotAuthenticatedError, NotFoundError
from services.models import MODELS
from services.reproductions import UnknownPaper, get_paper
from services.sweeps import aggregates
from services.users import Identity

HERE = Path(__file__).parent
STATIC_DIR = HERE / "static"
PLOTLY_JS = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"

router = APIRouter(include_in_schema=False, route_class=JsonBodyRoute)
templates = Jinja2Templates(directory=HERE / "templates")

# Metrics a sweep or a comparison can plot: per flow (the numeric columns of a flow's result),
# per link (utilisation, queueing delay, drops) and per run (Jain's index, UF).
METRICS = sweeps.SUMMARY_METRICS
DEFAULT_METRIC = "throughput_pkts_per_rtt"


@cache
def file_version(path: Path) -> str:
    """A short content hash: the pages link `?v=` it, so a browser may cache for long."""
    return hashlib.sha256(path.read_bytes()).hexdigest()[:12]


def static_url(name: str) -> str:
    path = PLOTLY_JS if name == "plotly.min.js" else STATIC_DIR / name
    return f"/static/{name}?v={file_version(path)}"


templates.env.globals["static_url"] = static_url


async def page_viewer(request: Request) -> Identity:
    """The signed-in user (the login cookie, or a bearer header for scripts); a browser
    without a valid token goes to /login (303)."""
    try:
        return await identify(request, token_of(request))
    except NotAuthenticatedError:
        target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        raise HTTPException(303, headers={"Location": f"/login?next={quote(target, safe='')}"}) from None


Viewer = Annotated[Identity, Depends(page_viewer)]


def _page(
    request: Request,
    template: str,
    title: str,
    config: dict[str, Any],
    status_code: int = 200,
    viewer: Identity | None = None,
) -> HTMLResponse:
    """The template with its title and `config`, the JSON its script reads (#page-config)."""
    return templates.TemplateResponse(
        request, template, {"title": title, "config": config, "viewer": viewer}, status_code=status_code
    )


# What a user may own and keep private (docs/users.md): its 404 says it may be private, since a
# page must not tell a missing one from another user's (no leak), yet should not leave its
# reader thinking a link they were given is wrong.
PRIVATE_KINDS = ("run", "sweep", "schedule")


def not_found_page(request: Request, what: str, key: str, viewer: Identity | None = None) -> HTMLResponse:
    config = {"what": what, "key": key, "private": what in PRIVATE_KINDS and _uuid(key) is not None}
    return _page(request, "not_found.html", "Not found", config, status_code=404, viewer=viewer)


def _uuid(text: str) -> uuid.UUID | None:
    try:
        return uuid.UUID(text)
    except ValueError:
        return None


def _run_exists(session: Any, run_id: uuid.UUID | None, viewer: Identity) -> bool:
    """Whether the run exists and `viewer` may see it (one answer for both: no leak)."""
    if run_id is None:
        return False
    try:
        runs.get_run(session, run_id, viewer)
    except NotFoundError:
        return False
    return True


def _sweep_exists(session: Any, sweep_id: uuid.UUID | None, viewer: Identity) -> bool:
    if sweep_id is None:
        return False
    try:
        sweeps.get_sweep(session, sweep_id, viewer)
    except NotFoundError:
        return False
    return True


def _schedule_exists(session: Any, schedule_id: uuid.UUID | None, viewer: Identity) -> bool:
    if schedule_id is None:
        return False
    try:
        schedules.get_schedule(session, schedule_id, viewer)
    except NotFoundError:
        return False
    return True


# ---- static ------------------------------------------------------------------------------------


@cache
def gzipped_file(path: Path) -> bytes:
    return gzip.compress(path.read_bytes(), compresslevel=6, mtime=0)


@router.get("/static/{name:path}")
def static(name: str, request: Request) -> Response:
    """plotly.min.js from the installed plotly package, the rest from api/dashboard/static;
    gzipped for a browser that accepts it (Plotly is 4.8 MB, 1.4 MB gzipped). The pages link
    them content-addressed (`?v=`), so a day's caching is safe."""
    if name == "plotly.min.js":
        path = PLOTLY_JS
    else:
        try:
            path = (STATIC_DIR / name).resolve()
            found = path.is_relative_to(STATIC_DIR.resolve()) and path.is_file()
        except (ValueError, OSError):  # a NUL byte, a name too long for the file system
            found = False
        if not found:
            return Response("not found", status_code=404, media_type="text/plain")
    media = {".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8"}.get(
        path.suffix, "application/octet-stream"
    )
    headers = {"Cache-Control": "public, max-age=86400", "Vary": "Accept-Encoding"}
    if "gzip" in request.headers.get("accept-encoding", ""):
        return Response(gzipped_file(path), media_type=media, headers={**headers, "Content-Encoding": "gzip"})
    return FileResponse(path, media_type=media, headers=headers)


# ---- pages -------------------------------------------------------------------------------------


@router.get("/")
def root() -> RedirectResponse:
    return RedirectResponse("/dashboard", status_code=307)


# ---- sign in ----------------------------------------------------------------------------------


class Login(BaseModel):
    token: str = Field(min_length=1, max_length=1000)
    next: str | None = None


MAX_NEXT_CHARS = 2000


def safe_next(target: str | None) -> str:
    """Only a path on this server, never another site: no open redirect.

    A browser reads `//other.host`, `/\\other.host` and `\\\\other.host` as another host, and drops
    tabs and newlines before it reads a URL at all (`/<TAB>/other.host` is `//other.host`): so
    the path has no control character and no backslash, and starts with one `/` only."""
    if (
        target
        and len(target) <= MAX_NEXT_CHARS
        and target.startswith("/")
        and not target.startswith("//")
        and "\\" not in target
        and not any(ord(c) < 0x20 or ord(c) == 0x7F for c in target)
    ):
        return target
    return "/dashboard"


@router.get("/login", response_class=HTMLResponse)
def login_page(request: Request, next: str | None = None) -> HTMLResponse:
    return _page(request, "login.html", "Sign in", {"next": safe_next(next)})


@router.post("/login")
def login(body: Login, request: Request, session: SessionDep, settings: SettingsDep) -> JSONResponse:
    """Checks the token (401 if it is not valid) and keeps it as an HttpOnly, SameSite=Strict
    cookie: the pages' scripts never read it, and other sites cannot make a browser send it."""
    viewer = users.authenticate(session, body.token, settings)
    response = JSONResponse({"user": viewer.name, "next": safe_next(body.next)})
    set_login_cookie(response, body.token, request)
    return response


@router.post("/logout")
def logout() -> RedirectResponse:
    response = RedirectResponse("/login", status_code=303)
    response.delete_cookie(TOKEN_COOKIE, path="/")
    return response


# ---- pages -------------------------------------------------------------------------------------


@router.get("/dashboard", response_class=HTMLResponse)
def home(request: Request, viewer: Viewer) -> HTMLResponse:
    return _page(request, "home.html", "tcplab", {"user": viewer.name}, viewer=viewer)


@router.get("/dashboard/runs/{run_id}", response_class=HTMLResponse)
def run_page(request: Request, run_id: str, session: SessionDep, viewer: Viewer) -> HTMLResponse:
    key = _uuid(run_id)
    if not _run_exists(session, key, viewer):
        return not_found_page(request, "run", run_id, viewer)
    return _page(request, "run.html", f"Run {str(key)[:8]}", {"run_id": str(key)}, viewer=viewer)


def _metric(request: Request) -> str:
    metric = request.query_params.get("metric")
    return metric if metric in METRICS else DEFAULT_METRIC


@router.get("/dashboard/sweeps/{sweep_id}", response_class=HTMLResponse)
def sweep_page(request: Request, sweep_id: str, session: SessionDep, viewer: Viewer) -> HTMLResponse:
    key = _uuid(sweep_id)
    if not _sweep_exists(session, key, viewer):
        return not_found_page(request, "sweep", sweep_id, viewer)
    assert key is not None
    sweep = sweeps.get_sweep(session, key, viewer)
    config = {
        "sweep_id": str(key),
        "metrics": list(METRICS),
        "metric": _metric(request),
        "axis": request.query_params.get("axis"),
        "models": list(MODELS),  # the model overlay asks for the ones it draws, not every one
        # What the script asks for at once, beside the sweep's progress, rather than after it:
        # the preset's published numbers and the models of the variants measured so far.
        "preset": sweep.preset,
        "variants": aggregates.variants(session, key),
    }
    return _page(request, "sweep.html", f"Sweep {str(key)[:8]}", config, viewer=viewer)


@router.get("/dashboard/comparisons", response_class=HTMLResponse)
def comparison_page(
    request: Request, session: SessionDep, viewer: Viewer, sweep_id: str | None = None, run_id: str | None = None
) -> HTMLResponse:
    if (sweep_id is None) == (run_id is None):
        config: dict[str, Any] = {"what": "comparison", "key": "", "message": "Give either ?sweep_id= or ?run_id=."}
        return _page(request, "not_found.html", "Comparison", config, status_code=404, viewer=viewer)
    if sweep_id is not None:
        key = _uuid(sweep_id)
        if not _sweep_exists(session, key, viewer):
            return not_found_page(request, "sweep", sweep_id, viewer)
        config = {"sweep_id": str(key), "run_id": None}
    else:
        key = _uuid(run_id or "")
        if not _run_exists(session, key, viewer):
            return not_found_page(request, "run", run_id or "", viewer)
        config = {"sweep_id": None, "run_id": str(key)}
    config |= {"metrics": list(METRICS), "metric": _metric(request)}
    return _page(request, "comparison.html", "Comparison", config, viewer=viewer)


@router.get("/dashboard/regions", response_class=HTMLResponse)
def regions_page(request: Request, session: SessionDep, viewer: Viewer, sweep_id: str | None = None) -> HTMLResponse:
    key = None
    if sweep_id:
        key = _uuid(sweep_id)
        if not _sweep_exists(session, key, viewer):
            return not_found_page(request, "sweep", sweep_id, viewer)
    q = request.query_params
    config = {
        "sweep_id": str(key) if key else None,
        "inputs": {name: q.get(name) for name in ("rtt_s", "rto_s", "m_star", "p_min", "p_max", "m_max")},
    }
    return _page(request, "regions.html", "Region map", config, viewer=viewer)


@router.get("/dashboard/schedules/{schedule_id}", response_class=HTMLResponse)
def schedule_page(request: Request, schedule_id: str, session: SessionDep, viewer: Viewer) -> HTMLResponse:
    key = _uuid(schedule_id)
    if not _schedule_exists(session, key, viewer):
        return not_found_page(request, "schedule", schedule_id, viewer)
    q = request.query_params
    config = {
        "schedule_id": str(key),
        "metrics": list(schedules.HISTORY_METRICS),
        "metric": q.get("metric") if q.get("metric") in schedules.HISTORY_METRICS else None,
        "point": q.get("point"),
        "flow": q.get("flow"),
    }
    return _page(request, "schedule.html", f"Schedule {str(key)[:8]}", config, viewer=viewer)


@router.get("/dashboard/papers/{paper}", response_class=HTMLResponse)
def paper_page(request: Request, paper: str, viewer: Viewer) -> HTMLResponse:
    try:
        found = get_paper(paper)
    except UnknownPaper:
        return not_found_page(request, "reproduction of paper", paper, viewer)
    heading = f"Paper {found.number}" if found.number.isdigit() else f"Study: {found.title}"
    config = {"paper": found.number, "label": found.label}
    return _page(request, "paper.html", heading, config, viewer=viewer)


@router.get("/dashboard/compare", response_class=HTMLResponse)
def sweeps_compare_page(
    request: Request, session: SessionDep, viewer: Viewer, a: str | None = None, b: str | None = None
) -> HTMLResponse:
    """Two sweeps side by side (docs/experiments.md); either may be chosen on the page."""
    config: dict[str, Any] = {"metrics": list(METRICS), "metric": _metric(request)}
    for side, given in (("a", a), ("b", b)):
        key = _uuid(given) if given else None
        if given and not _sweep_exists(session, key, viewer):
            return not_found_page(request, "sweep", given, viewer)
        config[side] = str(key) if key else None
    config |= {"flow": request.query_params.get("flow"), "axis": request.query_params.get("axis")}
    return _page(request, "sweeps_compare.html", "Two sweeps side by side", config, viewer=viewer)
