"""What ``doctor`` asks of a SQLite store file before a scheduled run relies on it.

Each probe opens its own short-lived connection and changes nothing: writability is tested with
a write transaction that is rolled back, integrity with ``PRAGMA quick_check``.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from memu_core._stores.sqlite.connection import BUSY_TIMEOUT_MS, HEAD_REVISION, schema_revision

__all__ = ["HEAD_REVISION", "QUICK_CHECK_ROWS", "integrity_problems", "revision", "write_problem"]

QUICK_CHECK_ROWS = 5
"""How many of ``quick_check``'s complaints are reported (a damaged file can list thousands)."""

_SIDE_FILES = ("-wal", "-shm")


def write_problem(path: Path) -> tuple[str, str] | None:
    """``None`` when a commit could write the store at ``path``; else ``(kind, detail)`` where
    ``kind`` is ``"read-only"`` or ``"locked"``."""
    for target in (path.parent, path, *(path.with_name(path.name + s) for s in _SIDE_FILES)):
        # The folder must be writable too: SQLite creates its WAL and shared-memory files there.
        if target.exists() and not os.access(target, os.W_OK):
            what = "folder" if target.is_dir() else "file"
            return "read-only", f"the {what} {str(target)!r} is not writable by this user"
    try:
        conn = sqlite3.connect(str(path), timeout=min(BUSY_TIMEOUT_MS / 1000, 2.0), isolation_level=None)
    except sqlite3.Error as exc:
        return "read-only", f"cannot open {str(path)!r} ({exc})"
    try:
        conn.execute("BEGIN IMMEDIATE")  # takes the write lock, writes nothing
        conn.execute("ROLLBACK")
    except sqlite3.OperationalError as exc:
        message = str(exc).lower()
        if "locked" in message or "busy" in message:
            return "locked", f"another process holds the write lock on {str(path)!r} ({exc})"
        return "read-only", f"{str(path)!r} cannot be written ({exc})"
    finally:
        conn.close()
    return None


def integrity_problems(path: Path) -> list[str]:
    """``PRAGMA quick_check``'s complaints about the file (empty when it is sound)."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=BUSY_TIMEOUT_MS / 1000)
    try:
        rows = conn.execute(f"PRAGMA quick_check({QUICK_CHECK_ROWS})").fetchall()
    except sqlite3.DatabaseError as exc:
        return [str(exc)]
    finally:
        conn.close()
    found = [str(row[0]) for row in rows]
    return [] if found == ["ok"] else found


def revision(path: Path) -> str | None:
    """The schema revision of the file (``None`` before the schema exists), read-only."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=BUSY_TIMEOUT_MS / 1000)
    try:
        return schema_revision(conn)
    finally:
        conn.close()
