"""Benchmark: the steady-state ``memu-claude-code prepare`` (one session grew), this code against
another copy of the sources, interleaved run by run, beside the interpreter's floor.

Generates ``--sessions`` Claude Code sessions (``bench_prepare``'s generator) in a temp dir, brings
two host trees up to date (one per side, each with its own store), then for each round grows one
random session by 5 records, times ``python -c pass``, and times both sides' ``prepare`` in
alternating order (each checked to have mined exactly that one session before its time counts,
each followed by an untimed ``commit``). ``--before`` names the other side's source folders
(memu-core's ``src`` and the Claude Code host's ``src``, ``:``-separated), put first on
``PYTHONPATH``; for example the sources of an older commit from ``git archive``. Without it only
this code is timed.

``--installed`` adds the command as a user runs it: the wheels of memu-core and the Claude Code
host built from this checkout and installed by pip into a fresh venv (``bench_launch.wheel_venv``:
bytecode compiled at install time, setuptools' ``.pth`` file, no editable source folders on
``sys.path``), with this environment's third-party packages linked into its ``site-packages``, run
through pip's ``memu-claude-code`` launcher. Its own floor, that venv's ``python -c pass``, is timed
beside it.

Every ``prepare`` runs as the scheduled run does (``MEMU_BRIDGING_RUN=1`` and a session id of its
own in ``CLAUDE_CODE_SESSION_ID``), so the list of sessions it must not mine is not empty.

Every process runs with bytecode caches in the temp dir (an installed program has them), whatever
``PYTHONDONTWRITEBYTECODE`` says. Prints medians (min-max) of wall and CPU (user + sys) and the
load average.

    python tests/bench/bench_prepare_steady.py [--runs 9] [--sessions 100] [--before SRC:SRC] [--installed]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

import _harness
import bench_prepare
from bench_launch import OURS, wheel_venv

CLI = "import sys; from memu_host_claude_code.cli import main; sys.argv[0] = 'memu-claude-code'; main()"


def _run(args: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    """``(wall, CPU, stdout)`` of one child process; exits naming the command when it fails."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(args, env=env, capture_output=True, text=True)
    took = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        sys.exit(f"{' '.join(args[:3])}… failed ({proc.returncode}): {proc.stderr.strip()[-500:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return took, cpu, proc.stdout


def _installed(work: Path) -> Path:
    """A venv holding memu's wheels (pip's install) and links to this environment's other
    packages, as a user's ``pip install memu-core memu-host-claude-code`` leaves it; its root."""
    root = wheel_venv(work)
    purelib = Path(
        subprocess.run(
            [str(root / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    here = Path(sysconfig.get_paths()["purelib"])
    for entry in here.iterdir():
        name = entry.name.lower()
        # memu's own come from the wheels; a .pth file would put a source folder on sys.path.
        if name.startswith(OURS) or name.endswith(".pth") or (purelib / entry.name).exists():
            continue
        (purelib / entry.name).symlink_to(entry)
    return root


def _line(label: str, wall: list[float], cpu: list[float]) -> str:
    ms = [1000 * x for x in wall], [1000 * x for x in cpu]
    return (
        f"{label}: wall {statistics.median(ms[0]):.0f} ms ({min(ms[0]):.0f}-{max(ms[0]):.0f}), "
        f"CPU {statistics.median(ms[1]):.0f} ms ({min(ms[1]):.0f}-{max(ms[1]):.0f}) over {len(wall)} runs"
    )


def main() -> None:
    """Generate, bring both sides up to date, run the rounds, report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--sessions", type=int, default=100)
    parser.add_argument("--records", type=int, default=200)
    parser.add_argument("--before", default="", help="the other side's source folders, ':'-separated")
    parser.add_argument("--installed", action="store_true", help="also time the wheels as pip installs them")
    opts = parser.parse_args()
    print("## Prepare, steady state: one session grew\n")
    print(_harness.machine_line())
    with tempfile.TemporaryDirectory(prefix="memu-bench-steady-") as tmp:
        work = Path(tmp)
        sessions = work / "projects"
        bench_prepare.generate(sessions, opts.sessions, opts.records)
        env = {k: v for k, v in os.environ.items() if not k.startswith("MEMU_") and k != "CLAUDE_CODE_SESSION_ID"}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env.update(
            HOME=str(work / "home"),
            MEMU_COWORK_ROOTS="",
            MEMU_SERVE_AUTOSTART="0",
            MEMU_EMBED_PROVIDER="none",
            MEMU_BRIDGING_RUN="1",
            CLAUDE_CODE_SESSION_ID="scheduled-bridging-run",
            HF_HUB_OFFLINE="1",
            PYTHONPYCACHEPREFIX=str(work / "pycache"),
        )
        (work / "home").mkdir()
        sides = {"now": dict(env, MEMU_DB=str(work / "now.sqlite3"))}
        if opts.before:
            sides["before"] = dict(env, MEMU_DB=str(work / "before.sqlite3"), PYTHONPATH=opts.before)
        commands = {name: [sys.executable, "-c", CLI] for name in sides}
        floors = {"floor, python -c pass": [sys.executable, "-c", "pass"]}
        if opts.installed:
            venv = _installed(work)
            sides["installed"] = dict(env, MEMU_DB=str(work / "installed.sqlite3"))
            commands["installed"] = [str(venv / "bin" / "memu-claude-code")]
            floors["floor of the installed venv"] = [str(venv / "bin" / "python"), "-c", "pass"]
        common = ["--session-dir", str(sessions)]
        for name, side in sides.items():  # untimed: mine everything, commit, fill the caches
            base = ["--base-dir", str(work / f"base-{name}")]
            _run([*commands[name], "prepare", *common, *base, "--max-jobs", str(opts.sessions)], side)
            _run([*commands[name], "commit", *base], side)
        print(f"{opts.sessions} sessions x {opts.records} records; load average {os.getloadavg()[0]:.1f}")
        floor: dict[str, tuple[list[float], list[float]]] = {label: ([], []) for label in floors}
        timed: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in sides}
        rng = random.Random(11)
        files = sorted(sessions.rglob("*.jsonl"))
        for i in range(opts.runs):
            grown = files[rng.randrange(len(files))]
            with grown.open("a", encoding="utf-8") as fh:
                for j in range(5):
                    record = bench_prepare._record(rng, 20_000 + i * 10 + j, grown.stem, "2026-09-01T00:00:00Z")
                    fh.write(json.dumps(record) + "\n")
            for label, args in floors.items():
                wall, cpu, _ = _run(args, env)
                floor[label][0].append(wall)
                floor[label][1].append(cpu)
            for name in list(sides) if i % 2 == 0 else list(reversed(sides)):
                base = ["--base-dir", str(work / f"base-{name}")]
                wall, cpu, out = _run([*commands[name], "prepare", *common, *base, "--json"], sides[name])
                if json.loads(out)["sessions"] != 1:
                    sys.exit(f"{name}: the steady run mined {json.loads(out)['sessions']} sessions, not 1")
                timed[name][0].append(wall)
                timed[name][1].append(cpu)
                _run([*commands[name], "commit", *base], sides[name])
        for label, (wall_s, cpu_s) in floor.items():
            print(_line(label, wall_s, cpu_s))
        for name, (wall_s, cpu_s) in timed.items():
            print(_line(f"steady prepare, {name}", wall_s, cpu_s))
        print(f"load average at the end {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
