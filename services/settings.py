"""The one settings object of tcplab, read from the environment (prefix ``TCPLAB_``).

Every process of the service (the API, the workers, the launcher, Alembic) reads its
configuration through :func:`get_settings`. Two variables keep their conventional names as
well: ``DATABASE_URL`` and ``REDIS_URL`` (a ``TCPLAB_``-prefixed one wins when both are set).
Left unset, the launcher (``python -m infra.launch``) starts an embedded PostgreSQL and Redis in
``TCPLAB_STATE_DIR`` and hands their URLs to the API and the worker.

Several instances run side by side on one machine when each has its own ``TCPLAB_PORT`` and
``TCPLAB_STATE_DIR`` (the embedded servers listen on unix sockets inside the state folder, so
they never collide on a port).
"""

from __future__ import annotations

import ipaddress
from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

REPO_ROOT = Path(__file__).resolve().parents[1]

LogLevel = Literal["critical", "error", "warning", "info", "debug"]

POSTGRES_SCHEMES = ("postgres", "postgresql", "postgresql+psycopg")
REDIS_SCHEMES = ("redis", "rediss", "redis+socket", "unix")


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="TCPLAB_",
        env_ignore_empty=True,
        extra="ignore",
        frozen=True,
        # DATABASE_URL may carry a password: never echo inputs in validation errors.
        hide_input_in_errors=True,
        validate_by_name=True,
        validate_by_alias=True,
    )

    host: str = Field("127.0.0.1", description="address the API listens on")
    port: int = Field(8000, ge=1, le=65535, description="port the API listens on")
    state_dir: Path = Field(
        REPO_ROOT / ".state",
        description="folder of the embedded PostgreSQL and Redis, their logs and the lock",
    )
    database_url: str | None = Field(
        None,
        validation_alias=AliasChoices("TCPLAB_DATABASE_URL", "DATABASE_URL"),
        description="PostgreSQL URL; unset: the embedded server in state_dir",
    )
    redis_url: str | None = Field(
        None,
        validation_alias=AliasChoices("TCPLAB_REDIS_URL", "REDIS_URL"),
        description="Redis URL of the Celery broker; unset: the embedded server in state_dir",
    )
    queue: str = Field(
        "tcplab",
        pattern=r"^[A-Za-z0-9_.:-]{1,100}$",
        description="Celery queue of the simulation tasks (instances sharing one Redis need different queues)",
    )
    api_processes: int = Field(
        2,
        ge=1,
        le=32,
        description="processes serving the API on its port (the launcher and its helpers): one "
        "Python process answers on one core at a time",
    )
    worker_concurrency: int = Field(1, ge=1, le=256, description="processes per worker")
    log_level: LogLevel = "info"
    run_max_wall_s: float = Field(1800.0, gt=0, le=7 * 24 * 3600, description="wall-clock cap of one simulation run")
    broker_visibility_timeout_s: float = Field(
        3600.0,
        gt=0,
        le=30 * 24 * 3600,
        description="seconds after which Redis hands an unacknowledged task to another worker",
    )
    run_max_events: int = Field(
        5_000_000_000,
        ge=1,
        description="simulated events one run may take (the tighter of this and the scenario's own)",
    )
    max_queued_runs: int = Field(
        200_000,
        ge=1,
        description="runs waiting in the queue beyond which submissions are refused (429)",
    )
    max_body_bytes: int = Field(10_000_000, ge=1024, description="the largest request body the API reads (413 beyond)")
    # Each resource's own, smaller limit (never above max_body_bytes): api/limits.py.
    max_model_body_bytes: int = Field(
        4_000_000, ge=1024, description="the largest body of a model query (/v1/models; 413 beyond)"
    )
    max_scenario_body_bytes: int = Field(
        5_000_000, ge=1024, description="the largest body of a run submission (/v1/runs; 413 beyond)"
    )
    max_sweep_body_bytes: int = Field(
        5_000_000,
        ge=1024,
        description="the largest body of a sweep or schedule (/v1/sweeps, /v1/schedules; 413 beyond)",
    )
    reconcile_interval_s: float = Field(
        10.0,
        gt=0,
        le=24 * 3600,
        description="how often the reconciler hands dead workers' runs to others and re-sends "
        "runs whose broker message was lost",
    )
    worker_heartbeat_s: float = Field(
        5.0, gt=0, le=600, description="how often a worker running a run records that it is alive"
    )
    worker_dead_after_s: float = Field(
        20.0,
        gt=0,
        le=24 * 3600,
        description="a running run whose worker has not been heard of for this long is handed to "
        "another worker (at least 3 heartbeats)",
    )
    admin_token: SecretStr | None = Field(
        None,
        min_length=20,
        description="the bootstrap admin's token (user 'admin'); unset, the launcher makes one "
        "in state_dir/admin-token",
    )
    dispatch_window: int = Field(
        0,
        ge=0,
        le=100_000,
        description="runs handed to the broker at once (about the total worker processes); 0: "
        "worker_concurrency. The rest wait in PostgreSQL, where the dispatcher picks them fairly",
    )
    batch_target_s: float = Field(
        0.25,
        ge=0,
        le=600,
        description="core time one task's batch of an owner's runs aims at, sized by the owner's "
        "latest runs; a worker gives back what it has not started by twice this. 0: one run per task",
    )
    batch_max_runs: int = Field(500, ge=1, le=10_000, description="runs one task's batch may hold")
    user_max_queued_runs: int = Field(
        50_000, ge=0, description="a user's queued runs beyond which their submissions get 429"
    )
    user_max_flows: int = Field(10_000, ge=1, description="flows one scenario of a user may have (422 beyond)")
    user_submissions_per_minute: int = Field(
        600, ge=0, description="submissions (runs, sweeps, extensions) a user may make per minute"
    )
    trace_max_bytes: int = Field(
        8_000_000,
        ge=1024,
        description="the largest trace one upload may hold, bytes as sent (PUT /v1/traces/{name}; 413 beyond)",
    )
    user_max_traces: int = Field(100, ge=0, description="named traces one user may keep (429 beyond)")
    user_max_trace_bytes: int = Field(
        200_000_000, ge=0, description="bytes of trace text one user may keep, all traces together (429 beyond)"
    )
    trace_cache_dir: Path | None = Field(
        None,
        description="where a worker writes the traces its runs follow, one file per content hash; "
        "unset: state_dir/trace-cache",
    )
    auth_cache_s: float = Field(
        2.0,
        ge=0,
        le=60,
        description="seconds an API process keeps a checked token's identity; a revocation or a "
        "user's change reaches the other API processes within it (the one that made it at once). 0: off",
    )
    schedule_tick_s: float = Field(
        15.0, gt=0, le=3600, description="how often beat looks for schedules whose time has come"
    )
    reconcile_grace_s: float = Field(
        30.0,
        ge=0,
        le=24 * 3600,
        description="a queued run younger than this is never re-sent (its message may be in flight)",
    )

    @field_validator("log_level", mode="before")
    @classmethod
    def _lower_log_level(cls, value: object) -> object:
        return value.strip().lower() if isinstance(value, str) else value

    @field_validator("state_dir", mode="after")
    @classmethod
    def _absolute_state_dir(cls, value: Path) -> Path:
        return value.expanduser().absolute()

    @field_validator("database_url", mode="after")
    @classmethod
    def _check_database_url(cls, value: str | None) -> str | None:
        if value is None:
            return None
        scheme = value.partition("://")[0].lower()
        if scheme not in POSTGRES_SCHEMES:
            raise ValueError(
                f"DATABASE_URL must be a PostgreSQL URL (postgresql://user:password@host/db), "
                f"not {scheme or value!r}: tcplab stores runs in PostgreSQL only"
            )
        return value

    @field_validator("redis_url", mode="after")
    @classmethod
    def _check_redis_url(cls, value: str | None) -> str | None:
        if value is None:
            return None
        scheme = value.partition("://")[0].lower()
        if scheme not in REDIS_SCHEMES:
            raise ValueError(
                f"REDIS_URL must be a Redis URL (redis://host:6379/0, rediss://…, "
                f"redis+socket:///path/to/socket), not {scheme or value!r}"
            )
        return value

    @model_validator(mode="after")
    def _refuse_unsafe_combinations(self) -> Settings:
        if self.worker_dead_after_s < 3 * self.worker_heartbeat_s:
            raise ValueError(
                f"TCPLAB_WORKER_DEAD_AFTER_S ({self.worker_dead_after_s:g} s) must be at least three "
                f"heartbeats (TCPLAB_WORKER_HEARTBEAT_S = {self.worker_heartbeat_s:g} s): a live "
                "worker's run would be taken from it"
            )
        if self.broker_visibility_timeout_s < 1.5 * self.run_max_wall_s:
            raise ValueError(
                f"TCPLAB_BROKER_VISIBILITY_TIMEOUT_S ({self.broker_visibility_timeout_s:g} s) "
                f"must be at least 1.5 x TCPLAB_RUN_MAX_WALL_S ({self.run_max_wall_s:g} s): "
                "Redis would otherwise hand a run that is still simulating to a second worker"
            )
        embedded = [
            name for name, url in (("DATABASE_URL", self.database_url), ("REDIS_URL", self.redis_url)) if url is None
        ]
        if embedded and not _is_loopback(self.host):
            raise ValueError(
                f"TCPLAB_HOST={self.host} serves the API beyond this machine, but "
                f"{' and '.join(embedded)} {'is' if len(embedded) == 1 else 'are'} unset, so "
                "the data would live in the embedded development servers of "
                f"{self.state_dir}: set DATABASE_URL and REDIS_URL for a lab server, or keep "
                "TCPLAB_HOST on a loopback address (127.0.0.1, ::1, localhost)"
            )
        return self

    @property
    def effective_dispatch_window(self) -> int:
        return self.dispatch_window or self.worker_concurrency

    @property
    def effective_trace_cache_dir(self) -> Path:
        return (self.trace_cache_dir or self.state_dir / "trace-cache").expanduser().absolute()

    @property
    def control_queue(self) -> str:
        """The Celery queue of the control tasks (the schedules' tick, the reconciler), which a
        worker of their own consumes: never behind simulations (worker/app.py)."""
        return f"{self.queue}.control"

    @property
    def uses_embedded_postgres(self) -> bool:
        return self.database_url is None

    @property
    def uses_embedded_redis(self) -> bool:
        return self.redis_url is None


def _is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def settings_env(settings: Settings) -> dict[str, str]:
    """Environment variables that give a child process (a worker) these very settings."""
    env = {}
    for name in Settings.model_fields:
        value = getattr(settings, name)
        if isinstance(value, SecretStr):
            value = value.get_secret_value()
        if value is not None:
            env[f"TCPLAB_{name.upper()}"] = str(value)
    return env


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process's settings, read once from the environment.

    Call ``get_settings.cache_clear()`` after changing the environment (the launcher does, once
    it knows the URLs of the embedded servers).
    """
    return Settings()
