"""Tokens, ``tsvector`` and ``tsquery`` literals built in Python, plus the BM25 constants.

Postgres's own parser splits text its own way (hyphenated words, paths, e-mails and URLs become
extra tokens), so documents indexed through ``to_tsvector`` would not match what the SQLite
store's FTS5 tokenizer sees. Instead the store tokenises here, with the same rule as
:func:`memu_core.text.query_terms`, and writes the ``tsvector`` literally: the same
words reach the index on both stores, and a query term is always spelled like a document term.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

from memu_core.text import lexical_terms, normalise

# Same rule as ``query_terms``: runs of letters and digits, underscore as a separator (FTS5's
# unicode61 tokenizer treats punctuation, underscore included, the same way).
_WORD = re.compile(r"[^\W_]+", re.UNICODE)

# A lexeme longer than Postgres's limit (2 KiB) would fail the whole write; nobody searches for
# a 200-character word, so longer runs are cut.
_MAX_LEXEME = 200

# Postgres keeps at most this many positions per lexeme; later ones would be dropped silently,
# so the term frequency saturates here (BM25's own saturation makes the difference invisible).
_MAX_POSITIONS = 255

EXTRA_TOKENS: dict[str, int] = {"s": 1, "r": 0}
"""Words each row carries outside the searched columns in the SQLite store's FTS5 tables (a
marker word per segment row); FTS5 counts them in a document's length, so BM25 here does too."""

BM25_K1 = 1.2
"""BM25 term-frequency saturation, FTS5's value."""

BM25_B = 0.75
"""BM25 length normalisation, FTS5's value."""

WEIGHTS: dict[str, tuple[float, float]] = {"s": (1.0, 0.4), "r": (1.0, 1.0)}
"""Column weights (``A`` lexemes, ``B`` lexemes) per kind, the SQLite store's ``bm25()`` weights:
segments rank a word in the line (A) above one in its context (B); resources weigh their
description (A) and path (B) alike."""


def tokens(text: str) -> list[str]:
    """The indexable words of ``text``: normalised, split like the query, in order."""
    return [word[:_MAX_LEXEME] for word in _WORD.findall(normalise(text))]


@dataclass(frozen=True, slots=True)
class Indexed:
    """What the store writes for one row's lexical search."""

    tsv: str
    """``tsvector`` literal: primary words weight ``A``, secondary ``B`` (for the GIN index)."""
    ntokens: int
    """Words in both columns (BM25's document length, before :data:`EXTRA_TOKENS`)."""
    tf: str
    """JSON object word → weighted term frequency, so scoring reads a few keys per candidate
    instead of unnesting its whole ``tsvector``."""
    counts: dict[str, float]
    """The same map as :attr:`tf`, for the statistics (its keys are the row's distinct words)."""


def index_text(kind: str, primary: str, secondary: str) -> Indexed:
    """The lexical index entries of one row of ``kind`` (``s`` segment, ``r`` resource)."""
    positions: dict[str, list[str]] = {}
    counts: dict[str, float] = {}
    first = tokens(primary)
    second = tokens(secondary)
    for offset, (words, weight, factor) in enumerate(((first, "A", WEIGHTS[kind][0]), (second, "B", WEIGHTS[kind][1]))):
        base = 1 + offset * len(first)
        for index, word in enumerate(words):
            counts[word] = counts.get(word, 0.0) + factor
            slot = positions.setdefault(word, [])
            if len(slot) < _MAX_POSITIONS:
                slot.append(f"{min(base + index, 16383)}{weight}")
    # Words are letters and digits only, so they need no quoting beyond the single quotes.
    literal = " ".join(f"'{word}':{','.join(slots)}" for word, slots in positions.items())
    return Indexed(literal, len(first) + len(second), json.dumps(counts, ensure_ascii=False), counts)


def lexemes(text: str) -> tuple[list[str], int]:
    """The distinct search terms of a query in the store's lexeme spelling, and how many of
    them (the first ones) the user typed (:func:`memu_core.text.lexical_terms`)."""
    # lexical_terms already normalised and split with the same rule; normalising a second time
    # is not idempotent (NFKD can reveal new capitals, as in mathematical letters).
    terms, typed = lexical_terms(text)
    spelled = [term[:_MAX_LEXEME] for term in terms]
    distinct = list(dict.fromkeys(spelled))
    return distinct, len(dict.fromkeys(spelled[:typed]))


def tsquery_literal(terms: Sequence[str]) -> str:
    """The OR of ``terms`` as a ``tsquery`` literal (``'a' | 'b'``)."""
    return " | ".join(f"'{term}'" for term in terms)
