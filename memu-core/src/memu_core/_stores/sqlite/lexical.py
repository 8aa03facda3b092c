"""Turning a query into FTS5 ``MATCH`` expressions that stay fast on a large store.

FTS5's ``bm25()`` costs a few microseconds per matching row, and before it scores the first row
it counts, for every phrase of the expression, the rows holding that phrase (one pass over each
phrase's whole posting list). So an OR of common words over 300k segments (``run``,
``service``…) pays twice: once to count and once per row scored. When the terms together match
more than :data:`BUDGET` rows, only rows holding at least one of the rarest terms are scored
(:func:`memu_core.text.candidate_rules`, the rule every store shares; its narrowest pass takes
the rows holding every stored typed word). They are still scored on *every* stored term,
exactly as a plain OR would score them: the expression is ``rare AND (common OR
tag:EVERY_ROW)``, where the ``tag`` column holds :data:`EVERY_ROW` in each row with a bm25
weight of 0. Rows with only common words score lowest under BM25 anyway
(low IDF), which is what makes dropping them acceptable.

Two things keep the expression small without changing a score: a form no row holds is left out
(it would add 0 to every row), and user terms carry no column filter (only the ``tag`` column,
which holds nothing but :data:`EVERY_ROW`, is outside ``text`` and ``context``), since a filter
makes FTS5 read the positions of every posting when it counts a phrase's rows.
"""

from __future__ import annotations

import sqlite3
import threading

from memu_core.text import CandidateRule, candidate_rules

EVERY_ROW = "memurow"
"""The word stored in every row's ``tag`` column, and the only one stored there."""

BUDGET = 10_000
"""Matching rows scored before the expression is narrowed to the rarest terms."""

_COLUMNS = "{text context}"

MAX_CACHED_TERMS = 50_000
"""Term counts kept between writes before the cache starts over (a few MB at most)."""


def _quote(term: str) -> str:
    # Terms are runs of letters and digits (query_terms), so quoting cannot be broken out of.
    # Only EVERY_ROW is stored in the tag column; a user term spelled like it keeps the filter.
    return f'{_COLUMNS} : "{term}"' if term == EVERY_ROW else f'"{term}"'


def _any(terms: list[str]) -> str:
    return " OR ".join(_quote(t) for t in terms)


class TermCounts:
    """How many segments hold each term, remembered until the store's next write.

    Counting a term reads its whole posting list (a common word is in tens of thousands of
    rows at 100,000 files), and the common words are the ones queries repeat. The counts only
    choose which rows are candidates, never how a row scores, and they are dropped whenever
    the store's generation moves (any process's committed write).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._generation: str | None = None
        self._counts: dict[str, int] = {}

    def get(self, conn: sqlite3.Connection, terms: list[str]) -> dict[str, int]:
        """The row count of each of ``terms`` (0 for a term no row holds)."""
        row = conn.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
        generation = str(row[0]) if row else None
        with self._lock:
            if generation is None or generation != self._generation:
                self._counts, self._generation = {}, generation
            known = {t: self._counts[t] for t in terms if t in self._counts}
        missing = [t for t in terms if t not in known]
        if missing:
            fresh = _row_counts(conn, missing)
            known.update(fresh)
            with self._lock:
                if generation == self._generation:
                    if len(self._counts) > MAX_CACHED_TERMS:  # a long-lived server without writes
                        self._counts = {}
                    self._counts.update(fresh)
        return known


def _row_counts(conn: sqlite3.Connection, terms: list[str]) -> dict[str, int]:
    """How many segments hold each term, from the FTS vocabulary (one index seek per term)."""
    conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.segments_vocab USING fts5vocab(main, segments_fts, row)")
    counts: dict[str, int] = {}
    for term in terms:
        row = conn.execute("SELECT doc FROM temp.segments_vocab WHERE term = ?", (term,)).fetchone()
        counts[term] = int(row[0]) if row else 0
    return counts


def segment_matches(
    conn: sqlite3.Connection, terms: list[str], typed: int, counts: TermCounts | None = None
) -> list[str]:
    """``MATCH`` expressions for ``terms`` (non-empty; the first ``typed`` typed by the user,
    the rest their forms) over ``segments_fts``, narrowest first.

    The store runs them in order and keeps the first that fills its limit (the last always
    counts); see :func:`memu_core.text.candidate_rules`.
    """
    held = counts.get(conn, terms) if counts is not None else _row_counts(conn, terms)
    # A form no row holds adds 0 to every score and no row to any set: leave it out. The words
    # the user typed stay, so an answer can never depend on the vocabulary lookup alone.
    kept = [t for i, t in enumerate(terms) if i < typed or held.get(t, 0) > 0]
    return [_expression(rule, kept) for rule in candidate_rules(kept, held, BUDGET, typed)]


def _expression(rule: CandidateRule, terms: list[str]) -> str:
    # bm25() scores every phrase the expression names, once per mention: each term appears
    # exactly once. Terms a candidate need not hold are OR-ed with the marker word every row
    # carries, so they are scored without being required.
    required = _any(list(rule.required))
    also = [t for t in terms if t in rule.also]
    named = {*rule.required, *rule.also, *(t for group in rule.each for t in group)}
    rest = [t for t in terms if t not in named]
    parts = [required, *([_any(also)] if also else []), *(_any(list(group)) for group in rule.each)]
    if rest:
        parts.append(f"{_any(rest)} OR tag : {EVERY_ROW}")
    return parts[0] if len(parts) == 1 else " AND ".join(f"({p})" for p in parts)
