"""Who is calling: a bearer token (scripts, the client) or the dashboard's login cookie.

Every /v1 router depends on `current_user` (api/main.py), so no /v1 endpoint answers without
a valid token. The cookie is the same token, HttpOnly and SameSite=Strict: another site's
page cannot make a browser send it.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from api.deps import SessionDep, SettingsDep
from services import users
from services.users import Identity
from services.users.rate import check_submission_rate

TOKEN_COOKIE = "tcplab_token"

# Declares the scheme in the OpenAPI document (the docs' "Authorize" button); a missing
# header is our own 401 below, with a message that says what to do.
bearer = HTTPBearer(auto_error=False, description="an API token (POST /v1/tokens, tcplab login)")
Bearer = Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]


def token_of(request: Request) -> str | None:
    """The bearer token of the Authorization header, else the login cookie's."""
    scheme, _, credentials = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() == "bearer" and credentials.strip():
        return credentials.strip()
    return request.cookies.get(TOKEN_COOKIE) or None


def current_user(request: Request, _: Bearer, session: SessionDep, settings: SettingsDep) -> Identity:
    """The caller's identity; 401 (NotAuthenticatedError) without a valid token."""
    identity = users.authenticate(session, token_of(request), settings)
    request.state.user = identity.name  # the access log names the user, never the token
    return identity


CurrentUser = Annotated[Identity, Depends(current_user)]


def counted_submission(request: Request, viewer: CurrentUser) -> Identity:
    """The caller, once this submission is counted against their per-minute rate (429 past it)."""
    check_submission_rate(request.app.state.redis_url, viewer)
    return viewer


Submitter = Annotated[Identity, Depends(counted_submission)]
