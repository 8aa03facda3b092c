"""The sqlite store's dense index below ``dense.FAISS_FROM`` vectors: a numpy scan, no faiss.

A per-turn ``retrieve`` answered in its own process on a small store pays for importing faiss
(about 50 ms of CPU) only to scan a few dozen vectors. These tests hold the numpy scan to faiss's
flat index over the same vectors (same owners, same order, scores equal up to float32 rounding;
exact ties in table order), check that a warm index crossing the threshold is loaded again as the
other kind, and that such a search never imports faiss.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from memu_core._stores.sqlite import SqliteStore, dense
from memu_core.testing.store_contract import file_write
from memu_core.types import ChangeSet, Fingerprint, Scope

DIM = 24
FP = Fingerprint("test", "random-unit", DIM)


def _unit(rows: np.ndarray) -> np.ndarray:
    unit: np.ndarray = (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)
    return unit


def _write(store: SqliteStore, name: str, vectors: np.ndarray) -> None:
    lines = [f"{name} line {i}" for i in range(len(vectors))]
    store.apply(ChangeSet(files=[file_write(name, lines, vectors=[v.tolist() for v in vectors])], fingerprint=FP))


def _search(store: SqliteStore, query: np.ndarray, limit: int) -> list[tuple[str, float]]:
    return [(h.id, h.score) for h in store.search_segments_dense(query.tolist(), {}, None, limit)]


def _faiss_flat(store: SqliteStore, query: np.ndarray, limit: int) -> list[tuple[str, float]]:
    """faiss's float32 flat search over the store's vectors, in table order."""
    import faiss

    rows = store._conn.execute("SELECT owner_id, vector FROM vectors WHERE owner_kind = 'segment'").fetchall()
    index = faiss.IndexFlatIP(DIM)
    index.add(np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(-1, DIM))
    q = (query / np.linalg.norm(query)).astype(np.float32).reshape(1, -1)
    scores, found = index.search(q, min(limit, len(rows)))
    return [(rows[r][0], float(s)) for s, r in zip(scores[0], found[0], strict=True)]


def _same(got: list[tuple[str, float]], want: list[tuple[str, float]]) -> None:
    assert [g[0] for g in got] == [w[0] for w in want]
    assert [g[1] for g in got] == pytest.approx([w[1] for w in want], abs=1e-6)


def test_a_small_store_scans_with_numpy_and_answers_like_faiss(tmp_path: Path) -> None:
    rng = np.random.default_rng(11)
    vectors = _unit(rng.standard_normal((120, DIM)))
    store = SqliteStore.open(str(tmp_path / "small.db"))
    _write(store, "a", vectors[:70])
    _write(store, "b", vectors[70:])
    for query in [vectors[4], vectors[90], *rng.standard_normal((5, DIM))]:
        for limit in (1, 3, 10, 500):
            _same(_search(store, query, limit), _faiss_flat(store, query, limit))
    (entry,) = store._dense._entries.values()
    assert isinstance(entry.index, dense.NumpyFlat) and entry.error == 0.0
    store.close()


def test_exact_ties_come_in_table_order(tmp_path: Path) -> None:
    # faiss orders exact ties by its heap (neither row order nor its reverse); the numpy scan
    # orders them as the table holds them, and a cut through them keeps the earliest rows.
    rng = np.random.default_rng(14)
    vectors = _unit(rng.standard_normal((70, DIM)))
    vectors[[9, 30, 31, 50, 66]] = vectors[4]
    store = SqliteStore.open(str(tmp_path / "ties.db"))
    _write(store, "a", vectors)
    table = [r[0] for r in store._conn.execute("SELECT owner_id FROM vectors WHERE owner_kind = 'segment'")]
    for limit, rows in ((3, [4, 9, 30]), (6, [4, 9, 30, 31, 50, 66])):
        got = _search(store, vectors[4], limit)
        assert [g[0] for g in got] == [table[r] for r in rows]
        assert [g[1] for g in got] == pytest.approx([1.0] * limit, abs=1e-6)
    store.close()


def test_a_warm_index_crossing_the_threshold_loads_again_as_the_other_kind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(dense, "FAISS_FROM", 30)
    monkeypatch.setattr(dense, "REBUILD_FRACTION", 0.5)  # the write alone would be patched in
    rng = np.random.default_rng(12)
    vectors = _unit(rng.standard_normal((40, DIM)))
    store = SqliteStore.open(str(tmp_path / "cross.db"))
    _write(store, "a", vectors[:25])
    query = vectors[3]
    _search(store, query, 5)
    (entry,) = store._dense._entries.values()
    assert isinstance(entry.index, dense.NumpyFlat)
    _write(store, "b", vectors[25:])
    got = _search(store, query, 10)
    (entry,) = store._dense._entries.values()
    assert type(entry.index).__name__ == "IndexFlatIP" and store._dense.loads == 2
    _same(got, _faiss_flat(store, query, 10))
    store.delete_file(Scope(), "memory", "b")  # back below: numpy again
    got = _search(store, query, 10)
    (entry,) = store._dense._entries.values()
    assert isinstance(entry.index, dense.NumpyFlat) and store._dense.loads == 3
    _same(got, _faiss_flat(store, query, 10))
    store.close()


def test_a_small_store_search_does_not_import_faiss(tmp_path: Path) -> None:
    store = SqliteStore.open(str(tmp_path / "lean.db"))
    _write(store, "a", _unit(np.random.default_rng(13).standard_normal((20, DIM))))
    store.close()
    code = textwrap.dedent(
        f"""
        import sys
        from memu_core._stores.sqlite import SqliteStore
        store = SqliteStore.open({str(tmp_path / "lean.db")!r})
        hits = store.search_segments_dense([1.0] + [0.0] * {DIM - 1}, {{}}, None, 3)
        assert len(hits) == 3, hits
        print("faiss" in sys.modules)
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "False"
