"""A question asked again is not embedded again (the engine's query vectors, ADR 0030's amendment).

A real SQLite store and the hashing embedder, which counts the texts it is sent.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from memu_core._engine.engine import LocalEngine
from memu_core._engine.queryvectors import QueryVectors
from memu_core._stores.sqlite import SqliteStore
from memu_core.errors import EmbeddingError
from memu_core.testing.embedders import HashingEmbedder, failing
from memu_core.types import Fingerprint

FILES = [
    {"name": "deploy", "content": "deploy with the blue green script\nrollback keeps the old release"},
    {"name": "tests", "content": "run the unit tests before a deploy\nthe linter runs first"},
]


def _engine(tmp_path: Path) -> tuple[LocalEngine, HashingEmbedder]:
    embedder = HashingEmbedder()
    engine = LocalEngine(SqliteStore.open(str(tmp_path / "q.db")), embedder=embedder)
    engine.commit_results(recall_files=FILES)
    return engine, embedder


def test_a_repeated_question_is_answered_without_embedding_it_again(tmp_path: Path) -> None:
    engine, embedder = _engine(tmp_path)
    embedder.texts.clear()
    first = engine.progressive_retrieve("blue green deploy")
    again = engine.progressive_retrieve("blue green deploy")
    other = engine.progressive_retrieve("blue green deploy steps")
    assert embedder.texts == ["blue green deploy", "blue green deploy steps"]
    assert again == first and first["mode"] == "hybrid"
    assert other["mode"] == "hybrid"
    assert (engine.query_vectors.hits, engine.query_vectors.misses) == (1, 2)
    engine.close()


def test_a_failed_embedding_is_not_remembered(tmp_path: Path) -> None:
    engine, embedder = _engine(tmp_path)
    embedder.fail_with = failing()
    with pytest.raises(EmbeddingError, match="provider unavailable"):
        engine.progressive_retrieve("rollback")
    embedder.fail_with = None
    embedder.texts.clear()
    assert engine.progressive_retrieve("rollback")["mode"] == "hybrid"
    assert embedder.texts == ["rollback"]
    engine.close()


def test_the_least_recent_entry_goes_first_and_spaces_do_not_mix() -> None:
    cache = QueryVectors(size=2)
    small, large = Fingerprint("p", "m", 2), Fingerprint("p", "m-large", 2)
    cache.put(small, "a", [0.1, 0.2])
    cache.put(small, "b", [0.3, 0.4])
    assert cache.get(small, "a") == [0.1, 0.2]  # "a" is now the most recent
    cache.put(small, "c", [0.5, 0.6])
    assert cache.get(small, "b") is None
    assert cache.get(small, "c") == [0.5, 0.6]
    assert cache.get(large, "a") is None
    assert len(cache) == 2
    assert QueryVectors(size=0).get(small, "a") is None
