"""Core engine speed: start-up, retrieve (cold process and in-process) per store size, commit.

    python tests/bench/bench_core.py [--sizes 10,1000,10000,100000] [--repeats 5]

Stores are generated from a seed and cached (see ``_harness.store_path``). Their vectors are
stand-ins under MiniLM's fingerprint (embedding 300,000 lines with the real model takes hours
here); every *query* is embedded by the real MiniLM model, so dense and hybrid timings include
it. Cold-process figures run at most 10,000 files: at 100,000 a fresh process spends its time
loading the vector matrix, which is what the warm server (``bench_serve.py``) is for.

Every retrieval is checked after it is timed (``_harness.check_answer``): it must answer segments
and files in the mode the row names, and in lexical and hybrid mode hold the query's planted file
among its first :data:`TOP_K` answers. The run fails on the first answer that does not.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import _harness as h

MODES = ("lexical", "dense", "hybrid")
TOP_K = 5
"""Segments asked for per retrieve (``memu retrieve``'s default); the planted file must be in them."""
COLD_MAX = 10_000
COMMIT_FILES = 100


def memu_bin() -> str:
    """The ``memu`` console script of the running environment."""
    found = shutil.which("memu", path=str(Path(sys.executable).parent)) or shutil.which("memu")
    if not found:
        raise SystemExit("bench_core: the memu command is not installed in this environment (pip install -e memu-core)")
    return found


def startup(tmp: Path, repeats: int) -> list[list[str]]:
    """``memu --help`` and ``memu --version`` as fresh processes."""
    env = h.isolated_env(tmp)
    rows = []
    for label, args in (("`memu --help`", ["--help"]), ("`memu --version`", ["--version"])):
        stats = h.measure_process([memu_bin(), *args], env=env, repeats=repeats, warmup=1)
        rows.append([label, stats.cell(), stats.rss_cell()])
    return rows


def cold_retrieve(tmp: Path, sizes: Sequence[int], repeats: int) -> list[list[str]]:
    """A fresh process per retrieval: ``memu retrieve`` (lexical, hybrid) and the engine (dense).

    Lexical runs at every size up to :data:`COLD_MAX`. Dense and hybrid run at the largest of
    those only: loading torch and MiniLM (~10 s) dwarfs the search at every size, and timing it
    three times over would cost the whole run minutes.
    """
    rows = []
    queries = h.queries(repeats + 1)
    cold_sizes = [size for size in sizes if size <= COLD_MAX]
    for size in cold_sizes:
        db = h.store_path(size, vectors=True)
        for mode in MODES:
            if mode != "lexical" and size != max(cold_sizes):
                continue
            provider = "none" if mode == "lexical" else "local"
            env = h.isolated_env(tmp, MEMU_DB=str(db), MEMU_EMBED_PROVIDER=provider)
            if mode == "dense":
                once = str(Path(__file__).with_name("_retrieve_once.py"))
                cmd = [h.python(), once, "dense", queries[0], str(TOP_K)]
                how = "engine, fresh process"
            else:
                cmd = [memu_bin(), "retrieve", queries[0]]
                how = "`memu retrieve`"

            def check(stdout: str, m: str = mode) -> None:
                h.check_output(stdout, queries[0], TOP_K, mode=m)

            stats = h.measure_process(cmd, env=env, repeats=repeats, warmup=1, check=check)
            rows.append([f"{size:,}", mode, how, stats.cell(), stats.rss_cell()])
    return rows


def cold_commit(tmp: Path, repeats: int) -> list[list[str]]:
    """``memu commit --from-dir`` of 100 new files into a lexical-only 10,000-file store, each a
    fresh process (the budget of a plain commit). The files are forgotten again after each run
    (untimed), so every run commits into exactly 10,000 files."""
    from memu_core._engine.engine import LocalEngine
    from memu_core._stores.sqlite.store import SqliteStore

    size = COLD_MAX
    db = h.store_path(size, vectors=False)
    new_files = h.generate_files(COMMIT_FILES, prefix="cold", seed=h.SEED + 2)
    folder = tmp / "cold-commit"
    folder.mkdir(exist_ok=True)
    for f in new_files:
        body = f"---\nname: {f['name']}\ndescription: {f['description']}\ntrack: memory\n---\n{f['content']}\n"
        (folder / f"{f['name']}.md").write_text(body, encoding="utf-8")
    engine = LocalEngine(SqliteStore.open(str(db)))

    def forget_all() -> None:
        for f in new_files:
            engine.forget(f["name"])

    forget_all()  # leftovers of an interrupted run would make the first commit a no-op
    env = h.isolated_env(tmp, MEMU_DB=str(db), MEMU_EMBED_PROVIDER="none")
    samples: list[float] = []
    peak = 0.0
    for i in range(repeats + 1):
        run = h.run_process([memu_bin(), "commit", "--from-dir", str(folder)], env=env)
        if run.returncode != 0:
            raise SystemExit(f"bench_core: memu commit failed: {run.stderr.strip()[-300:]}")
        forget_all()
        if i:  # the first run warms the page cache, like a warm-up
            samples.append(run.seconds)
            peak = max(peak, run.peak_rss_mb)
    engine.close()
    stats = h.Stats(samples, unit="s", peak_rss_mb=peak)
    return [[f"{size:,}", f"{COMMIT_FILES} new files, lexical-only", stats.cell(), stats.rss_cell()]]


def warm_engine(db: Path, embedder: Any) -> Any:
    """An engine over ``db`` with ``embedder`` (the real MiniLM or ``None``)."""
    from memu_core._engine.engine import LocalEngine
    from memu_core._stores.sqlite.store import SqliteStore

    # Each question is asked once per mode: no mode may answer from the previous one's caches.
    return h.without_answer_caches(LocalEngine(SqliteStore.open(str(db)), embedder=embedder))


def in_process_retrieve(sizes: Sequence[int], repeats: int, embedder: Any) -> list[list[str]]:
    """Retrieval inside one process (what a warm server does per request), after one warm-up."""
    rows = []
    queries = h.queries(h.PLANTED_QUERIES)
    for size in sizes:
        engine = warm_engine(h.store_path(size, vectors=True), embedder)
        for mode in MODES:
            it = iter(queries * 10)

            def once(m: str = mode, it: Any = it, e: Any = engine) -> tuple[str, dict[str, Any]]:
                query = next(it)
                return query, e.progressive_retrieve(query, top_k=TOP_K, mode=m)

            def check(out: tuple[str, dict[str, Any]], m: str = mode) -> None:
                h.check_answer(out[1], out[0], TOP_K, mode=m)

            stats = h.measure(once, repeats=max(repeats * 4, 10), warmup=2, check=check)
            rows.append([f"{size:,}", mode, stats.cell()])
        engine.close()
    return rows


def commits(sizes: Sequence[int], repeats: int) -> list[list[str]]:
    """Commit 100 new files into each store size, and re-commit them unchanged.

    After each sample the 100 files are forgotten again (untimed), so every sample commits into
    exactly ``size`` files without copying the store. The embedder is the stand-in: this measures
    memu's planning and writing, not the model (``bench_embed.py`` measures that).
    """
    from memu_core._engine.engine import LocalEngine
    from memu_core._stores.sqlite.store import SqliteStore

    rows = []
    new_files = h.generate_files(COMMIT_FILES, prefix="fresh", seed=h.SEED + 1)
    for size in sizes:
        engine = LocalEngine(
            SqliteStore.open(str(h.store_path(size, vectors=True))), embedder=h.StandInEmbedder.build()
        )
        for f in new_files:  # leftovers of an interrupted run would make the first commit a no-op
            engine.forget(f["name"])
        first, again, embedded_again = [], [], 0
        for i in range(repeats + 1):
            result: dict[str, Any] = {}
            t1 = h.measure(lambda e=engine: e.commit_results(recall_files=new_files), repeats=1, warmup=0)
            t2 = h.measure(
                lambda e=engine, out=result: out.update(e.commit_results(recall_files=new_files)),
                repeats=1,
                warmup=0,
            )
            stats = result["stats"]
            if stats["texts_embedded"] != 0 or stats["files_written"] != 0:
                raise SystemExit(f"bench_core: re-commit with nothing changed did work: {stats}")
            embedded_again = max(embedded_again, stats["texts_embedded"])
            for f in new_files:
                engine.forget(f["name"])
            if i:  # the first round warms the page cache and is dropped like a warm-up
                first.append(t1.samples[0])
                again.append(t2.samples[0])
        engine.close()
        rows.append([f"{size:,}", h.Stats(first).cell(), h.Stats(again).cell(), str(embedded_again)])
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    """Print the core figures as Markdown."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sizes",
        default=os.environ.get("MEMU_BENCH_SIZES", ",".join(map(str, h.SIZES))),
        help="store sizes in recall files, comma-separated",
    )
    parser.add_argument("--repeats", type=int, default=int(os.environ.get("MEMU_BENCH_REPEATS", "5")))
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",") if s]
    repeats = max(args.repeats, 1)

    from memu_embed_local import LocalEmbedder

    embedder = LocalEmbedder()
    print("## Core: start-up, retrieve, commit\n")
    print(h.machine_line(), "\n")
    print(
        "Store vectors are deterministic stand-ins under MiniLM's fingerprint; every query is embedded by "
        "the real model. Re-commit must embed nothing: the run fails otherwise. Every timed retrieve is "
        f"checked: segments and files in the mode named, and (lexical, hybrid) the query's planted file "
        f"among the first {TOP_K}; the run fails otherwise. Each store holds "
        f"{len(h.planted_files())} planted one-line files beside its generated ones.\n",
        flush=True,
    )
    with tempfile.TemporaryDirectory(prefix="memu-bench-home-") as tmp_s:
        tmp = Path(tmp_s)
        print(f"### Start-up (fresh process, {repeats} runs after 1 warm-up)\n")
        print(
            h.table(["command", "wall time median (min-max)", "peak RSS"], startup(tmp, repeats)),
            "\n",
            flush=True,
        )
        print("### Retrieve, in process (warm engine, MiniLM query embedding; top 5)\n")
        print(
            h.table(["files", "mode", "median (min-max)"], in_process_retrieve(sizes, repeats, embedder)),
            "\n",
            flush=True,
        )
        print(f"### Commit {COMMIT_FILES} new files, then re-commit them unchanged ({repeats} runs after 1 warm-up)\n")
        print(
            h.table(
                ["files in store", "commit 100 new", "re-commit unchanged", "texts embedded on re-commit"],
                commits(sizes, repeats),
            ),
            "\n",
            flush=True,
        )
        print(f"### Commit, cold process (`memu commit --from-dir`; {repeats} runs after 1 warm-up)\n")
        print(
            h.table(["files in store", "what", "wall time median (min-max)", "peak RSS"], cold_commit(tmp, repeats)),
            "\n",
            flush=True,
        )
        cold_repeats = 3
        print(
            f"### Retrieve, cold process (top 5; {cold_repeats} runs after 1 warm-up; "
            f"up to {COLD_MAX:,} files; dense and hybrid, which load MiniLM, at the largest size only)\n"
        )
        print(
            h.table(
                ["files", "mode", "how", "wall time median (min-max)", "peak RSS"],
                cold_retrieve(tmp, sizes, cold_repeats),
            ),
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
