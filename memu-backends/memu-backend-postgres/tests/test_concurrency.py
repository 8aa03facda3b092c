"""Several processes committing to overlapping files: no duplicates, no lost update, no torn read.

Each writer process increments counters kept in shared files the way the engine commits: read
the files (``get_files``), plan against their revisions, ``apply``, and on ``WriteConflict``
re-plan and retry. A lost update would leave a counter below the number of increments; a
duplicate row would show as two files for one key. A reader process checks meanwhile that every
file it reads has exactly the segments its content names (never half a commit).

Workers are separate interpreters started with ``python -c`` (not multiprocessing), so they do
not depend on how pytest named this module.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from memu_backend_postgres import PostgresStore

FILES = ["shared-a", "shared-b", "shared-c"]
WRITERS = 4
ROUNDS = 6

_COMMON = f"""
import hashlib, sys
from pathlib import Path
from memu_core.errors import WriteConflict
from memu_core.types import ChangeSet, FileWrite, Scope, SegmentDraft
from memu_backend_postgres import PostgresStore
FILES = {FILES!r}
"""

_WRITER = (
    _COMMON
    + f"""
def write(name, value, worker, revision):
    lines = [f"counter {{value}}", f"last writer {{worker}}", "a line every version shares"]
    content = "\\n".join(lines)
    return FileWrite(Scope(), "memory", name, "a shared counter", content,
                     hashlib.sha256(content.encode()).hexdigest(), revision,
                     [SegmentDraft("line", i, line) for i, line in enumerate(lines)])

url, worker = sys.argv[1], int(sys.argv[2])
store = PostgresStore.open(url)
conflicts = 0
for _ in range({ROUNDS}):
    names = FILES[worker % 3:] + FILES[:worker % 3]
    pair = names[:2]  # two files per commit, in an order that differs between workers
    while True:
        stored = store.get_files(Scope(), [("memory", n) for n in pair])
        writes = []
        for name in pair:
            found = stored.get(("memory", name))
            value = int(found.file.content.split("\\n")[0].split()[1]) + 1 if found else 1
            writes.append(write(name, value, worker, found.file.revision if found else None))
        try:
            store.apply(ChangeSet(files=writes))
            break
        except WriteConflict:
            conflicts += 1
store.close()
print(conflicts)
"""
)

_READER = (
    _COMMON
    + """
url, stop = sys.argv[1], Path(sys.argv[2])
store = PostgresStore.open(url)
reads = bad = 0
while not stop.exists():
    for stored in store.get_files(Scope(), [("memory", n) for n in FILES]).values():
        reads += 1
        if stored.segment_texts != frozenset(stored.file.content.split("\\n")):
            bad += 1
store.close()
print(reads, bad)
"""
)


def test_overlapping_writers_lose_nothing_and_readers_see_whole_commits(
    new_store_url: Callable[[], str], tmp_path: Path
) -> None:
    url = new_store_url()
    PostgresStore.open(url).close()  # migrate up front; the workers then race on data only
    stop = tmp_path / "stop"
    reader = subprocess.Popen(
        [sys.executable, "-c", _READER, url, str(stop)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", _WRITER, url, str(w)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for w in range(WRITERS)
    ]
    outputs = [p.communicate(timeout=300) for p in writers]
    stop.touch()
    reader_out, reader_err = reader.communicate(timeout=120)
    assert [p.returncode for p in writers] == [0] * WRITERS, [err for _, err in outputs]
    assert reader.returncode == 0, reader_err
    reads, bad = (int(x) for x in reader_out.split())
    assert reads > 0 and bad == 0

    store = PostgresStore.open(url)
    try:
        page, _ = store.list_files({}, None, 100)
        assert sorted(f.name for f in page) == FILES  # one row per key: no duplicates
        total = sum(int(f.content.split("\n")[0].split()[1]) for f in page)
        assert total == WRITERS * ROUNDS * 2  # every increment landed: no lost update
        assert sum(f.revision for f in page) == WRITERS * ROUNDS * 2
        shared = store.search_segments_lexical("shares", {}, None, 100)
        assert len(shared) == len(FILES)  # the unchanged line kept one row per file
    finally:
        store.close()
