"""The connection pool: options from the URL or arguments, a bounded wait, a clear StoreBusy."""

from __future__ import annotations

import socket
import time

import pytest
from memu_backend_postgres import PostgresStore
from memu_backend_postgres._pool import PoolOptions, split_pool_options

from memu_core.errors import ConfigError, StoreBusy


def test_pool_parameters_leave_the_url_and_set_the_options() -> None:
    url, options = split_pool_options(
        "postgresql+psycopg://u:p@h/db?sslmode=require&pool_size=16&pool_timeout=2.5&max_overflow=0"
    )
    assert url == "postgresql+psycopg://u:p@h/db?sslmode=require"
    assert options == PoolOptions(size=16, max_overflow=0, timeout=2.5)
    assert split_pool_options("postgresql+psycopg://u:p@h/db") == ("postgresql+psycopg://u:p@h/db", PoolOptions())


@pytest.mark.parametrize("query", ["pool_size=0", "pool_size=2.5", "pool_timeout=0", "max_overflow=-1", "pool_size=x"])
def test_a_bad_pool_parameter_is_one_line_naming_it_and_the_fix(query: str) -> None:
    with pytest.raises(ConfigError) as caught:
        split_pool_options(f"postgresql+psycopg://u:hunter22@h/db?{query}")
    message = str(caught.value)
    assert query.split("=")[0] in message and "e.g." in message
    assert "hunter22" not in message and "\n" not in message


def test_an_exhausted_pool_raises_store_busy_after_its_timeout_then_recovers(pg_url: str) -> None:
    store = PostgresStore.open(f"{pg_url}&pool_size=1&max_overflow=0", pool_timeout=0.3)
    try:
        assert store.pool_options == PoolOptions(size=1, max_overflow=0, timeout=0.3)
        held = store._engine.connect()  # the one connection, busy elsewhere (a long request)
        try:
            assert store.pool_status()["checked_out"] == 1
            start = time.perf_counter()
            with pytest.raises(StoreBusy) as caught:
                store.list_files({}, None, 10)
            waited = time.perf_counter() - start
        finally:
            held.close()
        assert 0.25 <= waited < 3.0  # bounded by pool_timeout, not by the busy request
        message = str(caught.value)
        assert "all 1 pooled connections stayed busy for 0.3 s" in message and "pool_size" in message
        assert caught.value.retry_after > 0
        assert store.list_files({}, None, 10) == ([], None)  # the freed connection serves again
    finally:
        store.close()


def test_an_unreachable_server_is_store_busy_without_the_password() -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(StoreBusy) as caught:
        PostgresStore.open(f"postgresql://memu:hunter22@127.0.0.1:{port}/memu?connect_timeout=2")
    assert "hunter22" not in str(caught.value)
    assert "check that the server is up" in str(caught.value)


def test_a_read_after_the_servers_connections_were_cut_retries_on_a_fresh_one(pg_url: str) -> None:
    import psycopg
    from sqlalchemy.engine import make_url

    store = PostgresStore.open(f"{pg_url}&application_name=memu-cut-test")
    try:
        assert store.list_files({}, None, 10) == ([], None)  # a pooled connection, now idle
        plain = make_url(pg_url).set(drivername="postgresql").render_as_string(hide_password=False)
        with psycopg.connect(plain, autocommit=True) as admin:
            # What a server restart does to the pool: every connection of this client is gone.
            cut = admin.execute(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = 'memu-cut-test'"
            ).fetchone()
        assert cut and cut[0] >= 1
        assert store.list_files({}, None, 10) == ([], None)  # no error: retried on a new connection
        assert store.fingerprint() is None
    finally:
        store.close()
