"""The SQLite store's dense search right after a write: the index patched, against loaded again.

Run: ``python tests/bench/bench_dense_patch.py [--files 10000] [--rounds 15]``

One warm ``SqliteStore`` over a copy of ``bench_serve``'s cached store (10,000 files, ~210,000
stand-in segment vectors, float16 index with exact re-scoring). Each round, in turn:

- **no write**: a dense search (top 100) of a random unit query on the warm index (the floor);
- **a write, then a search, patched**: another connection (as another process would) commits a
  new 5-line file with its vectors, then the warm store searches: its index drops and appends the
  rows the commit touched (ADR 0031);
- **the same, loaded again**: the same query over the same rows by a store opened afresh, whose
  index is loaded from the whole store: what every search after a write cost before ADR 0031.

Then what the log costs a writer: one commit of ``--commit-files`` new 20-line files with vectors
into a new store, with the log's triggers and with them dropped (the peer), runs interleaved.

Each figure is the CPU time (user + system of this process) and the wall time of the search
call alone; the commit is not timed. The patched answer (owners, order and scores) is checked
against the loaded one before either time counts. Medians with min-max over the rounds.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import _harness as h
import bench_serve
import numpy as np

LINES = 5
LIMIT = 100


def _timed(store: Any, query: list[float]) -> tuple[list[Any], float, float]:
    """One dense search's hits, CPU ms and wall ms."""
    cpu, wall = time.process_time(), time.perf_counter()
    hits = store.search_segments_dense(query, {}, None, LIMIT)
    return hits, (time.process_time() - cpu) * 1000, (time.perf_counter() - wall) * 1000


def _cell(values: list[float]) -> str:
    return f"{statistics.median(values):.1f} ({min(values):.1f}-{max(values):.1f})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--commit-files", type=int, default=1_000, help="Files in the commit-cost rows (0: skip).")
    parser.add_argument("--commit-runs", type=int, default=3)
    args = parser.parse_args()

    import faiss

    from memu_core._stores.sqlite import SqliteStore
    from memu_core.testing.store_contract import file_write
    from memu_core.types import ChangeSet

    faiss.omp_set_num_threads(1)  # as in the warm server (single_threaded_math)
    print(h.machine_line())
    print(f"load average at start: {os.getloadavg()}")
    tmp = Path(tempfile.mkdtemp(prefix="mudp", dir="/tmp"))
    db = tmp / "store.db"
    shutil.copyfile(bench_serve.store(args.files), db)
    warm, writer = SqliteStore.open(str(db)), SqliteStore.open(str(db))
    fp = warm.fingerprint()
    assert fp is not None, "the bench store has no vectors"
    rng = np.random.default_rng(7)

    def unit(n: int) -> list[list[float]]:
        rows = rng.standard_normal((n, fp.dimension)).astype(np.float32)
        return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).tolist()  # type: ignore[no-any-return]

    def commit(n: int) -> None:
        lines = [f"- patch note {n} line {j}" for j in range(LINES)]
        writer.apply(ChangeSet(files=[file_write(f"patch-{n}", lines, vectors=unit(LINES))], fingerprint=fp))

    try:
        _, load_cpu, load_wall = _timed(warm, unit(1)[0])
        print(f"first search (index loaded): {load_cpu:.0f} ms CPU, {load_wall:.0f} ms wall", flush=True)
        samples: dict[str, tuple[list[float], list[float]]] = {k: ([], []) for k in ("floor", "patched", "loaded")}
        for n in range(args.rounds):
            query = unit(1)[0]
            hits, cpu, wall = _timed(warm, query)
            if len(hits) != LIMIT:  # checked against a loaded index below, after each write
                raise h.WrongAnswer("a dense search without its 100 hits")
            samples["floor"][0].append(cpu)
            samples["floor"][1].append(wall)
            commit(n)
            patched, cpu, wall = _timed(warm, query)
            samples["patched"][0].append(cpu)
            samples["patched"][1].append(wall)
            fresh = SqliteStore.open(str(db))  # the same rows, an index loaded from the whole store
            loaded, cpu, wall = _timed(fresh, query)
            fresh.close()
            if [(x.id, x.score) for x in patched] != [(x.id, x.score) for x in loaded]:
                raise h.WrongAnswer("the patched index answers differently from a freshly loaded one")
            samples["loaded"][0].append(cpu)
            samples["loaded"][1].append(wall)
            print(f"  round {n + 1}/{args.rounds}", file=sys.stderr, flush=True)
        print(f"patches {warm._dense.patches}, loads {warm._dense.loads} (the first search only)")
        labels = {
            "floor": "dense search, no write (floor)",
            "patched": f"a {LINES}-line commit by another connection, then a dense search: patched",
            "loaded": "the same, index loaded from the whole store (before ADR 0031)",
        }
        rows = [[labels[k], _cell(v[0]), _cell(v[1])] for k, v in samples.items()]
        print()
        print(h.table(["search (top 100, ~210,000 vectors)", "CPU ms", "wall ms"], rows))
    finally:
        warm.close()
        writer.close()
        shutil.rmtree(tmp, ignore_errors=True)
    if args.commit_files:
        commit_cost(args.commit_files, args.commit_runs, fp)
    print(f"\nload average at end: {os.getloadavg()}")
    return 0


def commit_cost(files: int, runs: int, fp: Any) -> None:
    """What the log's triggers add to a commit: one commit of ``files`` new 20-line files with
    vectors into a new store, with the triggers and with them dropped, runs interleaved."""
    from memu_core._stores.sqlite import SqliteStore
    from memu_core.testing.store_contract import file_write
    from memu_core.types import ChangeSet

    rng = np.random.default_rng(9)
    writes = []
    for f in range(files):
        block = rng.standard_normal((20, fp.dimension)).astype(np.float32)
        vectors = (block / np.linalg.norm(block, axis=1, keepdims=True)).tolist()
        writes.append(file_write(f"c{f}", [f"- file {f} line {j} of the commit" for j in range(20)], vectors=vectors))
    changes = ChangeSet(files=writes, fingerprint=fp)
    samples: dict[str, list[float]] = {"with the change log": [], "triggers dropped (peer)": []}
    for run in range(runs):
        for label in samples:
            tmp = Path(tempfile.mkdtemp(prefix="mudc", dir="/tmp"))
            store = SqliteStore.open(str(tmp / "c.db"))
            if label.startswith("triggers"):
                for name in ("vectors_log_insert", "vectors_log_delete", "vectors_log_update"):
                    store._conn.execute(f"DROP TRIGGER {name}")
            started = time.perf_counter()
            store.apply(changes)
            samples[label].append(time.perf_counter() - started)
            logged = store._conn.execute("SELECT count(*) FROM vector_changes").fetchone()[0]
            store.close()
            shutil.rmtree(tmp, ignore_errors=True)
            if logged != (files * 20 if label.startswith("with") else 0):
                raise h.WrongAnswer(f"{label}: {logged} log rows")
        print(f"  commit run {run + 1}/{runs}", file=sys.stderr, flush=True)
    rows = [[label, _cell([x * 1000 for x in v])] for label, v in samples.items()]
    print()
    print(h.table([f"commit of {files:,} new files x 20 lines with vectors, new store", "wall ms"], rows))


if __name__ == "__main__":
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    sys.exit(main())
