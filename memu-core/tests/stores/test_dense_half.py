"""The sqlite store's float16 dense index: half the bytes per search, the float32 answer.

A store past ``dense.HALF_PRECISION_FROM`` vectors keeps its dense index as float16 and scores
the float16 pass's candidates again from the float32 vectors it stores. These tests lower the
threshold so a small real store takes that path, and hold its answers to a float32 flat index
over the same vectors: the same owners in the same order with the same scores (up to float32
rounding), exact ties included (docs/adr/0030-warm-retrieve-server-path.md).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from memu_core._stores._common import fingerprint_key
from memu_core._stores.sqlite import SqliteStore, dense
from memu_core.types import ChangeSet, Fingerprint, Scope

DIM = 32
FP = Fingerprint("test", "random-unit", DIM)


def _store(tmp_path: Path, vectors: np.ndarray, *, per_file: int = 50) -> SqliteStore:
    from memu_core.testing.store_contract import file_write

    store = SqliteStore.open(str(tmp_path / "half.db"))
    writes = []
    for start in range(0, len(vectors), per_file):
        part = vectors[start : start + per_file]
        lines = [f"line {start + i}" for i in range(len(part))]
        writes.append(file_write(f"f{start}", lines, vectors=[v.tolist() for v in part]))
    store.apply(ChangeSet(files=writes, fingerprint=FP))
    return store


class _Flat:
    """The float32 flat search the float16 index must agree with, over the store's own vectors."""

    def __init__(self, store: SqliteStore) -> None:
        import faiss

        self.rows = store._conn.execute("SELECT owner_id, vector FROM vectors WHERE owner_kind = 'segment'").fetchall()
        self.index = faiss.IndexFlatIP(DIM)
        self.index.add(np.frombuffer(b"".join(r[1] for r in self.rows), dtype=np.float32).reshape(-1, DIM))

    def search(self, query: np.ndarray, limit: int) -> list[tuple[str, float]]:
        q = (query / np.linalg.norm(query)).astype(np.float32).reshape(1, -1)
        scores, found = self.index.search(q, limit)
        return [(self.rows[r][0], float(s)) for s, r in zip(scores[0], found[0], strict=True)]


def _same(got: list[tuple[str, float]], want: list[tuple[str, float]]) -> None:
    """The same owners in the same order, each score equal up to float32 summation order."""
    assert [g[0] for g in got] == [w[0] for w in want]
    assert [g[1] for g in got] == pytest.approx([w[1] for w in want], abs=1e-6)


def _unit(rows: np.ndarray) -> np.ndarray:
    unit: np.ndarray = (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)
    return unit


@pytest.fixture
def half(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    import faiss

    monkeypatch.setattr(dense, "HALF_PRECISION_FROM", 100)
    monkeypatch.setattr(dense, "FAISS_FROM", 50)  # a float32 index here is faiss's, as past 1,000 vectors
    monkeypatch.setattr(dense, "LOAD_ROWS", 64)  # the switch to float16 happens mid-load
    # One thread, as in the warm server (memu_core._compose.single_threaded_math): OpenMP's
    # spinning threads make each search here tens of times slower on a busy machine.
    threads = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)
    yield
    faiss.omp_set_num_threads(threads)


def test_large_index_is_float16_and_answers_like_float32(tmp_path: Path, half: None) -> None:
    rng = np.random.default_rng(3)
    vectors = _unit(rng.standard_normal((600, DIM)))
    vectors[300:310] = vectors[5]  # identical lines: exact ties must keep the flat order
    store = _store(tmp_path, vectors)
    queries = [*vectors[[5, 17, 400]], *rng.standard_normal((6, DIM))]
    flat = _Flat(store)
    for query in queries:
        for limit in (1, 7, 40, 800):
            got = [(h.id, h.score) for h in store.search_segments_dense(query.tolist(), {}, None, limit)]
            _same(got, flat.search(query, min(limit, 600)))
    (entry,) = store._dense._entries.values()
    assert "ScalarQuantizer" in type(entry.index).__name__  # the bytes a search reads are halved
    assert 0 < entry.error < 1e-3
    store.close()


