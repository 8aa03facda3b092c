"""What the narrow lexical candidate pass saves at 100,000 files: in-process retrieve with it on and off.

    python tests/bench/bench_lexical.py [--sizes 100000] [--runs 20] [--before SRC]

On a large store a common word is in tens of thousands of lines, so the SQLite store scores only
the rows holding the query's rarest word (``memu_core.text.required_terms``); when those are still
more than the budget, narrower passes come first (``memu_core.text.candidate_rules``): the rows
holding every typed word, then the rows holding the rarest and another typed word; the store falls
back to a wider one only when a pass cannot fill the limit. This script times the engine's
``progressive_retrieve`` (lexical and hybrid, top 5, MiniLM query embedding, the cached benchmark
store of ``_harness.store_path``) with the narrow pass **on** (as shipped) and **off** (only the
last, wide rule), interleaved query by query so both see the same load, in wall time and in CPU
time of the retrieving process (the work itself, which a busy machine inflates less than the wall
clock). Every answer is checked (``_harness.check_answer``): an empty or wrong one fails the run.

``--before SRC`` (or ``MEMU_BENCH_BEFORE_SRC``) also times older code, interleaved with the others:
a child process whose ``memu_core`` comes from ``SRC`` (an export of an older ``memu-core/src``,
e.g. ``git archive 8766154 memu-core/src | tar -x -C DIR``) answers the same queries over the same
store. Its answers are *counted*, not checked, by default: the code before the lexical-search fix
(8766154) answers nothing on this store, so that column is the cost of an empty answer, not of a
search. With ``--check-before`` they are checked like the others (for code that does answer, such
as the commit before a speed-up), and the column is a search figure.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import _harness as h

MODES = ("lexical", "hybrid")
TOP_K = 5
SETTINGS = ("on", "off", "before")


@contextlib.contextmanager
def narrow_pass(on: bool) -> Iterator[None]:
    """With ``on`` false, the SQLite store gets only the wide candidate rule (the last one)."""
    from memu_core import text
    from memu_core._stores.sqlite import lexical

    shipped = lexical.candidate_rules
    if not on:

        def wide_only(*args: Any, **kwargs: Any) -> list[text.CandidateRule]:
            return shipped(*args, **kwargs)[-1:]

        lexical.candidate_rules = wide_only  # type: ignore[assignment]
    try:
        yield
    finally:
        lexical.candidate_rules = shipped  # type: ignore[assignment]


def narrowed(db: Path, queries: Sequence[str]) -> int:
    """How many of ``queries`` get a narrow pass before the wide one on ``db`` (the rest are unchanged)."""
    from memu_core._engine.engine import EXPAND_FORMS
    from memu_core._stores.sqlite import lexical
    from memu_core.text import expand_query, lexical_terms

    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        count = 0
        for q in queries:
            terms, typed = lexical_terms(expand_query(q) if EXPAND_FORMS else q)
            count += len(lexical.segment_matches(conn, terms, typed)) > 1
        return count
    finally:
        conn.close()


# The code before the fix, in its own process: one JSON request per line on stdin, one JSON
# answer per line on stdout (wall and CPU seconds of the retrieve, and what it found).
BEFORE = """
import json, sys, time
from memu_core._engine.engine import LocalEngine
from memu_core._stores.sqlite.store import SqliteStore
from memu_embed_local import LocalEmbedder

engine = LocalEngine(SqliteStore.open(sys.argv[1]), embedder=LocalEmbedder())
print(json.dumps({"ready": True}), flush=True)
for line in sys.stdin:
    ask = json.loads(line)
    cpu, wall = time.process_time(), time.perf_counter()
    result = engine.progressive_retrieve(ask["query"], top_k=ask["top_k"], mode=ask["mode"])
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    lexical = result if ask["mode"] == "lexical" else engine.progressive_retrieve(
        ask["query"], top_k=ask["top_k"], mode="lexical"
    )
    print(json.dumps({"wall": wall, "cpu": cpu, "mode": result["mode"], "segments": len(result["segments"]),
                      "lexical_segments": len(lexical["segments"]), "result": result}), flush=True)
