"""The sqlite store's dense index stays warm across writes and answers like a fresh one.

A store keeps its faiss index between searches and, after a write (its own or another
connection's), patches it from the change log (migration 0003): the owners a write touched are
dropped and their current vectors appended. These tests hold every answer of a warm store to
the answer of a store opened fresh on the same file (a newly loaded index), through random
interleavings of commits, forgets, resources, re-embedded vectors and searches, and check that
small writes do not load the index again while large ones, a pruned log and an in-place update do
(docs/adr/0031-warm-dense-index-across-writes.md).
"""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memu_core._stores._common import fingerprint_key
from memu_core._stores.sqlite import SqliteStore, changes, dense
from memu_core.testing.store_contract import file_write
from memu_core.types import ChangeSet, Fingerprint, ResourceWrite, Scope

DIM = 16
FP = Fingerprint("test", "random-unit", DIM)
WORDS = 40
FILES = 12
SCOPES = (Scope(user_id="a"), Scope(user_id="b"))
TRACKS = ("memory", "notes")


def _unit(rows: np.ndarray) -> np.ndarray:
    unit: np.ndarray = (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)
    return unit


VOCAB = _unit(np.random.default_rng(11).standard_normal((WORDS, DIM)))
VOCAB[30:] = VOCAB[:10]  # the same vector under two texts: exact ties, whose order must hold


def _vector(seed: int) -> list[float]:
    """A fresh vector for ``seed`` (the vocabulary's first, then random directions)."""
    if seed < WORDS:
        return [float(x) for x in VOCAB[seed]]
    return [float(x) for x in _unit(np.random.default_rng(seed).standard_normal((1, DIM)))[0]]


def _file(idx: int) -> tuple[Scope, str, str]:
    return SCOPES[idx % 2], TRACKS[idx % 3 == 0], f"f{idx}"


def _commit(store: SqliteStore, idx: int, words: list[int], shift: int) -> None:
    """Write file ``idx`` with one line per word; ``shift`` > 0 gives kept lines new vectors."""
    scope, track, name = _file(idx)
    stored = store.get_files(scope, [(track, name)]).get((track, name))
    lines = [f"word {w}" for w in dict.fromkeys(words)]
    vectors = [_vector(w + shift * WORDS) if shift else _vector(w) for w in dict.fromkeys(words)]
    write = file_write(
        name, lines, track=track, scope=scope, revision=stored.file.revision if stored else None, vectors=vectors
    )
    store.apply(ChangeSet(files=[write], fingerprint=FP))


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store with every file written once (migrations run once for the whole module)."""
    path = tmp_path_factory.mktemp("warm") / "template.db"
    store = SqliteStore.open(str(path))
    for idx in range(FILES):
        _commit(store, idx, [(idx * 7 + j) % WORDS for j in range(6)], 0)
    store.close()
    return path


@pytest.fixture
def small(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Thresholds scaled to a store of ~80 vectors: a numpy scan below 20, faiss's flat index from
    20, float16 past 40, compaction after 3 dead rows, a reload past a third of the rows, a log
    kept short enough to be pruned past an index."""
    import faiss

    monkeypatch.setattr(dense, "FAISS_FROM", 20)
    monkeypatch.setattr(dense, "HALF_PRECISION_FROM", 40)
    monkeypatch.setattr(dense, "LOAD_ROWS", 16)
    monkeypatch.setattr(dense, "COMPACT_FROM", 3)
    monkeypatch.setattr(dense, "REBUILD_FRACTION", 0.34)
    monkeypatch.setattr(changes, "KEEP", 40)
    threads = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)
    yield
    faiss.omp_set_num_threads(threads)


def _fresh(
    path: Path, kind: str, query: list[float], where: dict[str, str], tracks: list[str] | None, limit: int
) -> list[tuple[str, float]]:
    """The answer of a newly opened store: an index loaded from scratch."""
    store = SqliteStore.open(str(path))
    try:
        return _search(store, kind, query, where, tracks, limit)
    finally:
        store.close()


