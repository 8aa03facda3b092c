"""Dense search for the sqlite store: live vectors in a faiss index, kept warm across writes.

The index is cached per (owner kind, embedding space, filter) and patched after each write from
the store's change log (:mod:`memu_core._stores.sqlite.changes`): a long-lived process (the warm
server) loads it once, then drops and appends the few rows a commit touched, whichever process
made the commit (see docs/adr/0031-warm-dense-index-across-writes.md).

A search reads every live vector, so its cost is the size of the matrix. Past
:data:`HALF_PRECISION_FROM` vectors the index holds them as float16 (half the bytes to read per
query, and half the server's memory), and the answer is still the float32 one: the float16 pass
only picks candidates, wide enough that no vector of the exact top ``limit`` can be missing
(:func:`_half_error` bounds how far a float16 score can be from the float32 one), and the
candidates are scored again from the float32 vectors in the store (see docs/adr/0030-warm-retrieve-server-path.md).

Below :data:`FAISS_FROM` vectors the index is a numpy matrix (:class:`NumpyFlat`) and faiss is
not imported at all: importing it costs about 50 ms of CPU, a tenth of a per-turn ``retrieve``
answered in its own process, for a scan numpy does in about a millisecond at that size.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from memu_core._stores._common import ScopeFilter
from memu_core._stores.sqlite import changes
from memu_core._stores.sqlite.rows import chunks, placeholders, scope_sql
from memu_core.types import Hit

_MAX_ENTRIES = 8
"""Distinct filters kept (each is a full copy of the matching vectors)."""

REBUILD_FRACTION = 0.1
"""A write that changed more than this fraction of an index's rows loads it again instead of
patching it (a switch of embedding model, a reindex, a big import)."""

COMPACT_FROM = 256
COMPACT_FRACTION = 0.01
"""Dead rows are removed from an index (in memory) once there are more than ``COMPACT_FROM`` of
them and more than this fraction of its rows: until then a search skips them, asking faiss for
that many more hits."""

HALF_PRECISION_FROM = 20_000
"""Vectors from which the index is float16 with exact re-scoring. Below it a float32 scan takes a
millisecond or two and re-scoring from the store would cost more than it saves."""

FIRST_WIDTH = 2
"""The float16 pass first asks for this many times ``limit`` candidates (widened while the
error bound says an exact top hit could lie beyond them)."""

LOAD_ROWS = 8_192
"""Vectors read from the store per block while an index is built."""

FAISS_FROM = 1_000
"""Live vectors from which a float32 index is faiss's; below it, :class:`NumpyFlat`."""

_HALF_LIMIT = 60_000.0
"""float16 overflows past 65504; a store holding larger components (never a sentence embedder's)
keeps a float32 index."""
_HALF_UNIT = 2.0**-11
"""float16's unit round-off: a stored component is off by at most this fraction of itself."""
_SUM_SLACK = 2.0**-23
"""Per-dimension allowance for float32 rounding in the two kernels' sums."""


class NumpyFlat:
    """A float32 flat inner-product index for a few hundred rows, in numpy (no faiss import).

    It offers the part of faiss's index interface this module uses. Each score is the row's own
    sum (``(rows * query).sum(axis=1)``), so a row scores the same in any matrix it sits in: a
    re-score over candidate rows gives exactly the scores of the full scan, as the faiss kernels
    do for a faiss index. Ties are ordered by row, as a search of the rows in table order gives.
    """

    def __init__(self, dimension: int) -> None:
        import numpy as np

        self.rows = np.empty((0, dimension), dtype=np.float32)

    @property
    def ntotal(self) -> int:
        """Rows held (live and dead)."""
        return int(self.rows.shape[0])

    def add(self, block: Any) -> None:
        """Append ``block``'s rows (copied: a block read from sqlite is a read-only buffer)."""
        import numpy as np

        self.rows = np.concatenate([self.rows, np.asarray(block, dtype=np.float32)])

    def search(self, query: Any, k: int) -> tuple[Any, Any]:
        """The best ``k`` rows for a ``(1, d)`` query, as faiss returns them: scores and row
        numbers, each shaped ``(1, k)``."""
        import numpy as np

        scores = (self.rows * query[0]).sum(axis=1, dtype=np.float32)
        order = np.argsort(-scores, kind="stable")[:k]
        return scores[order][None, :], order[None, :]

    def reconstruct_batch(self, rows: Any) -> Any:
        """The stored vectors of ``rows``."""
        return self.rows[rows]

    def remove_rows(self, rows: Sequence[int]) -> None:
        """Drop ``rows``; the others keep their order and are renumbered."""
        import numpy as np

        self.rows = np.delete(self.rows, list(rows), axis=0)


