"""File history in the sqlite store: past versions in ``file_versions``, the current in ``files``.

Before a write replaces or forgets a file, the file's row is copied into ``file_versions`` under
its revision (the version number), then all but the newest ``keep`` past versions of that name
are dropped. A forget adds a tombstone version holding the forgotten content. Everything runs
inside the caller's write transaction (docs/adr/0023-file-history.md).
"""

from __future__ import annotations

import datetime as _dt
import sqlite3
from collections.abc import Sequence
from typing import Any

from memu_core._stores.sqlite.rows import stamp
from memu_core.types import FileVersion, HistoryNote, Scope, utcnow

VERSION_COLS = "version, user_id, agent_id, track, name, action, actor, created_at, description, content, content_hash"
_CURRENT_COLS = (
    "revision, user_id, agent_id, track, name, action, actor, updated_at, description, content, content_hash"
)
_KEY = "user_id = ? AND agent_id = ? AND track = ? AND name = ?"


def version_from_row(row: Sequence[Any], current: bool = False) -> FileVersion:
    """A row in :data:`VERSION_COLS` order as a :class:`FileVersion`."""
    return FileVersion(
        version=int(row[0]),
        scope=Scope(row[1], row[2]),
        track=row[3],
        name=row[4],
        action=row[5],
        actor=row[6],
        created_at=_dt.datetime.fromisoformat(row[7]),
        description=row[8],
        content=row[9],
        hash=row[10],
        current=current,
    )


def next_version(conn: sqlite3.Connection, key: tuple[str, str, str, str]) -> int:
    """The version number a newly created file of this name starts at (after its tombstones)."""
    row = conn.execute(f"SELECT max(version) FROM file_versions WHERE {_KEY}", key).fetchone()
    return 1 if row is None or row[0] is None else int(row[0]) + 1


def keep_previous(conn: sqlite3.Connection, file_id: str, key: tuple[str, str, str, str], note: HistoryNote) -> None:
    """Copy the file's current row into the past versions, then bound them to ``note.keep``."""
    conn.execute(
        f"INSERT OR REPLACE INTO file_versions ({VERSION_COLS}) SELECT {_CURRENT_COLS} FROM files WHERE id = ?",
        (file_id,),
    )
    _prune(conn, key, note.keep)


def tombstone(conn: sqlite3.Connection, file_id: str, key: tuple[str, str, str, str], note: HistoryNote) -> None:
    """Keep the file about to be forgotten, and a ``forget`` version after it that holds its content."""
    conn.execute(
        f"INSERT OR REPLACE INTO file_versions ({VERSION_COLS}) SELECT {_CURRENT_COLS} FROM files WHERE id = ?",
        (file_id,),
    )
    conn.execute(
        f"INSERT OR REPLACE INTO file_versions ({VERSION_COLS}) SELECT revision + 1, user_id, agent_id, track, "
        "name, 'forget', ?, ?, description, content, content_hash FROM files WHERE id = ?",
        (note.actor, stamp(utcnow()), file_id),
    )
    _prune(conn, key, note.keep)


def _prune(conn: sqlite3.Connection, key: tuple[str, str, str, str], keep: int) -> None:
    # The OFFSET picks the oldest version to keep; with fewer rows it is NULL and nothing goes.
    conn.execute(
        f"DELETE FROM file_versions WHERE {_KEY} AND version < (SELECT version FROM file_versions "
        f"WHERE {_KEY} ORDER BY version DESC LIMIT 1 OFFSET ?)",
        (*key, *key, keep - 1),
    )


def history(conn: sqlite3.Connection, scope: Scope, track: str, name: str) -> list[FileVersion]:
    """Every kept version of the name, newest first; the stored file (if any) is the first."""
    key = (scope.user_id, scope.agent_id, track, name)
    out: list[FileVersion] = []
    row = conn.execute(f"SELECT {_CURRENT_COLS} FROM files WHERE {_KEY}", key).fetchone()
    if row is not None:
        out.append(version_from_row(row, current=True))
    rows = conn.execute(f"SELECT {VERSION_COLS} FROM file_versions WHERE {_KEY} ORDER BY version DESC", key).fetchall()
    out.extend(version_from_row(r) for r in rows if row is None or int(r[0]) < int(row[0]))
    return out


def one_version(conn: sqlite3.Connection, scope: Scope, track: str, name: str, version: int) -> FileVersion | None:
    """Version ``version`` of the name, or ``None`` when it was never kept (or was pruned)."""
    key = (scope.user_id, scope.agent_id, track, name)
    row = conn.execute(f"SELECT {_CURRENT_COLS} FROM files WHERE {_KEY} AND revision = ?", (*key, version)).fetchone()
    if row is not None:
        return version_from_row(row, current=True)
    row = conn.execute(
        f"SELECT {VERSION_COLS} FROM file_versions WHERE {_KEY} AND version = ?", (*key, version)
    ).fetchone()
    return None if row is None else version_from_row(row)


def recent(conn: sqlite3.Connection, cond: str, params: list[Any], limit: int) -> list[FileVersion]:
    """The newest ``limit`` versions across files (current and past), newest first.

    ``cond`` is an ``AND``-joined scope filter over plain column names (``scope_sql``).
    """
    rows = conn.execute(
        f"SELECT * FROM (SELECT {_CURRENT_COLS}, 1 AS cur FROM files WHERE 1{cond} "
        f"UNION ALL SELECT {VERSION_COLS}, 0 AS cur FROM file_versions WHERE 1{cond}) "
        "ORDER BY updated_at DESC, revision DESC LIMIT ?",
        (*params, *params, limit),
    ).fetchall()
    return [version_from_row(r[:11], current=bool(r[11])) for r in rows]
