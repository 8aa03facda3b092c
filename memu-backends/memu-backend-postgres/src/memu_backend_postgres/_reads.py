"""Planning reads, listing and fetches (each runs inside the caller's read transaction)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memu_backend_postgres._rows import (
    FILE_COLUMNS,
    RESOURCE_COLUMNS,
    SEGMENT_COLUMNS,
    to_file,
    to_resource,
    to_segment,
    where_sql,
)
from memu_core.types import RecallFile, Resource, Scope, Segment, StoredFile, Where


def get_files(conn: Any, scope: Scope, keys: Sequence[tuple[str, str]]) -> dict[tuple[str, str], StoredFile]:
    """Files among ``keys`` in exactly ``scope`` with the texts planning may reuse."""
    import sqlalchemy as sa

    rows = conn.execute(
        sa.text(
            f"SELECT {FILE_COLUMNS} FROM memu_files WHERE user_id = :u AND agent_id = :a "
            "AND (track, name) IN (SELECT * FROM unnest(CAST(:tracks AS text[]), CAST(:names AS text[])))"
        ),
        {
            "u": scope.user_id,
            "a": scope.agent_id,
            "tracks": [k[0] for k in keys],
            "names": [k[1] for k in keys],
        },
    )
    files = {row.id: to_file(row) for row in rows}
    if not files:
        return {}
    # With a live fingerprint only texts that hold a vector count as reusable (the engine must
    # embed the rest); a lexical-only store has nothing to embed, so every text counts.
    texts: dict[str, set[str]] = {fid: set() for fid in files}
    lexical_only = conn.execute(sa.text("SELECT live_fp_id IS NULL FROM memu_meta WHERE id = 1")).scalar_one()
    vector_clause = (
        ""
        if lexical_only
        else " AND (s.fp_id IS NOT NULL OR EXISTS (SELECT 1 FROM memu_pending_vectors p WHERE p.id = s.id))"
    )
    for row in conn.execute(
        sa.text(f"SELECT s.file_id, s.text FROM memu_segments s WHERE s.file_id = ANY(:ids){vector_clause}"),
        {"ids": list(files)},
    ):
        texts[row.file_id].add(row.text)
    return {(f.track, f.name): StoredFile(f, frozenset(texts[f.id])) for f in files.values()}


def get_resources(conn: Any, scope: Scope, paths: Sequence[str]) -> dict[str, Resource]:
    """Resources among ``paths`` in exactly ``scope``."""
    import sqlalchemy as sa

    rows = conn.execute(
        sa.text(
            f"SELECT {RESOURCE_COLUMNS} FROM memu_resources WHERE user_id = :u AND agent_id = :a AND path = ANY(:paths)"
        ),
        {"u": scope.user_id, "a": scope.agent_id, "paths": list(paths)},
    )
    return {row.path: to_resource(row) for row in rows}


def list_files(
    conn: Any, where: Where, after: tuple[str, str, str] | None, limit: int
) -> tuple[list[RecallFile], tuple[str, str, str] | None]:
    """One keyset page; the columns use the C collation, so the order is plain code-point order."""
    import sqlalchemy as sa

    params: dict[str, Any] = {"limit": limit + 1}
    filters = where_sql(where, params)
    if after is not None:
        filters += " AND (track, name, id) > (:t, :n, :i)"
        params.update(t=after[0], n=after[1], i=after[2])
    rows = list(
        conn.execute(
            sa.text(f"SELECT {FILE_COLUMNS} FROM memu_files WHERE TRUE{filters} ORDER BY track, name, id LIMIT :limit"),
            params,
        )
    )
    page = [to_file(row) for row in rows[:limit]]
    more = len(rows) > limit
    last = page[-1] if page else None
    return page, ((last.track, last.name, last.id) if more and last else None)


def fetch_segments(conn: Any, ids: Sequence[str]) -> dict[str, Segment]:
    """Segments by id."""
    import sqlalchemy as sa

    rows = conn.execute(
        sa.text(f"SELECT {SEGMENT_COLUMNS} FROM memu_segments WHERE id = ANY(:ids)"), {"ids": list(ids)}
    )
    return {row.id: to_segment(row) for row in rows}


def fetch_files(conn: Any, ids: Sequence[str]) -> dict[str, RecallFile]:
    """Files by id."""
    import sqlalchemy as sa

    rows = conn.execute(sa.text(f"SELECT {FILE_COLUMNS} FROM memu_files WHERE id = ANY(:ids)"), {"ids": list(ids)})
    return {row.id: to_file(row) for row in rows}


def fetch_resources(conn: Any, ids: Sequence[str]) -> dict[str, Resource]:
    """Resources by id."""
    import sqlalchemy as sa

    rows = conn.execute(
        sa.text(f"SELECT {RESOURCE_COLUMNS} FROM memu_resources WHERE id = ANY(:ids)"), {"ids": list(ids)}
    )
    return {row.id: to_resource(row) for row in rows}
