"""Warm-path and memu-server benchmarks on a 10,000-file store (~20 lines per file).

Run: ``python tests/bench/bench_serve.py [--files 10000] [--runs 15] [--duration 30] [--clients 16]``

Measures, in one run (median and min-max over ``--runs`` fresh processes unless said otherwise):

1. ``memu-claude-code retrieve`` with ``memu serve`` warm (the stdlib client over the Unix socket;
   the query is embedded by the local MiniLM model inside the server): wall time and the client
   process's peak RSS. Each run is checked to have been answered by the server.
2. The same command with no server, lexical only (``MEMU_EMBED_PROVIDER=none``): the cold fallback.
3. The same command with no server and MiniLM in process (3 runs): what the warm path saves.
4. ``memu-server`` over TCP on loopback: ``POST /api/v4/memory/search`` from ``--clients``
   concurrent keep-alive clients for ``--duration`` seconds: p50, p99, throughput.

The store's 210,000 segment vectors are stand-ins under MiniLM's fingerprint (see
``_harness.StandInEmbedder``): embedding them with MiniLM takes hours on two cores, and search cost
does not depend on the values. Every *query* is embedded by the real model.

Every answer is checked (``_harness.check_answer``) once its run has ended: segments and files, in
the mode the row names, and the query's planted file (``_harness.planted_files``, written with the
store) among the first :data:`TOP_K`. The TCP load's queries are each checked once before the load
(the server answers a query the same way every time). The run fails on a wrong or empty answer.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import _harness as h

from memu_core.testing.corpus import generate_files

LINES = (18, 22)
TOP_K = 5
"""A host's ``retrieve`` asks for the engine's default, 5 segments; the planted file must be among them."""


def store(files: int) -> Path:
    """A cached SQLite store of ``files`` generated files with ~20 lines each (stand-in vectors)."""
    tag = hashlib.sha256(f"{h.memu_version()}:{h.SEED}:{files}:{LINES}:serve-v2".encode()).hexdigest()[:10]
    path = h.cache_dir() / f"serve-store-{files}-{tag}.db"
    done = path.with_suffix(".ok")
    if done.exists() and path.exists():
        return path
    for old in h.cache_dir().glob(f"serve-store-{files}-*"):  # v1 stores lack the planted answers
        old.unlink(missing_ok=True)
    for stale in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
        stale.unlink(missing_ok=True)
    from memu_core._engine.engine import LocalEngine
    from memu_core._stores.sqlite.store import SqliteStore

    engine = LocalEngine(SqliteStore.open(str(path)), embedder=h.StandInEmbedder.build())
    corpus = generate_files(files, prefix="serve", lines=LINES)
    started = time.perf_counter()
    for start in range(0, len(corpus), 500):
        engine.commit_results(recall_files=corpus[start : start + 500])
        print(f"  built {start + 500}/{files} files ({time.perf_counter() - started:.0f}s)", file=sys.stderr)
    engine.commit_results(recall_files=h.planted_files())
    engine.close()
    done.write_text("ok")
    return path


def binary(name: str) -> str:
    """A console script of this environment."""
    beside = Path(sys.executable).with_name(name)
    return str(beside) if beside.exists() else (shutil.which(name) or name)


def serve_status(env: dict[str, str]) -> dict[str, Any] | None:
    code = "import json; from memu_core._serve import client; print(json.dumps(client.status()))"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    return json.loads(out.stdout) if out.returncode == 0 and out.stdout.strip() else None


def start_warm(env: dict[str, str]) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen([sys.executable, "-m", "memu_core._serve"], env=env, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 600
    while serve_status(env) is None:
        if proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"memu serve did not start: {proc.stderr.read().decode() if proc.stderr else ''}")
        time.sleep(0.5)
    return proc


# A tiny launcher times the command and reads its peak RSS with wait4. Linux charges a child
# the high-water RSS of the address space it exec()s from, so spawning straight from this
# (large) benchmark process would report the benchmark's own memory as the client's.
LAUNCHER = (
    "import os, sys, time\n"
    "t = time.perf_counter()\n"
    "pid = os.posix_spawn(sys.argv[1], sys.argv[1:], os.environ)\n"
    "_, status, usage = os.wait4(pid, 0)\n"
    "print(f'{time.perf_counter() - t} {usage.ru_maxrss}', file=sys.stderr)\n"
    "sys.exit(os.waitstatus_to_exitcode(status))\n"
)


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    """``(wall seconds, peak RSS MiB, standard output)`` of one run of ``cmd`` as a fresh process."""
    out = subprocess.run(
        [sys.executable, "-S", "-c", LAUNCHER, *cmd], env=env, capture_output=True, text=True, timeout=900
    )
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed: {out.stderr[-400:]}")
    seconds, rss_kib = out.stderr.strip().splitlines()[-1].split()
    return float(seconds), int(rss_kib) / 1024.0, out.stdout


SIZES: dict[str, list[int]] = {}
"""Bytes of each printed answer, per ``mode`` (checked answers only)."""


def retrieve_runs(
    env: dict[str, str], queries: list[str], runs: int, cmd: list[str] | None = None, mode: str | None = None
) -> h.Stats:
    """``memu-claude-code retrieve QUERY`` (or ``cmd``) as a fresh process per run, after one
    untimed warm-up; each retrieve's output is checked to answer in ``mode`` with its planted file."""
    base = cmd or [binary("memu-claude-code"), "retrieve"]
    picked = [queries[-1], *(queries[i % len(queries)] for i in range(runs))]  # the first warms up
    samples, peak = [], 0.0
    for i, query in enumerate(picked):
        seconds, rss, stdout = timed([*base, query] if cmd is None else base, env)
        if cmd is None:
            h.check_output(stdout, query, TOP_K, mode=mode)
            SIZES.setdefault(mode or "", []).append(len(stdout.encode()))
        if i:
            samples.append(seconds)
            peak = max(peak, rss)
    return h.Stats(samples, peak_rss_mb=peak)


