"""Opening a SQLite store file with the stdlib driver: URL parsing, PRAGMAs, schema check."""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path

from memu_core import _layout
from memu_core.errors import StoreError, UsageError

HEAD_REVISION = "0003"
"""The alembic revision this code reads and writes (a test keeps it equal to the script head)."""

KNOWN_REVISIONS = frozenset({"0001", "0002", "0003"})
"""Every revision this code can upgrade from; anything else was written by a newer memu."""

BUSY_TIMEOUT_MS = 10_000
"""How long a writer waits for another process's write lock before giving up."""


def path_from_url(url: str) -> Path:
    """``sqlite:///rel``, ``sqlite:////abs`` or a bare path (``~`` expanded) → a file path."""
    raw = url.strip()
    if raw.startswith("sqlite://"):
        rest = raw[len("sqlite://") :]
        if not rest.startswith("/") or rest == "/":
            raise UsageError(f"MEMU_DB {url!r} has no file path; use sqlite:///path/to/memu.db")
        raw = rest[1:]
    if not raw or raw in (":memory:", "inmemory"):
        raise UsageError(f"MEMU_DB {url!r} is not a SQLite file path; give a path such as ~/.memu/memu.db")
    return Path(raw).expanduser()


def _private_file(path: Path) -> None:
    """Create the store file 0600 before SQLite does (its -wal and -shm then take the same mode,
    where SQLite alone would make all three 0644). Inside ``~/.memu`` an existing store and its
    companions are tightened too; a file elsewhere keeps the mode its owner gave it."""
    _layout.ensure_private_dir(path.parent)
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, _layout.PRIVATE_FILE))
    except FileExistsError:
        for companion in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
            _layout.tighten_file(companion)


def connect(path: Path) -> sqlite3.Connection:
    """Open ``path`` (creating its folder) in autocommit mode with memu's PRAGMAs set.

    Autocommit (``isolation_level=None``) because the store issues its own ``BEGIN IMMEDIATE``:
    a write transaction that takes the lock up front cannot deadlock on a read→write upgrade.
    """
    try:
        _private_file(path)
        conn = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False)
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        mode = _wal(conn)
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("PRAGMA synchronous = NORMAL")
    except (OSError, sqlite3.Error) as exc:
        raise StoreError(
            f"cannot open the SQLite store {str(path)!r}: {exc}; check the path and its permissions"
        ) from exc
    if str(mode).lower() != "wal":
        conn.close()
        raise StoreError(f"the SQLite store {str(path)!r} cannot use WAL mode (got {mode!r}); put it on a local disk")
    return conn


def _wal(conn: sqlite3.Connection) -> str:
    """Put the file in WAL mode (it persists in the file) and return the mode it is in.

    WAL lets the per-turn reader run while a commit writes. Switching a fresh file to WAL needs
    the file to itself, and SQLite answers "database is locked" at once, without its busy handler,
    when another connection opening the same fresh file holds it: so a file already in WAL is left
    alone, and the switch is tried again until the busy timeout has passed.
    """
    mode = str(conn.execute("PRAGMA journal_mode").fetchone()[0])
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    while mode.lower() != "wal":
        try:
            mode = str(conn.execute("PRAGMA journal_mode = WAL").fetchone()[0])
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.01)
            continue
        break
    return mode


def schema_revision(conn: sqlite3.Connection) -> str | None:
    """The alembic revision stamped in the file, or ``None`` for a fresh file."""
    try:
        row = conn.execute("SELECT version_num FROM alembic_version").fetchone()
    except sqlite3.OperationalError as exc:
        if "no such table" in str(exc):
            return None
        raise StoreError(f"cannot read the store's schema version: {exc}") from exc
    return None if row is None else str(row[0])


def ensure_schema(conn: sqlite3.Connection, path: Path) -> None:
    """Create or upgrade the schema when the file is behind; refuse a newer one.

    The common case (already at head) costs one indexed read and imports nothing.
    """
    current = schema_revision(conn)
    if current == HEAD_REVISION:
        return
    if current is not None and current not in KNOWN_REVISIONS:
        raise StoreError(
            f"the store {str(path)!r} has schema revision {current!r}, newer than this memu "
            f"knows ({HEAD_REVISION}); upgrade memu"
        )
    from memu_core._stores.sqlite import migrate  # imports SQLAlchemy + alembic

    migrate.upgrade(str(path))
    if schema_revision(conn) != HEAD_REVISION:
        raise StoreError(f"upgrading the store {str(path)!r} did not reach revision {HEAD_REVISION}")
