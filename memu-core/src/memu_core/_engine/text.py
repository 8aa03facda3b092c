"""Query text handling shared by every store's lexical search.

Stores receive the raw query and turn it into their own syntax (an FTS5 ``MATCH`` expression,
a Postgres ``tsquery``) from :func:`query_terms`, so the same question asks for the same words
everywhere. Terms are OR-ed: BM25 rewards documents that match more and rarer terms, while an
AND would return nothing as soon as the agent's wording adds one word the memory lacks.
"""

from __future__ import annotations

import re
import unicodedata

_WORD = re.compile(r"[^\W_]+", re.UNICODE)

# Function words that carry no topic. Kept short on purpose: BM25's IDF already discounts common
# words, this list only removes the ones that would make an OR query match nearly every line.
STOPWORDS = frozenset(
    """
    a an and are as at be been but by can could did do does doing for from had has have how i
    if in into is it its me my of on or our so than that the their them then there these they
    this those to too us was we were what when where which who whom why will with would you
    your yours about after again all am any because before being both each few further here
    just more most no nor not now once only other out over own same she he her him his should
    some such through under until up very while
    """.split()
)

MAX_TERMS = 32
"""A query longer than this is cut: the agent pasted a document, not a question."""


def normalise(text: str) -> str:
    """Case-fold and strip accents so ``Café`` and ``cafe`` meet (stores index the same form)."""
    if text.isascii():  # the common case, and 20x faster than decomposing character by character
        return text.lower()
    # Decompose first, then fold, then drop the marks: folding can produce characters that
    # decompose further, and this order makes normalise(normalise(x)) == normalise(x).
    decomposed = unicodedata.normalize("NFKD", text)
    folded = unicodedata.normalize("NFKD", decomposed.casefold())
    return "".join(ch for ch in folded if not unicodedata.combining(ch))


def query_terms(query: str) -> list[str]:
    """The distinct search terms of ``query``, in order, stopwords dropped.

    When every word is a stopword (``"what did we do"``) the stopwords are kept instead, so a
    non-empty query never becomes an empty search.
    """
    words = _WORD.findall(normalise(query))
    seen: dict[str, None] = {}
    for word in words:
        if word not in STOPWORDS:
            seen.setdefault(word, None)
    if not seen:
        for word in words:
            seen.setdefault(word, None)
    return list(seen)[:MAX_TERMS]
