"""Who is calling: a bearer token (scripts, the client) or the dashboard's login cookie.

Every /v1 router depends on `current_user` (api/main.py), so no /v1 endpoint answers without
a valid token. The cookie is the same token, HttpOnly and SameSite=Strict: another site's
page cannot make a browser send it. SameSite does not tell origins of one site apart
(`127.0.0.1:8001` is the same site as `127.0.0.1:8000`), so a request that changes something
(POST, PUT, PATCH, DELETE) authenticated by the cookie must also come from this server's own
pages: the browser's `Sec-Fetch-Site` says same-origin, or else its `Origin` is this server's
(403 otherwise). A bearer token is never sent by a browser on its own: those requests are not
checked.

Checking a token is a database query, and every request would make one: each API process keeps
the identities of the tokens it has seen for ``auth_cache_s`` seconds (``IdentityCache``,
2 s by default; 0 turns it off). A change to who someone is — a token revoked, a user
disabled, quotas or the admin flag changed — empties the cache of the API process that made
it once it has committed, so there it takes effect at once; another API process (a replica
behind the same balancer) sees it within ``auth_cache_s``.
"""

from __future__ import annotations

import threading
import time
from typing import Annotated
from urllib.parse import urlsplit

from fastapi import Depends, HTTPException, Request, Response
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool

from services import users
from services.db.session import run_after_commit, session_scope
from services.errors import PermissionDeniedError
from services.users import Identity
from services.users.rate import check_submission_rate
from services.users.tokens import hash_token

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


LOGIN_COOKIE_MAX_AGE_S = 30 * 24 * 3600


def set_login_cookie(response: Response, token: str, request: Request) -> None:
    """The dashboard's login: `token` as an HttpOnly, SameSite=Strict cookie (Secure over
    https), the pages' scripts never read it and other sites cannot make a browser send it."""
    response.set_cookie(
        TOKEN_COOKIE,
        token,
        max_age=LOGIN_COOKIE_MAX_AGE_S,
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
        path="/",
    )


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


class IdentityCache:
    """Identities by token hash for `ttl_s` seconds, at most `max_entries` of them.

    Only valid tokens are kept (a wrong one is looked up every time, as before). `clear()`
    also voids the look-ups already under way: an identity read before a change committed is
    never stored after it."""

    def __init__(self, ttl_s: float, max_entries: int = 10_000) -> None:
        self.ttl_s = ttl_s
        self.max_entries = max_entries
        self._entries: dict[str, tuple[float, Identity]] = {}
        self._generation = 0
        self._lock = threading.Lock()

    @property
    def generation(self) -> int:
        return self._generation

    def get(self, key: str) -> Identity | None:
        entry = self._entries.get(key)
        if entry is None or entry[0] < time.monotonic():
            return None
        return entry[1]

    def put(self, key: str, identity: Identity, generation: int) -> None:
        """Keeps `identity`, read when the cache was at `generation`, unless it changed since."""
        if self.ttl_s <= 0:
            return
        with self._lock:
            if generation != self._generation:
                return
            if len(self._entries) >= self.max_entries:
                now = time.monotonic()
                self._entries = {k: v for k, v in self._entries.items() if v[0] >= now}
                if len(self._entries) >= self.max_entries:
                    self._entries.clear()
            self._entries[key] = (time.monotonic() + self.ttl_s, identity)

    def clear(self) -> None:
        with self._lock:
            self._generation += 1
            self._entries.clear()


def forget_identities_after_commit(request: Request, session: Session) -> None:
    """For an operation that changes who someone is: this process's cached identities go once
    the change has committed."""
    run_after_commit(session, request.app.state.identities.clear)


async def identify(request: Request, token: str | None) -> Identity:
    """The identity `token` stands for (NotAuthenticatedError otherwise): from this process's
    cache when it has it — no database, no worker thread — else checked in PostgreSQL."""
    cache: IdentityCache = request.app.state.identities
    key = hash_token(token) if token else ""
    identity = cache.get(key) if token else None
    if identity is None:
        generation = cache.generation
        identity = await run_in_threadpool(_authenticate, request, token)
        cache.put(key, identity, generation)
    return identity


def _authenticate(request: Request, token: str | None) -> Identity:
    """In a worker thread, with a session of its own (committed: the bootstrap admin may be
    made, a token's last use noted)."""
    factory = request.app.state.session_factory
    if factory is None:
        raise HTTPException(status_code=503, detail="no database is configured")
    with session_scope(factory) as session:
        return users.authenticate(session, token, request.app.state.settings)


async def current_user(request: Request, _: Bearer) -> Identity:
    """The caller's identity; 401 (NotAuthenticatedError) without a valid token, 403 for a
    cookie-authenticated change from another origin (`check_same_origin`)."""
    check_same_origin(request)
    identity = await identify(request, token_of(request))
    request.state.user = identity.name  # the access log names the user, never the token
    return identity


CurrentUser = Annotated[Identity, Depends(current_user)]


def counted_submission(request: Request, viewer: CurrentUser) -> Identity:
    """The caller, once this submission is counted against their per-minute rate (429 past it)."""
    check_submission_rate(request.app.state.redis_url, viewer)
    return viewer


Submitter = Annotated[Identity, Depends(counted_submission)]
