"""Benchmark: ``memu-claude-code prepare`` over 100 and 1,000 Claude Code sessions (~200 records each),
beside memU 0.10's own ``memu-claude-code prepare`` on the same sessions, in one interleaved run.

For each corpus size, generates the sessions from a fixed seed in a temp dir (≈170 MB for
1,000), then times, as a fresh process each run (what a scheduled run pays):

- first run: ``prepare`` mining every session (``--max-jobs N``, empty cursor), memu's and memU's
  alternately (which goes first alternates too), each followed by a check of what it wrote (N
  conversation and N full slices, 2N+1 job files, every slice line a JSON object) before its
  time counts;
- steady state: ``prepare`` after one session grew by a few records (the cursor covers
  everything else; each run is followed by an untimed ``commit``), memu and memU alike;
- the floor: ``python -c pass`` (the interpreter's start), in the same run;
- the file-creation floor: a process creating as many small files as a first run leaves (``2N``
  slices and ``2N + 1`` jobs, so ``4N + 1``) in a new folder of the same temp dir, in the same run.
  Both tools create that many files, and on a file system without a journal ext4 makes each new
  inode skip the inodes freed in the last 30 s to 5 min (anyone's), which can cost ten times the
  usual 20-30 µs per file where the temp dir's block groups saw many deletions. The line shows
  how much of each first run's system time that was.

Every process runs with bytecode caches (``PYTHONPYCACHEPREFIX`` in the temp directory, filled
by untimed warm-up runs), as an installed program has them, whatever the caller's
``PYTHONDONTWRITEBYTECODE``.

memU comes from ``memu-cli==0.10.0`` installed into its own virtual environment (``--memu-venv``,
default: a folder in the temp directory, created and installed on first use; ``--no-memu`` skips
it). Prints median and min-max of wall and CPU (user + sys, workers included) for each, the
ratios of the medians, and the load average.

    python tests/bench/bench_prepare.py [--runs 5] [--sessions 100,1000] [--records 200] [--memu-venv DIR]
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
from dataclasses import dataclass, field
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
            json.dumps(_record(rng, i, sid, f"2026-08-{1 + s % 28:02d}T10:{i % 60:02d}:00Z"), separators=(",", ":"))
            for i in range(records)
        ]
        data = "\n".join(lines) + "\n"
        path = slug / f"{sid}.jsonl"
        path.write_text(data, encoding="utf-8")
        mtime = now - (sessions - s) * 60
        os.utime(path, (mtime, mtime))
        total += len(data.encode("utf-8"))
    return total


MEMU_PEER = "memu-cli==0.10.0"
"""memU's distribution and version, the peer of this benchmark."""
LAST_MEMU = "memU 0.10 last measured (issue 20, a quiet 2-core machine): first run wall 3.31 s, CPU 3.4 s; steady 1.0 s"


@dataclass
class Timed:
    """Wall and CPU seconds of one kind of run, in order."""

    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    user: list[float] = field(default_factory=list)
    """The user part of ``cpu``: the rest is the kernel's (file creation, page cache), which on
    a disk shared with other work varies more than the program's own."""

    def line(self, label: str) -> str:
        """``label: wall median (min-max), CPU median (min-max), user and system CPU median (min-max)``."""
        w, c, u = self.wall, self.cpu, self.user
        # The system part apart: on a file system without a journal, ext4's inode allocation after
        # recent deletions (anyone's) can cost more than the program's own work (ADR 0026).
        k = [total - user for total, user in zip(c, u, strict=True)]
        return (
            f"{label}: wall {statistics.median(w):.3f} s ({min(w):.3f}-{max(w):.3f}), "
            f"CPU {statistics.median(c):.3f} s ({min(c):.3f}-{max(c):.3f}), "
            f"of it user {statistics.median(u):.3f} s ({min(u):.3f}-{max(u):.3f}), "
            f"system {statistics.median(k):.3f} s ({min(k):.3f}-{max(k):.3f}) over {len(w)} runs"
        )


