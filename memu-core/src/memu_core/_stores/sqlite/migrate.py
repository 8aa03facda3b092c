"""Create, upgrade and inspect the sqlite store's schema with alembic.

Backs the ``memu db upgrade`` / ``memu db current`` commands and the store's own first open.
SQLAlchemy and alembic are imported inside the functions: this module is only loaded when a
schema change is actually needed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memu_core._stores.sqlite.connection import BUSY_TIMEOUT_MS, connect, path_from_url, schema_revision
from memu_core.errors import StoreError

SCRIPT_LOCATION = str(Path(__file__).with_name("migrations"))
"""The alembic script folder shipped inside the package."""


def _config() -> Any:
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", SCRIPT_LOCATION)
    return cfg


def head() -> str:
    """The newest revision id among the shipped migrations."""
    from alembic.script import ScriptDirectory

    found = ScriptDirectory.from_config(_config()).get_current_head()
    if found is None:
        raise StoreError("the sqlite store ships no migrations; reinstall memu-core")
    return found


def upgrade(url: str) -> str:
    """Bring the store at ``url`` to the newest schema; return the revision it is now at.

    The whole upgrade runs in one ``BEGIN IMMEDIATE`` transaction, so two processes opening a
    fresh store at once serialise: the second waits, then finds nothing left to do.
    """
    from alembic import command
    from sqlalchemy import create_engine, event
    from sqlalchemy.pool import NullPool

    path = path_from_url(url)
    connect(path).close()  # folder, WAL mode and PRAGMA checks, with memu's error messages
    engine = create_engine(
        f"sqlite:///{path}",
        poolclass=NullPool,
        connect_args={"timeout": BUSY_TIMEOUT_MS / 1000},
    )

    @event.listens_for(engine, "connect")
    def _manual_transactions(dbapi_conn: Any, _record: Any) -> None:
        # Let SQLAlchemy's "begin" event emit the BEGIN instead of the driver's deferred one.
        dbapi_conn.isolation_level = None
        dbapi_conn.execute("PRAGMA foreign_keys = ON")

    @event.listens_for(engine, "begin")
    def _begin_immediate(conn: Any) -> None:
        conn.exec_driver_sql("BEGIN IMMEDIATE")

    cfg = _config()
    try:
        with engine.begin() as conn:
            cfg.attributes["connection"] = conn
            command.upgrade(cfg, "head")
    except Exception as exc:
        raise StoreError(f"upgrading the SQLite store {str(path)!r} failed: {exc}") from exc
    finally:
        engine.dispose()
    found = current(url)
    if found is None:
        raise StoreError(f"upgrading the SQLite store {str(path)!r} left it without a schema revision")
    return found


def current(url: str) -> str | None:
    """The revision the store at ``url`` is at, or ``None`` when it has no schema (or no file)."""
    path = path_from_url(url)
    if not path.exists():
        return None  # inspecting must not create an empty store as a side effect
    conn = connect(path)
    try:
        return schema_revision(conn)
    finally:
        conn.close()
