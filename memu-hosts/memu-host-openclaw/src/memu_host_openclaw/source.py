"""OpenClaw's sessions, from both of its containers, merged newest first.

Current releases keep one SQLite store per agent (``<root>/<agentId>/agent/openclaw-agent.sqlite``):
``session_windows`` lists sessions, ``transcript_events`` holds each entry verbatim (one legacy
JSONL line per row, ordered by ``seq``), ``transcript_rewrite_watermarks`` names the current
rewrite generation. Older releases wrote ``<root>/<agentId>/sessions/<sessionId>.jsonl``. A
stored session is given the legacy file's path as a *virtual path* (never opened), so cursors
keep their keys across the migration and the store wins over a leftover file.
"""

from __future__ import annotations

import json
import logging
import sqlite3
from pathlib import Path
from typing import Any, ClassVar

from memu_core.host import (
    EpochTimestamps,
    RecordKind,
    SelfSessions,
    SessionFile,
    TranscriptRead,
    TranscriptReadError,
    jsonl_files,
    load_line,
    newest_first,
    readonly_query,
    top_level_value,
)

log = logging.getLogger(__name__)

STORE_GLOB = "*/agent/openclaw-agent.sqlite"
ARCHIVE_DIR = "session-sqlite-import-archive"
_SIDECARS = (".trajectory.", ".checkpoint.")

_ACTIVITY_SQL = (
    "SELECT w.session_id, COALESCE(w.transcript_updated_at, MAX(e.created_at)), COUNT(e.seq) "
    "FROM transcript_events e JOIN session_windows w ON w.session_id = e.session_id "
    "GROUP BY w.session_id, w.transcript_updated_at"
)
_READ_SQL = (
    "SELECT w.generation, e.event_json FROM transcript_rewrite_watermarks w "
    "LEFT JOIN transcript_events e ON e.session_id = w.session_id "
    "WHERE w.session_id = ? ORDER BY e.seq"
)


def classify_openclaw_record(obj: dict[str, Any]) -> RecordKind:
    """User/assistant messages (tool calls ride inline) are conversation; tool results are tools."""
    if obj.get("type") != "message":
        return RecordKind.OTHER
    message = obj.get("message")
    if not isinstance(message, dict):
        return RecordKind.OTHER
    role = message.get("role")
    if role in ("user", "assistant"):
        return RecordKind.MESSAGE
    if role == "toolResult":
        return RecordKind.TOOL
    return RecordKind.OTHER


_TOOL_RESULT = '"message":{"role":"toolResult"'


def quick_openclaw_kind(line: str) -> RecordKind | None:
    """Non-message entries and tool results decided from the compact line; messages are parsed.

    Tool results carry whole command outputs; deciding them without a parse keeps a first run
    over months of sessions cheap. ``None`` means "parse it".
    """
    rtype = top_level_value(line, "type")
    if rtype is None:
        return None
    if rtype != "message":
        return RecordKind.OTHER
    at = line.find(_TOOL_RESULT)
    if at > 0 and line.count("{", 0, at) == 1 and not line.count("[", 0, at):
        return RecordKind.TOOL
    return None


class OpenClawSource(EpochTimestamps):
    """Every agent's sessions under ``~/.openclaw/agents`` (SQLite stores and legacy JSONL)."""

    name: ClassVar[str] = "openclaw"

    def __init__(self, session_dir: str | Path | None = None) -> None:
        super().__init__(session_dir)
        self._stored: dict[Path, tuple[Path, str]] = {}
        """Virtual path → (store, session id), for sessions read from a store."""

    def quick_kind(self, line: str) -> RecordKind | None:
        """See :func:`quick_openclaw_kind`."""
        return quick_openclaw_kind(line)

    def default_root(self) -> Path:
        """``~/.openclaw/agents`` (pass ``--session-dir`` for a non-default ``OPENCLAW_STATE_DIR``)."""
        return Path.home() / ".openclaw" / "agents"

    def stores(self) -> list[Path]:
        """The per-agent SQLite stores, sorted."""
        return sorted(self.root().glob(STORE_GLOB))

    def virtual_path(self, store: Path, session_id: str) -> Path:
        """Where the legacy file of a stored session would be (its key and identity)."""
        agent = store.parent.parent
        return agent / "sessions" / f"{session_id}.jsonl"

    def discover(self) -> list[SessionFile]:
        """Stored sessions with events plus legacy files the stores do not claim, newest first."""
        stored: dict[Path, tuple[Path, str]] = {}
        found: list[SessionFile] = []
        for store in self.stores():
            try:
                rows = readonly_query(store, _ACTIVITY_SQL)
            except sqlite3.Error as exc:
                log.warning("skipping unreadable OpenClaw store %s: %s", store, exc)
                continue
            for sid, activity_ms, count in rows:
                path = self.virtual_path(store, str(sid))
                stored[path] = (store, str(sid))
                ms = activity_ms if isinstance(activity_ms, int | float) else 0
                # ms → ns so stored and legacy sessions sort on one clock.
                found.append(SessionFile(path, int(ms * 1_000_000), int(count)))
        self._stored = stored
        for legacy in jsonl_files(self.root(), keep_dir=lambda n: n != ARCHIVE_DIR, keep_file=_not_sidecar):
            if legacy.path not in stored:
                found.append(legacy)
        return newest_first(found)

    def self_sessions(self, worktree: Path) -> SelfSessions:
        """The runs of every registered bridging cron job (:mod:`memu_host_openclaw.cron`)."""
        from memu_host_openclaw import cron

        return cron.self_sessions(self, worktree)

    def session_id(self, path: Path) -> str:
        """``<agentId>/<sessionId>``: session ids are unique only within one agent's store."""
        rel = path.relative_to(self.root())
        return f"{rel.parts[0]}/{path.stem}"

    def classify_record(self, obj: dict[str, Any]) -> RecordKind:
        """See :func:`classify_openclaw_record`."""
        return classify_openclaw_record(obj)

    def read_incremental(self, session: SessionFile, previous: dict[str, Any] | None) -> TranscriptRead:
        """Stored sessions by generation and row count; legacy files by the default reader.

        A cursor counts rows of one rewrite generation: when the generation changes (or the
        cursor came from the legacy file), the current generation is read from its start.
        """
        where = self._stored.get(session.path)
        if where is None:
            return super().read_incremental(session, previous)
        store, sid = where
        try:
            rows = readonly_query(store, _READ_SQL, (sid,))
        except sqlite3.Error as exc:
            raise TranscriptReadError(session.path, exc) from exc
        if not rows:
            raise TranscriptReadError(session.path, f"missing transcript generation for session {sid}")
        generation = rows[0][0]
        events = [r[1] for r in rows if r[1] is not None]
        start = 0
        if previous and previous.get("container") == "sqlite" and previous.get("generation") == generation:
            lines = previous.get("lines")
            start = lines if isinstance(lines, int) and 0 <= lines <= len(events) else 0
        # Rows are single JSON lines; a stray newline inside one would split it, so re-encode.
        text = "\n".join(e if "\n" not in e else _one_line(e) for e in events[start:])
        records, corrupt = self.parse_lines(text)
        cursor = {
            "container": "sqlite",
            "generation": generation,
            "lines": len(events),
            "size": session.size,
            "mtime_ns": session.mtime_ns,
        }
        return TranscriptRead(records, cursor, corrupt)


def _not_sidecar(name: str) -> bool:
    return not any(mark in name for mark in _SIDECARS)


def _one_line(text: str) -> str:
    try:
        return json.dumps(load_line(text), ensure_ascii=False)
    except ValueError:
        return text.replace("\n", " ")
