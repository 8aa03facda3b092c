"""Writers side by side (ADR 0028): no global lock, nothing lost or doubled, a killed commit leaves nothing.

Workers are separate interpreters started with ``python -c`` (as in ``test_concurrency``), so a
kill is a real crash of a client in the middle of its transaction.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from memu_backend_postgres import PostgresStore, _stats

from memu_core.errors import WriteConflict
from memu_core.types import ChangeSet, FileWrite, Fingerprint, Scope

WORKERS = 4
COMMITS = 5
FILES_PER_COMMIT = 6

# Shared by the test and its worker processes: files with a hashed 16-dimension vector per line.
_HELPERS = """
import hashlib, math
from memu_core.types import FileWrite, Fingerprint, Scope, SegmentDraft
FP = Fingerprint("test", "writers", 16)

def vectorise(text):
    vec = [0.0] * 16
    for word in text.lower().split():
        digest = hashlib.sha256(word.encode()).digest()
        vec[digest[0] % 16] += 1.0 if digest[1] % 2 else -1.0
    norm = math.sqrt(sum(v * v for v in vec)) or 1.0
    return [v / norm for v in vec] if any(vec) else [1.0] + [0.0] * 15

def file_write(name, lines, expected=None):
    content = "\\n".join(lines)
    drafts = [SegmentDraft("line", i, line, vector=vectorise(line)) for i, line in enumerate(lines)]
    return FileWrite(Scope(), "memory", name, "", content, hashlib.sha256(content.encode()).hexdigest(),
                     expected, drafts)
"""
_namespace: dict[str, object] = {}
exec(_HELPERS, _namespace)
FP: Fingerprint = _namespace["FP"]  # type: ignore[assignment]
file_write: Callable[..., FileWrite] = _namespace["file_write"]  # type: ignore[assignment]
vectorise: Callable[[str], list[float]] = _namespace["vectorise"]  # type: ignore[assignment]

_WRITER = (
    _HELPERS
    + f"""
import sys
from memu_core.types import ChangeSet
from memu_backend_postgres import PostgresStore
url, worker = sys.argv[1], int(sys.argv[2])
store = PostgresStore.open(url)
for c in range({COMMITS}):
    files = [file_write(f"w{{worker}}-c{{c}}-f{{i}}", [f"worker {{worker}} line {{i}}", "a line every file shares",
             f"commit {{c}} of worker {{worker}}"]) for i in range({FILES_PER_COMMIT})]
    store.apply(ChangeSet(files=files, fingerprint=FP))
store.close()
"""
)

_KILLED = (
    _HELPERS
    + """
import sys, time
from pathlib import Path
from memu_core.types import ChangeSet
from memu_backend_postgres import PostgresStore, _stats
url, flag = sys.argv[1], Path(sys.argv[2])

def stalled(self, conn):  # every row is written; only the statistics and the COMMIT remain
    flag.touch()
    time.sleep(120)

