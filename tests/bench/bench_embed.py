"""Embedding benchmarks: a commit's worth of texts through litellm, and local MiniLM.

Run: ``python tests/bench/bench_embed.py [--runs 3] [--latency 0.02] [--skip-minilm]``; prints a
Markdown section (``tests/bench/run_all.py`` collects it).

Measures, each over several runs (median and min-max printed):

1. ``embedder, cold``: a fresh Python process that imports memu-embed-litellm, builds the
   embedder and embeds ~2,100 distinct memory lines (100 files x 21 lines) through the
   OpenAI-compatible test server on 127.0.0.1 with ``--latency`` seconds added per request.
   Wall time of the whole process, litellm import included; the child also reports its own
   import and embed phases.
2. ``memu commit, cold``: the same 100 files as a real ``memu commit`` payload into an empty
   SQLite store, then into a store already holding 10,000 files (skipped when the ``memu``
   command is not installed).
3. MiniLM (memu-embed-local): cold load time (fresh process: import + load) and warm
   throughput in texts/s on the same 2,100 lines.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

from memu_core.testing.embedding_server import EmbeddingServer, hashed_vector

FILES = 100
LINES = 21
MODEL = "bench-hashed"


def lines_of(f: int) -> list[str]:
    """21 distinct, realistic-looking memory lines for file ``f``."""
    return [
        f"- In project {f}, step {i}: run `make test-{i}` before pushing; "
        f"flaky suite {f * LINES + i} needs retry"
        for i in range(LINES)
    ]


def payload() -> dict[str, object]:
    """A commit payload of ``FILES`` new memory files."""
    return {
        "recall_files": [
            {
                "name": f"bench-file-{f}",
                "track": "memory",
                "description": f"benchmark memory file {f}",
                "content": "# Notes\n" + "\n".join(lines_of(f)),
            }
            for f in range(FILES)
        ]
    }


NOTES: list[str] = []
_HEADER_PRINTED = False


def stats(label: str, samples: list[float], unit: str = "s") -> None:
    """One Markdown table row (median, min-max, n) on stdout, as soon as it is measured."""
    global _HEADER_PRINTED
    if not _HEADER_PRINTED:
        print("## Embeddings (`tests/bench/bench_embed.py`)\n")
        print("| figure | median | min-max | runs |")
        print("|---|---|---|---|")
        _HEADER_PRINTED = True
    med = statistics.median(samples)
    spread = f"{min(samples):.3f}-{max(samples):.3f} {unit}"
    print(f"| {label.strip()} | {med:.3f} {unit} | {spread} | {len(samples)} |", flush=True)


def note(text: str) -> None:
    """A line printed under the table (and to stderr at once, for a human watching)."""
    NOTES.append(text)
    print(text, file=sys.stderr, flush=True)


def child_cpu() -> float:
    """User + system CPU seconds of every finished child so far (load-independent-ish, unlike wall)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def env_for(server: EmbeddingServer, db: Path | None = None) -> dict[str, str]:
    """The environment of a child that embeds through the test server."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMU_")}
    env.update(
        {
            "MEMU_EMBED_PROVIDER": "openai-compatible",
            "MEMU_BASE_URL": server.base_url,
            "MEMU_EMBED_MODEL": MODEL,
            "HF_HUB_OFFLINE": "1",
            "MEMU_SERVE_AUTOSTART": "0",
        }
    )
    if db is not None:
        env["MEMU_DB"] = str(db)
    return env


CHILD_EMBED = textwrap.dedent(
    """
    import json, sys, time
    t0 = time.perf_counter()
    from memu_embed_litellm.embedder import LitellmEmbedder, _import_litellm
    _import_litellm()
    t1 = time.perf_counter()
    texts = json.loads(sys.stdin.read())
    embedder = LitellmEmbedder.from_settings(None)
    vectors = embedder.embed(texts)
    t2 = time.perf_counter()
    assert len(vectors) == len(texts)
    print(json.dumps({"import": t1 - t0, "embed": t2 - t1}))
    """
)


def bench_embedder_cold(server: EmbeddingServer, runs: int) -> None:
    texts = [line for f in range(FILES) for line in lines_of(f)]
    walls, imports, embeds, cpus = [], [], [], []
    for _ in range(runs):
        server.reset_counts()
        cpu0 = child_cpu()
        start = time.perf_counter()
        out = subprocess.run(
            [sys.executable, "-c", CHILD_EMBED],
            input=json.dumps(texts),
            capture_output=True,
            text=True,
            env=env_for(server),
            check=True,
        )
        walls.append(time.perf_counter() - start)
        cpus.append(child_cpu() - cpu0)
        phases = json.loads(out.stdout.strip().splitlines()[-1])
        imports.append(phases["import"])
        embeds.append(phases["embed"])
    latency_ms = server.latency * 1000
    requests = server.request_count
    note(f"{len(texts)} texts per commit, {requests} requests each, {latency_ms:.0f} ms added per request.")
    stats("litellm embedder, 2,100 texts, cold process wall", walls)
    stats("litellm embedder, cold process CPU (user+sys)", cpus)
    stats("litellm embedder, cold: `import litellm`", imports)
    stats("litellm embedder, cold: embedding 2,100 texts", embeds)


def fill_store(db: Path, files: int, dimension: int) -> None:
    """A store already holding ``files`` memory files (3 lines each) in the server's space."""
    from memu_core._stores.sqlite import SqliteStore
    from memu_core.types import ChangeSet, FileWrite, Fingerprint, Scope, SegmentDraft

    fp = Fingerprint("openai-compatible", MODEL, dimension)
    store = SqliteStore.open(str(db))
    writes = []
    for f in range(files):
        texts = [f"existing note {f}-{i} about module {f % 97} and port {f * 3 + i}" for i in range(3)]
        writes.append(
            FileWrite(
                scope=Scope(),
                track="memory",
                name=f"existing-{f}",
                description=f"existing file {f}",
                content="\n".join(texts),
                content_hash=f"e{f}",
                expected_revision=None,
                segments=[
                    SegmentDraft(kind="line", ordinal=i, text=t, vector=hashed_vector(t, dimension))
                    for i, t in enumerate(texts)
                ],
            )
        )
    store.apply(ChangeSet(files=writes, fingerprint=fp))
    store.close()