def test_crowded_top_widens_the_float16_pass_until_exact(
    tmp_path: Path, half: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Hundreds of vectors within float16's error of one another: the first pass cannot tell
    # them apart, so it must widen rather than drop one of the exact best.
    rng = np.random.default_rng(5)
    base = _unit(rng.standard_normal((1, DIM)))[0]
    crowd = _unit(base + 1e-4 * rng.standard_normal((400, DIM)))
    far = _unit(rng.standard_normal((200, DIM)))
    store = _store(tmp_path, np.vstack([crowd, far]))
    widths: list[int] = []
    first_pass = dense._candidates

    def counting(entry: dense._Entry, query: np.ndarray, limit: int) -> list[int]:
        rows = first_pass(entry, query, limit)
        widths.append(len(rows))
        return rows

    monkeypatch.setattr(dense, "_candidates", counting)
    got = [(h.id, h.score) for h in store.search_segments_dense(base.tolist(), {}, None, 10)]
    _same(got, _Flat(store).search(base, 10))
    assert widths and widths[0] > 10 * dense.FIRST_WIDTH  # it widened past the first pass
    store.close()


def test_scoped_search_and_deleted_candidates(tmp_path: Path, half: None) -> None:
    from memu_core.testing.store_contract import file_write

    rng = np.random.default_rng(9)
    vectors = _unit(rng.standard_normal((300, DIM)))
    store = _store(tmp_path, vectors)
    other = Scope(user_id="other")
    store.apply(
        ChangeSet(
            files=[file_write("theirs", ["their line"], scope=other, vectors=[vectors[0].tolist()])],
            fingerprint=FP,
        )
    )
    mine = store.search_segments_dense(vectors[0].tolist(), {"user_id": "default"}, None, 5)
    theirs = store.search_segments_dense(vectors[0].tolist(), {"user_id": "other"}, None, 5)
    assert len(theirs) == 1 and theirs[0].id not in {h.id for h in mine}
    # A vector deleted by a bare statement is logged by the store's trigger: the next search
    # drops it instead of answering with a stale vector.
    cache, conn, key = store._dense, store._conn, fingerprint_key(FP)
    first = cache.search(conn, "segment", key, DIM, {}, None, vectors[7].tolist(), 3)
    assert first[0].id == store.search_segments_dense(vectors[7].tolist(), {}, None, 1)[0].id
    conn.execute("DELETE FROM vectors WHERE owner_id = ?", (first[0].id,))
    again = cache.search(conn, "segment", key, DIM, {}, None, vectors[7].tolist(), 3)
    assert first[0].id not in {h.id for h in again} and len(again) == 3
    store.close()


def test_small_index_stays_float32(tmp_path: Path) -> None:
    store = _store(tmp_path, _unit(np.random.default_rng(1).standard_normal((60, DIM))))
    query = np.array([1.0] + [0.0] * (DIM - 1))
    got = [(h.id, h.score) for h in store.search_segments_dense(query.tolist(), {}, None, 5)]
    (entry,) = store._dense._entries.values()
    # Below dense.FAISS_FROM the float32 index is a numpy scan (tests/stores/test_dense_small.py).
    assert isinstance(entry.index, dense.NumpyFlat) and entry.error == 0.0
    _same(got, _Flat(store).search(query, 5))
    store.close()


def test_components_float16_cannot_hold_keep_a_float32_index(tmp_path: Path, half: None) -> None:
    rng = np.random.default_rng(2)
    vectors = rng.standard_normal((300, DIM)).astype(np.float32)
    vectors[250, 0] = 1e6  # read after the index has turned float16: the load starts again in float32
    store = _store(tmp_path, vectors)
    query = rng.standard_normal(DIM)
    got = [(h.id, h.score) for h in store.search_segments_dense(query.tolist(), {}, None, 10)]
    (entry,) = store._dense._entries.values()
    assert type(entry.index).__name__ == "IndexFlatIP" and entry.error == 0.0
    assert len(entry.ids) == 300
    flat = _Flat(store).search(query, 10)
    assert [g[0] for g in got] == [w[0] for w in flat]
    store.close()
