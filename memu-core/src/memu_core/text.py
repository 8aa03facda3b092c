"""Query text handling shared by every store's lexical search (public: stores import it).

Stores receive the raw query and turn it into their own syntax (an FTS5 ``MATCH`` expression,
a Postgres ``tsquery``) from :func:`query_terms`, so the same question asks for the same words
everywhere. Terms are OR-ed: BM25 rewards documents that match more and rarer terms, while an
AND would return nothing as soon as the agent's wording adds one word the memory lacks.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from dataclasses import dataclass

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
    """.split()  # noqa: SIM905 - a word list reads better as prose
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
    # Only non-ASCII characters can be combining marks: visit those runs alone, so a long line
    # with one curly quote does not cost a Python-level step per character.
    return _NON_ASCII.sub(_drop_marks, folded)


_NON_ASCII = re.compile(r"[^\x00-\x7f]+")


def _drop_marks(run: re.Match[str]) -> str:
    return "".join(ch for ch in run.group() if not unicodedata.combining(ch))


def index_text(text: str) -> str:
    """The words of ``text`` as a store indexes them: normalised and space-separated.

    A full-text engine then only re-splits on spaces, so it cannot disagree with
    :func:`query_terms` about what a word is (SQLite's tokenizer knows an older Unicode than
    Python, and would glue a punctuation sign it does not know onto the word before it).
    """
    return " ".join(_WORD.findall(normalise(text)))


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


# Suffixes peeled off to find a word's stem, longest first. English only, and light on purpose:
# the aim is that "painting" meets "painted" and "paints", not linguistic exactness.
_SUFFIXES = ("ings", "ing", "ied", "ies", "ed", "es", "s")
# Not "er": it ends as many stems (offer, order, user) as it inflects (painter).
_ENDINGS = ("", "s", "es", "ed", "ing")
MIN_STEM = 3
"""Shorter stems are not expanded: "us" from "uses" would match too much."""


def word_forms(term: str) -> list[str]:
    """Common inflections of ``term`` (itself excluded), e.g. ``hiking`` → ``hike, hikes, hiked…``.

    The stores' full-text indexes match whole words, so a question about "painting" would miss a
    note that says "painted"; the engine adds these forms to the lexical query instead of
    changing every store's tokenizer.
    """
    if len(term) < 4 or not term.isalpha():
        return []
    stems: list[str] = []
    for suffix in _SUFFIXES:
        if term.endswith(suffix) and len(term) - len(suffix) >= MIN_STEM:
            stem = term[: -len(suffix)]
            if suffix in ("ies", "ied"):
                stem += "y"
            stems.append(stem)
            if suffix in ("ing", "ings", "ed"):
                stems.append(stem + "e")  # hiking → hike
                if len(stem) > MIN_STEM and stem[-1] == stem[-2]:
                    stems.append(stem[:-1])  # running → run
            break
    if not stems:
        stems = [term]
    forms: dict[str, None] = {}
    for stem in stems:
        forms.setdefault(stem, None)
        for ending in _ENDINGS[1:]:
            if stem.endswith("e") and ending[0] in "ei":
                forms.setdefault((stem + ending[1:]) if ending[0] == "e" else stem[:-1] + ending, None)
            elif ending == "es" and not stem.endswith(("s", "x", "z", "ch", "sh")):
                continue  # "es" follows a hissing sound only: class → classes, paint → paints
            elif stem.endswith("y") and ending in ("s", "es", "ed"):
                forms.setdefault(stem[:-1] + ("ies" if ending != "ed" else "ied"), None)
            else:
                forms.setdefault(stem + ending, None)
    forms.pop(term, None)
    return [f for f in forms if len(f) >= MIN_STEM and f not in STOPWORDS]


MAX_PHRASES = 16
"""At most this many phrases per query (a pasted document is not a question)."""


def query_phrases(query: str) -> list[str]:
    """Adjacent pairs of the query's words, stopwords excluded, as ``"grand opening"``.

    Only words that stood next to each other in the query form a phrase: "opening of the
    studio" yields none, since the pair would be matched across words the user did not write.
    The words are normalised like :func:`index_text`, so a phrase matches a line whose indexed
    words hold the pair side by side (``_engine/rerank.py``).
    """
    words = _WORD.findall(normalise(query))
    phrases: dict[str, None] = {}
    for first, second in itertools.pairwise(words):
        if first not in STOPWORDS and second not in STOPWORDS:
            phrases.setdefault(f"{first} {second}", None)
    return list(phrases)[:MAX_PHRASES]


FORMS_MARK = "\x1f"
"""Separates the words a user typed from the forms :func:`expand_query` added. It is not a
word character, so a store that knows nothing of it searches every term alike."""


def expand_query(query: str) -> str:
    """``query``, then :data:`FORMS_MARK`, then the other forms of its terms, for lexical search.

    The typed words come first, so when :data:`MAX_TERMS` cuts a long query it cuts forms, never
    words the user typed; :func:`lexical_terms` splits the two apart again.
    """
    terms = query_terms(query)
    per_term = [word_forms(t) for t in terms]
    extra: dict[str, None] = {}
    # Round-robin over the terms, so every word gets its closest forms before any gets its last.
    for i in range(max((len(f) for f in per_term), default=0)):
        for forms in per_term:
            if i < len(forms) and forms[i] not in terms:
                extra.setdefault(forms[i], None)
    return " ".join([query, FORMS_MARK, *extra]) if extra else query


