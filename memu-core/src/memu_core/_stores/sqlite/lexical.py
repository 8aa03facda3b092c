"""Turning a query into an FTS5 ``MATCH`` expression that stays fast on a large store.

FTS5's ``bm25()`` costs a few microseconds per matching row, so an OR of common words over
200k segments (``run``, ``service``…) scores most of the table and blows the per-turn budget.
When the terms together match more than :data:`BUDGET` rows, only rows holding at least one of
the rarest terms are scored (:func:`memu_core.text.required_terms`, the rule every store
shares). They are still scored on *every* term, exactly as a plain OR
would score them: the expression is ``rare AND (common OR tag:EVERY_ROW)``, where the ``tag``
column holds :data:`EVERY_ROW` in each row with a bm25 weight of 0. Rows with only common words
score lowest under BM25 anyway (low IDF), which is what makes dropping them acceptable.
"""

from __future__ import annotations

import sqlite3

from memu_core.text import required_terms

EVERY_ROW = "memurow"
"""The word stored in every row's ``tag`` column (user terms are filtered to other columns)."""

BUDGET = 10_000
"""Matching rows scored before the expression is narrowed to the rarest terms."""

_COLUMNS = "{text context}"


def _any(terms: list[str]) -> str:
    # Terms are runs of letters and digits (query_terms), so quoting cannot be broken out of.
    return f"{_COLUMNS} : ({' OR '.join(f'{chr(34)}{t}{chr(34)}' for t in terms)})"


def _row_counts(conn: sqlite3.Connection, terms: list[str]) -> dict[str, int]:
    """How many segments hold each term, from the FTS vocabulary (one index seek per term)."""
    conn.execute(
        "CREATE VIRTUAL TABLE IF NOT EXISTS temp.segments_vocab USING fts5vocab(main, segments_fts, row)"
    )
    counts: dict[str, int] = {}
    for term in terms:
        row = conn.execute("SELECT doc FROM temp.segments_vocab WHERE term = ?", (term,)).fetchone()
        counts[term] = int(row[0]) if row else 0
    return counts


def segment_match(conn: sqlite3.Connection, terms: list[str]) -> str:
    """The ``MATCH`` expression for ``terms`` (non-empty) over ``segments_fts``."""
    # A term the vocabulary lacks counts 0 and stays required: it adds no row to score, and it
    # may still match as a phrase when FTS5's tokenizer splits it where Python's pattern did not.
    counts = _row_counts(conn, terms)
    required = required_terms(terms, counts, BUDGET)
    rest = [t for t in terms if t not in required]
    if not rest:
        return _any(required)
    return f"({_any(required)}) AND ({_any(rest)} OR tag : {EVERY_ROW})"
