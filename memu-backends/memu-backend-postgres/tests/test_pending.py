"""Deferred HNSW inserts (ADR 0029): pending vectors answer like folded ones, folds are safe.

A commit writes its segment vectors outside the HNSW graph; a dense search reads them exactly
beside the index; a fold links them in, in batches, without changing any answer. The stores are
small enough that HNSW (``ef_search`` 200) finds the exact neighbours, so "answers like a fully
indexed store" is checked against the folded store, the old commit path and a brute-force scan.
"""

from __future__ import annotations

import dataclasses
import hashlib
import subprocess
import sys
import threading
import time
from collections.abc import Callable

import numpy as np
import pytest
from memu_backend_postgres import PostgresStore, _fold
from memu_backend_postgres._schema import HEAD_REVISION

from memu_core.types import ChangeSet, FileWrite, Fingerprint, Scope, SegmentDraft

DIM = 32
FP = Fingerprint("test", "pending", DIM)


def _vector(text: str) -> list[float]:
    """A fixed unit vector per text (seeded by its hash), so every store gets the same ones."""
    rng = np.random.default_rng(int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little"))
    vec = rng.standard_normal(DIM)
    return [float(v) for v in vec / np.linalg.norm(vec)]


def _file(name: str, lines: list[str], user: str = "default", track: str = "memory") -> FileWrite:
    content = "\n".join(lines)
    drafts = [SegmentDraft("line", i, line, vector=_vector(line)) for i, line in enumerate(lines)]
    return FileWrite(Scope(user), track, name, "", content, hashlib.sha256(content.encode()).hexdigest(), None, drafts)


def _batch(first: int, count: int) -> ChangeSet:
    files = [
        _file(
            f"f{i:03d}",
            [f"file {i} line {j}" for j in range(10)],
            user=("u1", "u2")[i % 2],
            track=("memory", "skill")[i % 3 == 0],
        )
        for i in range(first, first + count)
    ]
    return ChangeSet(files=files, fingerprint=FP)


_QUERIES = [
    (_vector(f"query {q}"), where, tracks, limit)
    for q in range(12)
    for where, tracks, limit in (({}, None, 5), ({}, None, 60), ({"user_id": "u1"}, ["memory"], 10))
]


def _answers(store: PostgresStore) -> list[list[tuple[str, float]]]:
    """Every query's hits as (text, rounded score): ids differ between stores, texts do not."""
    out = []
    for vector, where, tracks, limit in _QUERIES:
        hits = store.search_segments_dense(vector, where, tracks, limit)
        texts = store.fetch_segments([h.id for h in hits])
        out.append([(texts[h.id].text, round(h.score, 5)) for h in hits])
    return out


def _exact(files: list[FileWrite]) -> list[list[tuple[str, float]]]:
    """The same queries by brute force over every vector (what a perfect index returns)."""
    rows = [(w, d) for w in files for d in w.segments]
    matrix = np.array([d.vector for _, d in rows])
    out = []
    for vector, where, tracks, limit in _QUERIES:
        keep = [
            i
            for i, (w, _) in enumerate(rows)
            if w.scope.user_id == where.get("user_id", w.scope.user_id) and (tracks is None or w.track in tracks)
        ]
        scores = matrix[keep] @ np.asarray(vector)
        order = sorted(range(len(keep)), key=lambda k: -scores[k])[:limit]
        out.append([(rows[keep[k]][1].text, round(float(scores[k]), 5)) for k in order])
    return out


def _count(url: str, sql: str) -> int:
    import psycopg
    from sqlalchemy.engine import make_url

    dsn = make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(dsn) as conn:
        row = conn.execute(sql).fetchone()
        assert row is not None
        return int(row[0])


def test_a_pending_backlog_answers_like_the_folded_store(new_store_url: Callable[[], str]) -> None:
    first, second = _batch(0, 24), _batch(24, 24)
    store = PostgresStore.open(new_store_url(), background_fold=False)
    old_path = PostgresStore.open(new_store_url(), defer_graph=False, background_fold=False)
    try:
        store.apply(first)
        assert store.pending_vectors() == 240
        assert store.fold_pending(batch=100) == 240  # three batches
        store.apply(second)  # half the store linked, half pending
        assert store.pending_vectors() == 240
        assert store.stats({}).vectors == 480
        backlog = _answers(store)
        for change in (first, second):
            old_path.apply(change)
        assert old_path.pending_vectors() == 0  # the old path links every vector as it commits
        assert backlog == _answers(old_path)
        for got, want in zip(backlog, _exact(first.files + second.files), strict=True):
            assert [t for t, _ in got] == [t for t, _ in want]  # float32 in the store, float64 here
            assert [s for _, s in got] == pytest.approx([s for _, s in want], abs=1e-4)
        assert store.fold_pending() == 240 and store.pending_vectors() == 0
        assert _answers(store) == backlog
    finally:
        store.close()
        old_path.close()


def test_rewritten_and_deleted_pending_rows_leave_nothing_behind(pg_url: str) -> None:
    store = PostgresStore.open(pg_url, background_fold=False)
    try:
        store.apply(_batch(0, 4))
        stored = store.get_files(Scope("u2"), [("memory", "f001")])[("memory", "f001")]
        assert len(stored.segment_texts) == 10  # pending texts count as vectorised: never embedded twice
        rewrite = _file("f001", ["file 1 line 0", "a new line"], user="u2")
        store.apply(ChangeSet(files=[dataclasses.replace(rewrite, expected_revision=1)], fingerprint=FP))
        store.delete_file(Scope("u1"), "memory", "f002")
        assert store.pending_vectors() == 10 + 2 + 10
        store.fold_pending()
        assert _count(pg_url, "SELECT count(*) FROM memu_segments WHERE fp_id IS NOT NULL") == 22
        hits = store.search_segments_dense(_vector("a new line"), {}, None, 1)
        assert store.fetch_segments([hits[0].id])[hits[0].id].text == "a new line"
    finally:
        store.close()


_KILLED_FOLD = """
import sys, time
from memu_backend_postgres import PostgresStore, _fold
store = PostgresStore.open(sys.argv[1], background_fold=False)
with store._engine.begin() as conn:
    moved = _fold.fold_batch(conn, 1000)
    print(moved, flush=True)  # every row is linked; only the COMMIT remains
    time.sleep(120)
"""


def test_a_fold_killed_before_its_commit_loses_and_doubles_nothing(pg_url: str) -> None:
    store = PostgresStore.open(pg_url, background_fold=False)
    try:
        store.apply(_batch(0, 12))
        before = _answers(store)
        folder = subprocess.Popen(
            [sys.executable, "-c", _KILLED_FOLD, pg_url], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        assert folder.stdout is not None
        assert folder.stdout.readline().strip() == "120", folder.stderr.read() if folder.stderr else ""
        folder.kill()
        folder.wait(timeout=30)
        assert store.pending_vectors() == 120  # the killed batch rolled back
        assert _answers(store) == before
        assert store.fold_pending() == 120
        assert _count(pg_url, "SELECT count(*) FROM memu_segments") == 120
        assert _count(pg_url, "SELECT count(*) FROM memu_segments WHERE fp_id IS NOT NULL") == 120
        assert _answers(store) == before
    finally:
        store.close()


def test_concurrent_folds_take_turns(pg_url: str) -> None:
    store = PostgresStore.open(pg_url, background_fold=False)
    other = PostgresStore.open(pg_url, background_fold=False)
    try:
        store.apply(_batch(0, 10))
        moved: list[int] = []
        with store._engine.begin() as conn:
            assert _fold.fold_batch(conn, 30) == 30  # holds the fold lock until this block commits
            waiting = threading.Thread(target=lambda: moved.append(other.fold_pending()))
            waiting.start()
            time.sleep(0.5)
            assert waiting.is_alive() and not moved  # queued behind the first fold, not beside it
        waiting.join(timeout=30)
        assert moved == [70] and store.pending_vectors() == 0
    finally:
        store.close()
        other.close()


def test_a_commit_past_the_limit_folds_the_excess_before_returning(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_fold, "PENDING_LIMIT", 50)
    store = PostgresStore.open(pg_url, background_fold=False)
    try:
        store.apply(_batch(0, 4))
        assert store.pending_vectors() == 40
        store.apply(_batch(4, 4))
        assert store.pending_vectors() == 50
    finally:
        store.close()


def test_the_background_folder_links_a_commit_soon_after(pg_url: str) -> None:
    store = PostgresStore.open(pg_url)
    try:
        store.apply(_batch(0, 8))
        deadline = time.monotonic() + 20
        while store.pending_vectors() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert store.pending_vectors() == 0
    finally:
        store.close()


def test_a_store_at_0002_upgrades_on_open_and_db_upgrade_folds(new_database: Callable[[], str]) -> None:
    import sqlalchemy as sa
    from alembic import command
    from memu_backend_postgres import _meta
    from memu_backend_postgres._url import normalise_url
    from memu_backend_postgres.migrate import _alembic_config
    from pgvector.psycopg import register_vector

    url = new_database()
    engine = sa.create_engine(normalise_url(url))
    try:
        with engine.begin() as conn:
            command.upgrade(_alembic_config(conn), "0002")
            fp_id = _meta.fingerprint_id(conn, FP)
            _meta.make_live(conn, fp_id, DIM)
            register_vector(conn.connection.driver_connection)
            conn.execute(
                sa.text(
                    "INSERT INTO memu_files (id, user_id, agent_id, track, name, description, content, content_hash, "
                    "revision, created_at, updated_at) VALUES ('f1', 'default', 'default', 'memory', 'legacy', '', "
                    "'an old line', 'h', 1, now(), now())"
                )
            )
            conn.execute(
                sa.text(
                    "INSERT INTO memu_segments (id, file_id, user_id, agent_id, track, kind, ordinal, text, tsv, "
                    "ntokens, tf, fp_id, embedding) VALUES ('s1', 'f1', 'default', 'default', 'memory', 'line', 0, "
                    "'an old line', to_tsvector('simple', 'old line'), 2, '{}', :fp, :v)"
                ),
                {"fp": fp_id, "v": np.asarray(_vector("an old line"), dtype=np.float32)},
            )
    finally:
        engine.dispose()
    store = PostgresStore.open(url, background_fold=False)  # upgrades to head on open
    try:
        assert PostgresStore.schema_revision(url) == HEAD_REVISION == "0007"
        store.apply(ChangeSet(files=[_file("new", ["a new line"])], fingerprint=FP))
        assert store.pending_vectors() == 1
        for text in ("an old line", "a new line"):
            (hit,) = store.search_segments_dense(_vector(text), {}, None, 1)
            assert store.fetch_segments([hit.id])[hit.id].text == text and hit.score == pytest.approx(1.0)
        assert PostgresStore.upgrade_schema(url) == HEAD_REVISION  # `memu db upgrade` folds the backlog
        assert store.pending_vectors() == 0
    finally:
        store.close()
