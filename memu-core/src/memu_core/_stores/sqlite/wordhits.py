"""The last word searches' ranked hits, kept until the store's next write.

A word search's hits depend only on the query, the scope and track filter, the limit and what
the store holds; the store's *generation* grows with every committed write, from any process.
Ranking the rows that hold a query's words costs FTS5's ``bm25()`` a few microseconds per row
(about 11 ms of CPU at 10,000 files, the largest step of a hybrid request after the query's
embedding), so a question asked again before anything is written is answered from here: the
warm server's answer to a repeated question then costs its dense search and its rendering.
An entry is read only under the generation it was computed under: the generation is read
*before* the search, so a write landing during the search leaves an entry no later lookup
matches (ADR 0030's amendment).
"""

from __future__ import annotations

import threading

from memu_core._lru import Lru
from memu_core.types import Hit

SIZE = 256
"""Searches kept (each up to a few hundred ids and scores: about 2-3 MB in all at most)."""

Key = tuple[str, str, tuple[str, ...], int]
"""``(query, scope SQL, its parameters, limit)``."""


class WordHits:
    """A thread-safe least-recently-used map of word searches to their hits, for one generation."""

    def __init__(self, size: int = SIZE) -> None:
        self._generation: int | None = None
        # Plain (id, score) pairs: Hit is mutable, and every caller gets objects of its own.
        self._kept: Lru[Key, tuple[tuple[str, float], ...]] = Lru(size)
        # Held while the generation is compared and the map used, so an entry computed under an
        # older generation never lands after a newer one cleared the map.
        self._lock = threading.Lock()

    @property
    def hits(self) -> int:
        """Searches answered from memory (counted for tests and benchmarks)."""
        return self._kept.hits

    @property
    def misses(self) -> int:
        """Searches that had to run."""
        return self._kept.misses

    def get(self, generation: int, key: Key) -> list[Hit] | None:
        """The hits stored for ``key`` under ``generation``, or ``None`` (a new generation drops all)."""
        with self._lock:
            if generation != self._generation:
                self._kept.clear()
                self._generation = generation
            found = self._kept.get(key)
        return None if found is None else [Hit(i, score) for i, score in found]

    def put(self, generation: int, key: Key, hits: list[Hit]) -> None:
        """Remember ``hits`` for ``key`` if ``generation`` is still the one kept."""
        pairs = tuple((h.id, h.score) for h in hits)
        with self._lock:
            if generation == self._generation:  # else computed under an older generation
                self._kept.put(key, pairs)

    def __len__(self) -> int:
        return len(self._kept)
