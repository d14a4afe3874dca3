"""Who sees what: a run, sweep or schedule is visible to its owner, to admins, and to the
whole lab once shared. Invisible things are "not found" (404), never "forbidden": a private
run's existence is not told to others. Visible but not one's own: 403 on cancel or change."""

from __future__ import annotations

from typing import Any, Protocol

from sqlalchemy import ColumnElement, or_, true

from services.errors import NotFoundError, PermissionDeniedError
from services.users.identity import Identity


class Owned(Protocol):
    id: Any
    owner_id: Any
    shared: bool


def visible_to(model: Any, viewer: Identity) -> ColumnElement[bool]:
    """A WHERE condition selecting the rows of `model` (Run, Sweep, Schedule) `viewer` sees."""
    if viewer.is_admin:
        return true()
    return or_(model.owner_id == viewer.id, model.shared.is_(True))


def can_see(thing: Owned, viewer: Identity) -> bool:
    return viewer.is_admin or thing.shared or viewer.owns(thing.owner_id)


def check_visible(thing: Owned | None, viewer: Identity, what: str, key: object) -> Any:
    """`thing` if `viewer` may see it; else NotFoundError, exactly as if it did not exist."""
    if thing is None or not can_see(thing, viewer):
        raise NotFoundError(what, key)
    return thing


def check_modifiable(thing: Owned, viewer: Identity, what: str, action: str) -> None:
    if not viewer.may_modify(thing.owner_id):
        raise PermissionDeniedError(f"only the owner of {what} {thing.id} or an admin may {action} it")
