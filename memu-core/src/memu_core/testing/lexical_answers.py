"""Checks that lexical search answers on large stores, on every store alike.

A store's lexical search narrows its candidates on a large store (scoring every row that holds a
common word would blow the per-turn budget). Narrowing is where answers get lost silently: an
expression that requires a word no row holds matches nothing, and the bug only shows on stores
of many thousand files. These helpers probe exactly that, over a seeded corpus
(:mod:`memu_core.testing.corpus`) and the real retrieve path (the engine over the store under
test, lexical mode)::

    store = MyStore.open(...)
    files = corpus.generate_files(10_000, lines=(20, 20))
    commit_corpus(store, files)
    index = CorpusIndex(files)

    @given(data=st.data())
    def test_words_of_a_line_answer(data):
        check_answers(engine_over(store), data.draw(line_queries(index)))

    @given(data=st.data())
    def test_a_whole_line_is_a_candidate(data):
        check_store_finds_line(store, index, data.draw(line_queries(index, whole=True)))

Why two checks: any two or more stored words must give an answer (an empty one is the bug these
checks exist for), but which of thousands of lines holding two common words ranks first is
BM25's call (a short line holding three of four words outranks a long line holding all four).
A query of a whole line's words is specific enough that the line must be among the store's best
candidates whenever few files hold those words together.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from memu_core.interfaces import MemoryStore
from memu_core.testing import corpus
from memu_core.text import STOPWORDS, expand_query, query_terms

TOP_K = 10
"""Segments asked for per query; a line's file must be among the files of the answer."""

_FILLERS = ("how do we", "the", "what about", "on the", "did we")


def engine_over(store: MemoryStore) -> Any:
    """The lexical engine over ``store``: the path ``memu retrieve`` takes, minus the process."""
    from memu_core._engine.engine import LocalEngine

    return LocalEngine(store, embedder=None)


def commit_corpus(store: MemoryStore, files: Sequence[dict[str, str]], *, batch: int = 2_000) -> None:
    """Commit ``files`` (the ``memu commit`` payload shape) into ``store``, lexical only."""
    engine = engine_over(store)
    for start in range(0, len(files), batch):
        engine.commit_results(recall_files=list(files[start : start + batch]))


@dataclass(frozen=True, slots=True)
class StoredLine:
    """One searchable line of the corpus: its file, its text and its search terms."""

    file: str
    text: str
    terms: frozenset[str]


class CorpusIndex:
    """Every line of a corpus with its terms, to say which files hold all of a query's words."""

    def __init__(self, files: Iterable[dict[str, str]]) -> None:
        self.lines: list[StoredLine] = []
        self._by_term: dict[str, set[int]] = {}
        for f in files:
            texts = [f"{f['name']}: {f.get('description') or ''}", *f["content"].splitlines()]
            for text in texts:
                terms = frozenset(query_terms(text))
                if not terms:
                    continue
                for term in terms:
                    self._by_term.setdefault(term, set()).add(len(self.lines))
                self.lines.append(StoredLine(f["name"], text, terms))

    def files_holding(self, terms: Iterable[str]) -> set[str]:
        """Names of the files with a line that holds every one of ``terms``."""
        sets = sorted((self._by_term.get(t, set()) for t in set(terms)), key=len)
        if not sets:
            return set()
        rows = set.intersection(*sets)
        return {self.lines[i].file for i in rows}


@dataclass(frozen=True, slots=True)
class LineQuery:
    """A query made of two or more words of one stored line."""

    line: StoredLine
    words: tuple[str, ...]
    text: str


def line_queries(index: CorpusIndex, *, whole: bool = False) -> st.SearchStrategy[LineQuery]:
    """Queries of 2+ content words of a random stored line, shuffled, sometimes after stopwords.

    ``whole`` takes every content word of the line instead of a subset.
    """
    candidates = [i for i in range(len(index.lines)) if len(_content(index.lines[i])) >= 2]

    @st.composite
    def build(draw: st.DrawFn) -> LineQuery:
        line = index.lines[draw(st.sampled_from(candidates))]
        content = sorted(_content(line))
        if whole:
            words = draw(st.permutations(content))
        else:
            words = draw(st.lists(st.sampled_from(content), min_size=2, max_size=6, unique=True))
        parts = list(words)
        if draw(st.booleans()):
            parts.insert(0, draw(st.sampled_from(_FILLERS)))
        return LineQuery(line, tuple(words), " ".join(parts))

    return build()


def _content(line: StoredLine) -> set[str]:
    # Digits-only identifiers are unique per line: a query with one would be found trivially,
    # so the probe sticks to the vocabulary words that recur thousands of times. The corpus's
    # filler phrases ("by default", "on Linux"…) sit in about half of all lines: like
    # stopwords they carry no ranking signal (BM25 gives them an IDF near zero), so a query of
    # them alone asks for nothing in particular.
    return {t for t in line.terms if not t.isdigit() and t not in STOPWORDS and t not in _FILLER_WORDS}


_FILLER_WORDS = frozenset(word for phrase in corpus.FILLER for word in query_terms(phrase))


def check_answers(engine: Any, probe: LineQuery, *, top_k: int = TOP_K) -> dict[str, Any]:
    """Retrieve ``probe`` (lexical) and assert the answer is not empty; return the answer."""
    answer: dict[str, Any] = engine.progressive_retrieve(probe.text, {}, top_k=top_k, mode="lexical")
    assert answer["segments"], f"no segments for {probe.text!r} (its words are in {probe.line.text!r})"
    assert answer["files"], f"no files for {probe.text!r}"
    return answer


POOL = 100
"""Lexical candidates the engine asks a store for per retrieve (``engine.MIN_CANDIDATES``)."""


def check_store_finds_line(store: MemoryStore, index: CorpusIndex, probe: LineQuery, *, limit: int = POOL) -> None:
    """When at most ``TOP_K`` files hold a line with every word of ``probe``, the store's
    lexical search (the query expanded as the engine expands it) returns the probed line among
    its best ``limit`` hits: the candidates the engine fuses and re-ranks.

    Checked at the store because that is where candidates are narrowed; which of the store's
    best lines the engine shows first is the re-ranking's call (it favours lines whose file
    matched often, so a file holding one matching line can drop just below the top ten).
    """
    holders = index.files_holding(probe.words)
    if len(holders) > TOP_K:
        return
    hits = store.search_segments_lexical(expand_query(probe.text), {}, None, limit)
    segments = store.fetch_segments([h.id for h in hits])
    files = store.fetch_files(list({s.file_id for s in segments.values()}))
    found = [(files[s.file_id].name, s.text) for s in segments.values() if s.file_id in files]
    assert (probe.line.file, probe.line.text) in found, (
        f"{probe.text!r}: {probe.line.file} (line {probe.line.text!r}) not among the store's best {limit} "
        f"of {len(hits)} hits; files holding all its words: {sorted(holders)}"
    )


def answer_files(answer: dict[str, Any]) -> list[str]:
    """The names of an answer's files, best first."""
    return [f["name"] for f in answer["files"]]
