"""Lexical search answers on large Postgres stores, and the same answers as the SQLite store.

The same corpus and checks as memu-core's ``tests/stores/test_lexical_answers.py``: at 10,000
files of 20 lines each every vocabulary word is in over ten thousand rows, so the store narrows
its candidates (``_search.py``, with the rule in ``memu_core.text``), the case that once
answered nothing. The SQLite store built from the same corpus must give the same files.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from memu_backend_postgres import PostgresStore

from memu_core.interfaces import MemoryStore
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
_PROBE = settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck), phases=_NO_SHRINK)
_SIZES = {"small": 1_000, "large": 10_000}


class Pair:
    """One corpus in a Postgres store and in a SQLite store, with its index."""

    def __init__(self, pg_url: str, sqlite_path: Path, files: list[dict[str, str]]) -> None:
        from memu_core._stores.sqlite import SqliteStore

        self.pg: MemoryStore = PostgresStore.open(pg_url)
        self.lite: MemoryStore = SqliteStore.open(str(sqlite_path))
        for store in (self.pg, self.lite):
            commit_corpus(store, files)
        self.index = CorpusIndex(files)
        self.engine: Any = engine_over(self.pg)

    def close(self) -> None:
        self.pg.close()
        self.lite.close()


@pytest.fixture(scope="module")
def stores(
    module_store_url: Callable[[], str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Callable[[str], Pair]]:
    built: dict[str, Pair] = {}

    def get(size: str) -> Pair:
        if size not in built:
            files = corpus.generate_files(_SIZES[size], lines=(20, 20))
            built[size] = Pair(module_store_url(), tmp_path_factory.mktemp("lex") / f"{size}.db", files)
        return built[size]

    yield get
    for pair in built.values():
        pair.close()


@pytest.mark.parametrize(
    ("query", "words"),
    [
        ("retry backoff broker queue", {"retry", "queue"}),
        ("deploy release cache", {"deploy", "release", "cache"}),
        ("retry backoff on the broker queue", {"retry", "queue"}),
    ],
)
def test_reported_queries_find_the_files_holding_their_words(
    stores: Callable[[str], Pair], query: str, words: set[str]
) -> None:
    large = stores("large")
    answer = large.engine.progressive_retrieve(query, {}, top_k=10, mode="lexical")
    assert answer["segments"] and answer["files"]
    assert {f["name"] for f in answer["files"]} & large.index.files_holding(words)
    assert words <= set(query_terms(answer["segments"][0]["text"]))


@pytest.mark.parametrize("size", list(_SIZES))
def test_words_of_a_line_always_answer(stores: Callable[[str], Pair], size: str) -> None:
    pair = stores(size)

    @given(data=st.data())
    @_PROBE
    def probe(data: st.DataObject) -> None:
        check_answers(pair.engine, data.draw(line_queries(pair.index)))

    probe()


@pytest.mark.parametrize("size", list(_SIZES))
def test_a_whole_line_is_among_the_best_candidates(stores: Callable[[str], Pair], size: str) -> None:
    pair = stores(size)

    @given(data=st.data())
    @_PROBE
    def probe(data: st.DataObject) -> None:
        check_store_finds_line(pair.pg, pair.index, data.draw(line_queries(pair.index, whole=True)))

    probe()


@pytest.mark.parametrize("size", list(_SIZES))
def test_the_same_queries_give_the_same_files_as_sqlite(stores: Callable[[str], Pair], size: str) -> None:
    pair = stores(size)
    rng = random.Random(size)
    queries = ["retry backoff broker queue", "deploy release cache", "how do we fixed the cache docker"]
    for _ in range(25):
        line = rng.choice(pair.index.lines)
        words = sorted(t for t in line.terms if not t.isdigit())
        queries.append(" ".join(rng.sample(words, min(len(words), rng.randint(2, 5)))))
    for query in queries:
        got = _ranked(pair.pg, query)
        want = _ranked(pair.lite, query)
        assert got, query
        # Same scores in the same order; equal scores may come out in either order (row ids
        # differ between stores), so files are compared above the last score only.
        assert [s for _, s in got] == [s for _, s in want], query
        floor = got[-1][1]
        assert sorted(f for f, s in got if s > floor) == sorted(f for f, s in want if s > floor), query


def _ranked(store: MemoryStore, query: str) -> list[tuple[str, float]]:
    hits = store.search_segments_lexical(expand_query(query), {}, None, 20)
    segments = store.fetch_segments([h.id for h in hits])
    files = store.fetch_files([s.file_id for s in segments.values()])
    return [(files[segments[h.id].file_id].name, round(h.score, 5)) for h in hits]
