"""memu-server under a team's load: search, list and commit from 16 and 64 clients, with a writer.

Run: ``python tests/bench/bench_server_load.py [--files 10000] [--runs 3] [--duration 10]``

The server is the real ``memu-server serve`` process over a copy of ``bench_serve``'s cached
10,000-file SQLite store (stand-in segment vectors under MiniLM's fingerprint; every query
embedded by the real MiniLM model in the server). The load generator is one asyncio process
speaking HTTP/1.1 over keep-alive connections by hand (no HTTP library: it costs tens of
microseconds a request, so the two cores go to the server); its own CPU per request is
printed beside each row, and so is the server's (from ``/proc``).

Rows (each ``--runs`` runs of ``--duration`` s; medians with min-max over the runs):

- floor: the same generator against uvicorn serving one fixed search answer (no FastAPI, no
  store): what the HTTP stack and the generator cost on this machine in the same run;
- search: the 50 planted questions in turn (a team asking recurring questions: answers reused
  until a write changes them), with and without a writer, at 16 and 64 clients;
- search, every query new: each request a question never asked before (the store's own cost);
- list: one page of 50 files per request; commit: one new file per request (its own name);
- commit, then a new search in its scope, from one client in turn: the server's CPU for a
  write and the first search after it (on SQLite, where the dense index is patched or reloaded).

``--peer-src`` starts a second server from another source folder (an older commit's
``memu_core`` and ``memu_server``) on its own copy of the store and runs each row against both,
one run of each in turn, so the two sides share the machine's load.

The writer commits one new 5-line file every ``--write-every`` seconds, to its own user
(``writer``: a teammate) or to the searched scope (``default``: every cached answer dropped).
Every answer is checked after its run and before its figures count: a search holds its
question's planted file among the first 5, a list page holds 50 files, a commit wrote its file,
a writer's commit wrote its file; any other status counts as an error.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import _harness as h
import bench_serve

TOP_K = 5
LINES = 5
"""Lines in each committed file (each line is embedded by MiniLM in the server)."""
SEARCH = "/api/v4/memory/search"
COLLECTION = "/api/v4/memory"

Check = Callable[[int, bytes], None]
Request = tuple[bytes, Check]


@dataclass
class Run:
    """One timed run: latencies, errors, CPU of both sides."""

    latencies: list[float] = field(default_factory=list)
    answers: list[tuple[int, bytes, Check]] = field(default_factory=list)
    elapsed: float = 0.0
    client_cpu: float = 0.0
    server_cpu: float = 0.0
    writes: list[tuple[int, bytes, Check]] = field(default_factory=list)
    write_latencies: list[float] = field(default_factory=list)

    def check(self) -> tuple[int, int]:
        """Check every 200 (raises on a wrong one); ``(errors, 503s)`` among the rest."""
        errors = busy = 0
        for status, body, check in [*self.answers, *self.writes]:
            if status == 503:
                busy += 1
            elif status != 200:
                errors += 1
            else:
                check(status, body)
        return errors, busy


def http_request(method: str, path: str, key: str, body: Any = None) -> bytes:
    """One keep-alive HTTP/1.1 request, as bytes."""
    payload = b"" if body is None else json.dumps(body).encode()
    head = f"{method} {path} HTTP/1.1\r\nHost: bench\r\nAuthorization: Bearer {key}\r\n"
    if body is not None:
        head += f"Content-Type: application/json\r\nContent-Length: {len(payload)}\r\n"
    return (head + "\r\n").encode() + payload


async def read_answer(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    """Status and body of one answer (the server always sends Content-Length)."""
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    length = 0
    for line in lines[1:]:
        name, _, value = line.partition(":")
        if name.lower() == "content-length":
            length = int(value)
    return status, await reader.readexactly(length)


async def client(port: int, make: Callable[[int], Request], first: int, step: int, stop_at: float, run: Run) -> None:
    """Send requests back to back on one connection until ``stop_at``."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    i = first
    try:
        while time.monotonic() < stop_at:
            request, check = make(i)
            started = time.perf_counter()
            writer.write(request)
            status, body = await read_answer(reader)
            run.latencies.append(time.perf_counter() - started)
            run.answers.append((status, body, check))
            i += step
    finally:
        writer.close()