def bench_commit_cold(server: EmbeddingServer, runs: int, existing: int) -> None:
    memu = shutil.which("memu") or str(Path(sys.executable).with_name("memu"))
    if not Path(memu).exists():
        note("memu command not installed: the commit benchmark was skipped.")
        return
    with tempfile.TemporaryDirectory() as tmp:
        payload_path = Path(tmp) / "payload.json"
        payload_path.write_text(json.dumps(payload()))
        template = Path(tmp) / "template.sqlite3"
        if existing:
            t0 = time.perf_counter()
            fill_store(template, existing, server.dimension)
            note(
                f"Filling the store with {existing} files took {time.perf_counter() - t0:.1f} s (not timed)."
            )
        walls, cpus = [], []
        for run in range(runs):
            db = Path(tmp) / f"run{run}.sqlite3"
            if existing:
                shutil.copyfile(template, db)
            env = env_for(server, db)
            env["HOME"] = tmp
            cpu0 = child_cpu()
            start = time.perf_counter()
            result = subprocess.run(
                [memu, "commit", str(payload_path)], capture_output=True, text=True, env=env
            )
            walls.append(time.perf_counter() - start)
            cpus.append(child_cpu() - cpu0)
            if result.returncode != 0:
                note(f"memu commit failed: {result.stderr.strip()[:300]}")
                return
            for suffix in ("", "-wal", "-shm"):
                Path(str(db) + suffix).unlink(missing_ok=True)
        stats(f"`memu commit` 100 new files, cold, into a store of {existing} files: wall", walls)
        stats(f"`memu commit` into a store of {existing} files: CPU (user+sys)", cpus)


CHILD_MINILM_LOAD = textwrap.dedent(
    """
    import time
    t0 = time.perf_counter()
    from memu_embed_local import LocalEmbedder
    e = LocalEmbedder()
    e.embed(["warm up"])
    print(time.perf_counter() - t0)
    """
)


def bench_minilm(runs: int, count: int) -> None:
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    loads = []
    for _ in range(runs):
        out = subprocess.run(
            [sys.executable, "-c", CHILD_MINILM_LOAD], capture_output=True, text=True, env=env, check=True
        )
        loads.append(float(out.stdout.strip().splitlines()[-1]))
    stats("MiniLM cold load (import + load + 1 text)", loads)
    os.environ["HF_HUB_OFFLINE"] = "1"
    from memu_embed_local import LocalEmbedder

    embedder = LocalEmbedder()
    texts = [line for f in range(FILES) for line in lines_of(f)][:count]
    embedder.embed(texts[:64])
    rates = []
    for _ in range(runs):
        start = time.perf_counter()
        embedder.embed(texts)
        rates.append(len(texts) / (time.perf_counter() - start))
    stats(f"MiniLM warm throughput ({len(texts)} texts)", rates, "texts/s")
    try:
        import torch

        note(
            f"MiniLM on torch {torch.__version__}, {torch.get_num_threads()} threads, {os.cpu_count()} CPUs."
        )
    except ImportError:
        pass


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    # The defaults fit run_all.py's two-minute share on an idle 2-core machine.
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--minilm-texts", type=int, default=512, help="texts per MiniLM throughput run")
    parser.add_argument("--latency", type=float, default=0.02, help="seconds added per request")
    parser.add_argument("--dimension", type=int, default=256)
    parser.add_argument("--existing", type=int, default=10_000, help="files already in the store (0 to skip)")
    parser.add_argument("--skip-minilm", action="store_true")
    parser.add_argument("--skip-commit", action="store_true")
    parser.add_argument("--skip-embedder", action="store_true")
    args = parser.parse_args()
    with EmbeddingServer(dimension=args.dimension, latency=args.latency) as server:
        if not args.skip_embedder:
            bench_embedder_cold(server, args.runs)
        if not args.skip_commit:
            bench_commit_cold(server, args.runs, 0)
            if args.existing:
                bench_commit_cold(server, args.runs, args.existing)
    if not args.skip_minilm:
        bench_minilm(args.runs, args.minilm_texts)
    try:
        load = os.getloadavg()[0]
        note(
            f"Load average at the end: {load:.1f} on {os.cpu_count()} CPUs (other work inflates wall times)."
        )
    except OSError:
        pass
    if NOTES:
        print()
        for line in NOTES:
            print(f"- {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
