"""Test support for hosts whose session logs are SQLite databases (Hermes, OpenClaw, ...)."""

from __future__ import annotations

import sqlite3
from pathlib import Path


def create_wal_database(path: Path, schema: str) -> sqlite3.Connection:
    """Create ``path`` with ``schema`` in WAL mode, as the agents do; an autocommit connection.

    WAL matters: memu must read while the agent writes, and the tests write through this
    connection while memu's read-only one reads.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.executescript(schema)
    return conn