async def committer(port: int, make: Callable[[int], Request], every: float, stop_at: float, run: Run) -> None:
    """The concurrent writer: one commit every ``every`` seconds on its own connection."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    i = 0
    try:
        while time.monotonic() < stop_at:
            request, check = make(i)
            started = time.perf_counter()
            writer.write(request)
            status, body = await read_answer(reader)
            took = time.perf_counter() - started
            run.write_latencies.append(took)
            run.writes.append((status, body, check))
            i += 1
            await asyncio.sleep(max(0.0, every - took))
    finally:
        writer.close()


def server_cpu(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def drive(
    port: int,
    pid: int,
    make: Callable[[int], Request],
    clients: int,
    duration: float,
    writer: Callable[[int], Request] | None = None,
    every: float = 0.5,
) -> Run:
    """``clients`` connections sending ``make(i)`` requests for ``duration`` s (plus the writer)."""
    run = Run()

    async def main() -> None:
        stop_at = time.monotonic() + duration
        tasks = [client(port, make, n, clients, stop_at, run) for n in range(clients)]
        if writer is not None:
            tasks.append(committer(port, writer, every, stop_at, run))
        await asyncio.gather(*tasks)

    cpu0, wall0, srv0 = time.process_time(), time.perf_counter(), server_cpu(pid)
    asyncio.run(main())
    run.elapsed = time.perf_counter() - wall0
    run.client_cpu = time.process_time() - cpu0
    run.server_cpu = server_cpu(pid) - srv0
    return run


FLOOR_APP = """
import sys, uvicorn
from memu_server.runner import bind_tcp
body = open(sys.argv[2], "rb").read()
async def app(scope, receive, send):
    if scope["type"] != "http":
        return
    more = True
    while more:
        more = (await receive()).get("more_body", False)
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})
sock = bind_tcp("127.0.0.1", int(sys.argv[1]))
uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off")).run(sockets=[sock])
"""


def summarize(runs: list[Run]) -> dict[str, Any]:
    """Medians and ranges over runs; each run's answers checked first."""
    per = []
    for run in runs:
        errors, busy = run.check()
        flat = sorted(run.latencies)
        n = len(flat)
        per.append(
            {
                "rps": n / run.elapsed,
                "p50": statistics.median(flat),
                "p99": flat[min(n - 1, int(n * 0.99))],
                "errors": errors,
                "busy": busy,
                "n": n,
                "client_us": run.client_cpu / max(1, n) * 1e6,
                "server_ms": run.server_cpu / max(1, n + len(run.writes)) * 1e3,
                "writes": len(run.writes),
                "write_p99": max(run.write_latencies) if run.write_latencies else None,
            }
        )
    return {"runs": per}


