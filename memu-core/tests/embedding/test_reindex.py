"""``memu reindex`` end to end on a real SQLite store, with the litellm embedder over real HTTP."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

# The embedder under test is the real litellm one over HTTP; memu-core installed alone skips.
pytest.importorskip("memu_embed_litellm")

from memu_core._cli.progress import Progress
from memu_core._compose import reindex_inputs
from memu_core._engine.reindex import ReindexProgress, reindex, run_reindex
from memu_core._stores.sqlite import SqliteStore
from memu_core.errors import ConfigError, FingerprintMismatch
from memu_core.testing.embedding_server import EmbeddingServer, hashed_vector
from memu_core.types import ChangeSet, FileWrite, Fingerprint, ResourceWrite, Scope, SegmentDraft

OLD = Fingerprint("hashing", "hash-64", 64)
"""The space the store starts in: the test server's hashed vectors at 64 dims, made in-process."""
NEW_MODEL = "hashed-32"
NEW = Fingerprint("openai-compatible", NEW_MODEL, 32)


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    for var in list(os.environ):
        if var.startswith("MEMU_") or var.lower() in ("http_proxy", "https_proxy", "all_proxy"):
            monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


@pytest.fixture
def server() -> Iterator[EmbeddingServer]:
    with EmbeddingServer(dimension=32) as s:
        yield s


def _text(f: int, i: int) -> str:
    return f"note {f}-{i}: the service uses port {1000 + 10 * f + i} for topic{(f + i) % 5}"


def _fill(path: Path, *, files: int = 12, lines: int = 10, dense: bool = True) -> int:
    """A store of ``files`` memory files of ``lines`` lines and one resource; returns the row count."""
    store = SqliteStore.open(str(path))
    writes = []
    for f in range(files):
        texts = [_text(f, i) for i in range(lines)]
        segments = [
            SegmentDraft(kind="line", ordinal=i, text=t, vector=hashed_vector(t, 64) if dense else None)
            for i, t in enumerate(texts)
        ]
        writes.append(
            FileWrite(
                scope=Scope(),
                track="memory",
                name=f"file-{f}",
                description=f"file {f}",
                content="\n".join(texts),
                content_hash=f"h{f}",
                expected_revision=None,
                segments=segments,
            )
        )
    resource_text = "the application entry point"
    resource = ResourceWrite(
        scope=Scope(),
        path="src/app.py",
        description=resource_text,
        vector=hashed_vector(resource_text, 64) if dense else None,
    )
    store.apply(ChangeSet(files=writes, resources=[resource], fingerprint=OLD if dense else None))
    store.close()
    return files * lines + 1


def _embedder(server: EmbeddingServer, **kw: object):  # type: ignore[no-untyped-def]
    from memu_embed_litellm import LitellmEmbedder

    return LitellmEmbedder("openai-compatible", base_url=server.base_url, model=NEW_MODEL, sleep=lambda _s: None, **kw)  # type: ignore[arg-type]


def _assert_consistent_in_new_space(path: Path) -> None:
    store = SqliteStore.open(str(path))
    try:
        assert store.fingerprint() == NEW
        assert store.texts_to_embed(NEW, 10_000) == []
        # The switch dropped every old vector: under the old space everything is missing again.
        assert len(store.texts_to_embed(OLD, 10_000)) == 121
        target = _text(7, 3)
        hits = store.search_segments_dense(hashed_vector(target, 32), {}, None, 3)
        assert store.fetch_segments([hits[0].id])[hits[0].id].text == target
        res = store.search_resources_dense(hashed_vector("application entry point", 32), {}, 1)
        assert res and store.fetch_resources([res[0].id])[res[0].id].path == "src/app.py"
    finally:
        store.close()


