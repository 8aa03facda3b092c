"""Dense search for the sqlite store: live vectors in a faiss index, cached per generation.

The index is cached per (generation, owner kind, filter), so a long-lived process (the warm
server) loads it once per write rather than once per query.

A search reads every live vector, so its cost is the size of the matrix. Past
:data:`HALF_PRECISION_FROM` vectors the index holds them as float16 (half the bytes to read per
query, and half the server's memory), and the answer is still the float32 one: the float16 pass
only picks candidates, wide enough that no vector of the exact top ``limit`` can be missing
(:func:`_half_error` bounds how far a float16 score can be from the float32 one), and the
candidates are scored again from the float32 vectors in the store (see docs/adr/0030-warm-retrieve-server-path.md).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from memu_core._stores._common import ScopeFilter
from memu_core._stores.sqlite.rows import chunks, placeholders, scope_sql
from memu_core.types import Hit

_MAX_ENTRIES = 8
"""Distinct filters kept per generation (each is a full copy of the matching vectors)."""

HALF_PRECISION_FROM = 20_000
"""Vectors from which the index is float16 with exact re-scoring. Below it a float32 scan takes a
millisecond or two and re-scoring from the store would cost more than it saves."""

FIRST_WIDTH = 2
"""The float16 pass first asks for this many times ``limit`` candidates (widened while the
error bound says an exact top hit could lie beyond them)."""

LOAD_ROWS = 8_192
"""Vectors read from the store per block while an index is built."""

_HALF_LIMIT = 60_000.0
"""float16 overflows past 65504; a store holding larger components (never a sentence embedder's)
keeps a float32 index."""
_HALF_UNIT = 2.0**-11
"""float16's unit round-off: a stored component is off by at most this fraction of itself."""
_SUM_SLACK = 2.0**-23
"""Per-dimension allowance for float32 rounding in the two kernels' sums."""


@dataclass(slots=True)
class _Entry:
    """One cached index: the owner ids in index order, the faiss index, and, for a float16
    index, the bound on how far its scores are from exact (``0.0`` for an exact index)."""

    ids: list[str]
    index: Any
    error: float


class DenseCache:
    """Faiss indexes over live vectors, dropped as soon as the store's generation moves."""

    def __init__(self) -> None:
        self._generation = -1
        self._entries: dict[tuple[object, ...], _Entry] = {}

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
        if not entry.ids:
            return []
        query = np.asarray(vector, dtype=np.float32).reshape(1, -1)
        norm = float(np.linalg.norm(query))
        if norm:
            query = query / norm
        if not entry.error:
            scores, rows = entry.index.search(query, min(limit, len(entry.ids)))
            return [Hit(entry.ids[r], float(s)) for s, r in zip(scores[0], rows[0], strict=True) if r >= 0]
        return _rescore(conn, entry, kind, fp_key, dimension, query, _candidates(entry, query, limit), limit)


def _candidates(entry: _Entry, query: Any, limit: int) -> list[int]:
    """Index rows whose float16 score is close enough to the ``limit``-th best that their exact
    score may still beat it: every member of the exact top ``limit`` is among them.

    If the exact ``limit``-th score is ``s`` and the float16 one is ``t``, every float16 score is
    within ``e`` (``entry.error``) of its exact score, so ``s >= t - e`` and each exact top hit has
    a float16 score of at least ``t - 2e``. The pass widens until its last candidate is below that.
    """
    total = len(entry.ids)
    want = min(limit, total)
    width = min(total, max(want * FIRST_WIDTH, want + 32))
    while True:
        scores, rows = entry.index.search(query, width)
        if width >= total or float(scores[0][width - 1]) < float(scores[0][want - 1]) - 2 * entry.error:
            return [int(r) for r in rows[0] if r >= 0]
        width = min(total, width * 4)


def _rescore(
    conn: sqlite3.Connection,
    entry: _Entry,
    kind: str,
    fp_key: str,
    dimension: int,
    query: Any,
    candidates: list[int],
    limit: int,
) -> list[Hit]:
    """The best ``limit`` of the ``candidates`` rows by their float32 vectors in the store.

    They are scored by a float32 faiss index over just those rows, added in the big index's row
    order: the same kernel and the same tie order as a flat search of every vector, so the hits
    and their scores are the ones the float32 index gives.
    """
    import faiss
    import numpy as np

    row_of = {entry.ids[r]: r for r in candidates}
    found: list[tuple[int, str, bytes]] = []
    for part in chunks(list(row_of)):
        rows = conn.execute(
            f"SELECT owner_id, vector FROM vectors WHERE owner_kind = ? AND owner_id IN ({placeholders(len(part))}) "
            "AND fingerprint = ?",
            [kind, *part, fp_key],
        ).fetchall()
        found.extend((row_of[owner], owner, blob) for owner, blob in rows)
    if not found:  # every candidate was deleted after the index was built
        return []
    found.sort()
    exact = faiss.IndexFlatIP(dimension)
    exact.add(np.frombuffer(b"".join(f[2] for f in found), dtype=np.float32).reshape(len(found), dimension))
    scores, rows = exact.search(query, min(limit, len(found)))
    return [Hit(found[r][1], float(s)) for s, r in zip(scores[0], rows[0], strict=True) if r >= 0]


def _row_norms(block: Any) -> Any:
    import numpy as np

    return np.sqrt(np.einsum("ij,ij->i", block, block))


def _half_error(largest_norm: float, dimension: int) -> float:
    """A bound on ``|float16 score - float32 score|`` for a unit query against rows whose norm is
    at most ``largest_norm``.

    Each float16 component is within a unit round-off of the float32 one, so by Cauchy-Schwarz a
    row's score moves by at most ``2^-11 * |row|``; the summation slack covers the float16 and
    float32 kernels adding in different orders. Kept positive for a store of zero vectors.
    """
    return max(largest_norm, 1e-6) * (_HALF_UNIT + _SUM_SLACK * dimension)


def _load(
    conn: sqlite3.Connection,
    kind: str,
    fp_key: str,
    dimension: int,
    flt: ScopeFilter,
    tracks: tuple[str, ...] | None,
    *,
    half: bool = True,
) -> _Entry:
    """Read the live vectors into a new index, :data:`LOAD_ROWS` at a time.

    Reading in blocks keeps the load's peak near the index's own size: the rows, their joined
    bytes and a float32 copy of the whole matrix never exist at once (at 300,000 vectors that
    peak was about 1.4 GB, and the allocator kept most of it in the warm server afterwards).
    """
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
    cursor = conn.execute(sql, [kind, fp_key, *params])
    ids: list[str] = []
    held: list[Any] = []  # float32 blocks, until there are enough rows to choose float16
    index: Any = None
    largest = 0.0
    while rows := cursor.fetchmany(LOAD_ROWS):
        ids.extend(r[0] for r in rows)
        block = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), dimension)
        largest = max(largest, float(np.max(_row_norms(block))))
        if half and float(np.max(np.abs(block))) > _HALF_LIMIT:
            if index is not None:  # float16 was chosen already: read again, in float32
                cursor.close()
                return _load(conn, kind, fp_key, dimension, flt, tracks, half=False)
            half = False
        if index is not None:
            index.add(block)
            continue
        held.append(block)
        if half and len(ids) >= HALF_PRECISION_FROM:
            index = faiss.IndexScalarQuantizer(dimension, faiss.ScalarQuantizer.QT_fp16, faiss.METRIC_INNER_PRODUCT)
            for part in held:
                index.add(part)
            held = []
    if index is not None:
        return _Entry(ids, index, _half_error(largest, dimension))
    flat = faiss.IndexFlatIP(dimension)
    for part in held:
        flat.add(part)
    return _Entry(ids, flat, 0.0)