"""


class Before:
    """The retrieve of the code in ``src``, over ``db``, in a child process kept for the whole run."""

    def __init__(self, src: Path, db: Path) -> None:
        env = {**os.environ, "PYTHONPATH": str(src), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
        self._proc = subprocess.Popen(
            [h.python(), "-c", BEFORE, str(db)],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self._read()

    def _read(self) -> dict[str, Any]:
        assert self._proc.stdout is not None
        line = self._proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the code before the fix stopped (exit {self._proc.wait()})")
        answer: dict[str, Any] = json.loads(line)
        return answer

    def retrieve(self, query: str, mode: str) -> dict[str, Any]:
        """One retrieve: ``wall``, ``cpu``, ``segments`` and ``lexical_segments`` (its lexical half)."""
        assert self._proc.stdin is not None
        self._proc.stdin.write(json.dumps({"query": query, "mode": mode, "top_k": TOP_K}) + "\n")
        self._proc.stdin.flush()
        return self._read()

    def close(self) -> None:
        """End the child (closing its input ends its loop)."""
        if self._proc.stdin is not None:
            self._proc.stdin.close()
        self._proc.wait(60)


def interleaved(
    engine: Any, queries: Sequence[str], runs: int, before: Before | None, check_before: bool = False
) -> tuple[dict[tuple[str, str], tuple[list[float], list[float]]], dict[str, int]]:
    """For each query in turn, every mode: narrow pass on, off, then the code before the fix.

    Returns ``(mode, setting) -> (wall samples, CPU samples)`` and, for the code before the fix,
    how many answers were empty (``mode``) and how many hybrid answers had an empty lexical half.
    """
    settings = SETTINGS if before is not None else SETTINGS[:2]
    samples: dict[tuple[str, str], tuple[list[float], list[float]]] = {
        (m, s): ([], []) for m in MODES for s in settings
    }
    empty = {"lexical": 0, "hybrid": 0, "hybrid, lexical half": 0}
    for i in range(runs + 2):  # the first two rounds warm up
        query = queries[i % len(queries)]
        for mode in MODES:
            for setting in settings:
                if setting == "before":
                    assert before is not None
                    got = before.retrieve(query, mode)
                    wall, cpu = got["wall"], got["cpu"]
                    if check_before:
                        h.check_answer(got["result"], query, TOP_K, mode=mode)
                    if i >= 2:
                        empty[mode] += got["segments"] == 0
                        if mode == "hybrid":
                            empty["hybrid, lexical half"] += got["lexical_segments"] == 0
                else:
                    with narrow_pass(setting == "on"):
                        cpu, wall = time.process_time(), time.perf_counter()
                        result = engine.progressive_retrieve(query, top_k=TOP_K, mode=mode)
                        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
                    h.check_answer(result, query, TOP_K, mode=mode)
                if i >= 2:
                    samples[(mode, setting)][0].append(wall)
                    samples[(mode, setting)][1].append(cpu)
    return samples, empty


def paired(on: list[float], off: list[float]) -> str:
    """The median of the per-query changes from ``off`` to ``on``, in percent."""
    import statistics

    return f"{statistics.median((a - b) / b * 100 for a, b in zip(on, off, strict=True)):+.0f}%"


def main(argv: Sequence[str] | None = None) -> int:
    """Print the on/off (and, with ``--before``, before-the-fix) figures as Markdown."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000", help="store sizes in recall files, comma-separated")
    parser.add_argument("--runs", type=int, default=20, help="timed retrieves per mode and setting")
    parser.add_argument(
        "--before",
        type=Path,
        default=os.environ.get("MEMU_BENCH_BEFORE_SRC") or None,
        help="a memu-core/src of older code to time beside (default: $MEMU_BENCH_BEFORE_SRC)",
    )
    parser.add_argument(
        "--before-label",
        default=os.environ.get("MEMU_BENCH_BEFORE_LABEL") or "the code of `--before`",
        help="what --before is, for the table (default: $MEMU_BENCH_BEFORE_LABEL)",
    )
    parser.add_argument(
        "--check-before",
        action="store_true",
        help="check the answers of --before like the others (for code that answers)",
    )
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",") if s]
    runs = max(args.runs, 3)

    from memu_embed_local import LocalEmbedder

    from memu_core._engine.engine import LocalEngine
    from memu_core._stores.sqlite.store import SqliteStore

    queries = h.queries(h.PLANTED_QUERIES)
    print("## Lexical candidate pass: narrow pass on and off\n")
    print(h.machine_line(), "\n")
    print(
        f"In-process `progressive_retrieve` (top {TOP_K}, MiniLM query embedding, stand-in store vectors), "
        f"{runs} timed queries per cell after 2 warm-up rounds, the settings interleaved query by query. "
        "**On** is the shipped code; **off** keeps only the wide candidate rule (`text.candidate_rules` "
        "minus its narrow passes: every typed word, then the rarest and another). Every on/off answer "
        "is checked: segments and files, and the query's "
        f"planted file among the first {TOP_K}. Wall time, then the CPU time of the retrieving process "
        "(all its threads); *paired* is the median of the per-query changes from off to on.\n",
        flush=True,
    )
    if args.before is not None:
        print(
            f"**Before** is {args.before_label}, answering the same queries over the same store in "
            "a process of its own, interleaved with the others. "
            + (
                "Its answers are checked like the others.\n"
                if args.check_before
                else "Its answers are counted, not checked: an empty answer costs little, so that column "
                "is not a search figure.\n"
            ),
            flush=True,
        )
    embedder = LocalEmbedder()
    rows = []
    notes = []
    for size in sizes:
        db = h.store_path(size, vectors=True)
        # On and off ask the same question in turn: neither may answer from the other's caches.
        engine = h.without_answer_caches(LocalEngine(SqliteStore.open(str(db)), embedder=embedder))
        before = Before(args.before, db) if args.before is not None else None
        try:
            stats, empty = interleaved(engine, queries, runs, before, args.check_before)
        finally:
            engine.close()
            if before is not None:
                before.close()
        timed = list(dict.fromkeys(queries[i % len(queries)] for i in range(2, runs + 2)))
        notes.append(
            f"At {size:,} files the narrow pass applies to {narrowed(db, timed)} of the {len(timed)} distinct "
            "queries timed (the others run the wide rule alone either way)."
        )
        if before is not None:
            notes.append(
                f"Before, at {size:,} files: {empty['lexical']} of {runs} lexical answers empty; "
                f"{empty['hybrid']} of {runs} hybrid answers empty, {empty['hybrid, lexical half']} of {runs} "
                "with an empty lexical half (dense results only)."
            )
        for mode in MODES:
            for clock, which in (("wall", 0), ("CPU", 1)):
                on, off = stats[(mode, "on")][which], stats[(mode, "off")][which]
                row = [f"{size:,}", mode, clock, h.Stats(on).cell(), h.Stats(off).cell(), paired(on, off)]
                if before is not None:
                    row.append(h.Stats(stats[(mode, "before")][which]).cell())
                rows.append(row)
    header = ["files", "mode", "clock", "narrow pass on (shipped)", "narrow pass off", "on vs off, paired"]
    if args.before is not None:
        header.append("before (answers checked)" if args.check_before else "before (answers counted, not checked)")
    print("\n".join(notes), "\n")
    print(h.table(header, rows), flush=True)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    sys.exit(main())
