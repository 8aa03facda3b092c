"""Benchmark: ``memu-claude-code prepare`` over 100 and 1,000 Claude Code sessions (~200 records each).

For each corpus size, generates the sessions from a fixed seed in a temp dir (≈170 MB for
1,000), then times, as a fresh process each run (what a scheduled run pays):

- first run: ``prepare`` mining every session (``--max-jobs N``, empty cursor);
- steady state: ``prepare`` after one session grew by a few records (the cursor covers
  everything else; each run is followed by an untimed ``commit``).

Prints median and min-max of several runs. Budgets (1,000 sessions): first run ≤ 1.75 s,
steady state ≤ 0.4 s.

    python tests/bench/bench_prepare.py [--runs 5] [--sessions 100,1000] [--records 200]
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
from pathlib import Path

import _harness

WORDS = (
    "the",
    "build",
    "fails",
    "when",
    "pytest",
    "runs",
    "the",
    "integration",
    "suite",
    "against",
    "sqlite",
    "because",
    "the",
    "fixture",
    "opens",
    "a",
    "second",
    "connection",
    "without",
    "WAL",
    "and",
    "the",
    "migration",
    "step",
    "races",
    "with",
    "the",
    "writer",
    "so",
    "we",
    "pin",
    "the",
    "connection",
    "and",
    "retry",
    "the",
    "upgrade",
    "after",
    "checking",
    "the",
    "alembic",
    "revision",
    "in",
    "the",
    "store",
    "deploy",
    "config",
    "docker",
    "compose",
    "kubernetes",
    "helm",
    "chart",
    "values",
    "staging",
    "production",
    "rollback",
)


def _text(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def _record(rng: random.Random, i: int, session: str, ts: str) -> dict[str, object]:
    base = {
        "parentUuid": f"p{i}",
        "isSidechain": False,
        "userType": "external",
        "cwd": "/home/u/proj",
        "sessionId": session,
        "version": "2.1.220",
        "gitBranch": "main",
        "uuid": f"u{i}",
        "timestamp": ts,
    }
    roll = rng.random()
    if roll < 0.15:
        return {
            **base,
            "type": "user",
            "message": {"role": "user", "content": _text(rng, rng.randint(8, 60))},
        }
    if roll < 0.35:
        blocks: list[dict[str, object]] = [{"type": "text", "text": _text(rng, rng.randint(20, 120))}]
        return {**base, "type": "assistant", "message": {"role": "assistant", "content": blocks}}
    if roll < 0.55:
        blocks = [
            {"type": "thinking", "thinking": _text(rng, 30), "signature": "x" * 40},
            {
                "type": "tool_use",
                "id": f"t{i}",
                "name": "Bash",
                "input": {
                    "command": f"pytest -q tests/test_{rng.randint(1, 99)}.py",
                    "description": _text(rng, 6),
                },
            },
        ]
        return {**base, "type": "assistant", "message": {"role": "assistant", "content": blocks}}
    if roll < 0.85:
        out = "\n".join(_text(rng, 14) for _ in range(rng.randint(4, 20)))
        blocks = [{"type": "tool_result", "tool_use_id": f"t{i}", "content": out}]
        return {**base, "type": "user", "message": {"role": "user", "content": blocks}}
    if roll < 0.93:
        return {**base, "type": "attachment", "attachment": {"type": "file", "content": _text(rng, 40)}}
    return {"type": "queue-operation", "operation": "enqueue", "timestamp": ts, "content": _text(rng, 10)}


def generate(root: Path, sessions: int, records: int, seed: int = 7) -> int:
    """Write the sessions; return the total bytes."""
    rng = random.Random(seed)
    total = 0
    now = time.time()
    for s in range(sessions):
        slug = root / f"-home-u-proj{s % 25}"
        slug.mkdir(parents=True, exist_ok=True)
        sid = f"{s:08d}-0000-4000-8000-{rng.getrandbits(48):012x}"
        lines = [
            json.dumps(
                _record(rng, i, sid, f"2026-08-{1 + s % 28:02d}T10:{i % 60:02d}:00Z"), separators=(",", ":")
            )
            for i in range(records)
        ]
        data = "\n".join(lines) + "\n"
        path = slug / f"{sid}.jsonl"
        path.write_text(data, encoding="utf-8")
        mtime = now - (sessions - s) * 60
        os.utime(path, (mtime, mtime))
        total += len(data.encode("utf-8"))
    return total


CPU: list[float] = []
"""CPU seconds (user + sys, worker processes included) of each timed run, in order."""


def _run(args: list[str], env: dict[str, str]) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(args, env=env, capture_output=True, text=True)
    took = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU.append((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime))
    if proc.returncode != 0:
        sys.exit(f"{' '.join(args)} failed ({proc.returncode}): {proc.stderr.strip()}")
    return took


def _summary(label: str, times: list[float], budget: float | None, cpu: list[float]) -> None:
    med = statistics.median(times)
    if budget is None:
        verdict = "no budget at this size"
    else:
        verdict = f"{'within' if med <= budget else 'OVER'} the {budget} s budget"
    print(
        f"{label}: median {med:.3f} s, min-max {min(times):.3f}-{max(times):.3f} s over {len(times)} runs "
        f"({verdict})"
    )
    # Wall time on a shared machine depends on its load; CPU time much less so.
    print(
        f"  CPU user+sys median {statistics.median(cpu):.3f} s, min-max {min(cpu):.3f}-{max(cpu):.3f} s; "
        f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs"
    )


BUDGETS = {1000: (1.75, 0.4)}
"""(first run, steady state) budgets in seconds by corpus size."""


def main() -> None:
    """Generate, run, report, for each corpus size."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--sessions", default="100,1000", help="comma-separated corpus sizes")
    parser.add_argument("--records", type=int, default=200)
    opts = parser.parse_args()
    binary = shutil.which("memu-claude-code") or str(Path(sys.executable).with_name("memu-claude-code"))
    print("## Prepare: mining Claude Code sessions\n")
    print(_harness.machine_line())
    for size in (int(n) for n in opts.sessions.split(",") if n.strip()):
        with tempfile.TemporaryDirectory(prefix="memu-bench-prepare-") as tmp:
            _bench_size(binary, Path(tmp), size, opts.records, opts.runs)