def round_trip(env: dict[str, str], queries: list[str], runs: int) -> h.Stats:
    """The warm request alone (query embedding + search + JSON), from one already-started client,
    over the first ``runs + 1`` of ``queries`` (the first warms up). The server remembers a
    question's vector and word hits: a caller timing new questions passes ones it has not asked."""
    code = (
        "import json, sys, time\n"
        "sys.path.insert(0, sys.argv[2])\n"
        "import _harness as h\n"
        "from memu_core._serve import client\n"
        "qs = json.loads(sys.argv[1]); out = []\n"
        "for q in qs:\n"
        "    t = time.perf_counter()\n"
        "    r = client.warm_retrieve(q, autostart=False)\n"
        "    out.append(time.perf_counter() - t)\n"
        "    if r is None:\n"
        "        raise h.WrongAnswer(f'{q!r}: the warm server did not answer')\n"
        f"    h.check_answer(r, q, {TOP_K}, mode='hybrid')\n"
        "print(json.dumps(out))\n"
    )
    picked = [queries[i % len(queries)] for i in range(runs + 1)]
    here = str(Path(__file__).resolve().parent)
    res = subprocess.run(
        [sys.executable, "-c", code, json.dumps(picked), here], env=env, capture_output=True, text=True, timeout=900
    )
    if res.returncode != 0:
        raise RuntimeError(res.stderr[-400:])
    return h.Stats(json.loads(res.stdout)[1:])


def unasked(queries: list[str], runs: int) -> list[str]:
    """``runs + 1`` of ``queries`` that :func:`retrieve_runs` with ``runs`` did not ask."""
    if 2 * runs + 2 > len(queries):
        raise ValueError(f"--runs {runs}: at most {(len(queries) - 2) // 2} with {len(queries)} planted questions")
    return queries[-(runs + 2) : -1]


def check_tcp(port: int, key: str, queries: list[str]) -> None:
    """Each query once through ``POST /api/v4/memory/search``, its answer checked (untimed)."""
    import httpx

    with httpx.Client(
        base_url=f"http://127.0.0.1:{port}", headers={"Authorization": f"Bearer {key}"}, trust_env=False, timeout=120
    ) as c:
        for query in dict.fromkeys(queries):
            r = c.post("/api/v4/memory/search", json={"query": query})
            if r.status_code != 200:
                raise RuntimeError(f"memu-server search for {query!r} answered {r.status_code}: {r.text[:300]}")
            h.check_answer(r.json(), query, TOP_K, mode="hybrid")


