"""Re-embedding under a new fingerprint: list what needs vectors, stage them, switch atomically.

Staged vectors wait in ``memu_staged_vectors`` beside an md5 of the text they were made from;
the switch moves only those whose text is still current, so a commit that lands between
staging and switching can never leave a vector describing the wrong text.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memu_backend_postgres import _meta
from memu_core.errors import UsageError
from memu_core.types import Fingerprint

_KINDS = {"segment": ("memu_segments", "text"), "resource": ("memu_resources", "description")}


def _known_fp_id(conn: Any, fingerprint: Fingerprint) -> int | None:
    import sqlalchemy as sa

    found = conn.execute(
        sa.text("SELECT id FROM memu_fingerprints WHERE provider = :p AND model = :m AND dimension = :d"),
        {"p": fingerprint.provider, "m": fingerprint.model, "d": fingerprint.dimension},
    ).scalar()
    return None if found is None else int(found)


_TODO = """
    SELECT 'resource' AS kind, r.id, r.description AS body FROM memu_resources r
    WHERE r.description IS NOT NULL AND r.fp_id IS DISTINCT FROM :fp
      AND NOT EXISTS (SELECT 1 FROM memu_staged_vectors v
                      WHERE v.fp_id = :fp AND v.kind = 'resource' AND v.item_id = r.id
                        AND v.text_md5 = md5(r.description))
    UNION ALL
    SELECT 'segment', s.id, s.text FROM memu_segments s
    WHERE s.fp_id IS DISTINCT FROM :fp
      AND NOT EXISTS (SELECT 1 FROM memu_pending_vectors p WHERE p.id = s.id AND p.fp_id = :fp)
      AND NOT EXISTS (SELECT 1 FROM memu_staged_vectors v
                      WHERE v.fp_id = :fp AND v.kind = 'segment' AND v.item_id = s.id
                        AND v.text_md5 = md5(s.text))
"""
"""Rows lacking a vector under fingerprint ``:fp`` and not yet staged for it."""


def texts_to_embed(conn: Any, fingerprint: Fingerprint, limit: int) -> list[tuple[str, str, str]]:
    """Rows lacking a vector under ``fingerprint`` and not yet staged for it, ordered by kind, id."""
    import sqlalchemy as sa

    if limit <= 0:
        return []
    fp_id = _known_fp_id(conn, fingerprint)
    params = {"fp": -1 if fp_id is None else fp_id, "limit": limit}
    sql = f"SELECT kind, id, body FROM ({_TODO}) todo ORDER BY kind, id LIMIT :limit"
    return [(row.kind, row.id, row.body) for row in conn.execute(sa.text(sql), params)]


def count_texts_to_embed(conn: Any, fingerprint: Fingerprint) -> int:
    """How many rows :func:`texts_to_embed` would hand out in all (a reindex's total)."""
    import sqlalchemy as sa

    fp_id = _known_fp_id(conn, fingerprint)
    found = conn.execute(sa.text(f"SELECT count(*) FROM ({_TODO}) todo"), {"fp": -1 if fp_id is None else fp_id})
    return int(found.scalar() or 0)


def store_vectors(conn: Any, fingerprint: Fingerprint, rows: Sequence[tuple[str, str, list[float]]]) -> None:
    """Stage ``rows`` for ``fingerprint`` (ids that no longer exist are skipped)."""
    import numpy as np
    import sqlalchemy as sa

    _meta.join_writers(conn, None)
    fp_id = _meta.fingerprint_id(conn, fingerprint)
    batches: dict[str, list[dict[str, Any]]] = {"segment": [], "resource": []}
    for kind, item_id, values in rows:
        if kind not in batches:
            raise UsageError(f"store_vectors: kind {kind!r} is neither 'segment' nor 'resource'")
        vector = np.asarray(values, dtype=np.float32)
        if vector.ndim != 1 or vector.shape[0] != fingerprint.dimension:
            raise UsageError(
                f"store_vectors: {kind} {item_id} has a vector of {vector.shape} values, "
                f"{fingerprint.describe()} makes {fingerprint.dimension}"
            )
        batches[kind].append({"fp": fp_id, "id": item_id, "v": vector})
    for kind, batch in batches.items():
        if not batch:
            continue
        table, column = _KINDS[kind]
        conn.execute(
            sa.text(
                f"INSERT INTO memu_staged_vectors (fp_id, kind, item_id, text_md5, embedding) "
                f"SELECT :fp, '{kind}', x.id, md5(x.{column}), :v FROM {table} x "
                f"WHERE x.id = :id AND x.{column} IS NOT NULL "
                "ON CONFLICT (fp_id, kind, item_id) DO UPDATE "
                "SET text_md5 = excluded.text_md5, embedding = excluded.embedding"
            ),
            batch,
        )
    _meta.bump_generation(conn)


def switch_fingerprint(conn: Any, fingerprint: Fingerprint) -> None:
    """Make the staged vectors of ``fingerprint`` live, drop every other vector, record it."""
    import sqlalchemy as sa

    live = _meta.exclude_writers(conn)
    fp_id = _meta.fingerprint_id(conn, fingerprint)
    # A bulk HNSW build is far faster with the whole graph in memory.
    conn.execute(sa.text("SET LOCAL maintenance_work_mem = '512MB'"))
    if live.fp_id is not None and live.fp_id != fp_id:
        _meta.drop_indexes(conn, live.fp_id)
        for table in ("memu_segments", "memu_resources"):
            conn.execute(sa.text(f"UPDATE {table} SET fp_id = NULL, embedding = NULL WHERE fp_id IS NOT NULL"))
        # Vectors still waiting to be folded (ADR 0029) belong to the old space too.
        conn.execute(sa.text("DELETE FROM memu_pending_vectors"))
    for kind, (table, column) in _KINDS.items():
        conn.execute(
            sa.text(
                f"UPDATE {table} x SET fp_id = v.fp_id, embedding = v.embedding "
                "FROM memu_staged_vectors v "
                f"WHERE v.fp_id = :fp AND v.kind = '{kind}' AND v.item_id = x.id "
                f"AND v.text_md5 = md5(x.{column})"
            ),
            {"fp": fp_id},
        )
    # A staged vector replaces a pending one (a row holds one vector, linked or pending).
    conn.execute(
        sa.text("DELETE FROM memu_pending_vectors p USING memu_segments s WHERE s.id = p.id AND s.fp_id IS NOT NULL")
    )
    conn.execute(sa.text("DELETE FROM memu_staged_vectors WHERE fp_id = :fp"), {"fp": fp_id})
    _meta.make_live(conn, fp_id, fingerprint.dimension)
    _meta.bump_generation(conn)
