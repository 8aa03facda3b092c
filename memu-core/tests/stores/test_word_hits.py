"""A word search asked again before any write is answered from memory, and never after one.

Real SQLite stores: the engine writes through one, and a second store on the same file stands
for another process (a ``memu commit`` beside the warm server).
"""

from __future__ import annotations

from pathlib import Path

from memu_core._engine.engine import LocalEngine
from memu_core._stores.sqlite import SqliteStore
from memu_core._stores.sqlite.wordhits import WordHits
from memu_core.types import Hit

FILES = [
    {"name": "deploy", "content": "deploy with the blue green script\nrollback keeps the old release"},
    {"name": "tests", "content": "run the unit tests before a deploy\nthe linter runs first"},
]


def _store(path: Path) -> tuple[SqliteStore, LocalEngine]:
    store = SqliteStore.open(str(path))
    engine = LocalEngine(store)
    return store, engine


def _ids(store: SqliteStore, query: str, limit: int = 10) -> list[str]:
    return [h.id for h in store.search_segments_lexical(query, {}, None, limit)]


def test_a_repeated_word_search_is_answered_from_memory_with_hits_of_its_own(tmp_path: Path) -> None:
    store, engine = _store(tmp_path / "w.db")
    engine.commit_results(recall_files=FILES)
    first = store.search_segments_lexical("deploy rollback", {}, None, 10)
    first[0].score = -1.0  # a caller's change to its hits must not reach the next caller
    again = store.search_segments_lexical("deploy rollback", {}, None, 10)
    assert (store.word_hits.hits, store.word_hits.misses) == (1, 1)
    assert [h.id for h in again] == [h.id for h in first] and again[0].score != -1.0
    _ids(store, "deploy rollback", limit=1)  # another limit is another search
    store.search_segments_lexical("deploy rollback", {"user_id": "someone"}, None, 10)
    assert store.word_hits.hits == 1
    engine.close()


def test_a_write_through_the_store_or_another_process_is_seen_at_once(tmp_path: Path) -> None:
    store, engine = _store(tmp_path / "w.db")
    engine.commit_results(recall_files=FILES)
    before = _ids(store, "canary")
    assert before == []
    engine.commit_results(recall_files=[{"name": "canary", "content": "the canary goes out first"}])
    mine = _ids(store, "canary")
    assert mine  # the file's name and its line
    _, other_engine = _store(tmp_path / "w.db")
    other_engine.commit_results(recall_files=[{"name": "canary-two", "content": "a second canary later"}])
    assert set(_ids(store, "canary")) > set(mine)
    other_engine.close()
    engine.close()


def test_an_entry_computed_under_an_older_generation_is_not_kept() -> None:
    kept = WordHits(size=2)
    key = ("q", "", (), 10)
    assert kept.get(1, key) is None
    kept.get(2, key)  # another thread saw a write meanwhile
    kept.put(1, key, [Hit("a", 1.0)])
    assert kept.get(2, key) is None
    kept.put(2, key, [Hit("a", 1.0)])
    assert kept.get(2, key) == [Hit("a", 1.0)]
    assert kept.get(3, key) is None and len(kept) == 0
    for n, name in enumerate(("x", "y", "z")):
        kept.put(3, (name, "", (), 10), [Hit(name, float(n))])
    assert len(kept) == 2 and kept.get(3, ("x", "", (), 10)) is None
