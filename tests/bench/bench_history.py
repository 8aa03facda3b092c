"""Issue 19: what keeping file history costs a commit into a 10,000-file store.

    python tests/bench/bench_history.py [--files 10000] [--changed 100] [--runs 7]

One base store of ``--files`` files (five lines each, every file already with a past version)
is built once. Each run copies it, opens the engine with ``MEMU_HISTORY_KEEP`` 20 (history on)
or 0 (off), and times one commit of ``--changed`` changed files (one line edited, one added);
on and off alternate, so load on the machine falls on both alike. Two embedders: none (lexical
only: the store write is all there is, so history's share is the largest it can be) and the
in-process hashing embedder (vectors written too). Every timed commit is checked before it
counts: the files hold the new content, and history holds the previous version (on) or only the base's
own past version (off). Prints median and min-max per row and the on/off ratio of the medians.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _harness import Stats, machine_line, table

from memu_core._engine.engine import LocalEngine
from memu_core._stores.sqlite.store import SqliteStore
from memu_core.interfaces import Embedder
from memu_core.testing.embedders import HashingEmbedder


def _content(i: int, edit: str = "") -> str:
    lines = [f"- step {j} of procedure {i}: run tool-{i}-{j} before deploying service {i}" for j in range(5)]
    if edit:
        lines[2] = f"- step 2 of procedure {i}: {edit}"
        lines.append(f"- {edit}: confirm with the on-call engineer of service {i}")
    return "\n".join(lines)


def _files(start: int, stop: int, edit: str = "") -> list[dict[str, str]]:
    return [
        {"name": f"proc-{i}", "description": f"procedure {i}", "content": _content(i, edit)} for i in range(start, stop)
    ]


def build_base(path: Path, files: int, embedder: Embedder | None) -> None:
    """The base store: every file committed, then committed changed once (one past version each)."""
    engine = LocalEngine(SqliteStore.open(str(path)), embedder=embedder, history_keep=20)
    try:
        for edit in ("", "base"):
            for start in range(0, files, 1000):
                engine.commit_results(recall_files=_files(start, min(start + 1000, files), edit))
    finally:
        engine.close()


def one_commit(
    base: Path, work: Path, keep: int, changed: int, embedder: Embedder | None, tag: str
) -> tuple[float, float]:
    """Copy the base store, commit ``changed`` changed files with history ``keep``; check; return
    ``(wall, cpu)`` seconds (CPU time of this process: less moved by other work on the machine)."""
    for suffix in ("", "-wal", "-shm"):
        Path(str(work) + suffix).unlink(missing_ok=True)
    shutil.copyfile(base, work)
    engine = LocalEngine(SqliteStore.open(str(work)), embedder=embedder, history_keep=keep)
    try:
        batch = _files(0, changed, tag)
        engine.store.fingerprint()  # the connection is open and the schema checked before timing
        began, cpu = time.perf_counter(), time.process_time()
        result = engine.commit_results(recall_files=batch)
        took = (time.perf_counter() - began, time.process_time() - cpu)
        if result["stats"]["files_written"] != changed:
            raise AssertionError(f"wrote {result['stats']['files_written']} files, expected {changed}")
        for probe in (0, changed - 1):
            versions = engine.history(f"proc-{probe}")
            if versions[0].content != _content(probe, tag):
                raise AssertionError(f"proc-{probe} does not hold the committed content")
            past = [v.version for v in versions[1:]]
            # The base's own past version stays either way; only history on adds the replaced one.
            if past != ([2, 1] if keep else [1]):
                raise AssertionError(f"proc-{probe}: past versions {past} with keep={keep}")
    finally:
        engine.close()
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--changed", type=int, default=100)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    print(machine_line())
    print(f"load average before: {os.getloadavg()}")
    rows = []
    with tempfile.TemporaryDirectory(prefix="memu-bench-history-") as tmp:
        for label, make in (("lexical only", lambda: None), ("hashing vectors", HashingEmbedder)):
            base = Path(tmp) / f"base-{label.split()[0]}.sqlite3"
            began = time.perf_counter()
            build_base(base, args.files, make())
            # Fold the base's WAL in, so each copy is the whole store.
            SqliteStore.open(str(base)).close()
            print(f"{label}: base store of {args.files} files built in {time.perf_counter() - began:.0f} s", flush=True)
            wall: dict[int, list[float]] = {20: [], 0: []}
            cpu: dict[int, list[float]] = {20: [], 0: []}
            for run in range(args.runs):
                for keep in (20, 0) if run % 2 == 0 else (0, 20):
                    took = one_commit(base, Path(tmp) / "work.sqlite3", keep, args.changed, make(), f"run {run}")
                    wall[keep].append(took[0])
                    cpu[keep].append(took[1])
            for kind, samples in (("wall", wall), ("CPU", cpu)):
                on, off = Stats(samples[20]), Stats(samples[0])
                rows.append([f"{label}, {kind}", on.cell(), off.cell(), f"{on.median / off.median:.3f}"])
                ratio = on.median / off.median
                print(f"{label} {kind}: on {on.cell()}, off {off.cell()}, ratio {ratio:.3f}", flush=True)
    print(f"load average after: {os.getloadavg()}")
    print(
        table(
            [
                f"commit of {args.changed} changed files into {args.files}",
                "history on (keep 20)",
                "off (keep 0)",
                "on/off",
            ],
            rows,
        )
    )


if __name__ == "__main__":
    main()