def test_a_vector_from_another_space_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "memu.sqlite3"
    _fill(path)
    store = SqliteStore.open(str(path))
    try:
        text = "a new line from another model"
        change = ChangeSet(
            files=[
                FileWrite(
                    scope=Scope(),
                    track="memory",
                    name="other",
                    description="",
                    content=text,
                    content_hash="x",
                    expected_revision=None,
                    segments=[SegmentDraft(kind="line", ordinal=0, text=text, vector=hashed_vector(text, 32))],
                )
            ],
            fingerprint=NEW,
        )
        with pytest.raises(FingerprintMismatch) as info:
            store.apply(change)
        assert "hash-64" in str(info.value) and NEW_MODEL in str(info.value)
        assert store.fingerprint() == OLD
        assert store.get_files(Scope(), [("memory", "other")]) == {}
    finally:
        store.close()


def test_reindex_switches_the_store_to_the_new_space(tmp_path: Path, server: EmbeddingServer) -> None:
    path = tmp_path / "memu.sqlite3"
    rows = _fill(path)
    store = SqliteStore.open(str(path))
    seen: list[ReindexProgress] = []
    try:
        report = reindex(store, _embedder(server), batch_size=25, progress=seen.append)
    finally:
        store.close()
    assert report.previous == OLD and report.fingerprint == NEW and report.switched
    assert (report.embedded, report.segments, report.resources) == (rows, rows - 1, 1)
    # The total comes first, before the slowest (first) chunk: a bar can show it from the start.
    assert report.chunks == 5 and [p.done for p in seen] == [0, 25, 50, 75, 100, 121]
    assert {p.total for p in seen} == {121}
    assert "was hashing/hash-64 (64 dims)" in report.summary()
    _assert_consistent_in_new_space(path)
    # Run again: nothing left to do, nothing sent.
    server.reset_counts()
    store = SqliteStore.open(str(path))
    try:
        again = reindex(store, _embedder(server))
    finally:
        store.close()
    assert (again.embedded, again.switched) == (0, False)
    assert "nothing to do" in again.summary()
    assert server.texts_received == 0


def test_lexical_only_to_dense_is_a_reindex(tmp_path: Path, server: EmbeddingServer) -> None:
    path = tmp_path / "memu.sqlite3"
    rows = _fill(path, dense=False)
    store = SqliteStore.open(str(path))
    try:
        assert store.fingerprint() is None
        report = reindex(store, _embedder(server), batch_size=64)
    finally:
        store.close()
    assert report.previous is None and report.embedded == rows
    assert "was lexical-only" in report.summary()
    _assert_consistent_in_new_space(path)


def test_equal_texts_are_embedded_once(tmp_path: Path, server: EmbeddingServer) -> None:
    path = tmp_path / "memu.sqlite3"
    store = SqliteStore.open(str(path))
    line = "shared line that appears in every file"
    store.apply(
        ChangeSet(
            files=[
                FileWrite(
                    scope=Scope(),
                    track="memory",
                    name=f"f{i}",
                    description="",
                    content=line,
                    content_hash=str(i),
                    expected_revision=None,
                    segments=[SegmentDraft(kind="line", ordinal=0, text=line)],
                )
                for i in range(5)
            ]
        )
    )
    try:
        report = reindex(store, _embedder(server))
    finally:
        store.close()
    assert report.embedded == 5 and report.texts_sent == 1


_CHILD = textwrap.dedent(
    """
    import sys
    from memu_core._engine.reindex import reindex
    from memu_core._stores.sqlite import SqliteStore
    from memu_embed_litellm import LitellmEmbedder

    path, base_url, model = sys.argv[1:4]
    embedder = LitellmEmbedder("openai-compatible", base_url=base_url, model=model, batch_size=5)
    embedder.fingerprint  # probe before the first chunk so every chunk costs one request
    print("ready", flush=True)
    store = SqliteStore.open(path)
    reindex(store, embedder, batch_size=5, progress=lambda p: print("staged", p.done, flush=True))
    print("finished", flush=True)
    """
)