def _bench_size(binary: str, work: Path, count: int, records: int, runs: int) -> None:
    """Time first and steady-state runs over ``count`` generated sessions in ``work``."""
    home = work / "home"
    home.mkdir()
    sessions = work / "projects"
    size = generate(sessions, count, records)
    print(f"\n{count} sessions x {records} records = {size / 1e6:.0f} MB")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMU_") and k != "CLAUDE_CODE_SESSION_ID"}
    env.update(
        MEMU_SERVE_AUTOSTART="0",
        HOME=str(home),
        MEMU_DB=str(work / "memu.sqlite3"),
        MEMU_EMBED_PROVIDER="none",
        MEMU_COWORK_ROOTS="",
        HF_HUB_OFFLINE="1",
    )
    first_budget, steady_budget = BUDGETS.get(count, (None, None))
    common = ["--session-dir", str(sessions)]
    # Warm the page cache and create the store once, untimed.
    _run([binary, "prepare", *common, "--base-dir", str(work / "warm"), "--max-jobs", "1"], env)

    first: list[float] = []
    CPU.clear()
    for i in range(runs):
        base = work / f"first{i}"
        first.append(_run([binary, "prepare", *common, "--base-dir", str(base), "--max-jobs", str(count)], env))
    _summary("first run, mining all sessions", first, first_budget, list(CPU))

    steady_base = work / "first0"
    _run([binary, "commit", "--base-dir", str(steady_base)], env)
    rng = random.Random(11)
    files = sorted(sessions.rglob("*.jsonl"))
    steady: list[float] = []
    steady_cpu: list[float] = []
    for i in range(runs):
        grown = files[rng.randrange(len(files))]
        with grown.open("a", encoding="utf-8") as fh:
            for j in range(5):
                fh.write(json.dumps(_record(rng, 10_000 + i * 10 + j, grown.stem, "2026-09-01T00:00:00Z")) + "\n")
        steady.append(_run([binary, "prepare", *common, "--base-dir", str(steady_base)], env))
        steady_cpu.append(CPU[-1])
        _run([binary, "commit", "--base-dir", str(steady_base)], env)
    _summary("steady state, one session grew", steady, steady_budget, steady_cpu)

if __name__ == "__main__":
    main()
