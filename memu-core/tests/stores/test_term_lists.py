"""A serving store's word search from kept per-word scores ranks exactly as FTS5 does."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memu_core._stores.sqlite import SqliteStore, lexical
from memu_core._stores.sqlite.wordhits import WordHits
from memu_core.testing.store_contract import file_write
from memu_core.types import ChangeSet, Hit, Scope

WORDS = ["alpha", "beta", "gamma", "delta", "retry", "retries", "queue", "memurow"]
"""Few words, so candidate sets overlap; ``retries`` is a form of ``retry``; ``memurow`` is
spelled like the every-row marker."""

lines = st.lists(st.sampled_from(WORDS), min_size=1, max_size=7).map(" ".join)
files = st.lists(st.lists(lines, min_size=1, max_size=6, unique=True), min_size=1, max_size=12)
queries = st.lists(st.sampled_from([*WORDS, "absent"]), min_size=1, max_size=4).map(" ".join)


def _wait_held(store: SqliteStore, query: str, where: dict[str, str | list[str]], limit: int) -> list[Hit]:
    """Search until the kept lists answer (the first search queues their loading)."""
    lists = store._term_lists
    assert lists is not None
    deadline = time.monotonic() + 10
    while True:
        store.word_hits = WordHits()  # the kept answers would hide which path ranked
        before = lists.answered
        hits = store.search_segments_lexical(query, where, None, limit)
        if lists.answered > before:
            return hits
        assert time.monotonic() < deadline, "the word lists never loaded"
        time.sleep(0.01)


@given(corpus=files, query=queries, limit=st.integers(1, 12), budget=st.integers(1, 40), scoped=st.booleans())
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_kept_word_scores_rank_exactly_as_fts5(
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    corpus: list[list[str]],
    query: str,
    limit: int,
    budget: int,
    scoped: bool,
) -> None:
    # A small budget makes the narrow candidate rules take part, as on a large store.
    monkeypatch.setattr(lexical, "BUDGET", budget)
    path = tmp_path_factory.mktemp("lists") / "store.sqlite3"
    fts5 = SqliteStore.open(str(path))
    other = Scope(user_id="someone-else")
    fts5.apply(
        ChangeSet(files=[file_write(f"f{i}", ls, scope=other if i % 3 == 2 else None) for i, ls in enumerate(corpus)])
    )
    serving = SqliteStore.open(str(path))
    serving.prepare_to_serve()
    where: dict[str, str | list[str]] = {"user_id": "default"} if scoped else {}
    try:
        want = fts5.search_segments_lexical(query, where, None, limit)
        got = _wait_held(serving, query, where, limit)
        assert [h.id for h in got] == [h.id for h in want]
        assert [h.score for h in got] == [h.score for h in want]  # the same additions, bit for bit
    finally:
        serving.close()
        fts5.close()


def test_a_write_starts_the_lists_over(tmp_path: Path) -> None:
    path = str(tmp_path / "store.sqlite3")
    writer = SqliteStore.open(path)
    writer.apply(ChangeSet(files=[file_write("a", ["alpha beta", "alpha", "beta gamma"])]))
    serving = SqliteStore.open(path)
    serving.prepare_to_serve()
    try:
        first = _wait_held(serving, "alpha beta", {}, 10)
        # Another process's write moves the generation: IDFs change, and so must the answer.
        writer.apply(ChangeSet(files=[file_write("b", [f"alpha filler {i}" for i in range(30)])]))
        after = _wait_held(serving, "alpha beta", {}, 10)
        assert after == writer.search_segments_lexical("alpha beta", {}, None, 10)
        assert after != first
    finally:
        serving.close()
        writer.close()


def test_a_word_too_common_to_keep_is_left_to_fts5(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from memu_core._stores.sqlite import termlists

    monkeypatch.setattr(termlists, "MAX_WORD_ROWS", 2)
    store = SqliteStore.open(str(tmp_path / "store.sqlite3"))
    store.apply(ChangeSet(files=[file_write("a", ["alpha beta", "alpha", "alpha gamma", "beta"])]))
    store.prepare_to_serve()
    lists = store._term_lists
    assert lists is not None
    try:
        want = store.search_segments_lexical("alpha beta", {}, None, 10)
        deadline = time.monotonic() + 10
        while lists.loading() and time.monotonic() < deadline:
            time.sleep(0.01)
        store.word_hits = WordHits()
        assert store.search_segments_lexical("alpha beta", {}, None, 10) == want
        assert lists.answered == 0  # alpha is in three rows: every answer came from FTS5
    finally:
        store.close()
