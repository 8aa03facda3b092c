"""Dense search for the sqlite store: live vectors as one float32 matrix in a faiss flat index.

The matrix is cached per (generation, owner kind, filter), so a long-lived process (the warm
server) loads it once per write rather than once per query.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from memu_core._stores._common import ScopeFilter
from memu_core._stores.sqlite.rows import scope_sql
from memu_core.types import Hit

_MAX_ENTRIES = 8
"""Distinct filters kept per generation (each is a full copy of the matching vectors)."""


class DenseCache:
    """Faiss indexes over live vectors, dropped as soon as the store's generation moves."""

    def __init__(self) -> None:
        self._generation = -1
        self._entries: dict[tuple[object, ...], tuple[list[str], Any]] = {}

    def search(
        self,
        conn: sqlite3.Connection,
        generation: int,
        kind: str,
        fp_key: str,
        dimension: int,
        flt: ScopeFilter,
        tracks: tuple[str, ...] | None,
        vector: Sequence[float],
        limit: int,
    ) -> list[Hit]:
        """Best-first owners of ``kind`` by inner product with ``vector`` (unit vectors: cosine)."""
        import numpy as np

        if generation != self._generation:
            self._entries.clear()
            self._generation = generation
        key = (kind, fp_key, tuple(sorted(flt.items())), tracks)
        entry = self._entries.get(key)
        if entry is None:
            entry = _load(conn, kind, fp_key, dimension, flt, tracks)
            if len(self._entries) >= _MAX_ENTRIES:
                self._entries.pop(next(iter(self._entries)))
            self._entries[key] = entry
        ids, index = entry
        if not ids:
            return []
        query = np.asarray(vector, dtype=np.float32).reshape(1, -1)
        norm = float(np.linalg.norm(query))
        if norm:
            query = query / norm
        scores, rows = index.search(query, min(limit, len(ids)))
        return [Hit(ids[r], float(s)) for s, r in zip(scores[0], rows[0], strict=True) if r >= 0]


def _load(
    conn: sqlite3.Connection,
    kind: str,
    fp_key: str,
    dimension: int,
    flt: ScopeFilter,
    tracks: tuple[str, ...] | None,
) -> tuple[list[str], Any]:
    import faiss
    import numpy as np

    table = "segments" if kind == "segment" else "resources"
    where, params = scope_sql(flt, "o", tracks if kind == "segment" else None)
    # A table scan, not the fingerprint index: after a switch every vector is live, and reading
    # the table in order beats one index hop per row. No ORDER BY: sorting 1.5 kB rows is slow
    # and the ids list keeps the matrix rows aligned anyway.
    if where:
        sql = (
            f"SELECT o.id, v.vector FROM vectors v NOT INDEXED JOIN {table} o ON o.id = v.owner_id "
            f"WHERE v.owner_kind = ? AND v.fingerprint = ?{where}"
        )
    else:
        # Vectors of deleted owners are removed by trigger, so no join is needed to drop them.
        sql = "SELECT owner_id, vector FROM vectors NOT INDEXED WHERE owner_kind = ? AND fingerprint = ?"
    rows = conn.execute(sql, [kind, fp_key, *params]).fetchall()
    ids = [r[0] for r in rows]
    index = faiss.IndexFlatIP(dimension)
    if rows:
        matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), dimension)
        index.add(np.ascontiguousarray(matrix))
    return ids, index
