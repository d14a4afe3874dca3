"""Persistence: the declarative base, the tables, engines and sessions, migrations.

Repositories (one module per feature, every query in it) build on these; services never
commit — see services/db/session.py.
"""

from services.db.base import Base
from services.db.models import FLOW_METRICS, FlowResult, Result, Run, RunStatus, Trace, TraceChunk
from services.db.session import (
    create_db_engine,
    create_session_factory,
    run_after_commit,
    session_scope,
    sqlalchemy_url,
)

__all__ = [
    "FLOW_METRICS",
    "Base",
    "FlowResult",
    "Result",
    "Run",
    "RunStatus",
    "Trace",
    "TraceChunk",
    "create_db_engine",
    "create_session_factory",
    "run_after_commit",
    "session_scope",
    "sqlalchemy_url",
]