_stats.Delta.flush = stalled
store = PostgresStore.open(url)
files = [file_write(f"doomed-{i}", [f"doomed line {i}", f"another doomed line {i}"]) for i in range(300)]
store.apply(ChangeSet(files=files, fingerprint=FP))
"""
)


def _consistent(url: str) -> None:
    """The BM25 statistics equal a recount from the rows, and every segment belongs to a file."""
    import psycopg
    from sqlalchemy.engine import make_url

    dsn = make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(dsn) as conn:
        kept = dict(conn.execute("SELECT term, df FROM memu_terms WHERE kind = 's' AND df <> 0").fetchall())
        counted = dict(
            conn.execute(
                "SELECT u.lexeme, count(*) FROM memu_segments x CROSS JOIN LATERAL unnest(x.tsv) u GROUP BY 1"
            ).fetchall()
        )
        assert kept == counted
        meta = conn.execute("SELECT segment_rows, segment_tokens FROM memu_meta").fetchone()
        assert meta == conn.execute("SELECT count(*), coalesce(sum(ntokens), 0) FROM memu_segments").fetchone()


def test_concurrent_writers_on_their_own_files_lose_and_double_nothing(new_store_url: Callable[[], str]) -> None:
    url = new_store_url()
    store = PostgresStore.open(url)
    try:
        store.apply(ChangeSet(files=[file_write("seed", ["a first line"])], fingerprint=FP))  # indexes exist
        workers = [
            subprocess.Popen([sys.executable, "-c", _WRITER, url, str(w)], stderr=subprocess.PIPE, text=True)
            for w in range(WORKERS)
        ]
        errors = [p.communicate(timeout=240)[1] for p in workers]
        assert [p.returncode for p in workers] == [0] * WORKERS, errors
        names: list[str] = []
        after = None
        while True:
            page, after = store.list_files({}, after, 100)
            names += [f.name for f in page]
            if after is None:
                break
        expected = {f"w{w}-c{c}-f{i}" for w in range(WORKERS) for c in range(COMMITS) for i in range(FILES_PER_COMMIT)}
        assert sorted(names) == sorted(expected | {"seed"})  # every file once: none lost, none doubled
        assert store.generation() == 1 + WORKERS * COMMITS
        shared = store.search_segments_lexical("every file shares", {}, None, 1000)
        assert len(shared) == len(expected)
        assert len(store.search_segments_dense(vectorise("worker 1 line 2"), {}, None, 10)) == 10
    finally:
        store.close()
    _consistent(url)


def test_a_writer_does_not_wait_for_another_on_other_files(pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    store = PostgresStore.open(pg_url)
    try:
        store.apply(ChangeSet(files=[file_write("held", ["one"])], fingerprint=FP))
        # Writer A stalls after writing its rows, before its last step (statistics, COMMIT):
        # the moment a long commit spends inserting thousands of rows.
        reached, release = threading.Event(), threading.Event()
        flush = _stats.Delta.flush

        def stalled(self: _stats.Delta, conn: Any) -> None:
            if threading.current_thread().name == "writer-a":
                reached.set()
                release.wait(60)
            flush(self, conn)

        monkeypatch.setattr(_stats.Delta, "flush", stalled)
        outcome: dict[str, BaseException | None] = {}

        def commit(label: str, write: FileWrite) -> None:
            try:
                store.apply(ChangeSet(files=[write], fingerprint=FP))
                outcome[label] = None
            except BaseException as exc:
                outcome[label] = exc

        a = threading.Thread(target=commit, args=("a", file_write("held", ["two"], 1)), name="writer-a")
        a.start()
        try:
            assert reached.wait(60)
            # Writer B, another file: with one global writer lock it would wait for A's COMMIT.
            b = threading.Thread(target=commit, args=("b", file_write("free", ["three"])))
            b.start()
            b.join(20)
            assert not b.is_alive() and outcome["b"] is None, "a commit to another file waited for A"
            # Writer C, A's file: waits for A's row lock, then finds the revision A made.
            c = threading.Thread(target=commit, args=("c", file_write("held", ["four"], 1)))
            c.start()
            c.join(1.0)
            assert c.is_alive(), "a commit to the same file did not wait for A"
        finally:
            release.set()
            a.join(30)
        c.join(30)
        assert outcome["a"] is None
        assert isinstance(outcome["c"], WriteConflict)
        stored = store.get_files(Scope(), [("memory", "held"), ("memory", "free")])
        assert stored[("memory", "held")].file.content == "two"
        assert stored[("memory", "free")].file.content == "three"
    finally:
        store.close()
    _consistent(pg_url)


def test_a_commit_killed_half_way_leaves_nothing(pg_url: str, tmp_path: Path) -> None:
    store = PostgresStore.open(pg_url)
    try:
        store.apply(ChangeSet(files=[file_write("before", ["a line from before"])], fingerprint=FP))
        generation = store.generation()
        flag = tmp_path / "rows-written"
        victim = subprocess.Popen([sys.executable, "-c", _KILLED, pg_url, str(flag)], stderr=subprocess.PIPE)
        deadline = time.monotonic() + 120
        while not flag.exists():
            assert victim.poll() is None, victim.communicate()[1]
            assert time.monotonic() < deadline, "the commit never reached its last step"
            time.sleep(0.05)
        os.kill(victim.pid, signal.SIGKILL)
        victim.wait(10)
        # The server rolls the orphaned transaction back once it sees the client gone; until
        # then its row locks hold, so a commit to one of its files is the probe that waits.
        store.apply(ChangeSet(files=[file_write("doomed-0", ["written after the crash"])], fingerprint=FP))
        assert store.generation() == generation + 1
        page, _ = store.list_files({}, None, 1000)
        assert sorted(f.name for f in page) == ["before", "doomed-0"]
        assert store.search_segments_lexical("doomed", {}, None, 10) == []
    finally:
        store.close()
    _consistent(pg_url)
