"""Turning a query into an FTS5 ``MATCH`` expression that stays fast on a large store.

FTS5's ``bm25()`` costs a few microseconds per matching row, so an OR of common words over
200k segments (``run``, ``service``…) scores most of the table and blows the per-turn budget.
When the terms together match more than :data:`BUDGET` rows, only rows holding at least one of
the rarest terms are scored (:func:`memu_core.text.candidate_rules`, the rule every store
shares). They are still scored on *every* term, exactly as a plain OR would score them: the
expression is ``rare AND (common OR tag:EVERY_ROW)``, where the ``tag``
column holds :data:`EVERY_ROW` in each row with a bm25 weight of 0. Rows with only common words
score lowest under BM25 anyway (low IDF), which is what makes dropping them acceptable.
"""

from __future__ import annotations

import sqlite3

from memu_core.text import CandidateRule, candidate_rules

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
    conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.segments_vocab USING fts5vocab(main, segments_fts, row)")
    counts: dict[str, int] = {}
    for term in terms:
        row = conn.execute("SELECT doc FROM temp.segments_vocab WHERE term = ?", (term,)).fetchone()
        counts[term] = int(row[0]) if row else 0
    return counts


def segment_matches(conn: sqlite3.Connection, terms: list[str], typed: int) -> list[str]:
    """``MATCH`` expressions for ``terms`` (non-empty; the first ``typed`` typed by the user,
    the rest their forms) over ``segments_fts``, narrowest first.

    The store runs them in order and keeps the first that fills its limit (the last always
    counts); see :func:`memu_core.text.candidate_rules`.
    """
    counts = _row_counts(conn, terms)
    return [_expression(rule, terms) for rule in candidate_rules(terms, counts, BUDGET, typed)]


def _expression(rule: CandidateRule, terms: list[str]) -> str:
    # bm25() scores every phrase the expression names, once per mention: each term appears
    # exactly once. Terms a candidate need not hold are OR-ed with the marker word every row
    # carries, so they are scored without being required.
    required = _any(list(rule.required))
    also = [t for t in terms if t in rule.also]
    rest = [t for t in terms if t not in rule.required and t not in rule.also]
    parts = [required, *([_any(also)] if also else [])]
    if rest:
        parts.append(f"{_any(rest)} OR tag : {EVERY_ROW}")
    return parts[0] if len(parts) == 1 else " AND ".join(f"({p})" for p in parts)
