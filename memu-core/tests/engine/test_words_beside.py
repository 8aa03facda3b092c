"""A hybrid retrieve searches the words while it waits for the query's embedding (ADR 0030).

The word search needs no vector, so the engine runs it on a thread of its own beside the
embedding and the dense search; the SQLite store gives it a connection of its own so the two do
not take turns. These tests use a real SQLite store and show the overlap by making each side
wait for the other: sequential code would hang on them (each wait is bounded, so it fails).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from memu_core._engine.engine import LocalEngine
from memu_core._stores.sqlite import SqliteStore
from memu_core.errors import EmbeddingError, StoreError
from memu_core.testing.embedders import HashingEmbedder
from memu_core.types import Hit, Where

PATIENCE = 10.0
FILES = [
    {"name": "deploy", "content": "deploy with the blue green script\nrollback keeps the old release"},
    {"name": "tests", "content": "run the unit tests before a deploy\nthe linter runs first"},
    {"name": "misc", "content": "lunch is at noon"},
]


class _WordsFirst(SqliteStore):
    """Tells when a word search has started."""

    started: threading.Event

    def search_segments_lexical(self, query: str, where: Where, tracks: Sequence[str] | None, limit: int) -> list[Hit]:
        self.started.set()
        return super().search_segments_lexical(query, where, tracks, limit)


class _WaitsForWords(HashingEmbedder):
    """Embeds a query only once the store's word search has started (or gives up)."""

    def __init__(self, started: threading.Event) -> None:
        super().__init__()
        self.started = started
        self.overlapped: bool | None = None

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if len(texts) == 1 and self.overlapped is None:  # the query, not a commit's batch
            self.overlapped = self.started.wait(PATIENCE)
        return super().embed(texts)


def _engine(tmp_path: Path) -> tuple[LocalEngine, _WaitsForWords]:
    store = _WordsFirst.open(str(tmp_path / "b.db"))
    assert isinstance(store, _WordsFirst)
    store.started = threading.Event()
    plain = LocalEngine(store, embedder=HashingEmbedder())
    plain.commit_results(recall_files=FILES)
    embedder = _WaitsForWords(store.started)
    return LocalEngine(store, embedder=embedder), embedder


def test_the_word_search_runs_while_the_query_is_embedded(tmp_path: Path) -> None:
    engine, embedder = _engine(tmp_path)
    store = engine.store
    assert isinstance(store, _WordsFirst)
    store.started.clear()
    result = engine.progressive_retrieve("blue green deploy")
    assert embedder.overlapped is True
    assert result["mode"] == "hybrid"
    assert result["segments"][0]["text"] == "deploy with the blue green script"
    # The same answer as the words and vectors searched one after the other.
    embedder.overlapped = False
    lexical = engine.progressive_retrieve("blue green deploy", mode="lexical")
    assert [s["id"] for s in lexical["segments"]][:1] == [s["id"] for s in result["segments"]][:1]
    engine.close()


def test_words_and_vectors_do_not_share_a_connection(tmp_path: Path) -> None:
    # Holding the main connection (a dense search, a fetch) must not stop a word search.
    engine, _ = _engine(tmp_path)
    store = engine.store
    assert isinstance(store, SqliteStore)
    found: list[list[Hit]] = []
    with store._lock:
        worker = threading.Thread(target=lambda: found.append(store.search_segments_lexical("linter", {}, None, 5)))
        worker.start()
        worker.join(PATIENCE)
    assert found and found[0], "the word search waited for the main connection"
    engine.close()
    assert store._words is None  # closed with the store


def test_an_embedding_error_waits_for_the_word_search_then_raises(tmp_path: Path) -> None:
    engine, embedder = _engine(tmp_path)
    embedder.overlapped = True  # no waiting: fail at once
    embedder.fail_with = EmbeddingError("provider unavailable")
    running: list[int] = []
    store = engine.store
    assert isinstance(store, _WordsFirst)
    original = SqliteStore.search_segments_lexical

    def slow(self: Any, *args: Any) -> list[Hit]:
        running.append(1)
        threading.Event().wait(0.2)
        hits = original(self, *args)
        running.pop()
        return hits

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(SqliteStore, "search_segments_lexical", slow)
        with pytest.raises(EmbeddingError, match="provider unavailable"):
            engine.progressive_retrieve("deploy")
        assert running == []  # the word search had ended before the error reached the caller
    engine.close()


def test_a_word_search_error_reaches_the_caller(tmp_path: Path) -> None:
    engine, embedder = _engine(tmp_path)
    embedder.overlapped = True

    def broken(*_: Any) -> list[Hit]:
        raise StoreError("reading the SQLite store failed: disk I/O error")

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(SqliteStore, "search_segments_lexical", broken)
        with pytest.raises(StoreError, match="disk I/O error"):
            engine.progressive_retrieve("deploy")
    engine.close()
