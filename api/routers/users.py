"""`/v1/me`, `/v1/users` (admins) and `/v1/tokens`: who you are, who may use the server,
and the tokens they use it with. A token is shown once, when it is made."""

from __future__ import annotations

import uuid
from typing import Any

from fastapi import APIRouter, Request, status

from api.auth import CurrentUser, forget_identities_after_commit
from api.deps import SessionDep
from api.limits import JsonBodyRoute
from api.schemas.users import (
    MeOut,
    NewTokenOut,
    TokenCreate,
    TokenOut,
    UserCreate,
    UserCreated,
    UserOut,
    UserUpdate,
    quota_changes,
)
from services import users

router = APIRouter(prefix="/v1", tags=["users"], route_class=JsonBodyRoute)


@router.get("/me", response_model=MeOut)
def me(viewer: CurrentUser, session: SessionDep) -> Any:
    """The caller: name, admin or not, the quotas in force and how many runs they have queued."""
    return MeOut.of(viewer, users.queued_runs_of(session, viewer))


@router.post("/users", status_code=status.HTTP_201_CREATED, response_model=UserCreated)
def create_user(body: UserCreate, viewer: CurrentUser, session: SessionDep) -> Any:
    """Admins only. Returns the user and their first token (shown once). 409 if the name is taken."""
    user, token = users.create_user(session, viewer, name=body.name, is_admin=body.is_admin, quotas=quota_changes(body))
    return UserCreated(**UserOut.of(user).model_dump(), token=NewTokenOut.made(token.row, token.secret))


@router.get("/users", response_model=list[UserOut])
def list_users(viewer: CurrentUser, session: SessionDep) -> Any:
    """Admins only."""
    return [UserOut.of(u) for u in users.list_users(session, viewer)]


@router.get("/users/{user_id}", response_model=UserOut)
def get_user(user_id: uuid.UUID, viewer: CurrentUser, session: SessionDep) -> Any:
    """One's own record, or anyone's for an admin."""
    return UserOut.of(users.get_user(session, viewer, user_id))


@router.patch("/users/{user_id}", response_model=UserOut)
def update_user(
    user_id: uuid.UUID, body: UserUpdate, request: Request, viewer: CurrentUser, session: SessionDep
) -> Any:
    """Admins only: quotas, the admin flag, `disabled` (a disabled user's tokens stop working)."""
    changes = quota_changes(body, extra=("is_admin", "disabled"))
    updated = users.update_user(session, viewer, user_id, changes)
    forget_identities_after_commit(request, session)
    return UserOut.of(updated)


@router.post("/tokens", status_code=status.HTTP_201_CREATED, response_model=NewTokenOut)
def create_token(body: TokenCreate, viewer: CurrentUser, session: SessionDep) -> Any:
    """A new token for yourself (admins: for `user_id`). The response is the only time the
    token is shown."""
    made = users.create_token(session, viewer, name=body.name, user_id=body.user_id)
    return NewTokenOut.made(made.row, made.secret)


@router.get("/tokens", response_model=list[TokenOut])
def list_tokens(viewer: CurrentUser, session: SessionDep, user_id: uuid.UUID | None = None) -> Any:
    """Your tokens (admins: `user_id`'s), revoked ones included, without their secrets."""
    return [TokenOut.of(t) for t in users.list_tokens(session, viewer, user_id)]


@router.delete("/tokens/{token_id}", response_model=TokenOut)
def revoke_token(token_id: uuid.UUID, request: Request, viewer: CurrentUser, session: SessionDep) -> Any:
    """Revokes a token at once; the next request with it gets 401 (from another API process:
    within `auth_cache_s`)."""
    revoked = users.revoke_token(session, viewer, token_id)
    forget_identities_after_commit(request, session)
    return TokenOut.of(revoked)
