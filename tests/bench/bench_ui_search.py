"""``memu ui``'s search page on the 10,000-file store (warm), beside the engine's own retrieve.

    python tests/bench/bench_ui_search.py [--runs 3] [--size 10000]

The store is ``_harness.store_path(size, vectors=True)`` (stand-in vectors under MiniLM's
fingerprint; every query is embedded by the real MiniLM model), copied to a temporary folder
so the page's store is private. One page (``memu ui``'s own server: the stdlib WSGI server on
127.0.0.1, in this process) answers ``GET /search?q=...`` over a fresh connection per request,
as a browser's first request does, signed in by its cookie. In the same run, request by request
in rotating order, the same page as one WSGI call in this process (the page without HTTP) and
its peer, ``progressive_retrieve`` called on the same engine (what the page adds on top: the
explanation of each line, the HTML, then HTTP).

Every timed answer is checked before its time counts: the page must list lines whose first
five name the query's planted file (``_harness.planted_name``) and must have searched in the
mode it was asked for; the engine's answer goes through ``_harness.check_answer``.
"""

from __future__ import annotations

import argparse
import http.client
import io
import re
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

import _harness as h

TOP_K = 20
"""Lines the page asks for (its default)."""
CHECK_K = 5


def page_search(host: str, port: int, cookie: str, query: str, mode: str) -> str:
    conn = http.client.HTTPConnection(host, port, timeout=60)
    conn.request("GET", "/search?" + urlencode({"q": query, "mode": mode}), headers={"Cookie": cookie})
    response = conn.getresponse()
    body = response.read().decode("utf-8")
    conn.close()
    if response.status != 200:
        raise h.WrongAnswer(f"{query!r}: the page answered {response.status}: {body[:200]}")
    return body


def wsgi_search(app: Any, cookie: str, query: str, mode: str) -> str:
    """The same page as one WSGI call in this process: what the page costs without HTTP."""
    environ = {
        "REQUEST_METHOD": "GET",
        "PATH_INFO": "/search",
        "QUERY_STRING": urlencode({"q": query, "mode": mode}),
        "HTTP_COOKIE": cookie,
        "HTTP_HOST": app.allowed_hosts and next(iter(app.allowed_hosts)),
        "wsgi.url_scheme": "http",
        "wsgi.input": io.BytesIO(),
    }
    status: list[str] = []
    body = b"".join(app(environ, lambda s, _h: status.append(s))).decode("utf-8")
    if not status or not status[0].startswith("200"):
        raise h.WrongAnswer(f"{query!r}: the page answered {status}: {body[:200]}")
    return body


def check_page(body: str, query: str, mode: str) -> None:
    """The page's first :data:`CHECK_K` lines name the planted file, searched in ``mode``."""
    said = "searched by words and meaning" if mode == "hybrid" else "searched by words only"
    if said not in body:
        raise h.WrongAnswer(f"{query!r}: the page did not search in {mode} mode")
    names = re.findall(r'<a href="/file\?track=[^&]+&amp;name=([^"&]+)">', body)
    want = h.planted_name(query)
    if want not in names[:CHECK_K]:
        raise h.WrongAnswer(f"{query!r} ({mode}): {want} not among the page's first {CHECK_K} lines {names[:CHECK_K]}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="rounds over every planted query")
    parser.add_argument("--size", type=int, default=10_000)
    args = parser.parse_args(argv)

    from memu_embed_local import LocalEmbedder

    from memu_core._engine.engine import LocalEngine
    from memu_core._stores.sqlite.store import SqliteStore
    from memu_core._ui.server import start

    print(h.machine_line())
    source = h.store_path(args.size, vectors=True)
    tmp = Path(tempfile.mkdtemp(prefix="memu-bench-ui-"))
    try:
        db = tmp / "store.db"
        # SQLite's backup copies what the cached store's write-ahead log holds too.
        with sqlite3.connect(source) as src, sqlite3.connect(db) as dst:
            src.backup(dst)
        # The page and the engine ask each question in turn: none may answer from another's caches.
        engine = h.without_answer_caches(LocalEngine(SqliteStore.open(str(db)), embedder=LocalEmbedder()))
        running = start(engine).start_background()
        parts = urlsplit(running.url)
        host, port = parts.hostname or "", parts.port or 0
        conn = http.client.HTTPConnection(host, port, timeout=60)
        conn.request("GET", f"/?{parts.query}")
        cookie = (conn.getresponse().getheader("Set-Cookie") or "").split(";", 1)[0]
        conn.close()
        queries = h.queries(h.PLANTED_QUERIES)
        samples: dict[str, list[float]] = {}
        for mode in ("hybrid", "lexical"):
            for query in queries[:3]:  # warm: model, index, caches
                check_page(page_search(host, port, cookie, query, mode), query, mode)
            for round_ in range(args.runs):
                for i, query in enumerate(queries):
                    order = ("page", "page without HTTP", "engine")
                    shift = (i + round_) % len(order)
                    for who in order[shift:] + order[:shift]:
                        started = time.perf_counter()
                        if who == "page":
                            out: Any = page_search(host, port, cookie, query, mode)
                        elif who == "page without HTTP":
                            out = wsgi_search(running.app, cookie, query, mode)
                        else:
                            out = engine.progressive_retrieve(query, top_k=TOP_K, mode=mode)
                        took = time.perf_counter() - started
                        if who == "engine":
                            h.check_answer(out, query, CHECK_K, mode=mode)
                        else:
                            check_page(out, query, mode)
                        samples.setdefault(f"{who} {mode}", []).append(took)
        running.stop()
        engine.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    rows = []
    for label, values in samples.items():
        stats = h.Stats(values)
        rows.append([label, f"{len(values)}", stats.cell(), f"{statistics.quantiles(values, n=10)[-1] * 1000:.1f} ms"])
    print(f"\n{args.size:,} files, {len(queries)} planted queries x {args.runs} rounds, every answer checked\n")
    print(h.table(["request", "n", "median (min-max)", "p90"], rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
