"""A serving process's word search: each word's own scores, kept and added up.

FTS5's ``bm25()`` is a sum with one term per phrase of the expression: the phrase's IDF times a
function of its weighted count in the row and the row's length (the IDF, the row count and the
mean row length are the table's). A one-word query returns exactly that word's term for every
row holding it. So a process that answers many questions over one store generation can keep,
per word, the rows holding it and their one-word scores, and score a question by adding the
lists in the order the expression names the words: the same double-precision sum FTS5 makes,
without reading each candidate's positions and length again for every question. On the core
10,000-file benchmark store that is about 3 ms of CPU per question whose words were seen before,
against 11-20 ms for FTS5 (docs/benchmarks.md).

Only a process that calls :meth:`SqliteStore.prepare_to_serve` (a warm server, memu-server)
keeps lists. A question with a word not held yet is answered by FTS5 as before, and the missing
words are loaded afterwards on a background thread, each with one one-word query over its whole
posting list. Every committed write (any process's) moves the store's generation, and the lists
start over: their IDFs and the mean row length have changed. A word in more than
:data:`MAX_WORD_ROWS` rows is never kept (a question holding it always goes to FTS5), and the
lists together hold at most :data:`MAX_ENTRIES` rows, the least recently used word going first.

Summing in the expression's phrase order reproduces FTS5's scores bit for bit where the C
compiler does not fuse its multiply-add (x86-64); elsewhere they may differ in the last bit,
which can only swap two rows whose scores tie to 15 digits.
"""

from __future__ import annotations

import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

from memu_core._stores.sqlite.lexical import phrase
from memu_core.text import CandidateRule

MAX_ENTRIES = 4_000_000
"""Rows held over all words (16 bytes each: about 64 MB at most)."""
MAX_WORD_ROWS = 100_000
"""A word in more rows than this is left to FTS5 (loading it would cost a second of CPU)."""
MAX_SCOPES = 8
"""Scope filters whose rows are kept (one per user and agent a server answers for)."""

Ranked = list[tuple[int, float]]
"""``(rowid, bm25)`` best first: what ``ORDER BY bm25, rowid`` returns."""