def _run(args: list[str], env: dict[str, str], into: Timed | None = None) -> None:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(args, env=env, capture_output=True, text=True)
    took = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        sys.exit(f"{' '.join(args)} failed ({proc.returncode}): {proc.stderr.strip()}")
    if into is not None:
        into.wall.append(took)
        into.cpu.append((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime))
        into.user.append(after.ru_utime - before.ru_utime)


CREATE_FILES = (
    "import os, sys\n"
    "folder = sys.argv[1]\n"
    "os.mkdir(folder)\n"
    "for i in range(int(sys.argv[2])):\n"
    "    fd = os.open(os.path.join(folder, f'{i}.txt'), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)\n"
    "    os.write(fd, b'x' * 2048)\n"
    "    os.close(fd)\n"
)
"""The file-creation floor's process: ``argv[2]`` new 2 KB files in the new folder ``argv[1]``
(kept to the end: deleting them would slow the next runs' file creation)."""


def _check(base: Path, sessions: int) -> None:
    """What a first run must have written before its time counts: ``sessions`` conversation and
    full slices, ``2 × sessions + 1`` jobs, and slice lines that are JSON objects."""
    slices = sorted((base / "sessions").glob("*.jsonl"))
    jobs = list((base / "jobs").glob("*.txt"))
    full = [p for p in slices if p.stem.endswith("_full")]
    if len(full) != sessions or len(slices) != 2 * sessions or len(jobs) != 2 * sessions + 1:
        sys.exit(f"{base}: {len(slices)} slices and {len(jobs)} jobs for {sessions} sessions")
    for path in (full[0], full[-1]):
        for line in path.read_text(encoding="utf-8").splitlines():
            if not isinstance(json.loads(line), dict):
                sys.exit(f"{path}: a slice line that is not a JSON object")


