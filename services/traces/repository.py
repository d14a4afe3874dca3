"""Every query on `link_traces`."""

from __future__ import annotations

import uuid

from sqlalchemy import func, select
from sqlalchemy.orm import Session, defer

from services.db.models import LinkTrace


def owned(session: Session, owner_id: uuid.UUID) -> list[LinkTrace]:
    """The owner's traces by name, content left unloaded."""
    query = (
        select(LinkTrace)
        .options(defer(LinkTrace.content))
        .where(LinkTrace.owner_id == owner_id)
        .order_by(LinkTrace.name)
    )
    return list(session.scalars(query))


def by_name(session: Session, owner_id: uuid.UUID, name: str, *, for_update: bool = False) -> LinkTrace | None:
    query = (
        select(LinkTrace)
        .options(defer(LinkTrace.content))
        .where(LinkTrace.owner_id == owner_id, LinkTrace.name == name)
    )
    return session.scalars(query.with_for_update() if for_update else query).first()


def usage(session: Session, owner_id: uuid.UUID) -> tuple[int, int]:
    """How many traces the owner keeps, and their text's bytes together."""
    count, total = session.execute(
        select(func.count(), func.coalesce(func.sum(LinkTrace.text_bytes), 0)).where(LinkTrace.owner_id == owner_id)
    ).one()
    return int(count), int(total)


def content_by_hash(session: Session, sha256: str) -> bytes | None:
    """The compressed text of any stored trace with this content, or None."""
    return session.scalars(select(LinkTrace.content).where(LinkTrace.sha256 == sha256).limit(1)).first()
