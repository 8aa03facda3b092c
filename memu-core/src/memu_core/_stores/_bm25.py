"""A small BM25 scorer for the pure-Python ``memory`` store.

It indexes the same normalised words SQLite's FTS5 sees, so both stores rank alike on the
contract suite. Documents have weighted fields (segment text above its context).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence

from memu_core.text import normalise

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
K1 = 1.2
B = 0.75


def tokens(text: str | None) -> Counter[str]:
    """Term counts of ``text`` after :func:`normalise` (how the stores index text)."""
    return Counter(_WORD.findall(normalise(text or "")))


class Bm25Index:
    """Term statistics of documents with ``len(weights)`` fields each, keyed by id."""

    def __init__(self, weights: Sequence[float]) -> None:
        self._weights = tuple(weights)
        self._docs: dict[str, tuple[Counter[str], ...]] = {}
        self._df: Counter[str] = Counter()
        self._total_len = [0] * len(self._weights)

    def add(self, doc_id: str, fields: Sequence[str | None]) -> None:
        """Index (or re-index) one document."""
        self.remove(doc_id)
        counted = tuple(tokens(f) for f in fields)
        self._docs[doc_id] = counted
        for i, c in enumerate(counted):
            self._total_len[i] += sum(c.values())
        self._df.update(set().union(*counted))

    def remove(self, doc_id: str) -> None:
        """Forget one document (no-op when absent)."""
        counted = self._docs.pop(doc_id, None)
        if counted is None:
            return
        for i, c in enumerate(counted):
            self._total_len[i] -= sum(c.values())
        self._df.subtract(set().union(*counted))

    def score(self, terms: Sequence[str], candidates: Iterable[str]) -> list[tuple[str, float]]:
        """BM25 scores (higher is better) of ``candidates`` matching at least one term."""
        n = len(self._docs)
        if not n or not terms:
            return []
        avg = [max(t / n, 1e-9) for t in self._total_len]
        idf = {t: math.log(1 + (n - self._df[t] + 0.5) / (self._df[t] + 0.5)) for t in terms}
        out: list[tuple[str, float]] = []
        for doc_id in candidates:
            fields = self._docs.get(doc_id)
            if fields is None:
                continue
            total = 0.0
            for weight, counts, mean in zip(self._weights, fields, avg, strict=True):
                length = sum(counts.values())
                for t in terms:
                    tf = counts.get(t, 0)
                    if tf:
                        norm = tf + K1 * (1 - B + B * length / mean)
                        total += weight * idf[t] * tf * (K1 + 1) / norm
            if total > 0:
                out.append((doc_id, total))
        return out