def lexical_terms(query: str) -> tuple[list[str], int]:
    """The search terms of a query from :func:`expand_query`, and how many the user typed.

    The typed terms come first; a query without :data:`FORMS_MARK` is all typed.
    """
    typed_part, _, forms_part = query.partition(FORMS_MARK)
    typed = query_terms(typed_part)
    forms = [t for t in query_terms(forms_part) if t not in typed] if forms_part else []
    terms = (typed + forms)[:MAX_TERMS]
    return terms, min(len(typed), len(terms))


def required_terms(terms: list[str], counts: dict[str, int], budget: int, typed: int | None = None) -> list[str]:
    """The terms of which a candidate row must hold one, so scoring stays near ``budget`` rows.

    ``counts`` says how many rows hold each term; the first ``typed`` terms (all by default) are
    the words the user typed, the rest their forms. When all terms together hold at most
    ``budget`` rows, every term is required (a plain OR). Past that, only rows with one of the
    rarest words are scored (still on every term); rows with only common words score lowest
    under BM25 anyway. The rule guarantees:

    - the typed words are chosen exactly as if the query had no forms: the rarest stored word
      is always required, so a query whose words are stored always has candidates, and a row
      holding every typed word is always among them;
    - forms only widen: they are added after the words, while the budget allows (the rarest
      stored form stands in when no typed word is stored), and a term no row holds costs
      nothing and is kept (it changes no candidate set).
    """
    n = len(terms) if typed is None else typed
    words, forms = terms[:n], terms[n:]

    def rows(group: list[str]) -> int:
        return sum(counts.get(t, 0) for t in group)

    if rows(terms) <= budget:
        return list(terms)
    required: dict[str, None] = {t: None for t in terms if counts.get(t, 0) == 0}
    total = 0
    if rows(words) <= budget:
        required.update(dict.fromkeys(words))
        total = rows(words)
    else:
        for word in sorted((w for w in words if counts.get(w, 0) > 0), key=lambda w: counts[w]):
            if total and total + counts[word] > budget:
                break
            required[word] = None
            total += counts[word]
    # Forms of the chosen words first, then the others, rarest first within each group.
    chosen_forms = {f for w in words if w in required for f in word_forms(w)}
    stored = sorted((f for f in forms if counts.get(f, 0) > 0), key=lambda f: (f not in chosen_forms, counts[f]))
    for form in stored:
        if total + counts[form] <= budget or not total:
            required[form] = None
            total += counts[form]
    return list(required)


@dataclass(frozen=True, slots=True)
class CandidateRule:
    """Which rows a lexical search scores: those holding one of :attr:`required` and, when
    :attr:`also` is not empty, one of :attr:`also` as well, and one term of each group in
    :attr:`each`. Candidates are scored on every term."""

    required: tuple[str, ...]
    also: tuple[str, ...] = ()
    each: tuple[tuple[str, ...], ...] = ()


def candidate_rules(
    terms: list[str], counts: dict[str, int], budget: int, typed: int | None = None
) -> list[CandidateRule]:
    """The candidate sets to try, narrowest first; a store uses the first that fills its limit.

    The last rule is :func:`required_terms`. When even that holds more than ``budget`` rows
    (on a large store a common word can be in a tenth of all lines), a narrower rule comes
    first: rows that hold a required term *and* another typed word (in any form). Those are
    the rows that score highest (they match more of the query), a row holding every stored
    typed word is among them, and scoring them costs a fraction of scoring every row with the
    rarest word. Before it, when two or more typed words are stored, comes the narrowest rule:
    rows holding *every* stored typed word, each in any of its stored forms. When fewer rows
    than the store's limit qualify, the store falls back to the next, wider rule, so a narrow
    rule never empties an answer.
    """
    required = required_terms(terms, counts, budget, typed)
    wide = CandidateRule(tuple(required))
    if sum(counts.get(t, 0) for t in required) <= budget:
        return [wide]
    n = len(terms) if typed is None else typed
    # Stored typed words left out of the required set: a row holding every stored typed word
    # holds them, so requiring one of them (or one of their forms) keeps that row.
    others = [w for w in terms[:n] if counts.get(w, 0) > 0 and w not in required]
    if not others:
        return [wide]
    forms = {f for w in others for f in word_forms(w)}
    also = tuple(t for t in terms if t not in required and counts.get(t, 0) > 0 and (t in others or t in forms))
    rules = [CandidateRule(tuple(required), also), wide]
    groups = _word_groups(terms, n, counts)
    if len(groups) >= 2:
        rules.insert(0, CandidateRule(groups[0], groups[1], tuple(groups[2:])))
    return rules


def _word_groups(terms: list[str], typed: int, counts: dict[str, int]) -> list[tuple[str, ...]]:
    """For each stored typed word, that word and its stored forms (each term in one group only;
    a typed word that is a form of an earlier one is in that word's group, not a group of its own)."""
    groups: list[tuple[str, ...]] = []
    placed: set[str] = set()
    for word in terms[:typed]:
        if counts.get(word, 0) == 0 or word in placed:
            continue
        forms = set(word_forms(word))
        group = tuple(t for t in terms if t not in placed and (t == word or t in forms) and counts.get(t, 0) > 0)
        placed.update(group)
        groups.append(group)
    return groups
