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
    def test_a_whole_line_finds_its_file(data):
        check_finds_line(engine_over(store), index, data.draw(line_queries(index, whole=True)))

Why two checks: any two or more stored words must give an answer (an empty one is the bug these
checks exist for), but which of thousands of lines holding two common words ranks first is
BM25's call (a short line holding three of four words outranks a long line holding all four).
A query of a whole line's words is specific enough that its file must be in the answer whenever
few files hold those words together.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from memu_core.interfaces import MemoryStore
from memu_core.text import STOPWORDS, query_terms

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
    # so the probe sticks to the vocabulary words that recur thousands of times.
    return {t for t in line.terms if not t.isdigit() and t not in STOPWORDS}


def check_answers(engine: Any, probe: LineQuery, *, top_k: int = TOP_K) -> dict[str, Any]:
    """Retrieve ``probe`` (lexical) and assert the answer is not empty; return the answer."""
    answer: dict[str, Any] = engine.progressive_retrieve(probe.text, {}, top_k=top_k, mode="lexical")
    assert answer["segments"], f"no segments for {probe.text!r} (its words are in {probe.line.text!r})"
    assert answer["files"], f"no files for {probe.text!r}"
    return answer


def check_finds_line(engine: Any, index: CorpusIndex, probe: LineQuery, *, top_k: int = TOP_K) -> dict[str, Any]:
    """:func:`check_answers`, and when at most ``top_k`` files hold a line with every word of
    the query, the probed line's file is among the answer's files."""
    answer = check_answers(engine, probe, top_k=top_k)
    holders = index.files_holding(probe.words)
    names = answer_files(answer)
    if len(holders) <= top_k:
        assert probe.line.file in names, (
            f"{probe.text!r}: {probe.line.file} (line {probe.line.text!r}) missing from {names}; "
            f"files holding all its words: {sorted(holders)}"
        )
    return answer


def answer_files(answer: dict[str, Any]) -> list[str]:
    """The names of an answer's files, best first."""
    return [f["name"] for f in answer["files"]]
