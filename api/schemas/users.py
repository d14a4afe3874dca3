"""Request and response bodies of `/v1/me`, `/v1/users` and `/v1/tokens`."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictBool, ValidationInfo, field_validator

from services.db.models import ApiToken, User
from services.users import Identity

USER_NAME = Field(
    pattern=r"^[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}$",
    description="letters, digits, _ . @ -; unique regardless of case (`alice` and `ALICE` are one name)",
)


class QuotaFields(BaseModel):
    """A user's own limits; null (or absent) takes the server's default."""

    model_config = ConfigDict(extra="forbid")

    max_queued_runs: int | None = Field(default=None, ge=0, le=10_000_000)
    max_events_per_run: int | None = Field(default=None, ge=1, le=10**15)
    max_flows: int | None = Field(default=None, ge=1, le=1_000_000)
    submissions_per_minute: int | None = Field(default=None, ge=0, le=1_000_000)


class UserCreate(QuotaFields):
    name: str = USER_NAME
    is_admin: StrictBool = False


class UserUpdate(QuotaFields):
    """Only the fields given change (send null to return a quota to the server's default;
    `is_admin` and `disabled` are true or false, never null)."""

    is_admin: StrictBool = Field(default=None, description="absent: unchanged")  # type: ignore[assignment]
    disabled: StrictBool = Field(default=None, description="absent: unchanged")  # type: ignore[assignment]

    @field_validator("is_admin", "disabled", mode="before")
    @classmethod
    def not_null(cls, value: Any, info: ValidationInfo) -> Any:
        # A null flag is a mistake, not "keep" (nor "false": it used to re-enable a user).
        if value is None:
            raise ValueError(f"`{info.field_name}` cannot be null: leave it out to keep it")
        return value


class EffectiveQuotas(BaseModel):
    max_queued_runs: int
    max_events_per_run: int
    max_flows: int
    submissions_per_minute: int


class UserOut(BaseModel):
    id: uuid.UUID
    name: str
    is_admin: bool
    created_at: dt.datetime
    disabled: bool
    own_quotas: QuotaFields = Field(description="The user's own limits (null: the server's).")

    @classmethod
    def of(cls, user: User) -> UserOut:
        own = QuotaFields(**{f: getattr(user, f) for f in QuotaFields.model_fields})
        return cls(
            id=user.id,
            name=user.name,
            is_admin=user.is_admin,
            created_at=user.created_at,
            disabled=user.disabled_at is not None,
            own_quotas=own,
        )


class MeOut(BaseModel):
    id: uuid.UUID
    name: str
    is_admin: bool
    quotas: EffectiveQuotas = Field(description="The limits in force (own, else the server's).")
    queued_runs: int

    @classmethod
    def of(cls, me: Identity, queued_runs: int) -> MeOut:
        return cls(
            id=me.id,
            name=me.name,
            is_admin=me.is_admin,
            quotas=EffectiveQuotas(**vars(me.quotas)),
            queued_runs=queued_runs,
        )


class TokenCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=100, description="What you call it (laptop, ci, …).")
    user_id: uuid.UUID | None = Field(default=None, description="Admins: make it for this user.")


class TokenOut(BaseModel):
    id: uuid.UUID
    user_id: uuid.UUID
    name: str
    prefix: str = Field(description="The token's first characters.")
    created_at: dt.datetime
    last_used_at: dt.datetime | None
    revoked_at: dt.datetime | None

    @classmethod
    def of(cls, token: ApiToken) -> TokenOut:
        return cls(**{f: getattr(token, f) for f in cls.model_fields})


class NewTokenOut(TokenOut):
    token: str = Field(description="The token itself: shown this once, never stored.")

    @classmethod
    def made(cls, token: ApiToken, secret: str) -> NewTokenOut:
        return cls(**TokenOut.of(token).model_dump(), token=secret)


class UserCreated(UserOut):
    token: NewTokenOut


def quota_changes(body: QuotaFields, extra: tuple[str, ...] = ()) -> dict[str, Any]:
    """The fields the request actually sent (absent fields do not change)."""
    return body.model_dump(include=set(QuotaFields.model_fields) | set(extra), exclude_unset=True)
