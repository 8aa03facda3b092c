"""Hermes keeps every session in one SQLite database, ``state.db``; this reads it read-only.

The gateway and the live CLI write that database in WAL mode while a bridging run reads, so it
is opened through a read-only ``file:`` URI (never the write lock) with one short connection
per query. A session is a *virtual path* ``<db folder>/<session id>`` that is never opened: its
name is the full session id (dots kept), which is also the cursor key and the id Hermes exports
as ``HERMES_SESSION_ID``. Rows are append-only per session, so the cursor is a row count.
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from memu_core.errors import UsageError
from memu_core.host import (
    MAX_LINE_CHARS,
    EpochTimestamps,
    Record,
    RecordKind,
    SessionFile,
    TranscriptRead,
    TranscriptReadError,
    iso_utc,
    readonly_query,
)

DB_NAME = "state.db"
_COLUMNS = ("role", "content", "tool_call_id", "tool_calls", "tool_name", "timestamp")
_encode = json.JSONEncoder(ensure_ascii=False).encode
"""One encoder for every row (``json.dumps`` with options builds a new one per call)."""


def state_db_path(environ: Mapping[str, str] = os.environ, platform: str = sys.platform) -> Path:
    """``$HERMES_HOME/state.db``; else ``%LOCALAPPDATA%\\hermes`` on Windows; else ``~/.hermes``."""
    home = environ.get("HERMES_HOME", "").strip()
    if home:
        return Path(home).expanduser() / DB_NAME
    if platform == "win32":
        local = environ.get("LOCALAPPDATA", "").strip() or str(Path.home() / "AppData" / "Local")
        return Path(local) / "hermes" / DB_NAME
    return Path.home() / ".hermes" / DB_NAME


def classify_hermes_record(obj: dict[str, Any]) -> RecordKind:
    """``tool`` rows and assistant rows that only call tools are tools; prose is conversation."""
    role = obj.get("role")
    if role == "tool":
        return RecordKind.TOOL
    if role in ("user", "assistant"):
        if obj.get("content"):
            return RecordKind.MESSAGE
        if _has_calls(obj.get("tool_calls")):
            return RecordKind.TOOL
    return RecordKind.OTHER


def _has_calls(value: Any) -> bool:
    """Whether ``tool_calls`` (a JSON string in the database) names any call (``"[]"`` does not)."""
    if isinstance(value, str):
        return value.strip() not in ("", "[]", "null")
    return bool(value)


def row_dict(row: tuple[Any, ...]) -> dict[str, Any]:
    """One ``messages`` row as a record holding only its non-NULL columns, in column order."""
    return {k: v for k, v in zip(_COLUMNS, row, strict=True) if v is not None}


def row_record(row: tuple[Any, ...]) -> str:
    """One ``messages`` row as a JSON line (see :func:`row_dict`)."""
    return _encode(row_dict(row))


class HermesSource(EpochTimestamps):
    """Sessions in Hermes's ``state.db``. ``--session-dir`` names the database *file*."""

    name: ClassVar[str] = "hermes"

    def __init__(self, session_dir: str | Path | None = None) -> None:
        super().__init__(session_dir)
        self.db: Path = self._session_dir if self._session_dir is not None else state_db_path()
        """The database file (``--session-dir``, else where Hermes keeps it)."""

    def default_root(self) -> Path:
        """The default database's folder."""
        return state_db_path().parent

    def root(self) -> Path:
        """The folder holding the database (virtual session paths live under it)."""
        return self.db.parent

    def exists(self) -> bool:
        """True when the database file exists.

        A missing database is a usage error with Hermes's own fix (the generic message would
        ask for a folder, but ``--session-dir`` takes the database file here).
        """
        if self.db.is_file():
            return True
        raise UsageError(
            f"no Hermes database at {self.db}; pass --session-dir with the path of Hermes's state.db "
            "(or set HERMES_HOME to the folder that holds it)"
        )

    def discover(self) -> list[SessionFile]:
        """Every session with messages, newest activity first (a missing database: none)."""
        if not self.db.is_file():
            return []
        try:
            rows = readonly_query(
                self.db,
                "SELECT session_id, MAX(timestamp), COUNT(*) FROM messages "
                "WHERE session_id IS NOT NULL GROUP BY session_id ORDER BY MAX(timestamp) DESC",
            )
        except sqlite3.Error as exc:
            # Every session lives in this one file: nothing can be mined, so say what to fix.
            raise UsageError(
                f"could not read Hermes sessions from {self.db} ({exc}); pass --session-dir with the "
                "path of Hermes's state.db (set HERMES_HOME if Hermes uses another home)"
            ) from exc
        root = self.root()
        found = []
        for sid, last, count in rows:
            when = last if isinstance(last, int | float) else 0
            # size = row count and mtime = last activity: an unchanged session is passed over
            # without a query, exactly as an unchanged file is.
            found.append(SessionFile(root / str(sid), int(when * 1e9), int(count)))
        return found

    def key(self, path: Path) -> str:
        """The full session id."""
        return path.name

    def session_id(self, path: Path) -> str:
        """The full session id, dots kept (what ``HERMES_SESSION_ID`` holds)."""
        return path.name

    def classify_record(self, obj: dict[str, Any]) -> RecordKind:
        """See :func:`classify_hermes_record`."""
        return classify_hermes_record(obj)

    def record_timestamp(self, obj: dict[str, Any]) -> str | None:
        """Hermes stamps rows in epoch *seconds* (no millisecond guess)."""
        return iso_utc(obj.get("timestamp"), ms_heuristic=False)

    def read_incremental(self, session: SessionFile, previous: dict[str, Any] | None) -> TranscriptRead:
        """The session's rows after the ``lines`` already seen, in insertion order."""
        start = previous.get("lines") if previous else 0
        start = start if isinstance(start, int) and start >= 0 else 0
        try:
            rows = readonly_query(
                self.db,
                f"SELECT {', '.join(_COLUMNS)} FROM messages WHERE session_id = ? ORDER BY id",
                (session.path.name,),
            )
        except sqlite3.Error as exc:
            raise TranscriptReadError(session.path, exc) from exc
        if start > len(rows):  # the session was rewritten (not expected): read it again
            start = 0
        # Rows are classified as they are serialised: no text round trip through the JSON parser.
        records = []
        corrupt = 0
        for row in rows[start:]:
            obj = row_dict(row)
            text = _encode(obj)
            if len(text) > MAX_LINE_CHARS:  # the same bound as a JSONL line: skipped and counted
                corrupt += 1
                continue
            records.append(Record(text, classify_hermes_record(obj)))
        if records:
            last = iso_utc(rows[-1][-1], ms_heuristic=False)
            records[-1] = records[-1]._replace(timestamp=last)
        cursor = {"lines": len(rows), "size": session.size, "mtime_ns": session.mtime_ns}
        return TranscriptRead(records, cursor, corrupt)
