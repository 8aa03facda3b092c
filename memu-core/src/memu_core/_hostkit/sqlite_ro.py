"""Reading a host's SQLite database without ever writing to it.

Hosts such as Hermes and OpenClaw keep their sessions in a SQLite database in WAL mode that the
host itself keeps writing while a bridging run reads. The database is opened through a
``file:`` URI with ``mode=ro``: SQLite then never takes the write lock, and the URI is built by
percent-encoding the path, so a ``%``, ``#`` or ``?`` in a folder name cannot end the path early
and silently drop ``mode=ro`` (a plain string join would).
"""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

BUSY_TIMEOUT_S = 5.0
"""How long a read waits for a checkpoint the host is running (readers are rarely blocked)."""


@functools.lru_cache(maxsize=64)
def readonly_uri(db: Path) -> str:
    """The ``file:`` URI that opens ``db`` read-only, whatever characters its path holds.

    Cached: a bridging run queries one database hundreds of times and resolving is a syscall
    walk each time.
    """
    return f"{Path(db).expanduser().resolve().as_uri()}?mode=ro"


def connect_readonly(db: Path) -> sqlite3.Connection:
    """A read-only connection to ``db`` (raises ``sqlite3.Error`` when it cannot be opened)."""
    return sqlite3.connect(readonly_uri(db), uri=True, timeout=BUSY_TIMEOUT_S, check_same_thread=False)


def query(db: Path, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
    """Run one read query on a fresh read-only connection, closed before returning.

    A fresh connection per query keeps no snapshot open between queries, so the host's WAL can
    be checkpointed while a long bridging run is busy elsewhere.
    """
    conn = connect_readonly(db)
    try:
        return list(conn.execute(sql, tuple(params)))
    finally:
        conn.close()


def columns(db: Path, table: str) -> set[str]:
    """The column names of ``table`` in ``db`` (empty when the table does not exist)."""
    if not table.replace("_", "").isalnum():
        raise ValueError(f"not a table name: {table!r}")
    return {str(row[1]) for row in query(db, f"PRAGMA table_info({table})")}
