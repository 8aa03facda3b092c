"""Benchmark the sqlite store at the size the per-turn budget is set for.

Builds a 10,000-file x 20-line store (fixed seed, developer-notes-like text), then times:

- a cold ``retrieve``-like process: interpreter start, open the store, one lexical search
  (the per-turn path; budget 500 ms);
- the same lexical search in a warm process;
- ``apply`` of a change set of 100 new 20-line files;
- with ``--dense``: random unit vectors (384 dims) for every segment, then a cold process that
  opens the store and runs one dense search (loads every vector), and warm dense searches.

Every search is checked once it is timed: it must return hits, and a lexical search must rank
the planted segment (one short line holding exactly the query's words, written with the store)
among its first :data:`TOP_K` hits; dense searches over random vectors are checked for hits only.
The run fails otherwise.

Run: ``python tests/bench/bench_store.py [--db PATH] [--runs 5]``. With ``--db`` pointing at an
existing benchmark store the build step is skipped (the planted file is added if it is missing).
Prints median and min-max of each.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _harness as h

from memu_core._stores.sqlite import SqliteStore
from memu_core.types import ChangeSet, FileWrite, Fingerprint, Scope, SegmentDraft

FILES = 10_000
LINES = 20
SEED = 20261203
QUERY = "how do we run the database migrations for the billing service?"
PLANTED = h.planted_line(QUERY)
"""The planted answer: one line holding exactly the query's words, in a file of its own."""
PLANTED_FILE = "planted-answer"
TOP_K = 10
"""Hits asked for per search; the planted segment must be among them."""


def _words(text: str) -> list[str]:
    return text.split()


_VERBS = _words("prefer use avoid run check keep move split cache retry pin log mock deploy review")
_TOOLS = _words(
    "pytest ruff mypy alembic postgres sqlite redis kafka docker nginx terraform helm poetry pip "
    "uvicorn fastapi celery grafana prometheus sentry github gitlab jenkins make nox tox black"
)
_THINGS = _words(
    "migrations fixtures settings secrets tokens retries timeouts indexes queries workers queues "
    "handlers endpoints schemas payloads logs metrics traces builds releases branches hooks tests "
    "containers volumes locks sessions cursors batches embeddings vectors prompts templates"
)
_SERVICES = _words("billing auth search ingest gateway scheduler notifier reports exporter sync")
_TEMPLATES = [
    "{verb} {tool} for the {service} {thing}",
    "the {service} service keeps its {thing} in {path}",
    "never {verb} {thing} in {service} without {tool}",
    "{tool} {thing} for {service} live under {path}",
    "when {service} {thing} fail, {verb} them with {tool} first",
    "user prefers {tool} over {tool2} for {thing}",
    "ticket {num}: {service} {thing} broke after the {tool} upgrade",
    "run `{tool} {thing}` before pushing to {service}",
]


def _line(rng: random.Random) -> str:
    return rng.choice(_TEMPLATES).format(
        verb=rng.choice(_VERBS),
        tool=rng.choice(_TOOLS),
        tool2=rng.choice(_TOOLS),
        thing=rng.choice(_THINGS),
        service=rng.choice(_SERVICES),
        path=f"{rng.choice(_SERVICES)}/{rng.choice(_THINGS)}/{rng.randint(1, 500)}.py",
        num=rng.randint(1000, 99999),
    )


def _file(rng: random.Random, name: str) -> FileWrite:
    lines = list(dict.fromkeys(_line(rng) for _ in range(LINES)))
    content = "\n".join(lines)
    return FileWrite(
        scope=Scope(),
        track="memory",
        name=name,
        description=f"notes about {rng.choice(_SERVICES)}",
        content=content,
        content_hash=hashlib.sha256(content.encode()).hexdigest(),
        expected_revision=None,
        segments=[SegmentDraft("line", i, t, context="## Notes") for i, t in enumerate(lines)],
    )


def _planted() -> FileWrite:
    return FileWrite(
        scope=Scope(),
        track="memory",
        name=PLANTED_FILE,
        description="",
        content=PLANTED,
        content_hash=hashlib.sha256(PLANTED.encode()).hexdigest(),
        expected_revision=None,
        segments=[SegmentDraft("line", 0, PLANTED, context="## Notes")],
    )


def build(path: Path) -> float:
    """Create the benchmark store (the generated files, then the planted one); return the seconds it took."""
    rng = random.Random(SEED)
    store = SqliteStore.open(str(path))
    start = time.perf_counter()
    batch = 500
    for first in range(0, FILES, batch):
        store.apply(ChangeSet(files=[_file(rng, f"note-{i:05d}") for i in range(first, first + batch)]))
    store.apply(ChangeSet(files=[_planted()]))
    store.close()
    return time.perf_counter() - start


def ensure_planted(path: Path) -> None:
    """Add the planted file to a reused ``--db`` store built before it existed."""
    store = SqliteStore.open(str(path))
    try:
        if not store.get_files(Scope(), [("memory", PLANTED_FILE)]):
            store.apply(ChangeSet(files=[_planted()]))
    finally:
        store.close()


def _summary(label: str, samples: list[float]) -> str:
    ms = [s * 1000 for s in samples]
    median = statistics.median(ms)
    return f"{label}: median {median:.1f} ms, min-max {min(ms):.1f}-{max(ms):.1f} ms (n={len(ms)})"