def tcp_load(port: int, key: str, queries: list[str], clients: int, duration: float) -> dict[str, Any]:
    """``clients`` threads, each with its own keep-alive connection, searching for ``duration`` s."""
    import httpx

    latencies: list[list[float]] = [[] for _ in range(clients)]
    errors = [0] * clients
    stop_at = time.monotonic() + duration
    barrier = threading.Barrier(clients)

    def worker(n: int) -> None:
        with httpx.Client(
            base_url=f"http://127.0.0.1:{port}",
            headers={"Authorization": f"Bearer {key}"},
            trust_env=False,
            timeout=60,
        ) as c:
            barrier.wait()
            i = n
            while time.monotonic() < stop_at:
                t0 = time.perf_counter()
                r = c.post("/api/v4/memory/search", json={"query": queries[i % len(queries)]})
                latencies[n].append(time.perf_counter() - t0)
                if r.status_code != 200:
                    errors[n] += 1
                i += clients

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(clients)]
    started = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - started
    flat = sorted(x for per in latencies for x in per)
    return {
        "requests": len(flat),
        "errors": sum(errors),
        "p50": statistics.median(flat),
        "p99": flat[min(len(flat) - 1, int(len(flat) * 0.99))],
        "min": flat[0],
        "max": flat[-1],
        "throughput": len(flat) / elapsed,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--duration", type=float, default=30.0)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--skip-tcp", action="store_true")
    parser.add_argument("--skip-cold-dense", action="store_true")
    args = parser.parse_args()

    print(h.machine_line())
    db = store(args.files)
    queries = h.queries(h.PLANTED_QUERIES)
    tmp = Path(tempfile.mkdtemp(prefix="mub", dir="/tmp"))  # short: Unix socket paths are capped
    base = h.isolated_env(tmp, MEMU_DB=str(db), MEMU_SERVE_IDLE="0")
    dense_env = {**base, "MEMU_EMBED_PROVIDER": "local"}
    lexical_env = {**base, "MEMU_EMBED_PROVIDER": "none"}
    rows: list[list[str]] = []
    try:
        server = start_warm(dense_env)
        try:
            before = (serve_status(dense_env) or {}).get("requests", 0)
            warm = retrieve_runs(dense_env, queries, args.runs, mode="hybrid")
            after = (serve_status(dense_env) or {}).get("requests", 0)
            if after - before < args.runs + 1:
                raise RuntimeError(f"only {after - before} of {args.runs + 1} retrieves reached the warm server")
            # The warm clients above asked the last question and then the first ``runs``.
            rt = round_trip(dense_env, unasked(queries, args.runs), args.runs)
            rows.append(["`memu-claude-code retrieve`, server warm (MiniLM query)", warm.cell(), warm.rss_cell()])
            rows.append(["  of which: the socket request (embed + search + JSON)", rt.cell(), "—"])
        finally:
            server.send_signal(signal.SIGTERM)
            server.wait(60)
        bare = retrieve_runs(lexical_env, queries, args.runs, cmd=[sys.executable, "-c", "pass"])
        rows.append(["baseline: `python -c pass` (interpreter start-up)", bare.cell(), bare.rss_cell()])
        cold = retrieve_runs(lexical_env, queries, args.runs, mode="lexical")
        rows.append(["`memu-claude-code retrieve`, no server, lexical", cold.cell(), cold.rss_cell()])
        if not args.skip_cold_dense:
            dense = retrieve_runs(dense_env, queries, 3, mode="hybrid")
            rows.append(["`memu-claude-code retrieve`, no server, MiniLM in process", dense.cell(), dense.rss_cell()])
        print(f"\nStore: {args.files:,} files, ~20 lines each ({db.stat().st_size / 2**20:.0f} MiB SQLite).\n")
        print(h.table(["path", "wall median (min-max)", "client peak RSS"], rows))
        for mode, sizes in SIZES.items():
            print(
                f"\nPrinted answer, {mode}, default budget: median {statistics.median(sizes) / 1000:.2f} KB, "
                f"min-max {min(sizes) / 1000:.2f}-{max(sizes) / 1000:.2f} KB over {len(sizes)} answers."
            )
        print(
            f"\nEvery retrieve above was checked: segments and files in the mode named, and the query's "
            f"planted file among the first {TOP_K} ({len(h.planted_files())} planted one-line files in the store)."
        )
        if not args.skip_tcp:
            from memu_server.keys import KeyStore
            from memu_server.testing import free_port, start_process

            keys = KeyStore(tmp / "keys.sqlite3")
            key, _ = keys.create("default")
            keys.close()
            port = free_port()
            proc = start_process(port, {**dense_env, "MEMU_SERVER_KEYS": str(tmp / "keys.sqlite3")})
            try:
                check_tcp(port, key, queries)
                result = tcp_load(port, key, queries, args.clients, args.duration)
            finally:
                proc.send_signal(signal.SIGTERM)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(60)
            print(
                f"\n`memu-server` TCP search, {args.clients} clients x {args.duration:.0f} s: "
                f"p50 {result['p50'] * 1000:.1f} ms, p99 {result['p99'] * 1000:.1f} ms "
                f"(min {result['min'] * 1000:.1f}, max {result['max'] * 1000:.1f}), "
                f"{result['throughput']:.1f} req/s, {result['requests']} requests, {result['errors']} errors."
            )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    sys.exit(main())
