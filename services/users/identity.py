"""Who is asking, and what they may use: the request's identity as the services see it."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from services.db.models import User
from services.settings import Settings


@dataclass(frozen=True)
class Quotas:
    """A user's effective limits: their own where set, else the server's defaults."""

    max_queued_runs: int
    max_events_per_run: int
    max_flows: int
    submissions_per_minute: int

    @classmethod
    def of(cls, user: User, settings: Settings) -> Quotas:
        def pick(own: int | None, default: int) -> int:
            return default if own is None else own

        return cls(
            max_queued_runs=pick(user.max_queued_runs, settings.user_max_queued_runs),
            # A user's own cap never lifts the server's.
            max_events_per_run=min(pick(user.max_events_per_run, settings.run_max_events), settings.run_max_events),
            max_flows=pick(user.max_flows, settings.user_max_flows),
            submissions_per_minute=pick(user.submissions_per_minute, settings.user_submissions_per_minute),
        )


@dataclass(frozen=True)
class Identity:
    id: uuid.UUID
    name: str
    is_admin: bool
    quotas: Quotas

    def owns(self, owner_id: uuid.UUID | None) -> bool:
        return owner_id is not None and owner_id == self.id

    def may_modify(self, owner_id: uuid.UUID | None) -> bool:
        """Only the owner or an admin cancels, deletes or re-shares."""
        return self.is_admin or self.owns(owner_id)
