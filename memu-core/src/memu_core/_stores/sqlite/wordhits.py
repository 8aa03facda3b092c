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
from collections import OrderedDict

from memu_core.types import Hit

SIZE = 256
"""Searches kept (each up to a few hundred ids and scores: about 2-3 MB in all at most)."""

Key = tuple[str, str, tuple[str, ...], int]
"""``(query, scope SQL, its parameters, limit)``."""


class WordHits:
    """A thread-safe least-recently-used map of word searches to their hits, for one generation."""

    def __init__(self, size: int = SIZE) -> None:
        self._size = max(0, size)
        self._generation: int | None = None
        # Plain (id, score) pairs: Hit is mutable, and every caller gets objects of its own.
        self._items: OrderedDict[Key, tuple[tuple[str, float], ...]] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        """Searches answered from memory (counted for tests and benchmarks)."""
        self.misses = 0
        """Searches that had to run."""

    def get(self, generation: int, key: Key) -> list[Hit] | None:
        """The hits stored for ``key`` under ``generation``, or ``None`` (a new generation drops all)."""
        with self._lock:
            if generation != self._generation:
                self._items.clear()
                self._generation = generation
            found = self._items.get(key)
            if found is None:
                self.misses += 1
                return None
            self._items.move_to_end(key)
            self.hits += 1
        return [Hit(i, score) for i, score in found]

    def put(self, generation: int, key: Key, hits: list[Hit]) -> None:
        """Remember ``hits`` for ``key`` if ``generation`` is still the one kept."""
        if self._size == 0:
            return
        pairs = tuple((h.id, h.score) for h in hits)
        with self._lock:
            if generation != self._generation:
                return  # computed under an older generation than the one now kept
            self._items[key] = pairs
            self._items.move_to_end(key)
            while len(self._items) > self._size:
                self._items.popitem(last=False)

    def __len__(self) -> int:
        return len(self._items)