def test_a_killed_reindex_keeps_the_old_space_and_resumes(tmp_path: Path, server: EmbeddingServer) -> None:
    path = tmp_path / "memu.sqlite3"
    rows = _fill(path)
    script = tmp_path / "child.py"
    script.write_text(_CHILD)
    # 25 chunks at 0.1 s each: the kill after the third lands with most of the work still to do.
    server.latency = 0.1
    child = subprocess.Popen(
        [sys.executable, str(script), str(path), server.base_url, NEW_MODEL],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ},
    )
    try:
        assert child.stdout is not None
        staged = 0
        for line in child.stdout:
            if line.startswith("staged"):
                staged = int(line.split()[1])
                if staged >= 15:
                    break
        assert staged >= 15, child.stderr.read() if child.stderr else ""
        child.send_signal(signal.SIGKILL)
    finally:
        child.wait(timeout=60)
        if child.stdout:
            child.stdout.close()
        if child.stderr:
            child.stderr.close()
    assert child.returncode == -signal.SIGKILL

    store = SqliteStore.open(str(path))
    try:
        # The old space is still live and searchable; the staged vectors wait unseen.
        assert store.fingerprint() == OLD
        target = _text(2, 4)
        hits = store.search_segments_dense(hashed_vector(target, 64), {}, None, 1)
        assert store.fetch_segments([hits[0].id])[hits[0].id].text == target
        remaining = len(store.texts_to_embed(NEW, 10_000))
        assert 0 < remaining <= rows - staged
        server.latency = 0.0
        server.reset_counts()
        report = reindex(store, _embedder(server), batch_size=50)
    finally:
        store.close()
    # Resumed: only what the killed run had not staged was embedded again.
    assert report.embedded == remaining
    assert server.texts_received <= remaining + 1  # +1: the dimension probe of a fresh embedder
    assert report.switched
    _assert_consistent_in_new_space(path)


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_run_reindex_command(tmp_path: Path, server: EmbeddingServer, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "memu.sqlite3"
    _fill(path)
    monkeypatch.setenv("MEMU_DB", str(path))
    monkeypatch.setenv("MEMU_EMBED_PROVIDER", "openai-compatible")
    monkeypatch.setenv("MEMU_BASE_URL", server.base_url)
    monkeypatch.setenv("MEMU_EMBED_MODEL", NEW_MODEL)
    monkeypatch.setenv("MEMU_EMBED_BATCH_SIZE", "16")
    out, err = io.StringIO(), _Terminal()
    store, embedder, chunk = reindex_inputs()
    assert chunk == 16 * 4  # MEMU_EMBED_BATCH_SIZE x the default MEMU_EMBED_CONCURRENCY
    with Progress("reindex", unit="rows", stream=err, terminal=False, quiet=0, every=1) as bar:
        code = run_reindex(store, embedder, out, err, batch_size=chunk, progress=lambda p: bar.update(p.done, p.total))
    assert code == 0
    assert out.getvalue().startswith("reindexed 121 rows (120 segments, 1 resources")
    # Piped progress: one count line per staged chunk, each with the total.
    lines = [line for line in err.getvalue().splitlines() if line.startswith("memu progress task=reindex")]
    counted = [line for line in lines if " done=0 " not in line]
    assert counted and all("total=121" in line for line in counted), err.getvalue()
    assert "done=121" in lines[-1]
    _assert_consistent_in_new_space(path)
    # Again with --json: nothing left to embed, said as one object.
    store, embedder, chunk = reindex_inputs()
    out = io.StringIO()
    assert run_reindex(store, embedder, out, io.StringIO(), batch_size=chunk, as_json=True) == 0
    report = json.loads(out.getvalue())
    assert (report["embedded"], report["switched"], report["embedder"]["model"]) == (0, False, NEW_MODEL)


def test_run_reindex_without_an_embedder_says_what_to_set(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMU_DB", str(tmp_path / "memu.sqlite3"))
    monkeypatch.setenv("MEMU_EMBED_PROVIDER", "none")
    with pytest.raises(ConfigError, match="set MEMU_EMBED_PROVIDER"):
        reindex_inputs()
