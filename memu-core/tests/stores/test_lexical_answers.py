"""Lexical search answers on large SQLite stores: a query of a stored line's words finds it.

The stores hold the benchmark corpus (:mod:`memu_core.testing.corpus`). At 10,000 files of 20
lines each, every vocabulary word is in over ten thousand lines, so the store narrows its
candidates (``_stores/sqlite/lexical.py``): the case that once answered nothing at all. The
1,000-file store is also searched with the narrowing budget lowered, so every path of the
candidate rule (narrow pass, fallback to the wide one, plain OR) runs on both sizes.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from memu_core._stores.sqlite import SqliteStore, lexical
from memu_core.testing import corpus
from memu_core.testing.lexical_answers import (
    CorpusIndex,
    check_answers,
    check_store_finds_line,
    commit_corpus,
    engine_over,
    line_queries,
)
from memu_core.text import expand_query, query_terms

pytestmark = pytest.mark.slow
# Each example is a search on a large store: shrinking a failure would run for many minutes, and
# the failure message already names the line and the query.
_NO_SHRINK = [Phase.explicit, Phase.reuse, Phase.generate]
_PROBE = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), phases=_NO_SHRINK)


class Built:
    """A store holding a corpus, its index and the engine over it."""

    def __init__(self, path: Path, files: list[dict[str, str]]) -> None:
        self.store = SqliteStore.open(str(path))
        commit_corpus(self.store, files)
        self.index = CorpusIndex(files)
        self.engine: Any = engine_over(self.store)


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Built]:
    built = Built(tmp_path_factory.mktemp("lex") / "small.db", corpus.generate_files(1_000, lines=(20, 20)))
    yield built
    built.store.close()


@pytest.fixture(scope="module")
def large(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Built]:
    built = Built(tmp_path_factory.mktemp("lex") / "large.db", corpus.generate_files(10_000, lines=(20, 20)))
    yield built
    built.store.close()


def test_large_store_narrows_its_candidates(large: Built) -> None:
    # The premise of the tests below: the store is past the budget, so narrowing runs.
    with large.store._read() as conn:
        counts = lexical._row_counts(conn, ["retry", "queue"])
    assert min(counts.values()) > lexical.BUDGET


@pytest.mark.parametrize(
    ("query", "words"),
    [
        ("retry backoff broker queue", {"retry", "queue"}),
        ("deploy release cache", {"deploy", "release", "cache"}),
        ("retry backoff on the broker queue", {"retry", "queue"}),
    ],
)
def test_reported_queries_find_the_files_holding_their_words(large: Built, query: str, words: set[str]) -> None:
    # The three queries that answered nothing on the 10,000-file benchmark store.
    answer = large.engine.progressive_retrieve(query, {}, top_k=10, mode="lexical")
    holders = large.index.files_holding(words)
    assert answer["segments"] and answer["files"]
    assert {f["name"] for f in answer["files"]} & holders
    assert words <= set(query_terms(answer["segments"][0]["text"]))


@pytest.mark.parametrize("size", ["small", "large"])
def test_words_of_a_line_always_answer(size: str, request: pytest.FixtureRequest) -> None:
    built: Built = request.getfixturevalue(size)

    @given(data=st.data())
    @_PROBE
    def probe(data: st.DataObject) -> None:
        check_answers(built.engine, data.draw(line_queries(built.index)))

    probe()


@pytest.mark.parametrize("size", ["small", "large"])
def test_a_whole_line_is_among_the_best_candidates(size: str, request: pytest.FixtureRequest) -> None:
    built: Built = request.getfixturevalue(size)

    @given(data=st.data())
    @_PROBE
    def probe(data: st.DataObject) -> None:
        check_store_finds_line(built.store, built.index, data.draw(line_queries(built.index, whole=True)))

    probe()


@pytest.mark.parametrize("budget", [50, 500, 3_000])
def test_any_budget_keeps_answers(small: Built, budget: int, monkeypatch: pytest.MonkeyPatch) -> None:
    # The small store under a lowered budget runs the narrow pass, its fallback and the plain
    # OR on one corpus.
    monkeypatch.setattr(lexical, "BUDGET", budget)

    @given(data=st.data())
    @settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck), phases=_NO_SHRINK)
    def probe(data: st.DataObject) -> None:
        check_answers(small.engine, data.draw(line_queries(small.index)))
        check_store_finds_line(small.store, small.index, data.draw(line_queries(small.index, whole=True)))

    probe()


@pytest.mark.parametrize("budget", [50, 500])
def test_a_rows_score_does_not_depend_on_the_rule_that_admitted_it(
    small: Built, budget: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # FTS5's bm25() counts a term once per mention in the expression; a narrow rule that named
    # a term twice once scored its rows higher than every other store would.
    queries = ["retry backoff broker queue", "deploy release cache", "docker python bundle staging"]
    for query in queries:
        expanded = expand_query(query)
        monkeypatch.setattr(lexical, "BUDGET", 10**9)
        every_row = small.store.search_segments_lexical(expanded, {}, None, 100_000)
        exhaustive = {h.id: h.score for h in every_row}
        monkeypatch.setattr(lexical, "BUDGET", budget)
        narrowed = small.store.search_segments_lexical(expanded, {}, None, 100)
        assert narrowed, query
        for hit in narrowed:
            assert hit.score == pytest.approx(exhaustive[hit.id], rel=1e-9), query
