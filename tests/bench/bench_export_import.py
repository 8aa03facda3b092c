"""Issue 19: what `memu export` and `memu import` cost on a 10,000-file store, beside the peer
that does the same work without the import's checks (`memu commit --from-dir` of the same folder).

    python tests/bench/bench_export_import.py [--files 10000] [--runs 3]

Lexical-only (``MEMU_EMBED_PROVIDER=none``), so the figures are memu's own reading, checking and
writing, not a model's embedding time. The runs are interleaved; every timed command is checked
before its time counts: the export holds one Markdown file per stored file, the import and the
peer report every file written, the re-import reports every file unchanged. Prints median and
min-max per row, and the load average before and after.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _harness import Stats

MEMU = str(Path(sys.executable).with_name("memu"))


def _folder(root: Path, count: int) -> Path:
    folder = root / "source"
    for i in range(count):
        track = "skill" if i % 10 == 0 else "memory"
        body = "\n".join(f"- item {j} of note {i}: service-{i % 97} listens on port {9000 + j}" for j in range(5))
        path = folder / ("skills" if track == "skill" else "notes") / f"note-{i}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"---\nname: note {i}\ndescription: note number {i}\n---\n{body}\n", encoding="utf-8")
    return folder


def _run(env: dict[str, str], db: Path, *args: str) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run([MEMU, *args], env={**env, "MEMU_DB": str(db)}, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"memu {' '.join(args)} failed: {done.stderr[-800:]}")
    return seconds, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    root = Path(tempfile.mkdtemp(prefix="memu-bench-export-"))
    try:
        home = root / "home"
        home.mkdir()
        env = {k: v for k, v in os.environ.items() if not k.startswith("MEMU_")}
        env.update(HOME=str(home), MEMU_EMBED_PROVIDER="none", MEMU_SERVE_AUTOSTART="0")
        source = root / "source.sqlite3"
        _, out = _run(env, source, "commit", "--from-dir", str(_folder(root, args.files)))
        assert f"committed {args.files} recall file(s)" in out, out[:200]
        rows: dict[str, list[float]] = {"export": [], "import": [], "commit --from-dir (peer)": [], "re-import": []}

        def check(condition: bool, what: str) -> None:
            if not condition:
                raise RuntimeError(what)

        for run in range(args.runs):
            target = root / f"export-{run}"
            seconds, out = _run(env, source, "export", str(target))
            check(len(list(target.rglob("*.md"))) == args.files, f"export {run} is missing files")
            rows["export"].append(seconds)
            order: list[tuple[str, Callable[[], None]]] = []

            def do_import(run: int = run, target: Path = target) -> None:
                seconds, out = _run(env, root / f"imported-{run}.sqlite3", "import", str(target))
                check(f"imported {args.files} recall file(s): {args.files} written, 0 unchanged" in out, out)
                rows["import"].append(seconds)

            def do_peer(run: int = run, target: Path = target) -> None:
                seconds, out = _run(env, root / f"peer-{run}.sqlite3", "commit", "--from-dir", str(target))
                check(f"committed {args.files} recall file(s)" in out, out[:200])
                rows["commit --from-dir (peer)"].append(seconds)

            order = [("import", do_import), ("peer", do_peer)]
            for _, step in order if run % 2 == 0 else order[::-1]:  # alternate which goes first
                step()
            seconds, out = _run(env, root / f"imported-{run}.sqlite3", "import", str(target))
            check(f"0 written, {args.files} unchanged" in out, out)
            rows["re-import"].append(seconds)
            print(f"run {run + 1}/{args.runs} done", flush=True)
        print(f"\n{args.files:,} files, lexical-only, {args.runs} runs: median (min-max)")
        for label, samples in rows.items():
            print(f"  {label:<26} {Stats(samples).cell()}")
        print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
