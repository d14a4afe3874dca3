"""Settings: defaults, the environment, precedence, and the combinations refused."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from pydantic import ValidationError

from services.settings import REPO_ROOT, Settings, get_settings, settings_env


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """A clean environment: none of the variables the settings read."""
    for key in list(os.environ):
        if key.startswith("TCPLAB_") or key in ("DATABASE_URL", "REDIS_URL"):
            monkeypatch.delenv(key)
    return monkeypatch


def test_defaults_run_locally_with_embedded_servers(env: pytest.MonkeyPatch) -> None:
    s = Settings()
    assert (s.host, s.port, s.worker_concurrency, s.log_level) == ("127.0.0.1", 8000, 1, "info")
    assert s.state_dir == REPO_ROOT / ".state" and s.state_dir.is_absolute()
    assert s.database_url is None and s.redis_url is None
    assert s.uses_embedded_postgres and s.uses_embedded_redis
    assert s.queue == "tcplab"
    assert s.broker_visibility_timeout_s >= 1.5 * s.run_max_wall_s


def test_every_field_reads_its_prefixed_variable(env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    env.setenv("TCPLAB_HOST", "::1")
    env.setenv("TCPLAB_PORT", "8123")
    env.setenv("TCPLAB_STATE_DIR", str(tmp_path / "s"))
    env.setenv("TCPLAB_DATABASE_URL", "postgresql://u:p@db/tcplab")
    env.setenv("TCPLAB_REDIS_URL", "redis://cache:6379/2")
    env.setenv("TCPLAB_QUEUE", "lab-2")
    env.setenv("TCPLAB_WORKER_CONCURRENCY", "3")
    env.setenv("TCPLAB_LOG_LEVEL", "DEBUG")
    env.setenv("TCPLAB_RUN_MAX_WALL_S", "60")
    env.setenv("TCPLAB_BROKER_VISIBILITY_TIMEOUT_S", "90")
    s = Settings()
    assert s.host == "::1" and s.port == 8123 and s.state_dir == tmp_path / "s"
    assert s.database_url == "postgresql://u:p@db/tcplab"
    assert s.redis_url == "redis://cache:6379/2"
    assert (s.queue, s.worker_concurrency, s.log_level) == ("lab-2", 3, "debug")
    assert (s.run_max_wall_s, s.broker_visibility_timeout_s) == (60, 90)


def test_plain_database_and_redis_urls_are_read(env: pytest.MonkeyPatch) -> None:
    env.setenv("DATABASE_URL", "postgres://u@db/x")
    env.setenv("REDIS_URL", "redis://cache")
    s = Settings()
    assert (s.database_url, s.redis_url) == ("postgres://u@db/x", "redis://cache")
    assert not s.uses_embedded_postgres and not s.uses_embedded_redis


def test_prefixed_url_wins_over_the_plain_one(env: pytest.MonkeyPatch) -> None:
    env.setenv("DATABASE_URL", "postgresql://plain/db")
    env.setenv("TCPLAB_DATABASE_URL", "postgresql://prefixed/db")
    env.setenv("REDIS_URL", "redis://plain")
    env.setenv("TCPLAB_REDIS_URL", "redis://prefixed")
    s = Settings()
    assert s.database_url == "postgresql://prefixed/db"
    assert s.redis_url == "redis://prefixed"


def test_arguments_win_over_the_environment(env: pytest.MonkeyPatch) -> None:
    env.setenv("TCPLAB_PORT", "9000")
    env.setenv("DATABASE_URL", "postgresql://env/db")
    s = Settings(port=9001, database_url="postgresql://arg/db")
    assert (s.port, s.database_url) == (9001, "postgresql://arg/db")


def test_empty_variables_count_as_unset(env: pytest.MonkeyPatch) -> None:
    env.setenv("DATABASE_URL", "")
    env.setenv("TCPLAB_PORT", "")
    s = Settings()
    assert s.database_url is None and s.port == 8000


def test_a_relative_state_dir_becomes_absolute(env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    env.chdir(tmp_path)
    env.setenv("TCPLAB_STATE_DIR", "here")
    assert Settings().state_dir == tmp_path / "here"


def test_two_instances_side_by_side(env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    a = Settings(port=8001, state_dir=tmp_path / "a")
    b = Settings(port=8002, state_dir=tmp_path / "b")
    assert a.port != b.port and a.state_dir != b.state_dir


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("port", 0, "greater than or equal to 1"),
        ("port", 70000, "less than or equal to 65535"),
        ("worker_concurrency", 0, "greater than or equal to 1"),
        ("log_level", "loud", "'critical', 'error', 'warning', 'info' or 'debug'"),
        ("run_max_wall_s", 0, "greater than 0"),
        ("queue", "a queue", "String should match pattern"),
        ("database_url", "sqlite:///x.db", "must be a PostgreSQL URL"),
        ("database_url", "mysql://u@h/db", "must be a PostgreSQL URL"),
        ("redis_url", "amqp://guest@rabbit//", "must be a Redis URL"),
    ],
)
def test_bad_values_are_refused(env: pytest.MonkeyPatch, field: str, value: object, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        Settings(**{field: value})


def test_a_visibility_timeout_shorter_than_a_run_is_refused(env: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValidationError, match="second worker"):
        Settings(run_max_wall_s=3000, broker_visibility_timeout_s=3600)
    Settings(run_max_wall_s=2400, broker_visibility_timeout_s=3600)


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.10", "lab.example.org"])
def test_serving_beyond_loopback_needs_external_servers(env: pytest.MonkeyPatch, host: str) -> None:
    with pytest.raises(ValidationError, match="embedded development servers"):
        Settings(host=host)
    with pytest.raises(ValidationError, match="REDIS_URL is unset"):
        Settings(host=host, database_url="postgresql://db/x")
    s = Settings(host=host, database_url="postgresql://db/x", redis_url="redis://cache")
    assert s.host == host


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "::1", "localhost", "LOCALHOST"])
def test_loopback_hosts_are_fine_with_embedded_servers(env: pytest.MonkeyPatch, host: str) -> None:
    assert Settings(host=host).uses_embedded_postgres


def test_errors_never_echo_a_password(env: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValidationError) as info:
        Settings(database_url="postgresql://u:s3cret@db/x", run_max_wall_s=-1)
    assert "s3cret" not in str(info.value)


def test_get_settings_is_cached_until_cleared(env: pytest.MonkeyPatch) -> None:
    get_settings.cache_clear()
    try:
        env.setenv("TCPLAB_PORT", "8101")
        first = get_settings()
        env.setenv("TCPLAB_PORT", "8102")
        assert get_settings() is first and first.port == 8101
        get_settings.cache_clear()
        assert get_settings().port == 8102
    finally:
        get_settings.cache_clear()


def test_settings_env_reproduces_the_settings_in_a_child(env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    s = Settings(
        port=8200,
        state_dir=tmp_path,
        database_url="postgresql://u@db/x",
        redis_url="redis+socket:///tmp/r.sock",
        queue="q1",
        worker_concurrency=2,
    )
    for key, value in settings_env(s).items():
        env.setenv(key, value)
    assert Settings() == s