def cold_search(path: Path, runs: int) -> list[float]:
    """Wall time of a fresh interpreter that opens the store, runs one lexical search and prints
    the texts of its hits in rank order (checked once the process has ended)."""
    code = (
        "import json, sys\nfrom memu_core._stores.sqlite import SqliteStore\n"
        "s = SqliteStore.open(sys.argv[1])\n"
        f"hits = s.search_segments_lexical(sys.argv[2], {{}}, None, {TOP_K})\n"
        "segs = s.fetch_segments([h.id for h in hits])\n"
        "print(json.dumps([segs[h.id].text for h in hits if h.id in segs]))\n"
    )
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        run = subprocess.run(
            [sys.executable, "-c", code, str(path), QUERY], check=True, capture_output=True, text=True
        )
        out.append(time.perf_counter() - start)
        texts = json.loads(run.stdout)
        if not texts:
            raise h.WrongAnswer(f"cold lexical search for {QUERY!r}: no hits")
        if PLANTED not in texts[:TOP_K]:
            raise h.WrongAnswer(f"cold lexical search for {QUERY!r}: the planted segment is not in {texts}")
    return out


def warm_search(path: Path, runs: int) -> list[float]:
    """Lexical search in an already-open store (the warm server's case)."""
    # The same question every run: the search is timed, not the store's memory of its answer.
    store = h.without_answer_caches(SqliteStore.open(str(path)))
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        hits = store.search_segments_lexical(QUERY, {}, None, TOP_K)
        out.append(time.perf_counter() - start)
        h.check_hits(store, hits, "warm lexical search", planted=PLANTED, k=TOP_K)
    store.close()
    return out


def apply_100(path: Path, runs: int) -> list[float]:
    """One change set of 100 new 20-line files, per run."""
    rng = random.Random(SEED + 1)
    store = SqliteStore.open(str(path))
    out = []
    for run in range(runs):
        changes = ChangeSet(files=[_file(rng, f"bench-{time.time_ns()}-{run}-{i}") for i in range(100)])
        start = time.perf_counter()
        store.apply(changes)
        out.append(time.perf_counter() - start)
        for fw in changes.files:  # keep a reused --db store at its nominal size
            store.delete_file(fw.scope, fw.track, fw.name)
    store.close()
    return out


DENSE_FP = Fingerprint("bench", "random-unit", 384)


def add_vectors(path: Path) -> float:
    """Give every segment a random unit vector under :data:`DENSE_FP` (reindex-style)."""
    import numpy as np

    rng = np.random.default_rng(SEED)
    store = SqliteStore.open(str(path))
    start = time.perf_counter()
    while todo := store.texts_to_embed(DENSE_FP, 20_000):
        vecs = rng.standard_normal((len(todo), DENSE_FP.dimension)).astype(np.float32)
        vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
        store.store_vectors(DENSE_FP, [(k, i, v) for (k, i, _), v in zip(todo, vecs.tolist(), strict=True)])
    store.switch_fingerprint(DENSE_FP)
    store.close()
    return time.perf_counter() - start


def cold_dense(path: Path, runs: int) -> list[float]:
    """Wall time of a fresh interpreter that opens the store and runs one dense search."""
    code = (
        "import sys\nfrom memu_core._stores.sqlite import SqliteStore\n"
        "s = SqliteStore.open(sys.argv[1])\n"
        "q = [1.0] + [0.0] * 383\n"
        "print(len(s.search_segments_dense(q, {}, None, 10)))\n"
    )
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        run = subprocess.run([sys.executable, "-c", code, str(path)], check=True, capture_output=True, text=True)
        out.append(time.perf_counter() - start)
        # Random vectors: any hits are the right answer, none is the failure.
        if int(run.stdout.strip() or 0) == 0:
            raise h.WrongAnswer("cold dense search: no hits")
    return out


def warm_dense(path: Path, runs: int) -> list[float]:
    """Dense search in an open store whose matrix is already cached (the warm server)."""
    store = SqliteStore.open(str(path))
    query = [0.0] * 383 + [1.0]
    store.search_segments_dense(query, {}, None, 10)  # load once
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        hits = store.search_segments_dense(query, {}, None, 10)
        out.append(time.perf_counter() - start)
        h.check_hits(store, hits, "warm dense search")
    store.close()
    return out


def main() -> None:
    """Build (or reuse) the store and print the timings."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, help="reuse or create the benchmark store here")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--dense", action="store_true", help="also time dense search (adds ~330 MB)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = args.db or Path(tmp) / "bench.db"
        if not path.exists():
            print(f"building {FILES} files x {LINES} lines ... ", end="", flush=True)
            print(f"{build(path):.1f} s, {path.stat().st_size / 1e6:.0f} MB")
        else:
            ensure_planted(path)
        print(
            f"query {QUERY!r}; every search checked: hits, and (lexical) the planted line {PLANTED!r} "
            f"among the first {TOP_K}"
        )
        print(_summary("cold process: open + lexical search", cold_search(path, args.runs)))
        print(_summary("warm lexical search", warm_search(path, args.runs)))
        print(_summary("apply 100 new files x 20 lines", apply_100(path, args.runs)))
        if args.dense:
            if SqliteStore.open(str(path)).fingerprint() != DENSE_FP:
                print(f"adding random vectors ... {add_vectors(path):.1f} s")
            print(_summary("cold process: open + dense search", cold_dense(path, args.runs)))
            print(_summary("warm dense search (cached matrix)", warm_dense(path, args.runs)))


if __name__ == "__main__":
    main()
