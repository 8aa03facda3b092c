"""Benchmark: ``prepare`` over the SQLite-backed hosts (Hermes ``state.db``, OpenClaw stores).

Builds, from a fixed seed in a temp home, a Hermes database and an OpenClaw agent store (WAL,
the hosts' schemas) with ``--sessions`` sessions of ``--records`` rows each, then times as a
fresh process per run (what a scheduled run pays):

- first run: ``prepare --max-jobs <sessions>`` with an empty cursor (every session mined);
- steady state: ``prepare`` after one session gained two rows (each run followed by an
  untimed ``commit``, so the cursor covers everything else).

Prints the median and min-max over ``--runs`` runs.

    python tests/bench/bench_hosts_sqlite.py [--runs 5] [--sessions 500] [--records 100]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from memu_host_hermes.testing import create_state_db
from memu_host_openclaw.testing import create_agent_db

SEED = 20240217
WORDS = [
    "deploy",
    "the",
    "service",
    "with",
    "make",
    "ship",
    "and",
    "check",
    "the",
    "dashboard",
    "before",
    "lunch",
    "on",
    "friday",
]


def _text(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 40)))


def build_hermes(home: Path, sessions: int, records: int, rng: random.Random) -> Callable[[], None]:
    conn = create_state_db(home / ".hermes" / "state.db")
    rows = []
    for s in range(sessions):
        for r in range(records):
            role = ("user", "assistant", "tool")[r % 3]
            rows.append((f"2026_{s:05}.x", role, _text(rng), 1_700_000_000.0 + s * 1000 + r))
    conn.execute("BEGIN")
    conn.executemany("INSERT INTO messages(session_id, role, content, timestamp) VALUES (?, ?, ?, ?)", rows)
    conn.execute("COMMIT")

    def grow() -> None:
        now = time.time()
        conn.execute(
            "INSERT INTO messages(session_id, role, content, timestamp)"
            " VALUES (?, 'user', ?, ?), (?, 'assistant', ?, ?)",
            ("2026_00000.x", _text(rng), now, "2026_00000.x", _text(rng), now + 0.5),
        )

    return grow


def build_openclaw(home: Path, sessions: int, records: int, rng: random.Random) -> Callable[[], None]:
    conn = create_agent_db(home / ".openclaw" / "agents" / "main" / "agent" / "openclaw-agent.sqlite")
    conn.execute("BEGIN")
    for s in range(sessions):
        sid = f"s{s:05}"
        conn.execute("INSERT INTO session_windows VALUES (?, ?, 'new', NULL)", (sid, f"agent:main:{sid}"))
        conn.execute("INSERT INTO transcript_rewrite_watermarks VALUES (?, 'g1', 0)", (sid,))
        for r in range(records):
            role = ("user", "assistant", "toolResult")[r % 3]
            entry = {
                "type": "message",
                "message": {"role": role, "content": [{"type": "text", "text": _text(rng)}]},
            }
            conn.execute(
                "INSERT INTO transcript_events VALUES (?, ?, ?, ?)",
                (sid, r, json.dumps(entry), 1_700_000_000_000 + s * 1_000_000 + r),
            )
    conn.execute("COMMIT")
    state = {"seq": records}

    def grow() -> None:
        for _ in range(2):
            entry = {
                "type": "message",
                "message": {"role": "user", "content": [{"type": "text", "text": _text(rng)}]},
            }
            conn.execute(
                "INSERT INTO transcript_events VALUES ('s00000', ?, ?, ?)",
                (state["seq"], json.dumps(entry), int(time.time() * 1000) + state["seq"]),
            )
            state["seq"] += 1

    return grow


def _cmd(binary: str, home: Path, *args: str) -> float:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMU_", "HERMES_"))}
    env.update(HOME=str(home), MEMU_EMBED_PROVIDER="none", MEMU_SERVE_AUTOSTART="0")
    exe = shutil.which(binary) or str(Path(sys.executable).with_name(binary))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([exe, *args], env=env, check=True, capture_output=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    return wall


CPU: list[float] = []
"""CPU seconds (user + system) of each timed child: steadier than wall time on a shared machine."""


def _cell(samples: list[float]) -> str:
    return f"{statistics.median(samples) * 1000:.0f} ms ({min(samples) * 1000:.0f}-{max(samples) * 1000:.0f})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--sessions", type=int, default=500)
    ap.add_argument("--records", type=int, default=100)
    args = ap.parse_args()
    print("| host | sessions × rows | first run (wall) | first run (CPU) | steady (wall) | steady (CPU) |")
    print("|---|---|---|---|---|---|")
    for host, binary, build in (
        ("hermes", "memu-hermes", build_hermes),
        ("openclaw", "memu-openclaw", build_openclaw),
    ):
        with tempfile.TemporaryDirectory() as tmp:
            home = Path(tmp)
            grow = build(home, args.sessions, args.records, random.Random(SEED))
            base = home / ".memu" / "hosts" / host
            first: list[float] = []
            first_cpu: list[float] = []
            for _ in range(args.runs):
                shutil.rmtree(base, ignore_errors=True)
                first.append(_cmd(binary, home, "prepare", "--max-jobs", str(args.sessions)))
                first_cpu.append(CPU[-1])
            _cmd(binary, home, "commit")
            steady: list[float] = []
            steady_cpu: list[float] = []
            for _ in range(args.runs):
                grow()
                steady.append(_cmd(binary, home, "prepare"))
                steady_cpu.append(CPU[-1])
                _cmd(binary, home, "commit")
            print(
                f"| {host} | {args.sessions} × {args.records} | {_cell(first)} | {_cell(first_cpu)} "
                f"| {_cell(steady)} | {_cell(steady_cpu)} |"
            )


if __name__ == "__main__":
    main()
