"""Issue 17, the cold paths: a hybrid retrieve with no warm server, a cold commit, and a new
user's first run of the README's "Try it" sequence, side by side with their floors in one run.

    python tests/bench/bench_cold.py [--runs 5] [--only retrieve,commit,first-run,first-export]

Rows (every timed answer is checked before its time counts):

- ``retrieve``: ``memu-claude-code retrieve`` on an 11-file store, hybrid with the local model,
  ``MEMU_SERVE_AUTOSTART=0`` so every run answers in its own process; ONNX (the default) beside
  ``MEMU_EMBED_RUNTIME=torch`` (the peer), ``python -c pass`` and a bare Python process that
  loads the prepared model through memu_embed_local and embeds the query (the floor of any
  process that embeds). Checked: the release file answers.
- ``commit``: ``memu commit --from-dir`` of 100 new files, cold, no server, ONNX.
- ``first-run``: the README's sequence in a fresh ``HOME`` whose models folder already holds the
  export (a new user on a machine where the model was exported, or after ``memu doctor``):
  ``memu commit --from-dir examples`` then ``memu retrieve "how do we cut a release"`` twice,
  with autostart on. Checked: the release checklist answers, the note that the warm server was
  started appears exactly once over the sequence, and the server is stopped afterwards.
- ``first-export``: the same with an empty models folder, so the first commit exports the model
  (torch, once); one run unless ``--runs-export`` says more.

Wall time on a shared machine is mostly waiting for a core; each row also gives the process's
own CPU time (user + system, children included), which the load does not inflate as much.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _harness import Stats, _vm_hwm_mb, machine_line

BIN = Path(sys.executable).parent
MEMU, HOST = str(BIN / "memu"), str(BIN / "memu-claude-code")
REPO = Path(__file__).resolve().parents[2]
QUERY = "how do we ship a new version"
NOTE = "started the warm server"


@dataclass
class Run:
    """One finished process: wall and CPU seconds, peak RSS (MiB), exit code, output."""

    wall: float
    cpu: float
    rss: float
    code: int
    out: str
    err: str


def run(cmd: Sequence[str], env: Mapping[str, str], timeout: float = 900) -> Run:
    """Run ``cmd`` to the end: wall time, CPU time (``wait4``; a child it leaves running, the warm
    server, is not counted) and peak RSS (its VmHWM, polled)."""
    started = time.perf_counter()
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(list(cmd), env=dict(env), stdout=out, stderr=err, cwd=REPO)
        peak = 0.0
        try:
            while True:
                # The child's own VmHWM, polled: ru_maxrss would carry this process's high-water
                # mark into a forked child (see _harness.run_process).
                peak = max(peak, _vm_hwm_mb(proc.pid))
                pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
                if pid:
                    break
                if time.perf_counter() - started > timeout:
                    proc.kill()
                time.sleep(0.002)
        finally:
            if proc.poll() is None:
                proc.kill()
        wall = time.perf_counter() - started
        out.seek(0)
        err.seek(0)
        return Run(
            wall,
            usage.ru_utime + usage.ru_stime,
            peak or usage.ru_maxrss / 1024,
            os.waitstatus_to_exitcode(status),
            out.read(),
            err.read(),
        )


def cells(runs: list[Run]) -> str:
    """``wall median (min-max) | CPU median (min-max) | peak RSS`` for a table row."""
    wall, cpu = Stats([r.wall for r in runs]), Stats([r.cpu for r in runs])
    return f"{wall.cell()} | {cpu.cell()} | {max(r.rss for r in runs):.0f} MB"


def repeat(times: int, once: Callable[[int], Run]) -> list[Run]:
    """``once(0)`` as a warm-up (it may prepare the model, prime the page cache), then ``times`` runs."""
    once(0)
    return [once(i + 1) for i in range(times)]


def base_env(home: Path, models: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMU_")}
    env.update(HOME=str(home), HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", MEMU_MODELS_DIR=str(models))
    return env


def checked(result: Run, what: str, *, expect: str | None = None) -> Run:
    if result.code != 0 or (expect is not None and expect not in result.out):
        raise RuntimeError(f"{what}: exit {result.code}: {result.out[-300:]} {result.err[-600:]}")
    return result


# -- rows ---------------------------------------------------------------------------------------
def retrieve_rows(root: Path, models: Path, runs: int, before: str = "") -> list[str]:
    small = root / "small"
    small.mkdir()
    for i in range(10):
        (small / f"note-{i}.md").write_text(f"# note {i}\n\nThe build step {i} needs the cache warmed.\n")
    (small / "release.md").write_text("# release\n\nWe cut a release by tagging main and running the publish job.\n")
    env = {**base_env(root, models), "MEMU_DB": str(root / "small.sqlite3"), "MEMU_SERVE_AUTOSTART": "0"}
    env["MEMU_EMBED_PROVIDER"] = "local"
    checked(run([MEMU, "commit", "--from-dir", str(small)], env), "commit the small store")
    # The floor imports through memu_embed_local, as the command does: importing onnxruntime
    # first would load numpy outside memu_embed_local.runtime's one-thread BLAS setting.
    floor_code = (
        "from memu_embed_local.embedder import LocalEmbedder\n"
        f"v = LocalEmbedder().embed([{QUERY!r}])\nprint(len(v[0]))\n"
    )
    rows = []
    variants: list[tuple[str, list[str], dict[str, str], str | None]] = [
        ("`python -c pass` (the interpreter's floor)", [sys.executable, "-c", "pass"], env, None),
        (
            "Python embedding the query through memu_embed_local, nothing else (floor)",
            [sys.executable, "-c", floor_code],
            env,
            "384",
        ),
        ("`memu-claude-code retrieve`, hybrid, ONNX", [HOST, "retrieve", QUERY], env, "release"),
        (
            "same, `MEMU_EMBED_RUNTIME=torch` (the peer)",
            [HOST, "retrieve", QUERY],
            {**env, "MEMU_EMBED_RUNTIME": "torch"},
            "release",
        ),
    ]
    if before:  # the same command on older sources (their src folders on PYTHONPATH)
        old_env = {**env, "PYTHONPATH": before}
        variants.append(("same, ONNX, the code before (`--before`)", [HOST, "retrieve", QUERY], old_env, "release"))
    # Interleaved: each round runs every variant once, so a change in the machine's load falls
    # on all of them alike.
    samples: dict[str, list[Run]] = {label: [] for label, *_ in variants}
    for i in range(runs + 1):
        for label, cmd, run_env, expect in variants:
            result = checked(run(cmd, run_env), label, expect=expect)
            if i:
                samples[label].append(result)
    for label, *_ in variants:
        rows.append(f"| {label} | {cells(samples[label])} |")
    return rows


def commit_rows(root: Path, models: Path, runs: int) -> list[str]:
    env = {**base_env(root, models), "MEMU_SERVE_AUTOSTART": "0", "MEMU_EMBED_PROVIDER": "local"}

    def once(i: int) -> Run:
        folder = root / f"commit-{i}"
        folder.mkdir()
        for n in range(100):
            body = "\n".join(f"Step {j} of procedure {n} (run {i}): run tool-{n}-{j} first." for j in range(10))
            (folder / f"proc-{n}.md").write_text(f"# procedure {n}\n\n{body}\n")
        run_env = {**env, "MEMU_DB": str(root / f"commit-{i}.sqlite3")}
        return checked(run([MEMU, "commit", "--from-dir", str(folder)], run_env), "commit", expect="committed 100")

    return [f"| `memu commit` 100 files, ONNX, no server, cold | {cells(repeat(runs, once))} |"]


def first_run(root: Path, models: Path, tag: str) -> tuple[Run, Run, Run]:
    """The README's sequence in a fresh HOME; the warm server it starts is stopped afterwards."""
    home = root / f"home-{tag}"
    home.mkdir()
    env = base_env(home, models)
    try:
        commit = checked(run([MEMU, "commit", "--from-dir", "examples"], env), "first commit", expect="committed 4")
        first = checked(run([MEMU, "retrieve", "how do we cut a release"], env), "first retrieve", expect="release")
        second = checked(run([MEMU, "retrieve", "how do we cut a release"], env), "second retrieve", expect="release")
    finally:
        subprocess.run([MEMU, "serve", "--stop"], env=env, capture_output=True, timeout=60)
    notes = sum(r.err.count(NOTE) for r in (commit, first, second))
    if notes != 1:
        raise RuntimeError(f"first run ({tag}): the autostart note appeared {notes} times: {first.err!r}")
    return commit, first, second


