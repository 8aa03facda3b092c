"""Received telemetry events: memU's ingest route, deduplicated by ``event_id``, counted per day.

memu-telemetry POSTs one envelope per request to ``/api/memu/analytics/events`` (memU's route).
Each is stored once: a re-sent event (a flush killed between the POST and the spool rewrite)
finds its ``event_id`` already there and is acknowledged without a second row, so counts stay
true. The table lives in memu-server's own database, beside the API keys (stdlib ``sqlite3``,
created on first use; ``PRAGMA user_version`` records the schema so a later change can migrate).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import re
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROUTE = "/api/memu/analytics/events"
"""Where memU's clients send events (``MEMU_EVENTS_BASE_URL`` names the whole URL)."""
STATS_ROUTE = ROUTE + "/stats"

SCHEMA_VERSION = 1
_SCHEMA = """
CREATE TABLE IF NOT EXISTS events (
    event_id TEXT PRIMARY KEY,
    event_name TEXT NOT NULL,
    day TEXT NOT NULL,
    occurred_at TEXT NOT NULL,
    received_at TEXT NOT NULL,
    client_instance_id TEXT NOT NULL DEFAULT '',
    agent_platform TEXT NOT NULL DEFAULT '',
    user_id TEXT,
    envelope TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS events_by_day ON events (day, event_name);
"""

_NAME = re.compile(r"^[a-z][a-z0-9_]{0,63}$")
_ID = re.compile(r"^[A-Za-z0-9-]{8,64}$")
_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}T")
MAX_ENVELOPE_BYTES = 16_384


class InvalidEvent(ValueError):
    """The body is not one event envelope; the message says which field."""


def check(envelope: Any) -> dict[str, Any]:
    """``envelope`` if it is one valid event object, else :class:`InvalidEvent`."""
    if not isinstance(envelope, dict):
        raise InvalidEvent("the body must be one event object (send one event per request)")
    for field, pattern in (("event_id", _ID), ("event_name", _NAME), ("occurred_at", _DAY)):
        value = envelope.get(field)
        if not isinstance(value, str) or not pattern.match(value):
            raise InvalidEvent(f"{field} is missing or malformed")
    for field in ("context", "properties"):
        if not isinstance(envelope.get(field, {}), dict):
            raise InvalidEvent(f"{field} must be an object")
    if len(json.dumps(envelope)) > MAX_ENVELOPE_BYTES:
        raise InvalidEvent(f"the event is over {MAX_ENVELOPE_BYTES} bytes")
    return envelope


class EventLog:
    """The events table. Thread-safe; one connection shared by the server's workers."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        self._conn = sqlite3.connect(str(path), timeout=5.0, isolation_level=None, check_same_thread=False)
        self._lock = threading.Lock()
        with self._locked() as conn:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.executescript(_SCHEMA)
            (current,) = conn.execute("PRAGMA user_version").fetchone()
            if current < SCHEMA_VERSION:
                conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    @contextlib.contextmanager
    def _locked(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            yield self._conn

    def close(self) -> None:
        """Close the database."""
        with self._locked() as conn:
            conn.close()

    def add(self, envelope: dict[str, Any], user_id: str | None = None) -> bool:
        """Store one checked envelope; ``False`` when its ``event_id`` was already stored."""
        context = envelope.get("context") or {}
        now = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
        with self._locked() as conn:
            cursor = conn.execute(
                "INSERT OR IGNORE INTO events (event_id, event_name, day, occurred_at, received_at,"
                " client_instance_id, agent_platform, user_id, envelope) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    envelope["event_id"],
                    envelope["event_name"],
                    envelope["occurred_at"][:10],
                    envelope["occurred_at"],
                    now,
                    str(envelope.get("client_instance_id") or ""),
                    str(context.get("agent_platform") or ""),
                    user_id,
                    json.dumps(envelope, ensure_ascii=False),
                ),
            )
        return cursor.rowcount == 1

    def stats(self) -> list[dict[str, Any]]:
        """Counts per day and event name, newest day first."""
        with self._locked() as conn:
            rows = conn.execute(
                "SELECT day, event_name, COUNT(*) FROM events GROUP BY day, event_name ORDER BY day DESC, event_name"
            ).fetchall()
        return [{"day": day, "event_name": name, "count": count} for day, name, count in rows]
