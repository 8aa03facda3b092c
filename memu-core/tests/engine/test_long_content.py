"""Very long content: splitting stays linear, and an oversized recall file is refused up front."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from memu_core._engine.engine import LocalEngine
from memu_core._engine.inputs import MAX_CONTENT_CHARS
from memu_core._engine.segments import MAX_SEGMENT_CHARS, split_long
from memu_core._stores.sqlite import SqliteStore
from memu_core.errors import UsageError
from memu_core.testing.embedders import HashingEmbedder


def _line(chars: int) -> str:
    words = (f"w{i % 9973:04d}" for i in range(chars // 6 + 1))
    return " ".join(words)[:chars]


def _best_of_three(line: str) -> float:
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        split_long(line)
        best = min(best, time.perf_counter() - start)
    return best


def test_splitting_a_long_line_is_linear_not_quadratic() -> None:
    # A ratio, not a wall-clock bound: eight times the text must cost about eight times the time.
    # Re-slicing the remainder after each cut made it about 64 times (and 50 MB took minutes).
    small, large = _line(500_000), _line(4_000_000)
    assert "".join(split_long(large)).replace(" ", "") == large.replace(" ", "")
    ratio = _best_of_three(large) / _best_of_three(small)
    assert ratio < 24, f"8x the text took {ratio:.1f}x the time: splitting is no longer linear"


def test_split_pieces_stay_within_the_limit_on_a_long_line() -> None:
    pieces = split_long(_line(100_000))
    assert pieces and all(0 < len(p) <= MAX_SEGMENT_CHARS for p in pieces)


def test_an_oversized_recall_file_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    store = SqliteStore.open(str(tmp_path / "memu.sqlite3"))
    try:
        engine = LocalEngine(store, embedder=HashingEmbedder())
        small = {"name": "small", "content": "- a fact"}
        huge = {"name": "huge-log", "content": _line(MAX_CONTENT_CHARS + 1)}
        with pytest.raises(UsageError, match=r"recall_files\[1\] \('huge-log'\).*MAX_CONTENT_CHARS"):
            engine.commit_results(recall_files=[small, huge])
        assert engine.list_all_recall_files()["recall_files"] == []
        at_limit = {"name": "at-limit", "content": _line(MAX_CONTENT_CHARS)}
        assert [f["name"] for f in engine.commit_results(recall_files=[at_limit])["recall_files"]] == ["at-limit"]
    finally:
        store.close()
