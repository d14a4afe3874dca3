"""API tokens: 256 random bits, shown once, stored as their sha256.

A fast hash is enough here (unlike passwords): nobody can guess 256 random bits, so what the
hash protects against is a leaked database turning into working tokens.
"""

from __future__ import annotations

import hashlib
import secrets

TOKEN_PREFIX = "tcplab_"
# Characters of a token kept in clear (its `prefix`), so a user can tell their tokens apart.
SHOWN_CHARS = len(TOKEN_PREFIX) + 6


def new_token() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def shown_part(token: str) -> str:
    return token[:SHOWN_CHARS]