def _search(
    store: SqliteStore, kind: str, query: list[float], where: dict[str, str], tracks: list[str] | None, limit: int
) -> list[tuple[str, float]]:
    if kind == "resource":
        hits = store.search_resources_dense(query, dict(where), limit)
    else:
        hits = store.search_segments_dense(query, dict(where), tracks, limit)
    return [(h.id, h.score) for h in hits]


writers = st.sampled_from(["warm", "other"])
searches = st.tuples(
    st.just("search"),
    st.sampled_from(["segment", "segment", "resource"]),
    st.integers(0, WORDS + 5),
    st.sampled_from([1, 3, 10, 200]),
    st.sampled_from([{}, {"user_id": "a"}, {"user_id": "b"}]),
    st.sampled_from([None, ["memory"], ["notes"]]),
)
writes = st.one_of(
    st.tuples(
        st.just("commit"),
        writers,
        st.integers(0, FILES + 2),
        st.lists(st.integers(0, WORDS - 1), min_size=1, max_size=8),
        st.integers(0, 3),
    ),
    st.tuples(st.just("forget"), writers, st.integers(0, FILES + 2)),
    st.tuples(st.just("revector"), writers, st.lists(st.integers(0, 400), min_size=1, max_size=5), st.integers(1, 9)),
    st.tuples(st.just("resource"), writers, st.integers(0, 3), st.integers(0, 2), st.integers(0, WORDS - 1)),
)
operations = st.one_of(st.tuples(writes, searches), st.tuples(st.none(), searches))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=st.lists(operations, min_size=2, max_size=20))
def test_warm_index_answers_like_a_fresh_one(
    template: Path,
    small: None,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    ops: list[tuple[Any, Any]],
) -> None:
    # Patch whatever the size of the change (the reload rules have their own tests below), and
    # keep the log long enough that it is not pruned past an index within one example.
    monkeypatch.setattr(dense, "REBUILD_FRACTION", 10.0)
    monkeypatch.setattr(changes, "KEEP", 2_000)
    monkeypatch.setattr(dense, "_MAX_ENTRIES", 16)
    path = tmp_path / f"run-{np.random.default_rng().integers(1 << 40)}.db"
    shutil.copyfile(template, path)
    warm, other = SqliteStore.open(str(path)), SqliteStore.open(str(path))
    by = {"warm": warm, "other": other}
    try:
        for where in ({}, {"user_id": "a"}, {"user_id": "b"}):  # every index exists before the first write
            for tracks in (None, ["memory"], ["notes"]):
                _search(warm, "segment", _vector(3), where, tracks, 10)
            _search(warm, "resource", _vector(3), where, None, 10)
        for op, check in ops:
            if op is None:
                pass
            elif op[0] == "commit":
                _, who, idx, words, shift = op
                _commit(by[who], idx, words, shift)
            elif op[0] == "forget":
                scope, track, name = _file(op[2])
                by[op[1]].delete_file(scope, track, name)
            elif op[0] == "revector":  # re-embedded rows under the live space, no reindex
                _, who, picks, seed = op
                ids = [r[0] for r in warm._conn.execute("SELECT id FROM segments ORDER BY seq")]
                rows = [("segment", ids[p % len(ids)], _vector(WORDS + seed * 1000 + p)) for p in picks] if ids else []
                by[who].store_vectors(FP, rows)
            elif op[0] == "resource":
                _, who, path_idx, scope_idx, word = op
                res = ResourceWrite(SCOPES[scope_idx % 2], f"r{path_idx}", f"about {word}", _vector(word))
                by[who].apply(ChangeSet(resources=[res], fingerprint=FP))
            _, kind, query, limit, where, tracks = check
            vector = _vector(query if query < WORDS else 5000 + query)
            got = _search(warm, kind, vector, where, tracks, limit)
            assert got == _fresh(path, kind, vector, where, tracks, limit), (op, check)
    finally:
        warm.close()
        other.close()


