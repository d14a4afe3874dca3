"""The embedded PostgreSQL and Redis: they start, answer, are reused, survive leftovers of a
killed run, and stop."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import psutil
import psycopg
import pytest
import redis

from infra import broker
from infra.embedded import (
    EmbeddedPostgres,
    EmbeddedRedis,
    StateDirBusy,
    StateLock,
    running_postgres_url,
    wait_gone,
)


def test_the_session_servers_answer(postgres_url: str, redis_url: str) -> None:
    with psycopg.connect(postgres_url) as conn:
        assert conn.execute("SELECT 1").fetchone() == (1,)
    broker.ping(redis_url)


def test_postgres_lifecycle(tmp_path: Path) -> None:
    server = EmbeddedPostgres(tmp_path / "state" / "postgres", fast_unsafe=True)
    url = server.start()
    try:
        assert url.startswith("postgresql://") and "/tcplab?" in url
        with psycopg.connect(url) as conn:
            assert conn.execute("SELECT current_database()").fetchone() == ("tcplab",)
            assert conn.execute("SHOW fsync").fetchone() == ("off",)
        pid = server._postmaster().pid

        # Idempotent: a second start (another process's object) reuses the running server.
        assert EmbeddedPostgres(tmp_path / "state" / "postgres").start() == url
        assert server._postmaster().pid == pid
        assert running_postgres_url(tmp_path / "state") == url

        # A server killed outright leaves its postmaster.pid behind: the next start copes.
        os.kill(pid, signal.SIGKILL)
        assert wait_gone(psutil.Process(pid), timeout_s=10)
        assert (server.pgdata / "postmaster.pid").exists()
        # … and a pid file naming a live process that is not a postmaster is stale too.
        lines = (server.pgdata / "postmaster.pid").read_text().splitlines()
        lines[0] = str(os.getpid())
        (server.pgdata / "postmaster.pid").write_text("\n".join(lines) + "\n")
        assert not server.is_running()
        assert running_postgres_url(tmp_path / "state") is None
        url = server.start()
        with psycopg.connect(url) as conn:
            assert conn.execute("SELECT 1").fetchone() == (1,)
    finally:
        server.stop()
    assert not server.is_running()
    server.stop()  # idempotent


def test_postgres_recovers_from_an_interrupted_initdb(tmp_path: Path) -> None:
    pgdata = tmp_path / "postgres"
    pgdata.mkdir()
    (pgdata / "base").mkdir()  # initdb died before writing PG_VERSION
    server = EmbeddedPostgres(pgdata)
    try:
        with psycopg.connect(server.start()) as conn:
            assert conn.execute("SELECT 1").fetchone() == (1,)
    finally:
        server.stop()


def test_postgres_starts_over_a_lock_file_left_by_a_standalone_backend(tmp_path: Path) -> None:
    """A standalone backend (initdb's bootstrap) writes its pid negated into postmaster.pid;
    one killed there leaves that file behind, which used to be a ValueError from psutil
    ("pid must be a positive integer") instead of a stale lock to clear."""
    pgdata = tmp_path / "postgres"
    server = EmbeddedPostgres(pgdata)
    server.start()
    server.stop()
    gone = psutil.Popen(["true"])
    gone.wait()
    (pgdata / "postmaster.pid").write_text(f"-{gone.pid}\n{pgdata}\n0\n\n\n\n\n")
    assert not server.is_running()
    try:
        with psycopg.connect(server.start()) as conn:
            assert conn.execute("SELECT 1").fetchone() == (1,)
        assert server.is_running()
    finally:
        server.stop()


def test_redis_lifecycle(tmp_path: Path) -> None:
    server = EmbeddedRedis(tmp_path / "redis")
    url = server.start()
    try:
        assert url == f"redis+socket://{tmp_path}/redis/redis.sock"
        client = broker.redis_client(url)
        client.set("k", "v")
        pid = int(client.info("server")["process_id"])
        assert client.config_get("port") == {"port": "0"}  # no TCP listener at all
        client.close()

        assert EmbeddedRedis(tmp_path / "redis").start() == url  # reused
        assert server._server_process().pid == pid

        # Killed outright: stale pid file and socket; the next start replaces both.
        os.kill(pid, signal.SIGKILL)
        assert wait_gone(psutil.Process(pid), timeout_s=10)
        assert not server.is_running()
        server.start()
        client = broker.redis_client(url)
        assert client.get("k") == b"v"  # persisted in the append-only file
        client.close()
    finally:
        server.stop()
    assert not server.is_running()
    assert not server.socket_path.exists() and not server.pid_file.exists()
    server.stop()  # idempotent


def test_redis_without_persistence_starts_empty(tmp_path: Path) -> None:
    server = EmbeddedRedis(tmp_path / "r", persist=False)
    client = broker.redis_client(server.start())
    try:
        client.set("k", "v")
    finally:
        client.close()
        server.stop()
    client = broker.redis_client(server.start())
    try:
        assert client.get("k") is None
    finally:
        client.close()
        server.stop()


def test_a_long_state_dir_puts_the_redis_socket_elsewhere(tmp_path: Path) -> None:
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    server = EmbeddedRedis(deep)
    assert len(str(server.socket_path)) <= 100 and str(deep) not in str(server.socket_path)
    url = server.start()
    try:
        broker.ping(url)
    finally:
        server.stop()


def test_the_state_lock_admits_one_holder(tmp_path: Path) -> None:
    with StateLock(tmp_path), pytest.raises(StateDirBusy, match=f"pid {os.getpid()}"):
        StateLock(tmp_path).acquire()
    with StateLock(tmp_path):  # released: free again
        pass


def test_broker_urls_translate_between_kombu_and_redis_py() -> None:
    assert broker.redis_py_url("redis+socket:///a/b.sock") == "unix:///a/b.sock"
    assert broker.kombu_url("unix:///a/b.sock") == "redis+socket:///a/b.sock"
    assert broker.kombu_url("redis://h:1/0") == broker.redis_py_url("redis://h:1/0") == "redis://h:1/0"


def test_a_redis_that_is_not_there_fails_fast(tmp_path: Path) -> None:
    start = time.monotonic()
    with pytest.raises(redis.ConnectionError):
        broker.ping(broker.socket_url(str(tmp_path / "none.sock")))
    assert time.monotonic() - start < 1