def cell(per: list[dict[str, Any]], key: str, scale: float = 1.0, digits: int = 0) -> str:
    values = [p[key] * scale for p in per]
    fmt = f"{{:.{digits}f}}"
    return f"{fmt.format(statistics.median(values))} ({fmt.format(min(values))}-{fmt.format(max(values))})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--duration", type=float, default=10.0)
    parser.add_argument("--write-every", type=float, default=0.5)
    parser.add_argument("--only", default="", help="Comma-separated row names to run (default: all).")
    parser.add_argument(
        "--server-src",
        default="",
        help="Run the memu_server package from this src folder instead (e.g. an older commit's, as a peer).",
    )
    parser.add_argument(
        "--peer-src",
        default="",
        help="Also start a server from this src folder (an older commit's memu_core and memu_server) on its own copy "
        "of the store, and run every row against both, their runs interleaved.",
    )
    parser.add_argument("--clients", default="16,64", help="Client counts, comma-separated.")
    args = parser.parse_args()
    only = {x for x in args.only.split(",") if x}

    print(h.machine_line())
    print(f"load average at start: {os.getloadavg()}")
    cached = bench_serve.store(args.files)
    tmp = Path(tempfile.mkdtemp(prefix="mub", dir="/tmp"))
    db = tmp / "store.db"
    shutil.copyfile(cached, db)  # the writers add files: never to the cached store
    queries = h.queries(h.PLANTED_QUERIES)
    env = {**h.isolated_env(tmp, MEMU_DB=str(db)), "MEMU_EMBED_PROVIDER": "local"}
    from memu_server.keys import KeyStore
    from memu_server.testing import free_port, wait_until_up

    keys = KeyStore(tmp / "keys.sqlite3")
    key, _ = keys.create("default")
    writer_key, _ = keys.create("writer")
    keys.close()
    port = free_port()
    peer = {"PYTHONPATH": args.server_src} if args.server_src else {}
    proc = subprocess.Popen(
        [sys.executable, "-m", "memu_server", "serve", "--port", str(port)],
        env={**env, "MEMU_SERVER_KEYS": str(tmp / "keys.sqlite3"), **peer},
        stderr=subprocess.PIPE,
    )
    wait_until_up(port, proc, timeout=900)  # the first start exports MiniLM to ONNX (minutes when loaded)
    servers = [("", port, proc)]
    if args.peer_src:
        shutil.copyfile(cached, tmp / "peer.db")
        peer_port = free_port()
        peer_proc = subprocess.Popen(
            [sys.executable, "-m", "memu_server", "serve", "--port", str(peer_port)],
            env={
                **env,
                "MEMU_DB": str(tmp / "peer.db"),
                "MEMU_SERVER_KEYS": str(tmp / "keys.sqlite3"),
                "PYTHONPATH": args.peer_src,
            },
            stderr=subprocess.PIPE,
        )
        wait_until_up(peer_port, peer_proc, timeout=900)
        servers.append((" (peer)", peer_port, peer_proc))
    rows: list[list[str]] = []
    counter = iter(range(10**9))

    def search(i: int) -> Request:
        query = queries[i % len(queries)]

        def check(_status: int, body: bytes) -> None:
            h.check_answer(json.loads(body), query, TOP_K, mode="hybrid")

        return http_request("POST", SEARCH, key, {"query": query}), check

    def search_new(i: int) -> Request:
        base = queries[i % len(queries)]
        # Never asked before, so the cache cannot answer it, yet the same question: the letters'
        # case spells the request's number (the lexical search folds case, MiniLM is uncased).
        n = next(counter) + 1
        query = "".join(c.upper() if n >> j & 1 else c for j, c in enumerate(base))

        def check(_status: int, body: bytes) -> None:
            h.check_answer(json.loads(body), base, TOP_K, mode="hybrid")

        return http_request("POST", SEARCH, key, {"query": query}), check

    def listing(i: int) -> Request:
        def check(_status: int, body: bytes) -> None:
            if len(json.loads(body)["recall_files"]) != 50:
                raise h.WrongAnswer("a list page without 50 files")

        return http_request("GET", f"{COLLECTION}?limit=50", key), check

    def committing(who: str, token: str) -> Callable[[int], Request]:
        def make(i: int) -> Request:
            n = next(counter)
            lines = "\n".join(f"- {who} note {n} line {j}: the {j}th step of release {n}" for j in range(LINES))
            body = {"recall_files": [{"name": f"{who}-{n}", "description": f"{who} note {n}", "content": lines}]}

            def check(_status: int, raw: bytes) -> None:
                if json.loads(raw)["stats"]["files_written"] != 1:
                    raise h.WrongAnswer(f"commit {who}-{n} did not write its file")

            return http_request("POST", COLLECTION, token, body), check

        return make

    def row(name: str, label: str, floor_port: int | None = None, **kw: Any) -> None:
        if only and name not in only:
            return
        targets = [("", floor_port, floor_pid)] if floor_port else [(tag, p, sp.pid) for tag, p, sp in servers]
        runs: dict[str, list[Run]] = {tag: [] for tag, _, _ in targets}
        for _ in range(args.runs):
            for tag, target, pid in targets:  # interleaved: a peer's run beside each run of ours
                runs[tag].append(drive(target, pid, duration=args.duration, every=args.write_every, **kw))
        for tag, _, _ in targets:
            per = summarize(runs[tag])["runs"]
            writes = ""
            if kw.get("writer") is not None:
                worst = max(p["write_p99"] for p in per)
                writes = f"{sum(p['writes'] for p in per)} commits, slowest {worst * 1000:.0f} ms"
            rows.append(
                [
                    label + tag,
                    cell(per, "rps"),
                    cell(per, "p50", 1000, 1),
                    cell(per, "p99", 1000, 1),
                    f"{sum(p['errors'] for p in per)} / {sum(p['busy'] for p in per)}",
                    f"{statistics.median(p['server_ms'] for p in per):.2f} / "
                    f"{statistics.median(p['client_us'] for p in per):.0f}",
                    writes or "—",
                ]
            )
            print(" | ".join(rows[-1]), f"load {os.getloadavg()[0]:.1f}", flush=True)

    floor_proc = None
    try:
        # Warm every query once (MiniLM loaded, dense matrix built) and keep one answer for the floor.
        import urllib.request

        answer = b""
        for _, warm_port, _ in reversed(servers):  # ours last: its answer is the floor's
            for query in queries:
                req = urllib.request.Request(
                    f"http://127.0.0.1:{warm_port}{SEARCH}",
                    data=json.dumps({"query": query}).encode(),
                    headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
                )
                with urllib.request.urlopen(req, timeout=300) as r:
                    answer = r.read()
                h.check_answer(json.loads(answer), query, TOP_K, mode="hybrid")
        (tmp / "answer.json").write_bytes(answer)
        floor_port = free_port()
        floor_proc = subprocess.Popen(
            [sys.executable, "-c", FLOOR_APP, str(floor_port), str(tmp / "answer.json")],
            env=env,
            stderr=subprocess.DEVNULL,
        )
        wait_until_up(floor_port, floor_proc)
        floor_pid = floor_proc.pid

        def floor_make(i: int) -> Request:
            def check(_status: int, body: bytes) -> None:
                if body != answer:
                    raise h.WrongAnswer("the floor server changed its answer")

            return http_request("POST", "/healthz", key, {"query": "x"}), check

        other = committing("writer", writer_key)
        same = committing("teammate", key)
        counts = [int(c) for c in args.clients.split(",")]
        # Rows that write to the searched scope come last: each of their commits drops every
        # cached answer of that scope, which the rows after them would start without.
        for clients in counts:
            row(
                "floor", f"floor: fixed answer, no app, {clients} clients", floor_port, make=floor_make, clients=clients
            )
            row("search", f"search, {clients} clients", make=search, clients=clients)
            row(
                "search-writer",
                f"search, {clients} clients + writer (other user)",
                make=search,
                clients=clients,
                writer=other,
            )
            row("search-new", f"search, every query new, {clients} clients", make=search_new, clients=clients)
            row("list", f"list (50 files), {clients} clients + writer", make=listing, clients=clients, writer=other)

        def write_then_search(i: int) -> Request:
            return same(i) if i % 2 == 0 else search_new(i)

        # One client: a commit to the searched scope, then a question never asked, and again: the
        # server's CPU per pair is twice the per-request figure (the commit embeds its lines).
        row("write-search", "commit, then a new search in its scope, 1 client", make=write_then_search, clients=1)
        for clients in counts:
            row(
                "search-same",
                f"search, {clients} clients + writer (same scope)",
                make=search,
                clients=clients,
                writer=same,
            )
            row("commit", f"commit (1 new file each), {clients} clients", make=committing("c", key), clients=clients)
    finally:
        for p in (*(sp for _, _, sp in servers), floor_proc):
            if p is not None:
                p.send_signal(signal.SIGTERM)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    p.wait(60)
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"\nStore: {args.files:,} files (~20 lines each), SQLite; server: memu-server serve defaults, MiniLM (ONNX).")
    every = args.write_every
    print(f"{args.runs} runs x {args.duration:.0f} s per row; writer: one new {LINES}-line file every {every} s.\n")
    header = ["load", "req/s", "p50 ms", "p99 ms", "errors / 503s", "CPU per request: server ms / client µs", "writer"]
    print(h.table(header, rows))
    print(f"\nload average at end: {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    sys.exit(main())
