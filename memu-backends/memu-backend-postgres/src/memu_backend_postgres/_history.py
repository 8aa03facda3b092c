"""File history on Postgres: the reads, and the settings the ``memu_files`` trigger stamps with.

Migration 0002's trigger keeps past versions whatever path writes a file; a write transaction
first calls :func:`note` so the trigger knows the action, the actor and how many versions to
keep (docs/adr/0023-file-history.md).
"""

from __future__ import annotations

from typing import Any

from memu_backend_postgres._rows import where_sql
from memu_core.types import FileVersion, Fingerprint, HistoryNote, Scope, StoreStats, Where

_CURRENT = (
    "revision AS version, user_id, agent_id, track, name, action, actor, updated_at AS created_at, "
    "description, content, content_hash"
)
_PAST = "version, user_id, agent_id, track, name, action, actor, created_at, description, content, content_hash"
_KEY = "user_id = :u AND agent_id = :a AND track = :t AND name = :n"


def note(conn: Any, history: HistoryNote | None) -> None:
    """Tell this transaction's trigger what it writes (no note: keep nothing, stamp ``commit``)."""
    import sqlalchemy as sa

    action, actor, keep = ("commit", "", 0) if history is None else (history.action, history.actor, history.keep)
    conn.execute(
        sa.text(
            "SELECT set_config('memu.action', :action, true), set_config('memu.actor', :actor, true), "
            "set_config('memu.keep', :keep, true)"
        ),
        {"action": action, "actor": actor, "keep": str(max(0, keep))},
    )


def _version(row: Any, current: bool) -> FileVersion:
    return FileVersion(
        version=int(row.version),
        scope=Scope(row.user_id, row.agent_id),
        track=row.track,
        name=row.name,
        action=row.action,
        actor=row.actor,
        created_at=row.created_at,
        description=row.description,
        content=row.content,
        hash=row.content_hash,
        current=current,
    )


def history(conn: Any, scope: Scope, track: str, name: str) -> list[FileVersion]:
    """Every kept version of the name, newest first; the stored file (if any) first."""
    import sqlalchemy as sa

    key = {"u": scope.user_id, "a": scope.agent_id, "t": track, "n": name}
    now = conn.execute(sa.text(f"SELECT {_CURRENT} FROM memu_files WHERE {_KEY}"), key).one_or_none()
    out = [] if now is None else [_version(now, True)]
    rows = conn.execute(sa.text(f"SELECT {_PAST} FROM memu_file_versions WHERE {_KEY} ORDER BY version DESC"), key)
    out.extend(_version(r, False) for r in rows if now is None or r.version < now.version)
    return out


def one(conn: Any, scope: Scope, track: str, name: str, version: int) -> FileVersion | None:
    """One version of the name, or ``None`` when it was never kept (or was pruned)."""
    import sqlalchemy as sa

    key = {"u": scope.user_id, "a": scope.agent_id, "t": track, "n": name, "v": version}
    now = conn.execute(sa.text(f"SELECT {_CURRENT} FROM memu_files WHERE {_KEY} AND revision = :v"), key)
    row = now.one_or_none()
    if row is not None:
        return _version(row, True)
    row = conn.execute(
        sa.text(f"SELECT {_PAST} FROM memu_file_versions WHERE {_KEY} AND version = :v"), key
    ).one_or_none()
    return None if row is None else _version(row, False)


def recent(conn: Any, where: Where, limit: int) -> list[FileVersion]:
    """The newest ``limit`` versions across files (current and past), newest first."""
    import sqlalchemy as sa

    params: dict[str, Any] = {}
    cond = where_sql(where, params)
    rows = conn.execute(
        sa.text(
            f"SELECT * FROM (SELECT {_CURRENT}, true AS cur FROM memu_files WHERE true{cond} "
            f"UNION ALL SELECT {_PAST}, false AS cur FROM memu_file_versions WHERE true{cond}) x "
            "ORDER BY created_at DESC, version DESC LIMIT :limit"
        ),
        {**params, "limit": limit},
    )
    return [_version(r, bool(r.cur)) for r in rows]


def stats(conn: Any, where: Where, live: Fingerprint | None, live_id: int | None) -> StoreStats:
    """Counts for ``memu stats`` within ``where``, and the size of memu's tables."""
    import sqlalchemy as sa

    params: dict[str, Any] = {}
    cond = where_sql(where, params)
    files = conn.execute(
        sa.text(f"SELECT track, actor, count(*) AS n FROM memu_files WHERE true{cond} GROUP BY track, actor"),
        params,
    ).all()

    def count(sql: str, extra: dict[str, Any] | None = None) -> int:
        return int(conn.execute(sa.text(sql), {**params, **(extra or {})}).scalar_one())

    vectors = 0
    if live_id is not None:
        vectors = count(f"SELECT count(*) FROM memu_segments WHERE fp_id = :fp{cond}", {"fp": live_id})
        vectors += count(f"SELECT count(*) FROM memu_pending_vectors WHERE fp_id = :fp{cond}", {"fp": live_id})
    size = conn.execute(
        sa.text(
            "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c "
            "WHERE c.relkind = 'r' AND c.relname LIKE 'memu\\_%' AND pg_table_is_visible(c.oid)"
        )
    ).scalar_one()
    return StoreStats(
        files=sorted((r.track, r.actor, int(r.n)) for r in files),
        segments=count(f"SELECT count(*) FROM memu_segments WHERE true{cond}"),
        vectors=vectors,
        resources=count(f"SELECT count(*) FROM memu_resources WHERE true{cond}"),
        versions=count(f"SELECT count(*) FROM memu_file_versions WHERE true{cond}"),
        size_bytes=int(size),
        fingerprint=live,
    )
