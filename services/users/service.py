"""Users and their tokens: authenticate a request, make users (admins only), make and
revoke tokens. Services never commit: the API request does."""

from __future__ import annotations

import datetime as dt
import hmac
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from services.db.models import ApiToken, User
from services.errors import ConflictError, NotAuthenticatedError, NotFoundError, PermissionDeniedError
from services.settings import Settings
from services.users import repository as repo
from services.users.identity import Identity, Quotas
from services.users.tokens import hash_token, new_token, shown_part

BOOTSTRAP_ADMIN = "admin"
TOUCH_EVERY = dt.timedelta(minutes=1)


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def identity_of(user: User, settings: Settings) -> Identity:
    return Identity(id=user.id, name=user.name, is_admin=user.is_admin, quotas=Quotas.of(user, settings))


def authenticate(session: Session, token: str | None, settings: Settings) -> Identity:
    """The identity a bearer token stands for. Raises NotAuthenticatedError otherwise.

    The bootstrap admin's token lives in the settings (TCPLAB_ADMIN_TOKEN), not in the
    database: it works on an empty database, and removing it from the settings revokes it.
    Its user, ``admin``, is made on first use.
    """
    if not token:
        raise NotAuthenticatedError(
            "this server needs an API token: send 'Authorization: Bearer <token>' "
            "(tcplab login stores one for the client)"
        )
    bootstrap = settings.admin_token.get_secret_value() if settings.admin_token else None
    if bootstrap and hmac.compare_digest(token.encode(), bootstrap.encode()):
        admin = repo.user_by_name(session, BOOTSTRAP_ADMIN)
        if admin is None or not admin.is_admin or admin.disabled_at is not None:
            # First use on this database (or someone demoted it): a write, once.
            admin = repo.ensure_admin(session, BOOTSTRAP_ADMIN)
        return identity_of(admin, settings)
    found = repo.user_by_token_hash(session, hash_token(token))
    if found is None:
        raise NotAuthenticatedError("the API token is unknown or revoked")
    user, api_token = found
    if user.disabled_at is not None:
        raise NotAuthenticatedError(f"user {user.name} is disabled")
    now = _now()
    if api_token.last_used_at is None or api_token.last_used_at < now - TOUCH_EVERY:
        # The row is at hand: most requests need no write at all.
        repo.touch_token(session, api_token.id, now, older_than=TOUCH_EVERY)
    return identity_of(user, settings)


def require_admin(viewer: Identity) -> None:
    if not viewer.is_admin:
        raise PermissionDeniedError("only an admin may do this")


@dataclass(frozen=True)
class NewToken:
    """A token just made: `secret` is shown this once and never stored."""

    row: ApiToken
    secret: str


QUOTA_FIELDS = ("max_queued_runs", "max_events_per_run", "max_flows", "submissions_per_minute")


def create_user(
    session: Session,
    viewer: Identity,
    *,
    name: str,
    is_admin: bool = False,
    quotas: dict[str, int | None] | None = None,
) -> tuple[User, NewToken]:
    """A new user (admins only) with a first token, so the admin can hand it over."""
    require_admin(viewer)
    user = User(name=name, is_admin=is_admin, **{k: v for k, v in (quotas or {}).items() if k in QUOTA_FIELDS})
    session.add(user)
    try:
        with session.begin_nested():
            session.flush()
    except IntegrityError:
        raise ConflictError(f"a user named {name!r} exists already (names are unique regardless of case)") from None
    return user, _add_token(session, user.id, "initial")


def update_user(session: Session, viewer: Identity, user_id: uuid.UUID, changes: dict[str, Any]) -> User:
    """Admins change quotas, the admin flag, and disable or re-enable a user."""
    require_admin(viewer)
    user = get_user(session, viewer, user_id)
    for field in (*QUOTA_FIELDS, "is_admin"):
        if field in changes:
            setattr(user, field, changes[field])
    if "disabled" in changes:
        if changes["disabled"] and user.id == viewer.id:
            raise ConflictError("an admin cannot disable themself")
        user.disabled_at = (user.disabled_at or _now()) if changes["disabled"] else None
    session.flush()
    return user


def get_user(session: Session, viewer: Identity, user_id: uuid.UUID) -> User:
    """A user's record: their own, or anyone's for an admin (others: not found)."""
    user = repo.user_by_id(session, user_id)
    if user is None or not (viewer.is_admin or user.id == viewer.id):
        raise NotFoundError("user", user_id)
    return user


def list_users(session: Session, viewer: Identity) -> Sequence[User]:
    require_admin(viewer)
    return repo.all_users(session)


def create_token(session: Session, viewer: Identity, *, name: str, user_id: uuid.UUID | None = None) -> NewToken:
    """A token for oneself, or (admins) for another user."""
    target = user_id or viewer.id
    if target != viewer.id:
        require_admin(viewer)
        get_user(session, viewer, target)
    return _add_token(session, target, name)


def _add_token(session: Session, user_id: uuid.UUID, name: str) -> NewToken:
    secret = new_token()
    row = ApiToken(user_id=user_id, name=name, prefix=shown_part(secret), token_hash=hash_token(secret))
    session.add(row)
    session.flush()
    return NewToken(row=row, secret=secret)


def list_tokens(session: Session, viewer: Identity, user_id: uuid.UUID | None = None) -> Sequence[ApiToken]:
    target = user_id or viewer.id
    get_user(session, viewer, target)
    return repo.tokens_of(session, target)


def revoke_token(session: Session, viewer: Identity, token_id: uuid.UUID) -> ApiToken:
    """Revoked at once: the next request with it is 401. Revoking twice is harmless."""
    token = repo.token_by_id(session, token_id)
    if token is None or not (viewer.is_admin or token.user_id == viewer.id):
        raise NotFoundError("token", token_id)
    if token.revoked_at is None:
        token.revoked_at = _now()
        session.flush()
    return token


def queued_runs_of(session: Session, viewer: Identity) -> int:
    from services.runs.repository import queued_count

    return queued_count(session, owner_id=viewer.id)
