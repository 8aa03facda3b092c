"""BM25 corpus statistics remembered between searches, checked against the store on every use.

A lexical search needs the corpus totals and each query term's document frequency before it can
choose its candidate rule and its IDF weights. Reading them costs a statement of its own, and
the search then needs a transaction so that both statements see one snapshot: four round trips
(``BEGIN``, statistics, search, ``COMMIT``) where one would do. Every change to the statistics
bumps the generation counter in the same ``UPDATE`` (:mod:`memu_backend_postgres._stats`;
folds and fingerprint switches leave the counts alone), so the statistics a search used can be
checked *inside* the search statement: it returns the generation and totals it saw beside its
hits, and the caller compares them with the ones it scored with. A search whose terms are all
known therefore runs as one statement; on a mismatch the caller drops what it remembered and
searches again (ADR 0033).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Literal

Kind = Literal["s", "r"]

MAX_TERMS = 50_000
"""Document frequencies kept per kind before the memory starts over (a few MB at most; the
SQLite store keeps the same bound)."""


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The statistics one lexical search scores with."""

    generation: int
    """``memu_meta.generation`` when they were read."""
    n_rows: int
    """Rows of the kind (BM25's N)."""
    n_tokens: int
    """Words in those rows (for the average document length)."""
    df: dict[str, int]
    """Document frequency of each query term (0 for a term no row holds)."""
    tfmax: dict[str, float]
    """Highest weighted frequency any row has had for each query term (0 when unknown)."""
    dlmin: dict[str, int]
    """Fewest words of any row that has held each query term (1 when unknown)."""

    def matches(self, generation: int, n_rows: int, n_tokens: int) -> bool:
        """Whether a statement that saw these counters saw the statistics this snapshot holds."""
        return (generation, n_rows, n_tokens) == (self.generation, self.n_rows, self.n_tokens)


class TermStats:
    """Per-kind totals and document frequencies of the last generation read (thread-safe).

    The counts choose the candidates and weigh the terms, so a stale entry would change answers;
    it is never used unchecked: every search statement returns the counters it saw and
    :meth:`forget` runs when they differ.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._totals: dict[str, tuple[int, int, int]] = {}
        self._df: dict[str, dict[str, tuple[int, float, int]]] = {}

    def get(self, kind: Kind, terms: list[str]) -> Snapshot | None:
        """The remembered statistics for ``terms``, or ``None`` if any of them is unknown."""
        with self._lock:
            totals = self._totals.get(kind)
            known = self._df.get(kind, {})
            if totals is None or any(t not in known for t in terms):
                return None
            rows = [known[t] for t in terms]
            return Snapshot(
                *totals,
                {t: r[0] for t, r in zip(terms, rows, strict=True)},
                {t: r[1] for t, r in zip(terms, rows, strict=True)},
                {t: r[2] for t, r in zip(terms, rows, strict=True)},
            )

    def put(self, kind: Kind, snapshot: Snapshot) -> None:
        """Remember ``snapshot`` (read from the store); a newer generation replaces older terms."""
        with self._lock:
            if self._totals.get(kind) != (snapshot.generation, snapshot.n_rows, snapshot.n_tokens):
                self._df[kind] = {}
            known = self._df.setdefault(kind, {})
            if len(known) + len(snapshot.df) > MAX_TERMS:  # a long-lived server without writes
                known.clear()
            known.update((t, (n, snapshot.tfmax.get(t, 0.0), snapshot.dlmin.get(t, 1))) for t, n in snapshot.df.items())
            self._totals[kind] = (snapshot.generation, snapshot.n_rows, snapshot.n_tokens)

    def forget(self, kind: Kind) -> None:
        """Drop everything remembered for ``kind`` (a search saw other counters)."""
        with self._lock:
            self._totals.pop(kind, None)
            self._df.pop(kind, None)