class TermLists:
    """Per word: the rowids holding it (sorted) and its one-word ``bm25()`` there, for one store
    generation. Thread-safe; loading runs on one background thread with its own connection."""

    def __init__(self, connect: Callable[[], sqlite3.Connection], score: str) -> None:
        self._connect = connect
        self._score = score
        """The ``bm25(...)`` call with the store's column weights."""
        self._lock = threading.Lock()
        self._generation: int | None = None
        self._words: OrderedDict[str, tuple[Any, Any]] = OrderedDict()
        self._scopes: OrderedDict[tuple[str, tuple[Any, ...]], Any] = OrderedDict()
        self._entries = 0
        self._too_common: set[str] = set()
        self._queued: set[str] = set()
        self._pending: list[str] = []
        self._worker: threading.Thread | None = None
        self._conn: sqlite3.Connection | None = None
        self.answered = 0
        """Searches ranked from the lists (the others went to FTS5)."""

    # -- answering --------------------------------------------------------------------------
    def rank(
        self,
        generation: int,
        terms: Sequence[str],
        rules: Sequence[CandidateRule],
        scope: tuple[str, tuple[Any, ...]],
        limit: int,
        scope_rows: Callable[[], list[int]],
    ) -> Ranked | None:
        """The best ``limit`` rows for the first of ``rules`` that fills ``limit`` (the last one
        always counts), as FTS5 would rank them; ``None`` when a word is not held for
        ``generation`` (it is queued for loading) or is too common to hold."""
        import numpy as np

        with self._lock:
            if generation != self._generation:
                self._reset(generation)
            lists: dict[str, tuple[Any, Any]] = {}
            missing: list[str] = []
            for term in terms:
                held = self._words.get(term)
                if held is None:
                    missing.append(term)
                else:
                    self._words.move_to_end(term)
                    lists[term] = held
            if missing:
                self._queue([t for t in missing if t not in self._too_common])
                return None
            rows_in_scope = self._scopes.get(scope) if scope[0] else None
            if rows_in_scope is not None:
                self._scopes.move_to_end(scope)
        if scope[0] and rows_in_scope is None:
            rows_in_scope = np.asarray(scope_rows(), dtype=np.int64)
            with self._lock:
                if generation == self._generation:
                    self._scopes[scope] = rows_in_scope
                    while len(self._scopes) > MAX_SCOPES:
                        self._scopes.popitem(last=False)
        ranked: Ranked = []
        for i, rule in enumerate(rules):
            candidates = _candidates(rule, lists, rows_in_scope)
            if i < len(rules) - 1 and len(candidates) < limit:
                continue  # a narrow rule that cannot fill the limit gives way to a wider one
            ranked = _score(candidates, _phrase_order(rule, terms), lists, limit)
            if len(ranked) >= limit:
                break
        with self._lock:
            self.answered += 1
        return ranked

    def loading(self) -> bool:
        """Whether words are queued or being loaded."""
        with self._lock:
            return bool(self._queued)

    # -- loading ----------------------------------------------------------------------------
    def _reset(self, generation: int) -> None:
        self._generation = generation
        self._words.clear()
        self._scopes.clear()
        self._entries = 0
        self._too_common.clear()

    def _queue(self, terms: list[str]) -> None:
        fresh = [t for t in terms if t not in self._queued]
        if not fresh:
            return
        self._queued.update(fresh)
        self._pending.extend(fresh)
        if self._worker is None or not self._worker.is_alive():
            self._worker = threading.Thread(target=self._load_pending, name="memu-term-lists", daemon=True)
            self._worker.start()

    def _load_pending(self) -> None:
        while True:
            with self._lock:
                if not self._pending:
                    self._worker = None
                    return
                batch, self._pending = self._pending, []
            try:
                self._load(batch)
            except sqlite3.Error:
                pass  # the store is busy or gone: these words stay with FTS5 until asked again
            finally:
                with self._lock:
                    self._queued.difference_update(batch)

    def _load(self, terms: list[str]) -> None:
        import numpy as np

        if self._conn is None:
            self._conn = self._connect()
            self._conn.execute(
                "CREATE VIRTUAL TABLE IF NOT EXISTS temp.memu_term_vocab USING fts5vocab(main, segments_fts, row)"
            )
        conn = self._conn
        conn.execute("BEGIN")  # the generation and the lists from one snapshot
        try:
            row = conn.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
            generation = int(row[0]) if row else None
            for term in terms:
                count = conn.execute("SELECT doc FROM temp.memu_term_vocab WHERE term = ?", (term,)).fetchone()
                if count is not None and int(count[0]) > MAX_WORD_ROWS:
                    with self._lock:
                        if generation == self._generation:
                            self._too_common.add(term)
                    continue
                rows = conn.execute(
                    f"SELECT rowid, {self._score} FROM segments_fts WHERE segments_fts MATCH ? ORDER BY rowid",
                    (phrase(term),),
                ).fetchall()
                ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
                scores = np.fromiter((r[1] for r in rows), dtype=np.float64, count=len(rows))
                with self._lock:
                    if generation != self._generation:
                        return  # a write moved the store on: these lists are already stale
                    self._put(term, ids, scores)
        finally:
            conn.execute("COMMIT")

    def _put(self, term: str, ids: Any, scores: Any) -> None:
        old = self._words.pop(term, None)
        if old is not None:
            self._entries -= len(old[0])
        self._words[term] = (ids, scores)
        self._entries += len(ids)
        while self._entries > MAX_ENTRIES and len(self._words) > 1:
            _, (gone, _) = self._words.popitem(last=False)
            self._entries -= len(gone)

    def close(self) -> None:
        """Close the loader's connection (a load in flight finishes first)."""
        worker = self._worker
        if worker is not None:
            worker.join(timeout=5)
        if self._conn is not None:
            self._conn.close()
            self._conn = None


def _phrase_order(rule: CandidateRule, terms: Sequence[str]) -> list[str]:
    """The words in the order :func:`memu_core._stores.sqlite.lexical._expression` names them,
    which is the order FTS5 adds their scores in."""
    named = [*rule.required, *(t for t in terms if t in rule.also), *(t for group in rule.each for t in group)]
    seen = set(named)
    return named + [t for t in terms if t not in seen]


def _union(words: Sequence[str], lists: dict[str, tuple[Any, Any]]) -> Any:
    import numpy as np

    parts = [lists[w][0] for w in words]
    return parts[0] if len(parts) == 1 else np.union1d(parts[0], np.concatenate(parts[1:]))


def _candidates(rule: CandidateRule, lists: dict[str, tuple[Any, Any]], scope: Any) -> Any:
    """The rowids the rule admits (sorted): one of ``required``, one of ``also``, one of each group."""
    import numpy as np

    rows = _union(rule.required, lists)
    for group in ([rule.also] if rule.also else []) + [list(g) for g in rule.each]:
        rows = np.intersect1d(rows, _union(group, lists), assume_unique=True)
    if scope is not None:
        rows = np.intersect1d(rows, scope, assume_unique=True)
    return rows


def _score(candidates: Any, order: list[str], lists: dict[str, tuple[Any, Any]], limit: int) -> Ranked:
    import numpy as np

    total = np.zeros(len(candidates), dtype=np.float64)
    for word in order:
        ids, scores = lists[word]
        if not len(ids) or not len(candidates):
            continue
        at = np.searchsorted(ids, candidates)
        at[at >= len(ids)] = 0
        held = ids[at] == candidates
        # bm25() returns minus the sum; adding the negated one-word values in phrase order and
        # negating at the end reproduces its additions exactly.
        total += np.where(held, -scores[at], 0.0)
    bm25 = -total
    best = np.lexsort((candidates, bm25))[:limit]
    return list(zip(candidates[best].tolist(), bm25[best].tolist(), strict=True))