def _store_with(tmp_path: Path, files: int, lines: int = 5) -> SqliteStore:
    store = SqliteStore.open(str(tmp_path / "warm.db"))
    rng = np.random.default_rng(4)
    writes = []
    for f in range(files):
        vectors = _unit(rng.standard_normal((lines, DIM)))
        writes.append(file_write(f"n{f}", [f"line {f}.{j}" for j in range(lines)], vectors=[list(v) for v in vectors]))
    store.apply(ChangeSet(files=writes, fingerprint=FP))
    return store


def test_small_writes_by_another_connection_patch_the_index(tmp_path: Path, small: None) -> None:
    warm = _store_with(tmp_path, 40)
    other = SqliteStore.open(warm.path)
    query = _vector(3)
    assert _search(warm, "segment", query, {}, None, 10)
    assert warm._dense.loads == 1
    for step in range(12):
        # Words 3 and 33 share a vector: an exact tie at the top, appended in one patch.
        _commit(other, step % 4, [step, 3, 33, (step * 5) % WORDS], step % 2)
        if step % 3 == 2:
            other.delete_file(*_file((step + 1) % 4))
        got = _search(warm, "segment", query, {}, None, 10)
        assert got == _fresh(Path(warm.path), "segment", query, {}, None, 10)
    assert warm._dense.loads == 1  # twelve commits and four forgets, never loaded again
    (entry,) = warm._dense._entries.values()
    assert entry.error > 0  # float16, patched in place
    warm.close()
    other.close()


def test_a_large_change_loads_the_index_again(tmp_path: Path, small: None) -> None:
    warm = _store_with(tmp_path, 30)
    query = _vector(1)
    _search(warm, "segment", query, {}, None, 5)
    # A quarter of the rows in one write is under a third: patched.
    warm.apply(
        ChangeSet(
            files=[file_write(f"m{i}", [f"more {i}"], vectors=[_vector(50 + i)]) for i in range(38)], fingerprint=FP
        )
    )
    assert _search(warm, "segment", query, {}, None, 5) == _fresh(Path(warm.path), "segment", query, {}, None, 5)
    assert warm._dense.loads == 1
    # More than a third: loaded again.
    warm.apply(
        ChangeSet(
            files=[file_write(f"k{i}", [f"big {i}"], vectors=[_vector(200 + i)]) for i in range(80)], fingerprint=FP
        )
    )
    assert _search(warm, "segment", query, {}, None, 5) == _fresh(Path(warm.path), "segment", query, {}, None, 5)
    assert warm._dense.loads == 2
    warm.close()


def test_a_pruned_log_or_an_update_in_place_loads_again(tmp_path: Path, small: None) -> None:
    warm = _store_with(tmp_path, 30)
    other = SqliteStore.open(warm.path)
    query = _vector(2)
    _search(warm, "segment", query, {}, None, 5)
    # 45 one-line commits (under a third of the rows) while the warm store does not search: the
    # log (kept at 40 rows, pruned past 80) moves past the index's position.
    for i in range(45):
        other.apply(ChangeSet(files=[file_write(f"p{i}", [f"a{i}"], vectors=[_vector(60 + i)])], fingerprint=FP))
    assert changes.horizon(warm._conn) > 0
    assert _search(warm, "segment", query, {}, None, 5) == _fresh(Path(warm.path), "segment", query, {}, None, 5)
    assert warm._dense.loads == 2
    # memu never updates a vector in place; a statement that does makes every index reload.
    raw = sqlite3.connect(warm.path)
    with raw:
        raw.execute(
            "UPDATE vectors SET vector = ? WHERE rowid = (SELECT min(rowid) FROM vectors)",
            (np.asarray(_vector(7), np.float32).tobytes(),),
        )
    raw.close()
    assert _search(warm, "segment", query, {}, None, 5) == _fresh(Path(warm.path), "segment", query, {}, None, 5)
    assert warm._dense.loads == 3
    warm.close()
    other.close()


