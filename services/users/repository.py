"""Every query of the users feature. No commits here: the caller's boundary commits."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Sequence

from sqlalchemy import func, select, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session

from services.db.models import ApiToken, User


def user_by_token_hash(session: Session, token_hash: str) -> tuple[User, ApiToken] | None:
    """The live token with this hash and its user (revoked tokens do not count)."""
    row = session.execute(
        select(User, ApiToken)
        .join(ApiToken, ApiToken.user_id == User.id)
        .where(ApiToken.token_hash == token_hash, ApiToken.revoked_at.is_(None))
    ).first()
    return None if row is None else (row[0], row[1])


def touch_token(session: Session, token_id: uuid.UUID, now: dt.datetime, *, older_than: dt.timedelta) -> None:
    """Records the token's use, at most once per `older_than` (not a write per request)."""
    session.execute(
        update(ApiToken)
        .where(
            ApiToken.id == token_id,
            (ApiToken.last_used_at.is_(None)) | (ApiToken.last_used_at < now - older_than),
        )
        .values(last_used_at=now)
    )


def ensure_admin(session: Session, name: str) -> User:
    """The user `name` (in any case), created or promoted to admin (the bootstrap admin)."""
    user_id = session.execute(
        insert(User)
        .values(name=name, is_admin=True)
        .on_conflict_do_update(index_elements=[func.lower(User.name)], set_={"is_admin": True, "disabled_at": None})
        .returning(User.id)
    ).scalar_one()
    user = session.get(User, user_id, populate_existing=True)
    assert user is not None
    return user


def user_by_id(session: Session, user_id: uuid.UUID) -> User | None:
    return session.get(User, user_id)


def user_by_name(session: Session, name: str) -> User | None:
    """The user of that name, regardless of case (names are unique so: uq_users_name_lower)."""
    return session.execute(select(User).where(func.lower(User.name) == name.lower())).scalar_one_or_none()


def all_users(session: Session) -> Sequence[User]:
    return session.execute(select(User).order_by(User.name)).scalars().all()


def tokens_of(session: Session, user_id: uuid.UUID) -> Sequence[ApiToken]:
    return (
        session.execute(select(ApiToken).where(ApiToken.user_id == user_id).order_by(ApiToken.created_at, ApiToken.id))
        .scalars()
        .all()
    )


def token_by_id(session: Session, token_id: uuid.UUID) -> ApiToken | None:
    return session.get(ApiToken, token_id)
