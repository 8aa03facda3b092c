"""Test support: an OpenClaw agent store with the real schema, for this package's tests, the
cross-host tests and the benchmarks (one copy of the schema, not one per caller)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from memu_core.testing.host_db import create_wal_database

AGENT_DB_SCHEMA = """
CREATE TABLE session_windows (
    session_id TEXT PRIMARY KEY,
    session_key TEXT,
    reason TEXT,
    transcript_updated_at INTEGER
) STRICT;
CREATE TABLE transcript_events (
    session_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    event_json TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (session_id, seq)
) STRICT;
CREATE TABLE transcript_rewrite_watermarks (
    session_id TEXT PRIMARY KEY,
    generation TEXT NOT NULL,
    updated_at INTEGER NOT NULL
) STRICT;
CREATE TABLE trajectory_runtime_events (
    session_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    event_json TEXT NOT NULL,
    PRIMARY KEY (session_id, seq)
) STRICT;
"""
"""The tables of ``openclaw-agent.sqlite`` that memu reads (STRICT, as OpenClaw creates them)."""


def create_agent_db(path: Path) -> sqlite3.Connection:
    """Create an agent store at ``path`` in WAL mode, as OpenClaw does; autocommit connection."""
    return create_wal_database(path, AGENT_DB_SCHEMA)