@dataclass(slots=True)
class _Entry:
    """One cached index and what it needs to be patched after a write.

    ``ids`` holds the owner of each index row, in the order a fresh load would read them (table
    order: a changed vector is a new row at the table's end, and is appended here). Rows whose
    owner changed or went are ``dead`` until the index is compacted; ``rows_of`` maps each live
    owner to its row (built on the first catch-up). ``error`` bounds how far a float16 score is
    from exact (``0.0`` for a float32 index); ``position`` is the change-log position reflected.
    """

    ids: list[str]
    index: Any
    error: float
    position: int
    largest: float
    dimension: int
    half_ok: bool = True
    dead: set[int] = field(default_factory=set)
    rows_of: dict[str, int] | None = None

    @property
    def live(self) -> int:
        """Rows that answer searches."""
        return len(self.ids) - len(self.dead)


class DenseCache:
    """Faiss indexes over live vectors, kept up to date with the store's change log.

    A search first brings its index to the log's newest position: the few owners a commit
    touched are dropped and their current vectors appended, in one read transaction with the
    search itself, so the answer is exactly the one a freshly loaded index gives at that moment.
    A change to more than :data:`REBUILD_FRACTION` of the rows, a log pruned past the index, or
    a switch of precision loads the index again.
    """

    def __init__(self) -> None:
        self._entries: dict[tuple[object, ...], _Entry] = {}
        self.loads = 0
        """Full loads so far (tests and benchmarks read it)."""
        self.patches = 0
        """Indexes brought up to date in place so far."""

    def search(
        self,
        conn: sqlite3.Connection,
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

        for stale in [k for k in self._entries if k[1] != fp_key]:  # the live space switched
            del self._entries[stale]
        key = (kind, fp_key, tuple(sorted(flt.items())), tracks)
        with snapshot(conn):
            position = changes.head(conn)
            entry = self._entries.get(key)
            if entry is not None and entry.position != position:
                # An index whose patch failed half-way (a read error, no memory) is not kept.
                del self._entries[key]
                if _catch_up(conn, entry, kind, fp_key, flt, tracks, position):
                    self._entries[key] = entry
                    self.patches += 1
                else:
                    entry = None
            if entry is None:
                entry = _load(conn, kind, fp_key, dimension, flt, tracks, position)
                self.loads += 1
                if len(self._entries) >= _MAX_ENTRIES:
                    self._entries.pop(next(iter(self._entries)))
                self._entries[key] = entry
            if not entry.live:
                return []
            query = np.asarray(vector, dtype=np.float32).reshape(1, -1)
            norm = float(np.linalg.norm(query))
            if norm:
                query = query / norm
            if not entry.error and not entry.dead:
                scores, rows = entry.index.search(query, min(limit, len(entry.ids)))
                return [Hit(entry.ids[r], float(s)) for s, r in zip(scores[0], rows[0], strict=True) if r >= 0]
            return _rescore(conn, entry, kind, fp_key, query, _candidates(entry, query, limit), limit)


@contextmanager
def snapshot(conn: sqlite3.Connection) -> Iterator[None]:
    """One read transaction: the log position, the patch and the search see the same commit
    (nothing opened when the caller already holds one)."""
    if conn.in_transaction:
        yield
        return
    conn.execute("BEGIN")
    try:
        yield
    finally:
        if conn.in_transaction:
            conn.execute("COMMIT")


def _catch_up(
    conn: sqlite3.Connection,
    entry: _Entry,
    kind: str,
    fp_key: str,
    flt: ScopeFilter,
    tracks: tuple[str, ...] | None,
    position: int,
) -> bool:
    """Patch ``entry`` to the log ``position``; ``False`` when loading it again is needed or cheaper."""
    import numpy as np

    if entry.position < changes.horizon(conn):
        return False
    owners = changes.owners_since(conn, entry.position, kind, fp_key, max(1, int(entry.live * REBUILD_FRACTION)))
    if owners is None:
        return False
    where, params = scope_sql(flt, "o", tracks if kind == "segment" else None)
    found = changes.current_rows(conn, kind, fp_key, owners, where, params) if owners else []
    if entry.rows_of is None:
        entry.rows_of = {owner: row for row, owner in enumerate(entry.ids) if row not in entry.dead}
    gone = [entry.rows_of[o] for o in owners if o in entry.rows_of]
    block = None
    if found:
        block = np.frombuffer(b"".join(f[2] for f in found), dtype=np.float32).reshape(len(found), entry.dimension)
        if float(np.max(np.abs(block))) > _HALF_LIMIT:
            if entry.error:
                return False  # a fresh load would read this store in float32
            entry.half_ok = False
    live = entry.live - len(gone) + len(found)
    half = entry.half_ok and live >= HALF_PRECISION_FROM
    if half != bool(entry.error):
        return False  # a fresh load would choose the other precision
    if not half and (live < FAISS_FROM) != isinstance(entry.index, NumpyFlat):
        return False  # a fresh load would choose the other kind of flat index
    for owner in owners:
        row = entry.rows_of.pop(owner, None)
        if row is not None:
            entry.dead.add(row)
    if block is not None:
        for _, owner, _ in found:
            entry.rows_of[owner] = len(entry.ids)
            entry.ids.append(owner)
        entry.index.add(block)
        entry.largest = max(entry.largest, float(np.max(_row_norms(block))))
        if entry.error:
            entry.error = _half_error(entry.largest, entry.dimension)
    entry.position = position
    if len(entry.dead) > max(COMPACT_FROM, len(entry.ids) * COMPACT_FRACTION):
        _compact(entry)
    return True


def _compact(entry: _Entry) -> None:
    """Remove the dead rows from the index (order kept) and renumber the live ones."""
    if isinstance(entry.index, NumpyFlat):
        entry.index.remove_rows(sorted(entry.dead))
    else:
        import faiss
        import numpy as np

        entry.index.remove_ids(faiss.IDSelectorBatch(np.fromiter(sorted(entry.dead), dtype=np.int64)))
    entry.ids = [owner for row, owner in enumerate(entry.ids) if row not in entry.dead]
    entry.dead = set()
    entry.rows_of = {owner: row for row, owner in enumerate(entry.ids)}


def _candidates(entry: _Entry, query: Any, limit: int) -> list[int]:
    """Live index rows whose score is close enough to the ``limit``-th best live one that their
    exact score may still beat it: every member of the exact top ``limit`` is among them.

    If the exact ``limit``-th live score is ``s`` and the pass's one is ``t``, every score of the
    pass is within ``e`` (``entry.error``, ``0`` for a float32 index) of its exact score, so
    ``s >= t - e`` and each exact top hit scores at least ``t - 2e`` in the pass. The pass widens
    until its last row is below that; with ``e = 0`` that takes in every row tied with ``t``,
    so the re-score picks among ties exactly as a search of the live rows alone would.
    """
    total = len(entry.ids)
    want = min(limit, entry.live)
    width = min(total, max(want * FIRST_WIDTH, want + 32) + len(entry.dead))
    while True:
        scores, rows = entry.index.search(query, width)
        live = [(float(s), int(r)) for s, r in zip(scores[0], rows[0], strict=True) if r >= 0 and r not in entry.dead]
        if width >= total:
            return [r for _, r in live]
        if len(live) >= want and float(scores[0][width - 1]) < live[want - 1][0] - 2 * entry.error:
            return [r for _, r in live]
        width = min(total, width * 4)


def _rescore(
    conn: sqlite3.Connection,
    entry: _Entry,
    kind: str,
    fp_key: str,
    query: Any,
    candidates: list[int],
    limit: int,
) -> list[Hit]:
    """The best ``limit`` of the ``candidates`` rows by their float32 vectors.

    They are scored by a float32 index of the big one's kind (faiss, or :class:`NumpyFlat` for a
    small one) over just those rows, added in the big index's row order: the same kernel and the
    same tie order as a flat search of every live vector, so the hits and their scores are the
    ones a freshly loaded float32 index gives. A float32 index
    hands its own rows back; a float16 one reads them from the store (in the search's read
    transaction, so they are the vectors the index was patched to).
    """
    import numpy as np

    if not candidates:
        return []
    candidates = sorted(candidates)
    if not entry.error:
        owners = [entry.ids[r] for r in candidates]
        matrix = entry.index.reconstruct_batch(np.asarray(candidates, dtype=np.int64))
    else:
        row_of = {entry.ids[r]: r for r in candidates}
        found: list[tuple[int, str, bytes]] = []
        for part in chunks(list(row_of)):
            rows = conn.execute(
                "SELECT owner_id, vector FROM vectors WHERE owner_kind = ? "
                f"AND owner_id IN ({placeholders(len(part))}) AND fingerprint = ?",
                [kind, *part, fp_key],
            ).fetchall()
            found.extend((row_of[owner], owner, blob) for owner, blob in rows)
        if not found:  # every candidate was deleted (only a write outside the store's own transactions)
            return []
        found.sort()
        owners = [f[1] for f in found]
        matrix = np.frombuffer(b"".join(f[2] for f in found), dtype=np.float32).reshape(len(found), entry.dimension)
    exact = _flat(entry.dimension, small=isinstance(entry.index, NumpyFlat))
    exact.add(matrix)
    scores, rows = exact.search(query, min(limit, len(owners)))
    return [Hit(owners[r], float(s)) for s, r in zip(scores[0], rows[0], strict=True) if r >= 0]


def _flat(dimension: int, *, small: bool) -> Any:
    """An empty float32 flat index: :class:`NumpyFlat` when ``small``, else faiss's."""
    if small:
        return NumpyFlat(dimension)
    import faiss

    return faiss.IndexFlatIP(dimension)


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
    position: int,
    *,
    half: bool = True,
) -> _Entry:
    """Read the live vectors into a new index, :data:`LOAD_ROWS` at a time.

    Reading in blocks keeps the load's peak near the index's own size: the rows, their joined
    bytes and a float32 copy of the whole matrix never exist at once (at 300,000 vectors that
    peak was about 1.4 GB, and the allocator kept most of it in the warm server afterwards).
    """
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
                return _load(conn, kind, fp_key, dimension, flt, tracks, position, half=False)
            half = False
        if index is not None:
            index.add(block)
            continue
        held.append(block)
        if half and len(ids) >= HALF_PRECISION_FROM:
            import faiss

            index = faiss.IndexScalarQuantizer(dimension, faiss.ScalarQuantizer.QT_fp16, faiss.METRIC_INNER_PRODUCT)
            for part in held:
                index.add(part)
            held = []
    if index is not None:
        return _Entry(ids, index, _half_error(largest, dimension), position, largest, dimension)
    flat = _flat(dimension, small=len(ids) < FAISS_FROM)
    for part in held:
        flat.add(part)
    return _Entry(ids, flat, 0.0, position, largest, dimension, half_ok=half)
