"""Test support: a Hermes ``state.db`` with the real schema, for this package's tests, the
cross-host tests and the benchmarks (one copy of the schema, not one per caller)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from memu_core.testing.host_db import create_wal_database

STATE_DB_SCHEMA = """
CREATE TABLE sessions (
    id TEXT PRIMARY KEY,
    source TEXT NOT NULL,
    user_id TEXT,
    model TEXT,
    started_at REAL NOT NULL,
    ended_at REAL,
    title TEXT
);
CREATE TABLE messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL REFERENCES sessions(id),
    role TEXT NOT NULL,
    content TEXT,
    tool_call_id TEXT,
    tool_calls TEXT,
    tool_name TEXT,
    timestamp REAL NOT NULL,
    token_count INTEGER,
    finish_reason TEXT
);
CREATE INDEX idx_messages_session ON messages(session_id, timestamp);
"""
"""The tables of Hermes's ``state.db`` that memu reads, with Hermes's own index."""


def create_state_db(path: Path) -> sqlite3.Connection:
    """Create a ``state.db`` at ``path`` in WAL mode, as the gateway does; autocommit connection."""
    return create_wal_database(path, STATE_DB_SCHEMA)
