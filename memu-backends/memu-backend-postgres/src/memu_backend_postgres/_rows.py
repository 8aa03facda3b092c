"""Row ↔ dataclass conversion and the ``WHERE`` fragments every query shares."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memu_core.errors import UsageError
from memu_core.types import SCOPE_FIELDS, RecallFile, Resource, Scope, Segment, Where

FILE_COLUMNS = (
    "id, user_id, agent_id, track, name, description, content, content_hash, revision, created_at, updated_at"
)
SEGMENT_COLUMNS = "id, file_id, user_id, agent_id, track, kind, ordinal, text, context"
RESOURCE_COLUMNS = "id, user_id, agent_id, path, description, created_at, updated_at"


def to_file(row: Any) -> RecallFile:
    """A :class:`RecallFile` from a row selected with :data:`FILE_COLUMNS`."""
    return RecallFile(
        id=row.id,
        scope=Scope(row.user_id, row.agent_id),
        track=row.track,
        name=row.name,
        description=row.description,
        content=row.content,
        content_hash=row.content_hash,
        revision=row.revision,
        created_at=row.created_at,
        updated_at=row.updated_at,
    )


def to_segment(row: Any) -> Segment:
    """A :class:`Segment` from a row selected with :data:`SEGMENT_COLUMNS`."""
    return Segment(
        id=row.id,
        file_id=row.file_id,
        scope=Scope(row.user_id, row.agent_id),
        track=row.track,
        kind=row.kind,
        ordinal=row.ordinal,
        text=row.text,
        context=row.context,
    )


def to_resource(row: Any) -> Resource:
    """A :class:`Resource` from a row selected with :data:`RESOURCE_COLUMNS`."""
    return Resource(
        id=row.id,
        scope=Scope(row.user_id, row.agent_id),
        path=row.path,
        description=row.description,
        created_at=row.created_at,
        updated_at=row.updated_at,
    )


def where_sql(where: Where, params: dict[str, Any], alias: str = "") -> str:
    """`` AND …`` conditions for a scope filter (empty string for no filter), filling ``params``.

    Column names come from the fixed :data:`SCOPE_FIELDS`, never from the caller, so the
    fragment is safe to splice; values always travel as parameters.
    """
    prefix = f"{alias}." if alias else ""
    parts: list[str] = []
    for field, value in (where or {}).items():
        if field not in SCOPE_FIELDS:
            raise UsageError(f"unknown where filter field {field!r}; use one of {', '.join(SCOPE_FIELDS)}")
        if value is None:  # memU's wildcard
            continue
        key = f"w_{field}"
        if isinstance(value, str):
            parts.append(f"{prefix}{field} = :{key}")
            params[key] = value
        elif isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
            parts.append(f"{prefix}{field} = ANY(CAST(:{key} AS text[]))")
            params[key] = list(value)
        else:
            raise UsageError(f"where filter {field!r} must be a string or a list of strings, got {value!r}")
    return "".join(f" AND {part}" for part in parts)


def tracks_sql(tracks: Sequence[str] | None, params: dict[str, Any], alias: str = "") -> str:
    """`` AND track = ANY(…)`` for a track filter; empty for ``None`` (every track)."""
    if tracks is None:
        return ""
    if isinstance(tracks, str):
        raise UsageError(f"tracks must be a list of track names, got the string {tracks!r}")
    params["tracks"] = list(tracks)
    prefix = f"{alias}." if alias else ""
    return f" AND {prefix}track = ANY(CAST(:tracks AS text[]))"
