"""Who is calling: a bearer token (scripts, the client) or the dashboard's login cookie.

Every /v1 router depends on `current_user` (api/main.py), so no /v1 endpoint answers without
a valid token. The cookie is the same token, HttpOnly and SameSite=Strict: another site's
page cannot make a browser send it. SameSite does not tell origins of one site apart
(`127.0.0.1:8001` is the same site as `127.0.0.1:8000`), so a request that changes something
(POST, PUT, PATCH, DELETE) authenticated by the cookie must also come from this server's own
pages: the browser's `Sec-Fetch-Site` says same-origin, or else its `Origin` is this server's
(403 otherwise). A bearer token is never sent by a browser on its own: those requests are not
checked.
"""

from __future__ import annotations

from typing import Annotated
from urllib.parse import urlsplit

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from api.deps import SessionDep, SettingsDep
from services import users
from services.errors import PermissionDeniedError
from services.users import Identity
from services.users.rate import check_submission_rate

TOKEN_COOKIE = "tcplab_token"

# Declares the scheme in the OpenAPI document (the docs' "Authorize" button); a missing
# header is our own 401 below, with a message that says what to do.
bearer = HTTPBearer(auto_error=False, description="an API token (POST /v1/tokens, tcplab login)")
Bearer = Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]


SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def _bearer_of(request: Request) -> str | None:
    scheme, _, credentials = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() == "bearer" and credentials.strip():
        return credentials.strip()
    return None


def token_of(request: Request) -> str | None:
    """The bearer token of the Authorization header, else the login cookie's."""
    return _bearer_of(request) or request.cookies.get(TOKEN_COOKIE) or None


def check_same_origin(request: Request) -> None:
    """PermissionDeniedError (403) for a cookie-authenticated request that changes something
    and comes from another origin's page (cross-site request forgery)."""
    if request.method in SAFE_METHODS or _bearer_of(request) or TOKEN_COOKIE not in request.cookies:
        return
    fetch_site = request.headers.get("sec-fetch-site")
    origin = request.headers.get("origin")
    if fetch_site is not None:  # the browser's own verdict, whatever proxies did to Host
        allowed = fetch_site in ("same-origin", "none")
        source = f"a {fetch_site} page"
    elif origin is not None:
        # Host and port only: a proxy that ends TLS leaves http:// to us, https:// to the page.
        allowed = urlsplit(origin).netloc.lower() == request.headers.get("host", "").lower()
        source = f"a page of {origin}"
    else:
        return  # not a browser, or one too old to say: such a client is not forging anything
    if not allowed:
        raise PermissionDeniedError(
            f"refused: a {request.method} signed in with the dashboard's cookie must come from this "
            f"server's own pages, not from {source} (scripts send 'Authorization: Bearer <token>')"
        )


def current_user(request: Request, _: Bearer, session: SessionDep, settings: SettingsDep) -> Identity:
    """The caller's identity; 401 (NotAuthenticatedError) without a valid token, 403 for a
    cookie-authenticated change from another origin (`check_same_origin`)."""
    check_same_origin(request)
    identity = users.authenticate(session, token_of(request), settings)
    request.state.user = identity.name  # the access log names the user, never the token
    return identity


CurrentUser = Annotated[Identity, Depends(current_user)]


def counted_submission(request: Request, viewer: CurrentUser) -> Identity:
    """The caller, once this submission is counted against their per-minute rate (429 past it)."""
    check_submission_rate(request.app.state.redis_url, viewer)
    return viewer


Submitter = Annotated[Identity, Depends(counted_submission)]