def memu_peer(venv: Path) -> tuple[str | None, str]:
    """memU's ``memu-claude-code`` from ``venv`` (created and installed if missing), or ``None``
    and why not."""
    binary = venv / "bin" / "memu-claude-code"
    if binary.exists():
        return str(binary), f"{MEMU_PEER} from its own virtual environment"
    try:
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True)
        subprocess.run(
            [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", MEMU_PEER],
            check=True,
            capture_output=True,
            text=True,
            timeout=600,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        detail = getattr(exc, "stderr", "") or str(exc)
        return None, f"memU could not be installed ({detail.strip().splitlines()[-1:]}); {LAST_MEMU}"
    return str(binary), f"{MEMU_PEER} installed into its own virtual environment"


def main() -> None:
    """Generate, run, report, for each corpus size."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--sessions", default="100,1000", help="comma-separated corpus sizes")
    parser.add_argument("--records", type=int, default=200)
    parser.add_argument("--memu-venv", type=Path, default=Path(tempfile.gettempdir()) / "memu-bench-memu-0.10.0")
    parser.add_argument("--no-memu", action="store_true", help="time memu alone")
    opts = parser.parse_args()
    binary = shutil.which("memu-claude-code") or str(Path(sys.executable).with_name("memu-claude-code"))
    print("## Prepare: mining Claude Code sessions, beside memU 0.10\n")
    print(_harness.machine_line())
    peer, said = (None, f"memU skipped (--no-memu); {LAST_MEMU}") if opts.no_memu else memu_peer(opts.memu_venv)
    print(said)
    for size in (int(n) for n in opts.sessions.split(",") if n.strip()):
        with tempfile.TemporaryDirectory(prefix="memu-bench-prepare-") as tmp:
            _bench_size(binary, peer, Path(tmp), size, opts.records, opts.runs)


def _env(work: Path, home: Path, memu: bool) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMU_") and k != "CLAUDE_CODE_SESSION_ID"}
    env.update(HOME=str(home), MEMU_COWORK_ROOTS="", HF_HUB_OFFLINE="1")
    # Bytecode caches, as an installed program has them: with PYTHONDONTWRITEBYTECODE inherited,
    # every run compiled each module it imports again (about half the steady state's CPU). One
    # folder for both tools, filled by the untimed warm-up runs, so neither writes into a tree.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(work / "pycache")
    if memu:  # memU's local mode: its own SQLite store
        env.update(MEMU_MEMORY_MODE="local", MEMU_DB=str(work / "memU.sqlite3"))
    else:
        env.update(MEMU_SERVE_AUTOSTART="0", MEMU_DB=str(work / "memu.sqlite3"), MEMU_EMBED_PROVIDER="none")
    return env


def _bench_size(binary: str, peer: str | None, work: Path, count: int, records: int, runs: int) -> None:
    """Time first and steady-state runs over ``count`` generated sessions in ``work``."""
    sessions = work / "projects"
    size = generate(sessions, count, records)
    print(f"\n{count} sessions x {records} records = {size / 1e6:.0f} MB; load average {os.getloadavg()[0]:.1f}")
    tools = {"memu": (binary, _env(work, work / "home", False))}
    if peer is not None:
        tools["memU 0.10"] = (peer, _env(work, work / "home-memU", True))
    for _, env in tools.values():
        Path(env["HOME"]).mkdir()
    common = ["--session-dir", str(sessions)]
    # Warm the page cache and create each store once, untimed.
    for name, (exe, env) in tools.items():
        _run([exe, "prepare", *common, "--base-dir", str(work / f"warm-{name}"), "--max-jobs", "1"], env)

    floor = Timed()
    files_floor = Timed()
    first = {name: Timed() for name in tools}
    for i in range(runs):
        _run([sys.executable, "-c", "pass"], tools["memu"][1], floor)
        files = [sys.executable, "-c", CREATE_FILES, str(work / f"files-floor-{i}"), str(4 * count + 1)]
        _run(files, tools["memu"][1], files_floor)
        order = list(tools) if i % 2 == 0 else list(reversed(tools))
        for name in order:
            exe, env = tools[name]
            base = work / f"first-{name}-{i}"
            _run([exe, "prepare", *common, "--base-dir", str(base), "--max-jobs", str(count)], env, first[name])
            _check(base, count)
    print(floor.line("floor, python -c pass"))
    print(files_floor.line(f"file-creation floor, {4 * count + 1} new 2 KB files"))
    for name, timed in first.items():
        print(timed.line(f"{name}, first run, mining all sessions"))
    if "memU 0.10" in first:
        ours, theirs = first["memu"], first["memU 0.10"]
        print(
            f"  memu / memU: wall {statistics.median(ours.wall) / statistics.median(theirs.wall):.2f}, "
            f"CPU {statistics.median(ours.cpu) / statistics.median(theirs.cpu):.2f} (target: both <= 0.5), "
            f"user CPU {statistics.median(ours.user) / statistics.median(theirs.user):.2f}"
        )

    steady = {name: Timed() for name in tools}
    for name, (exe, env) in tools.items():
        _run([exe, "commit", "--base-dir", str(work / f"first-{name}-0")], env)
    rng = random.Random(11)
    files = sorted(sessions.rglob("*.jsonl"))
    for i in range(runs):
        grown = files[rng.randrange(len(files))]
        with grown.open("a", encoding="utf-8") as fh:
            for j in range(5):
                fh.write(json.dumps(_record(rng, 10_000 + i * 10 + j, grown.stem, "2026-09-01T00:00:00Z")) + "\n")
        for name, (exe, env) in tools.items():
            base = work / f"first-{name}-0"
            _run([exe, "prepare", *common, "--base-dir", str(base)], env, steady[name])
            _run([exe, "commit", "--base-dir", str(base)], env)
    for name, timed in steady.items():
        print(timed.line(f"{name}, steady state, one session grew"))
    print(f"load average at the end {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
