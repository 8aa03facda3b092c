"""What telemetry costs the per-turn ``retrieve``: on (with an endpoint configured) against off.

Run: ``python tests/bench/bench_telemetry.py [--files 2000] [--runs 15]``

Times ``memu-claude-code retrieve QUERY`` as a fresh process, the way an agent's turn runs it, in
four rows side by side in one run (each repetition runs the off and on forms back to back, so a
busy machine slows both alike):

- warm: ``memu serve`` holds the store; both take the light client (:mod:`memu_core._serve.turn`),
  on also spools one ``memory_search_succeeded`` itself (ADR 0022);
- cold: no server (``MEMU_SERVE_AUTOSTART=0``), lexical search in the process, off and on.

"On" is ``MEMU_TELEMETRY=1`` with ``MEMU_EVENTS_BASE_URL`` naming a real endpoint on 127.0.0.1.
Before any figure is reported the run checks that every answer holds its planted file, that each
"on" turn added exactly one event to the spool and "off" none, that the endpoint heard nothing
during the turns (retrieve spools, never sends), and that ``memu events flush`` then delivers them.
"""

from __future__ import annotations

import argparse
import json
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import _harness as h

TOP_K = 5
ROUTE = "/api/memu/analytics/events"


class Endpoint:
    """memU's ingest route on 127.0.0.1: accepts every POST and counts the events it received."""

    def __init__(self) -> None:
        self.received: list[dict[str, Any]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.path == ROUTE:
                    outer.received.append(json.loads(body))
                self.send_response(202 if self.path == ROUTE else 404)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}{ROUTE}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def build_store(path: Path, files: int) -> None:
    """``files`` generated memory files (~20 lines each) and the planted answers, lexical only."""
    from memu_core._engine.engine import LocalEngine
    from memu_core._stores.sqlite.store import SqliteStore

    engine = LocalEngine(SqliteStore.open(str(path)), embedder=None)
    corpus = h.generate_files(files, prefix="tel", lines=(18, 22))
    for start in range(0, len(corpus), 500):
        engine.commit_results(recall_files=corpus[start : start + 500])
    engine.commit_results(recall_files=h.planted_files())
    engine.close()


def binary(name: str) -> str:
    beside = Path(sys.executable).with_name(name)
    return str(beside) if beside.exists() else (shutil.which(name) or name)


def serve_status(env: dict[str, str]) -> dict[str, Any] | None:
    code = "import json; from memu_core._serve import client; print(json.dumps(client.status()))"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    return json.loads(out.stdout) if out.returncode == 0 and out.stdout.strip() not in ("", "null") else None


def start_warm(env: dict[str, str]) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen([sys.executable, "-m", "memu_core._serve"], env=env, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 300
    while serve_status(env) is None:
        if proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"memu serve did not start: {proc.stderr.read().decode() if proc.stderr else ''}")
        time.sleep(0.3)
    return proc


def spooled(spool: Path) -> list[dict[str, Any]]:
    if not spool.exists():
        return []
    return [json.loads(line) for line in spool.read_text(encoding="utf-8").splitlines() if line.strip()]


def side_by_side(
    envs: dict[str, dict[str, str]], queries: list[str], runs: int, spool: Path, endpoint: Endpoint
) -> dict[str, h.Stats]:
    """Each repetition runs every form once (alternating which goes first); every answer and the
    spool's growth are checked after its run, outside the timed region."""
    cmd = binary("memu-claude-code")
    samples: dict[str, list[float]] = {name: [] for name in envs}
    names = list(envs)
    for i in range(runs + 1):  # the first round warms the page cache and is not kept
        order = names if i % 2 == 0 else names[::-1]
        for name in order:
            query = queries[i % len(queries)]
            before = len(spooled(spool))
            run = h.run_process([cmd, "retrieve", query], env=envs[name], timeout=120)
            if run.returncode != 0:
                raise RuntimeError(f"{name}: retrieve exited {run.returncode}: {run.stderr.strip()[-400:]}")
            h.check_output(run.stdout, query, TOP_K)
            added = spooled(spool)[before:]
            want = 1 if envs[name].get("MEMU_TELEMETRY") == "1" else 0
            if len(added) != want or any(e["event_name"] != "memory_search_succeeded" for e in added):
                raise AssertionError(f"{name}: the turn spooled {[e['event_name'] for e in added]}, expected {want}")
            if any(set(e["properties"]) != {"result_count", "latency_ms"} for e in added):
                raise AssertionError(f"{name}: the turn's event carried {[sorted(e['properties']) for e in added]}")
            if endpoint.received:
                raise AssertionError(f"{name}: a retrieve sent {len(endpoint.received)} event(s) inline")
            if i:
                samples[name].append(run.seconds)
    return {name: h.Stats(values) for name, values in samples.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()

    print(h.machine_line())
    queries = h.queries(h.PLANTED_QUERIES)
    tmp = Path(tempfile.mkdtemp(prefix="mut", dir="/tmp"))  # short: Unix socket paths are capped
    endpoint = Endpoint()
    try:
        db = tmp / "memu.sqlite3"
        build_store(db, args.files)
        spool = tmp / "events.jsonl"
        off = h.isolated_env(
            tmp, MEMU_DB=str(db), MEMU_EMBED_PROVIDER="none", MEMU_SERVE_IDLE="0", MEMU_EVENTS_SPOOL=str(spool)
        )
        off.pop("DO_NOT_TRACK", None)
        on = {**off, "MEMU_TELEMETRY": "1", "MEMU_EVENTS_BASE_URL": endpoint.url}
        # init records the machine's client id, as an install does; without it the first event
        # would mint one into config.env, and the changed file would stop the warm server once.
        subprocess.run([binary("memu"), "init"], env=off, capture_output=True, check=True, timeout=120)
        server = start_warm(off)
        try:
            warm = side_by_side({"off": off, "on": on}, queries, args.runs, spool, endpoint)
            handled = (serve_status(off) or {}).get("requests", 0)
            if handled < 2 * (args.runs + 1):
                raise RuntimeError(f"only {handled} retrieves reached the warm server")
        finally:
            server.send_signal(signal.SIGTERM)
            server.wait(60)
        cold = side_by_side({"off": off, "on": on}, queries, args.runs, spool, endpoint)
        recorded = len(spooled(spool))
        flushed = subprocess.run(
            [binary("memu"), "events", "flush"], env=on, capture_output=True, text=True, timeout=120
        )
        if flushed.returncode != 0 or len(endpoint.received) != recorded or spooled(spool):
            raise AssertionError(
                f"flush delivered {len(endpoint.received)} of {recorded} events: {flushed.stdout}{flushed.stderr}"
            )
    finally:
        endpoint.close()
        shutil.rmtree(tmp, ignore_errors=True)

    rows = []
    for label, stats in (("warm (`memu serve` up)", warm), ("cold (no server, lexical)", cold)):
        delta = (stats["on"].median - stats["off"].median) * 1000
        rows.append([label, stats["off"].cell(), stats["on"].cell(), f"{delta:+.1f} ms"])
    print()
    print(f"`memu-claude-code retrieve` on a {args.files:,}-file store, {args.runs} runs of each form side by side;")
    print("telemetry on = `MEMU_TELEMETRY=1` and `MEMU_EVENTS_BASE_URL` set (a local endpoint). Every answer held")
    print('its planted file; each "on" turn spooled one event and sent nothing; `memu events flush` then')
    print(f"delivered all {recorded}.")
    print()
    print(h.table(["per-turn retrieve", "telemetry off", "telemetry on", "on − off (medians)"], rows))


if __name__ == "__main__":
    main()
