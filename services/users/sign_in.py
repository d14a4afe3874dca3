"""Sign-in links: a URL that signs a browser into the dashboard once, within a minute.

A script or notebook holds an API token; a browser it opens (or a headless one taking a
screenshot) has no cookie. The caller asks for a link to a page; opening it sets the login
cookie — the caller's own token, as /login would — and goes to the page.

The code in the link is 256 random bits. Redis keeps, under the code's sha256 and for
`LINK_TTL_S` seconds, the page and the caller's token sealed with a keystream drawn from the
code (SHAKE-256 of it; each code is used for one seal only): what Redis holds is useless
without the link, and the link is consumed by the first request that opens it (the read and
the delete are one transaction). No table: nothing outlives the minute.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from dataclasses import dataclass

import redis

from services.users.rate import pooled_client

LINK_TTL_S = 60
KEY_PREFIX = "tcplab:sign-in:"


class SignInUnavailable(Exception):
    """Redis is not configured or did not answer: no link can be made or used (a 503)."""


@dataclass(frozen=True)
class SignInLink:
    code: str
    path: str
    expires_in_s: int


def _key(code: str) -> str:
    return KEY_PREFIX + hashlib.sha256(code.encode()).hexdigest()


def _keystream(code: str, size: int) -> bytes:
    # Domain-separated from the Redis key (sha256 of the bare code).
    return hashlib.shake_256(b"tcplab sign-in seal\x00" + code.encode()).digest(size)


def _seal(code: str, token: str) -> str:
    data = token.encode()
    return bytes(a ^ b for a, b in zip(data, _keystream(code, len(data)), strict=True)).hex()


def _unseal(code: str, sealed: str) -> str:
    data = bytes.fromhex(sealed)
    return bytes(a ^ b for a, b in zip(data, _keystream(code, len(data)), strict=True)).decode()


def create_sign_in_link(redis_url: str | None, token: str, path: str, *, ttl_s: int = LINK_TTL_S) -> SignInLink:
    """A single-use link that signs in with `token` and lands on `path` (already checked to be
    a path of this server). SignInUnavailable when Redis does not answer."""
    if redis_url is None:
        raise SignInUnavailable("sign-in links need Redis, and none is configured")
    code = secrets.token_urlsafe(32)
    record = json.dumps({"path": path, "token": _seal(code, token)})
    try:
        pooled_client(redis_url).set(_key(code), record, ex=ttl_s, nx=True)
    except redis.RedisError as exc:
        raise SignInUnavailable(f"sign-in links need Redis, which did not answer: {exc}") from None
    return SignInLink(code=code, path=path, expires_in_s=ttl_s)


def redeem_sign_in_link(redis_url: str | None, code: str) -> tuple[str, str] | None:
    """(token, path) of a link not used and not expired, which is used up from now on; None
    for an unknown, expired or already used code."""
    if redis_url is None or not code or len(code) > 100:
        return None
    try:
        pipe = pooled_client(redis_url).pipeline(transaction=True)
        pipe.get(_key(code))
        pipe.delete(_key(code))
        record, _ = pipe.execute()
    except redis.RedisError as exc:
        raise SignInUnavailable(f"sign-in links need Redis, which did not answer: {exc}") from None
    if record is None:
        return None
    data = json.loads(record)
    return _unseal(code, data["token"]), data["path"]
