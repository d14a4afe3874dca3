"""Dependencies shared by the routers."""

from __future__ import annotations

import functools
import inspect
import uuid
from collections.abc import AsyncIterator, Callable, Iterable
from contextvars import ContextVar
from typing import Annotated, Any

import anyio
from fastapi import Depends, HTTPException, Request
from fastapi.routing import APIRoute
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool

from services.settings import Settings
from worker.enqueue import enqueue


async def get_db(request: Request) -> AsyncIterator[Session]:
    """A session per request; the request boundary commits it.

    The endpoint (and the services it calls) never commit: when the endpoint returns, the
    session commits — before the response is sent (``scope="function"`` below), so a failed
    commit is a 500, never a 2xx. An exception rolls it back. Anything that must wait for the
    commit (enqueueing a task) goes through ``services.db.run_after_commit``.

    The session is closed once the endpoint has returned: build the response from loaded
    attributes (objects stay readable: expire_on_commit=False), not from lazy relationships.

    async: making a session does no I/O (it connects at its first statement). A sync endpoint
    of a ``UnitOfWorkRoute`` commits in its own worker thread as it returns, and then closing
    is no I/O either; anything else still open is committed (or rolled back) in a worker
    thread here.
    """
    factory = request.app.state.session_factory
    if factory is None:
        raise HTTPException(status_code=503, detail="no database is configured")
    session = factory()
    current = _REQUEST_SESSION.set(session)
    try:
        yield session
    except BaseException:
        with anyio.CancelScope(shield=True):  # a client gone mid-request still gets its rollback
            await run_in_threadpool(_end, session, commit=False)
        raise
    finally:
        _REQUEST_SESSION.reset(current)
    if session.in_transaction():
        await run_in_threadpool(_end, session, commit=True)
    else:
        session.close()


_REQUEST_SESSION: ContextVar[Session | None] = ContextVar("tcplab_request_session", default=None)


def _end(session: Session, *, commit: bool) -> None:
    try:
        if commit:
            session.commit()
        else:
            session.rollback()
    finally:
        session.close()


class UnitOfWorkRoute(APIRoute):
    """A route whose sync endpoint commits the request's session (``get_db``) in its own
    worker thread as it returns, as the request boundary would have.

    Otherwise the commit waits for a hand-over back to the event loop and into another worker
    thread: one more thread wake-up a request, and, for a submission, its owner's admission
    lock (services/admission.py) held through it. Issue 12, 8 clients of one user: the lock was
    held 5.1 ms a submission, 2.7 of them for that hand-over.
    """

    def __init__(self, path: str, endpoint: Callable[..., Any], **kwargs: Any) -> None:
        super().__init__(path, _committing_on_return(endpoint), **kwargs)


def _committing_on_return(endpoint: Callable[..., Any]) -> Callable[..., Any]:
    if inspect.iscoroutinefunction(endpoint):
        return endpoint  # runs on the event loop: get_db's exit commits in a worker thread

    @functools.wraps(endpoint)  # FastAPI reads the signature (and its module) through it
    def committing(*args: Any, **kwargs: Any) -> Any:
        result = endpoint(*args, **kwargs)
        session = _REQUEST_SESSION.get()
        if session is not None and session.in_transaction():
            session.commit()
        return result

    return committing


async def get_settings_dep(request: Request) -> Settings:
    # async: a plain attribute read need not wait for a worker thread
    return request.app.state.settings


SessionDep = Annotated[Session, Depends(get_db, scope="function")]
SettingsDep = Annotated[Settings, Depends(get_settings_dep)]


async def get_enqueue(request: Request) -> Callable[[Iterable[uuid.UUID]], None]:
    """``worker.enqueue.enqueue`` bound to this app's database and settings: the dispatcher
    pass it asks for reads the app's runs and fills the app's window, not the process's."""
    return functools.partial(enqueue, factory=request.app.state.session_factory, settings=request.app.state.settings)


# Hands committed runs to the workers: ``run_after_commit(session, lambda: enqueue(ids))``.
EnqueueDep = Annotated[Callable[..., None], Depends(get_enqueue)]