def first_run_rows(root: Path, models: Path, runs: int) -> list[str]:
    results = [first_run(root, models, f"shared-{i}") for i in range(runs)]
    commit = "`memu commit --from-dir examples`"
    return [
        f"| first run, models folder holding the export: {commit} | {cells([r[0] for r in results])} |",
        f"| then the first `memu retrieve` | {cells([r[1] for r in results])} |",
        f"| then the second `memu retrieve` | {cells([r[2] for r in results])} |",
    ]


def first_export_rows(root: Path, runs: int) -> list[str]:
    results = [first_run(root, root / f"models-{i}", f"export-{i}") for i in range(runs)]
    commit = "`memu commit --from-dir examples` (exports)"
    return [
        f"| first run, empty models folder: {commit} | {cells([r[0] for r in results])} |",
        f"| then the first `memu retrieve` | {cells([r[1] for r in results])} |",
        f"| then the second `memu retrieve` | {cells([r[2] for r in results])} |",
    ]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--runs-export", type=int, default=1)
    parser.add_argument("--before", default="", help="PYTHONPATH of older sources to time beside (retrieve)")
    parser.add_argument("--only", default="", help="comma-separated: retrieve,commit,first-run,first-export")
    args = parser.parse_args()
    from memu_core.settings import models_dir

    only = set(args.only.split(",")) if args.only else {"retrieve", "commit", "first-run", "first-export"}
    models = Path(os.environ.get("MEMU_MODELS_DIR") or models_dir())
    root = Path(tempfile.mkdtemp(prefix="mcold"))
    print(machine_line(), flush=True)
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    print("| what | wall median (min-max) | CPU median (min-max) | peak RSS |\n|---|---|---|---|", flush=True)
    try:
        jobs: list[tuple[str, Callable[[], list[str]]]] = [
            ("retrieve", lambda: retrieve_rows(root, models, args.runs, args.before)),
            ("commit", lambda: commit_rows(root, models, args.runs)),
            ("first-run", lambda: first_run_rows(root, models, args.runs)),
            ("first-export", lambda: first_export_rows(root, args.runs_export)),
        ]
        for key, make in jobs:
            if key in only:
                for row in make():
                    print(row, flush=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)


if __name__ == "__main__":
    main()
