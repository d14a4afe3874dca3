"""Sign-in links (`services.users.sign_in`): a script's token opens a dashboard page in a browser.

POST /v1/sign-in-links {"path": "/dashboard/sweeps/…"}   the caller's own link, single-use, 60 s
GET  /sign-in/{code}                                     sets the login cookie, then goes to the page

The link signs in as the caller — the token that made the request — and nobody else: the
body names only the page. The page is a path of this server (the rule of /login's `next`).
Opening the link answers a small page that moves on by itself (a meta refresh) rather than a
redirect: a link clicked in another site's page (a notebook) is a cross-site navigation, and
the browser would not send the SameSite=Strict cookie along a redirect that continues it.
"""

from __future__ import annotations

import html
from typing import Any

from fastapi import APIRouter, HTTPException, Request, status
from fastapi.responses import HTMLResponse
from pydantic import BaseModel, ConfigDict, Field

from api.auth import CurrentUser, identify, set_login_cookie, token_of
from api.dashboard.pages import MAX_NEXT_CHARS, safe_next
from api.limits import JsonBodyRoute
from services.errors import InvalidInputError, NotAuthenticatedError
from services.users.sign_in import SignInUnavailable, create_sign_in_link, redeem_sign_in_link

router = APIRouter(prefix="/v1", tags=["users"], route_class=JsonBodyRoute)
open_router = APIRouter(include_in_schema=False)

LINK_PATH = "/sign-in/"
PRIVATE = {"Cache-Control": "no-store", "Referrer-Policy": "no-referrer"}


class SignInLinkRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str = Field(
        default="/dashboard",
        max_length=MAX_NEXT_CHARS,
        description="The page to land on: a path of this server (`/dashboard/sweeps/<id>`), with its query.",
    )


class SignInLinkOut(BaseModel):
    url: str = Field(description="The link, absolute as this request reached the server.")
    link_path: str = Field(description="The link's path (for a client that knows the server's address better).")
    path: str = Field(description="The page it lands on.")
    user: str = Field(description="Who it signs in: the caller.")
    expires_in_s: int


@router.post("/sign-in-links", status_code=status.HTTP_201_CREATED, response_model=SignInLinkOut)
def create_link(body: SignInLinkRequest, request: Request, viewer: CurrentUser) -> Any:
    """A link that signs a browser in as the caller once, within a minute, and opens `path`
    (`tcplab open`). 422 for a path that is not this server's."""
    if safe_next(body.path) != body.path:
        raise InvalidInputError(
            "must be a path of this server: one leading '/', no backslash or control character "
            "(not another host, not '//host')",
            path="$.path",
            kind="value_error",
        )
    token = token_of(request)
    assert token is not None  # CurrentUser authenticated it
    try:
        link = create_sign_in_link(request.app.state.redis_url, token, body.path)
    except SignInUnavailable as exc:
        raise HTTPException(503, detail=str(exc), headers={"Retry-After": "5"}) from None
    link_path = LINK_PATH + link.code
    return SignInLinkOut(
        url=str(request.base_url).rstrip("/") + link_path,
        link_path=link_path,
        path=link.path,
        user=viewer.name,
        expires_in_s=link.expires_in_s,
    )


def _page(title: str, body: str, status_code: int, refresh_to: str | None = None) -> HTMLResponse:
    refresh = f'<meta http-equiv="refresh" content="0;url={html.escape(refresh_to)}">' if refresh_to else ""
    text = (
        f'<!doctype html><html><head><meta charset="utf-8">{refresh}<title>{html.escape(title)}</title></head>'
        f"<body><p>{body}</p></body></html>"
    )
    return HTMLResponse(text, status_code=status_code, headers=PRIVATE)


@open_router.get(LINK_PATH + "{code}", response_class=HTMLResponse)
async def open_link(code: str, request: Request) -> HTMLResponse:
    """Signs in with the link's token (the login cookie) and moves on to its page; 410 for a
    link that is unknown, expired, already used, or whose token was revoked since."""
    gone = _page(
        "Sign-in link expired",
        "This sign-in link has expired or was already used: ask for a new one (<code>tcplab open</code>) "
        'or <a href="/login">sign in</a>.',
        status.HTTP_410_GONE,
    )
    try:
        redeemed = redeem_sign_in_link(request.app.state.redis_url, code)
    except SignInUnavailable as exc:
        raise HTTPException(503, detail=str(exc), headers={"Retry-After": "5"}) from None
    if redeemed is None:
        return gone
    token, path = redeemed
    try:
        viewer = await identify(request, token)
    except NotAuthenticatedError:
        return gone
    target = safe_next(path)
    response = _page(
        "Signing in",
        f'Signed in as {html.escape(viewer.name)}: <a href="{html.escape(target)}">continue</a>.',
        status.HTTP_200_OK,
        refresh_to=target,
    )
    set_login_cookie(response, token, request)
    return response
