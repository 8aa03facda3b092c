"""The warm hybrid retrieve as the store grows: 10,000 against 100,000 files, beside the floor.

Run: ``python tests/bench/bench_warm_scale.py [--runs 15] [--skip-serve-store] [--before TREE]``

One warm server (``memu serve``, MiniLM query embedding through the local model, hybrid) per
store, all up at once, each in its own run directory. Every round runs, in one order that
rotates from round to round, ``python -c pass`` (the floor) and ``memu-claude-code retrieve
QUERY`` against each server, as fresh processes (wall time and the client's peak RSS), so a
change in the machine's load falls on every row alike. Then, per store, the request alone from
one already-started client (``client.warm_retrieve``: embedding, search, shaping, JSON), the
server's CPU time per request (user + system, all its threads, from ``/proc``) and its resident
memory. The clients' CPU time (user + system) is reported beside their wall time: a busy machine
inflates it far less.

Stores (cached, see ``_harness.store_path`` and ``bench_serve.store``; ``$MEMU_BENCH_CACHE``):

- ``core 10,000`` and ``core 100,000``: ``bench_core.py``'s stores, 1-3 lines per file
  (30,000 and 300,000 segments): the same shape at two sizes, for the 100,000 / 10,000 ratio;
- ``serve 10,000``: ``bench_serve.py``'s store, ~20 lines per file (210,000 segments), the row
  issue 17's first target names (``--skip-serve-store`` leaves it out).

Store vectors are stand-ins under MiniLM's fingerprint; every query is embedded by the real
model. The server keeps the last queries' vectors and, until the store's next write, the last
word searches' hits (ADR 0030's amendment), so the request alone is timed twice: over questions
no client has asked before (the "new question" columns, the same questions for every server) and
over the same questions asked again ("repeated question": the query vector and the word hits
come from memory; nothing is written during the run). The clients' rounds ask each server a new question each round.

The client processes run as an installed memu runs: with its modules' bytecode cached (pip
compiles it at install time). An environment with ``PYTHONDONTWRITEBYTECODE`` set would compile
every memu module on every run (about 7 ms of CPU per turn here), so the clients get a private
``PYTHONPYCACHEPREFIX`` in the run's temporary folder, filled by the warm-up round.

Every retrieve's printed answer is checked once its run has ended (hybrid mode, the query's
planted file among the first 5); the run fails on a wrong or empty answer, and the
printed answers are checked to be the same bytes in every round.

``--before TREE`` (an export of an older commit, e.g. ``git archive a2f9107~1 | tar -x -C TREE``)
adds, per store, a second server and client running that code (every ``*/src`` and ``*/*/src``
folder of ``TREE`` put first on ``PYTHONPATH``), in the same rounds; its answers are checked
like the others.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _harness as h
import bench_serve as bs

# bench_serve's launcher, also reporting the child's CPU time (user + system), which a busy
# machine inflates far less than the wall clock.
NO_PYC = "PYTHONDONTWRITEBYTECODE"

LAUNCHER = (
    "import os, sys, time\n"
    "t = time.perf_counter()\n"
    "pid = os.posix_spawn(sys.argv[1], sys.argv[1:], os.environ)\n"
    "_, status, usage = os.wait4(pid, 0)\n"
    "cpu = usage.ru_utime + usage.ru_stime\n"
    "print(f'{time.perf_counter() - t} {usage.ru_maxrss} {cpu}', file=sys.stderr)\n"
    "sys.exit(os.waitstatus_to_exitcode(status))\n"
)


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, float, float, str]:
    """``(wall seconds, peak RSS MiB, CPU seconds, standard output)`` of one fresh run of ``cmd``."""
    out = subprocess.run(
        [sys.executable, "-S", "-c", LAUNCHER, *cmd], env=env, capture_output=True, text=True, timeout=900
    )
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed: {out.stderr[-400:]}")
    seconds, rss_kib, cpu = out.stderr.strip().splitlines()[-1].split()
    return float(seconds), int(rss_kib) / 1024.0, float(cpu), out.stdout


def server_cpu_seconds(env: dict[str, str]) -> float:
    """CPU time (user + system, every thread) the warm server has used so far."""
    info = bs.serve_status(env) or {}
    fields = Path(f"/proc/{info.get('pid')}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def server_rss_mib(env: dict[str, str]) -> float:
    """The warm server's resident memory now (VmRSS), from its pid in ``memu serve --status``."""
    info = bs.serve_status(env) or {}
    for line in Path(f"/proc/{info.get('pid')}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024.0
    return float("nan")


def source_path(tree: Path) -> str:
    """``PYTHONPATH`` for the code in ``tree``: its distributions' ``src`` folders, then ours."""
    folders = sorted(str(p) for p in [*tree.glob("*/src"), *tree.glob("*/*/src")] if p.is_dir())
    if not folders:
        raise SystemExit(f"--before {tree}: no */src folders there; export a commit with git archive into it")
    return os.pathsep.join([*folders, *filter(None, [os.environ.get("PYTHONPATH")])])


MAX_RUNS = 24
"""Rounds the 50 planted queries allow: the clients' questions, then as many new ones for the
request alone (round 0 of each warms up)."""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--skip-serve-store", action="store_true")
    parser.add_argument("--before", type=Path, help="an exported older tree to run beside this code")
    args = parser.parse_args()
    if not 1 <= args.runs <= MAX_RUNS:
        parser.error(f"--runs {args.runs}: use 1 to {MAX_RUNS}, so every question of the new-question rows is new")

    print(h.machine_line())
    stores = {"core 10,000": h.store_path(10_000, vectors=True), "core 100,000": h.store_path(100_000, vectors=True)}
    if not args.skip_serve_store:
        stores["serve 10,000"] = bs.store(10_000)
    queries = h.queries(h.PLANTED_QUERIES)
    tmp = Path(tempfile.mkdtemp(prefix="mus", dir="/tmp"))  # short: Unix socket paths are capped
    envs: dict[str, dict[str, str]] = {}
    servers: list[subprocess.Popen[bytes]] = []
    runs: list[tuple[str, Path, str | None]] = [(label, db, None) for label, db in stores.items()]
    if args.before is not None:
        before = source_path(args.before.resolve())
        runs = [row for label, db in stores.items() for row in ((label, db, None), (f"{label} before", db, before))]
    try:
        for i, (label, db, path) in enumerate(runs):
            home = tmp / f"h{i}"
            home.mkdir()
            envs[label] = {
                **{k: v for k, v in h.isolated_env(home, MEMU_DB=str(db), MEMU_SERVE_IDLE="0").items() if k != NO_PYC},
                "PYTHONPYCACHEPREFIX": str(tmp / "pyc"),
                "MEMU_EMBED_PROVIDER": "local",
                # The user's exported model, not one export per private home (torch, a minute each).
                "MEMU_MODELS_DIR": os.environ.get("MEMU_MODELS_DIR") or str(Path.home() / ".memu" / "models"),
                **({"PYTHONPATH": path} if path else {}),
            }
            started = time.perf_counter()
            servers.append(bs.start_warm(envs[label]))
            print(f"  {label}: server warm after {time.perf_counter() - started:.0f} s", file=sys.stderr)
        client = [bs.binary("memu-claude-code"), "retrieve"]
        floor_env = envs[runs[0][0]]
        labels = ["floor", *envs]
        wall: dict[str, list[float]] = {label: [] for label in labels}
        cpu: dict[str, list[float]] = {label: [] for label in labels}
        rss: dict[str, float] = dict.fromkeys(labels, 0.0)
        printed: dict[tuple[str, str], str] = {}
        for n in range(args.runs + 1):  # round 0 warms up
            query = queries[n % len(queries)]
            shift = n % len(labels)
            for label in labels[shift:] + labels[:shift]:
                if label == "floor":
                    seconds, peak, used, _ = timed([sys.executable, "-c", "pass"], floor_env)
                else:
                    seconds, peak, used, out = timed([*client, query], envs[label])
                    h.check_output(out, query, bs.TOP_K, mode="hybrid")
                    if printed.setdefault((label, query), out) != out:
                        raise h.WrongAnswer(f"{label}: {query!r} printed a different answer in round {n}")
                if n:
                    wall[label].append(seconds)
                    cpu[label].append(used)
                    rss[label] = max(rss[label], peak)
        floor, floor_cpu = statistics.median(wall["floor"]), statistics.median(cpu["floor"])
        bare = h.Stats(wall["floor"])
        floor_row = ["`python -c pass` (floor)", bare.cell(), "1.00", h.Stats(cpu["floor"]).cell()]
        rows = [[*floor_row, f"{rss['floor']:.0f} MiB", "—", "—", "—", "—", "—"]]
        for label in envs:
            stats = h.Stats(wall[label])
            # Questions no client asked this server yet, then the very same ones again.
            fresh = queries[args.runs + 1 :] + queries[: args.runs + 1]
            spent = server_cpu_seconds(envs[label])
            request = bs.round_trip(envs[label], fresh, args.runs)
            per_request = (server_cpu_seconds(envs[label]) - spent) / (args.runs + 1)
            spent = server_cpu_seconds(envs[label])
            repeated = bs.round_trip(envs[label], fresh, args.runs)
            per_repeat = (server_cpu_seconds(envs[label]) - spent) / (args.runs + 1)
            rows.append(
                [
                    f"`memu-claude-code retrieve`, warm, hybrid, {label} files",
                    stats.cell(),
                    f"{stats.median / floor:.2f}",
                    f"{h.Stats(cpu[label]).cell()} (×{statistics.median(cpu[label]) / floor_cpu:.2f})",
                    f"{rss[label]:.0f} MiB",
                    request.cell(),
                    f"{per_request * 1000:.0f} ms",
                    repeated.cell(),
                    f"{per_repeat * 1000:.0f} ms",
                    f"{server_rss_mib(envs[label]):.0f} MiB",
                ]
            )
        header = ["path", "wall median (min-max)", "× floor", "client CPU (× floor's)", "client peak RSS"]
        header += ["request alone, new question, wall", "server CPU per new question"]
        header += ["request alone, repeated question (vector and word hits kept), wall"]
        header += ["server CPU per repeated question"]
        header += ["server RSS"]
        print()
        print(h.table(header, rows))
        core = {label: statistics.median(wall[label]) for label in envs}
        print(
            f"\n100,000 / 10,000 files (core stores, same shape): "
            f"{core['core 100,000'] / core['core 10,000']:.2f} (target ≤ 1.3)."
        )
        print(
            f"\nEvery retrieve above was checked: hybrid mode, the query's planted file among the first {bs.TOP_K}, "
            f"and the same printed bytes in every round; {args.runs} rounds after 1 warm-up, "
            "the order of the rows rotating each round; clients with their bytecode cached, as installed."
        )
    finally:
        for server in servers:
            server.send_signal(signal.SIGTERM)
        for server in servers:
            server.wait(60)
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    sys.exit(main())
