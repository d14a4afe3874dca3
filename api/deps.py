"""Dependencies shared by the routers."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated

from fastapi import Depends, HTTPException, Request
from sqlalchemy.orm import Session

from services.db.session import session_scope
from services.settings import Settings


def get_db(request: Request) -> Iterator[Session]:
    """A session per request; the request boundary commits it.

    The endpoint (and the services it calls) never commit: when the endpoint returns, the
    session commits — before the response is sent (``scope="function"`` below), so a failed
    commit is a 500, never a 2xx. An exception rolls it back. Anything that must wait for the
    commit (enqueueing a task) goes through ``services.db.run_after_commit``.

    The session is closed once the endpoint has returned: build the response from loaded
    attributes (objects stay readable: expire_on_commit=False), not from lazy relationships.
    """
    factory = request.app.state.session_factory
    if factory is None:
        raise HTTPException(status_code=503, detail="no database is configured")
    with session_scope(factory) as session:
        yield session


def get_settings_dep(request: Request) -> Settings:
    return request.app.state.settings


SessionDep = Annotated[Session, Depends(get_db, scope="function")]
SettingsDep = Annotated[Settings, Depends(get_settings_dep)]