def test_a_rolled_back_write_logs_nothing(tmp_path: Path) -> None:
    from memu_core.errors import WriteConflict

    store = _store_with(tmp_path, 3)
    before = store._conn.execute("SELECT count(*), max(seq) FROM vector_changes").fetchone()
    assert before[0] == 15  # every vector of the first commit, logged in its transaction
    stale = file_write("n0", ["changed"], revision=99, vectors=[_vector(1)])
    with pytest.raises(WriteConflict):
        store.apply(ChangeSet(files=[file_write("new", ["x"], vectors=[_vector(2)]), stale], fingerprint=FP))
    assert store._conn.execute("SELECT count(*), max(seq) FROM vector_changes").fetchone() == before
    store.close()


def test_a_store_from_before_the_log_upgrades_and_patches(tmp_path: Path) -> None:
    from alembic import command
    from sqlalchemy import create_engine

    from memu_core._stores.sqlite import migrate

    path = tmp_path / "old.db"
    engine = create_engine(f"sqlite:///{path}")
    cfg = migrate._config()
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "0002")
    engine.dispose()
    old = sqlite3.connect(path)
    with old:  # a file and its vector, written before the log existed
        old.execute(
            "INSERT INTO files (id, user_id, agent_id, track, name, description, content, content_hash, revision, "
            "created_at, updated_at) VALUES ('f1', 'default', 'default', 'memory', 'legacy', '', 'old line', 'h', 1, "
            "'2026-01-01T00:00:00+00:00', '2026-01-01T00:00:00+00:00')"
        )
        old.execute(
            "INSERT INTO segments (id, file_id, user_id, agent_id, track, kind, ordinal, text, context) "
            "VALUES ('s1', 'f1', 'default', 'default', 'memory', 'line', 0, 'old line', '')"
        )
        old.execute("INSERT INTO meta (key, value) VALUES ('fingerprint', ?)", (fingerprint_key(FP),))
        old.execute(
            "INSERT INTO vectors VALUES ('segment', 's1', ?, ?)",
            (fingerprint_key(FP), np.asarray(_vector(0), np.float32).tobytes()),
        )
    old.close()
    store = SqliteStore.open(str(path))  # upgrades on open
    try:
        assert [h.id for h in store.search_segments_dense(_vector(0), {}, None, 3)] == ["s1"]
        assert store._conn.execute("SELECT count(*) FROM vector_changes").fetchone() == (0,)
        store.apply(ChangeSet(files=[file_write("new", ["new line"], vectors=[_vector(0)])], fingerprint=FP))
        got = _search(store, "segment", _vector(0), {}, None, 3)
        assert got == _fresh(path, "segment", _vector(0), {}, None, 3) and len(got) == 2
        assert store._dense.loads == 1
    finally:
        store.close()


def test_a_patch_that_fails_half_way_is_not_kept(tmp_path: Path, small: None) -> None:
    warm = _store_with(tmp_path, 30)
    other = SqliteStore.open(warm.path)
    query = _vector(4)
    _search(warm, "segment", query, {}, None, 5)
    (entry,) = warm._dense._entries.values()

    def no_memory(block: np.ndarray) -> None:
        raise MemoryError("the index could not grow")

    entry.index.add = no_memory  # the owners are already marked dead and listed when faiss fails
    other.apply(ChangeSet(files=[file_write("late", ["word 4"], vectors=[_vector(4)])], fingerprint=FP))
    with pytest.raises(MemoryError):
        _search(warm, "segment", query, {}, None, 5)
    got = _search(warm, "segment", query, {}, None, 5)
    assert got == _fresh(Path(warm.path), "segment", query, {}, None, 5)
    assert warm._dense.loads == 2  # loaded again, not answered from the half-patched index
    warm.close()
    other.close()
