"""A small bounded least-recently-used map, safe across threads, that counts its hits.

The warm paths keep a few answers they can give again (query vectors in the engine, word-search
hits in the SQLite store); each wraps this map with the rule that says when its entries still
hold. It imports nothing from memu, so any layer may use it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class Lru(Generic[K, V]):
    """At most ``size`` entries (none when ``size`` is 0); the least recently used goes first."""

    def __init__(self, size: int) -> None:
        self._size = max(0, size)
        self._items: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        """Lookups answered from the map (counted for tests, benchmarks and metrics)."""
        self.misses = 0
        """Lookups that found nothing."""

    def get(self, key: K) -> V | None:
        """The value kept for ``key`` (now the most recent), or ``None``."""
        with self._lock:
            found = self._items.get(key)
            if found is None:
                self.misses += 1
                return None
            self._items.move_to_end(key)
            self.hits += 1
            return found

    def put(self, key: K, value: V) -> None:
        """Keep ``value`` for ``key``, dropping the least recent entries past the size."""
        if self._size == 0:
            return
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self._size:
                self._items.popitem(last=False)

    def clear(self) -> None:
        """Drop every entry (the counters stay)."""
        with self._lock:
            self._items.clear()

    def __len__(self) -> int:
        return len(self._items)
