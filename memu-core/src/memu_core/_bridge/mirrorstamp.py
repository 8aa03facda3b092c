"""Whether the store changed since the mirror last matched it, read without opening the engine.

A steady ``prepare`` (nothing stored since the last run) used to open the local engine and the
SQLite store only to list the same files again: about a third of its run after imports (ADR
0026's third amendment). The SQLite store's *generation* grows with every committed write from
any process (the word-hits cache relies on it too), so a plain ``sqlite3`` read of it, with a
few other cheap facts that tell one store file from another, says whether a listing could
differ from the last one. The stamp is read *before* the listing, so a write landing during it
leaves a stamp no later run matches: that run lists again.

Only the built-in SQLite store in local mode has a stamp; every other backend (Postgres, the
cloud API, a store plugin) is listed every run, as before.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from memu_core._atomic import read_json, write_json

PROBE = (
    "SELECT (SELECT value FROM meta WHERE key = 'generation'), "
    "(SELECT max(seq) FROM segments), (SELECT max(seq) FROM file_versions)"
)
"""The write counter, then two rowid maxima (index lookups, not scans): a different store file
that happens to have reached the same generation differs in them, as in its inode."""


def current(where: Mapping[str, str]) -> str | None:
    """The stamp of the store the mirror lists in scope ``where``, or ``None`` when it cannot be
    read cheaply (not local mode, not a SQLite file, no store yet, unreadable)."""
    from memu_core._config.light import light_settings

    light = light_settings()
    if light is None:
        return None
    path = _sqlite_path(light.db)
    if path is None:
        return None
    try:
        info = os.stat(path)
        # Read-only and never creating the file: a missing store is the full path's to report.
        conn = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, timeout=5.0)
        try:
            row = conn.execute(PROBE).fetchone()
        finally:
            conn.close()
    except (OSError, ValueError, sqlite3.Error):
        return None
    if row is None or row[0] is None:
        return None
    scope = "|".join(f"{key}={where[key]}" for key in sorted(where))
    return f"sqlite:{path}:{info.st_dev}:{info.st_ino}:{row[0]}:{row[1]}:{row[2]}:{scope}"


def _sqlite_path(db: str) -> Path | None:
    """The file of a bare path or ``sqlite:////abs`` ``MEMU_DB`` (already normalised)."""
    if db.lower().startswith("sqlite:///"):
        rest = db[len("sqlite:///") :]
        return Path(rest) if rest.startswith("/") else None
    if "://" in db or not os.path.isabs(db):
        return None
    return Path(db)


def load(path: Path) -> dict[str, Any] | None:
    """The recorded stamp: ``{"store", "listed", "baseline"}``, or ``None``."""
    raw = read_json(path, None)
    if not isinstance(raw, dict) or not isinstance(raw.get("store"), str) or not isinstance(raw.get("listed"), int):
        return None
    return raw if isinstance(raw.get("baseline"), dict) else None


def record(path: Path, stamp: str | None, listed: int, baseline: dict[str, Any]) -> None:
    """Remember that the mirror matched the store ``stamp`` with ``baseline``; ``None`` forgets.

    A cache the next run checks before trusting: written atomically, never fsynced.
    """
    if stamp is None:
        path.unlink(missing_ok=True)
        return
    write_json(path, {"store": stamp, "listed": listed, "baseline": baseline}, compact=True, fsync=False)
