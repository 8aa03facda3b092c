"""Row ↔ dataclass conversions and small SQL builders shared by the sqlite store's modules."""

from __future__ import annotations

import datetime as _dt
import sqlite3
from array import array
from collections.abc import Iterator, Sequence
from typing import Any

from memu_core._stores._common import ScopeFilter
from memu_core.types import RecallFile, Resource, Scope, Segment

FILE_COLS = (
    "id, user_id, agent_id, track, name, description, content, content_hash, revision, created_at, updated_at"
)
SEGMENT_COLS = "id, file_id, user_id, agent_id, track, kind, ordinal, text, context"
RESOURCE_COLS = "id, user_id, agent_id, path, description, created_at, updated_at"

CHUNK = 500
"""Ids per ``IN (...)`` list: well under SQLite's bound-parameter limit on every build."""


def stamp(when: _dt.datetime) -> str:
    """Timestamps are stored as ISO-8601 text with their UTC offset (read back aware)."""
    return when.isoformat()


def file_from_row(row: Sequence[Any]) -> RecallFile:
    """A ``files`` row (in :data:`FILE_COLS` order) as a :class:`RecallFile`."""
    return RecallFile(
        id=row[0],
        scope=Scope(row[1], row[2]),
        track=row[3],
        name=row[4],
        description=row[5],
        content=row[6],
        content_hash=row[7],
        revision=row[8],
        created_at=_dt.datetime.fromisoformat(row[9]),
        updated_at=_dt.datetime.fromisoformat(row[10]),
    )


def segment_from_row(row: Sequence[Any]) -> Segment:
    """A ``segments`` row (in :data:`SEGMENT_COLS` order) as a :class:`Segment`."""
    return Segment(
        id=row[0],
        file_id=row[1],
        scope=Scope(row[2], row[3]),
        track=row[4],
        kind=row[5],
        ordinal=row[6],
        text=row[7],
        context=row[8],
    )


def resource_from_row(row: Sequence[Any]) -> Resource:
    """A ``resources`` row (in :data:`RESOURCE_COLS` order) as a :class:`Resource`."""
    return Resource(
        id=row[0],
        scope=Scope(row[1], row[2]),
        path=row[3],
        description=row[4],
        created_at=_dt.datetime.fromisoformat(row[5]),
        updated_at=_dt.datetime.fromisoformat(row[6]),
    )


def vector_blob(vector: Sequence[float]) -> bytes:
    """float32 bytes in machine order (what ``numpy.frombuffer(dtype=float32)`` reads back)."""
    return array("f", vector).tobytes()


def scope_sql(
    flt: ScopeFilter, alias: str = "", tracks: tuple[str, ...] | None = None
) -> tuple[str, list[str]]:
    """``AND``-joined conditions (starting with `` AND``) for a checked where and track filter."""
    prefix = f"{alias}." if alias else ""
    parts: list[str] = []
    params: list[str] = []
    items: list[tuple[str, tuple[str, ...]]] = list(flt.items())
    if tracks is not None:
        items.append(("track", tracks))
    for column, values in items:
        if not values:
            parts.append("0")  # an empty list matches nothing
        elif len(values) == 1:
            parts.append(f"{prefix}{column} = ?")
        else:
            parts.append(f"{prefix}{column} IN ({', '.join('?' * len(values))})")
        params.extend(values)
    return "".join(f" AND {p}" for p in parts), params


def chunks(ids: Sequence[str]) -> Iterator[Sequence[str]]:
    """``ids`` de-duplicated, in slices small enough for one ``IN (...)``."""
    unique = list(dict.fromkeys(ids))
    for start in range(0, len(unique), CHUNK):
        yield unique[start : start + CHUNK]


def placeholders(n: int) -> str:
    """``?, ?, ?`` for ``n`` parameters."""
    return ", ".join("?" * n)


def bump_generation(conn: sqlite3.Connection) -> None:
    """Advance the write counter (inside the caller's transaction)."""
    conn.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'generation'")
