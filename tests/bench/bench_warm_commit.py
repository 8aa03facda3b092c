"""Issue 17: what a commit and a cold retrieve cost with the ONNX model, the torch model and
litellm, with and without a warm ``memu serve``, side by side in one run.

    python tests/bench/bench_warm_commit.py [--runs 3]

Every commit goes into a fresh store (re-committing unchanged files embeds nothing) and is checked
before it counts: 100 files committed, texts embedded, and for a warm run the server's count of
embedded texts grew (so the model was borrowed, not loaded). The retrieve run checks that the
known file answers. Prints median, min-max and peak RSS per row, and the CPU seconds the
committing process and the warm server spent (on a shared machine, wall time mostly measures the
other processes; CPU time is what a commit costs). The ``floor-onnx`` row is the model's own
arithmetic: a warm process encoding the same 1,100 texts with the same batch session, nothing else.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _harness import Stats, run_process

MEMU = str(Path(sys.executable).with_name("memu"))
HOST = str(Path(sys.executable).with_name("memu-claude-code"))


def _files(folder: Path, count: int, tag: str = "") -> None:
    folder.mkdir(parents=True)
    for i in range(count):
        body = "\n".join(
            f"Step {j} of procedure {i}{tag}: run tool-{i}-{j} before deploying service {i}." for j in range(10)
        )
        (folder / f"proc-{i}.md").write_text(f"# procedure {i}\n\n{body}\n")
    (folder / "release.md").write_text("# release\n\nWe cut a release by tagging main and running the publish job.\n")


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _cpu_s(pid: int) -> float:
    """User + system CPU seconds ``pid`` has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _median_cell(values: list[float]) -> str:
    return f"{statistics.median(values):.2f} s ({min(values):.2f}-{max(values):.2f})" if values else "-"


def _serve(env: dict[str, str]) -> subprocess.Popen[bytes]:
    log = open(Path(env["HOME"]) / "serve-bench.log", "ab")  # noqa: SIM115 - the child holds it
    proc = subprocess.Popen([sys.executable, "-m", "memu_core._serve"], env=env, stderr=log)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        out = subprocess.run([MEMU, "serve", "--status"], env=env, capture_output=True, text=True)
        if out.returncode == 0 and '"pid"' in out.stdout:
            return proc
        time.sleep(0.2)
    raise RuntimeError(f"memu serve did not come up: {(Path(env['HOME']) / 'serve-bench.log').read_text()[-800:]}")


def _status(env: dict[str, str]) -> dict[str, object]:
    out = subprocess.run([MEMU, "serve", "--status"], env=env, capture_output=True, text=True, check=True)
    return dict(json.loads(out.stdout))


def commit_row(
    label: str, env: dict[str, str], root: Path, runs: int, warm: bool, on_run: Callable[[], str] | None = None
) -> str:
    # One store per row (a warm server serves the store its client names); new texts every run.
    slug = "".join(c if c.isalnum() else "-" for c in label)
    env = {**env, "MEMU_DB": str(root / f"{slug}.sqlite3")}
    samples, peak, server_rss = [], 0.0, ""
    client_cpu: list[float] = []
    server_cpu: list[float] = []
    extra = ""
    proc = _serve(env) if warm else None
    try:
        for i in range(runs + 1):  # the first is a warm-up (it may export or prime caches)
            folder = root / f"files-{slug}-{i}"
            _files(folder, 100, tag=f" ({label} run {i})")
            before = int(_status(env)["embedded_texts"]) if proc else 0  # type: ignore[call-overload]
            rss_before = _rss_mb(proc.pid) if proc else 0.0
            cpu_before, server_before = _children_cpu_s(), _cpu_s(proc.pid) if proc else 0.0
            run = run_process([MEMU, "commit", "--from-dir", str(folder)], env=env, timeout=900)
            cpu_used, server_used = _children_cpu_s() - cpu_before, (_cpu_s(proc.pid) - server_before if proc else 0.0)
            if (
                run.returncode != 0
                or "committed 101 recall file(s)" not in run.stdout
                or "text(s) embedded" not in run.stdout
            ):
                raise RuntimeError(f"{label}: bad commit: {run.stdout[-300:]} {run.stderr[-500:]}")
            if proc:
                after = int(_status(env)["embedded_texts"])  # type: ignore[call-overload]
                if after - before < 1000 or "loading" in run.stderr:
                    raise RuntimeError(f"{label}: the warm server did not embed ({before} -> {after}): {run.stderr}")
                time.sleep(0.5)
                server_rss = f"server RSS {rss_before:.0f} -> {_rss_mb(proc.pid):.0f} MB after"
            if on_run is not None:
                extra = on_run()
            if i:
                samples.append(run.seconds)
                peak = max(peak, run.peak_rss_mb)
                client_cpu.append(cpu_used)
                if proc:
                    server_cpu.append(server_used)
    finally:
        if proc:
            subprocess.run([MEMU, "serve", "--stop"], env=env, capture_output=True)
            proc.wait(60)
    cpu = f"CPU: commit {_median_cell(client_cpu)}" + (f", server {_median_cell(server_cpu)}" if proc else "")
    notes = "; ".join(n for n in (cpu, server_rss, extra) if n)
    return f"| commit 100 files, {label} | {Stats(samples, peak_rss_mb=peak).cell()} | {peak:.0f} MB | {notes} |"


FLOOR = """
import json, os, sys, time
from memu_embed_local import LocalEmbedder
embedder = LocalEmbedder()
model = embedder.onnx_model()
def texts(run):
    out = []
    for i in range(100):
        out.append(f"proc-{i}")
        out += [f"Step {j} of procedure {i} (floor run {run}): run tool-{i}-{j} before deploying service {i}."
                for j in range(10)]
    return out
rows = []
for run in range(int(sys.argv[1]) + 1):
    batch = texts(run)
    wall, cpu = time.perf_counter(), time.process_time()
    vectors = model.encode(batch, batch_size=embedder.batch_size)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    assert len(vectors) == len(batch) and all(len(v) == 384 for v in vectors)
    if run:
        rows.append([wall, cpu])
print(json.dumps(rows))
"""


def floor_row(env: dict[str, str], runs: int) -> str:
    """The model's own arithmetic on a commit's 1,100 texts: a warm process, its batch session."""
    out = subprocess.run(
        [sys.executable, "-c", FLOOR, str(runs)], env=env, capture_output=True, text=True, timeout=1800
    )
    if out.returncode != 0:
        raise RuntimeError(f"floor: {out.stderr[-500:]}")
    rows = json.loads(out.stdout)
    walls, cpus = [r[0] for r in rows], [r[1] for r in rows]
    return (
        f"| floor: the ONNX batch session encoding the same 1,100 texts in a warm process | "
        f"{Stats(walls).cell()} | | CPU {_median_cell(cpus)} |"
    )


def retrieve_row(label: str, env: dict[str, str], root: Path, runs: int) -> str:
    small = root / f"small-{label}"
    small.mkdir()
    for i in range(10):
        (small / f"note-{i}.md").write_text(f"# note {i}\n\nThe build step {i} needs the cache warmed.\n")
    (small / "release.md").write_text("# release\n\nWe cut a release by tagging main and running the publish job.\n")
    run_env = {**env, "MEMU_DB": str(root / f"retrieve-{label}.sqlite3")}
    done = run_process([MEMU, "commit", "--from-dir", str(small)], env=run_env, timeout=900)
    assert done.returncode == 0, done.stderr
    samples, peak = [], 0.0
    for i in range(runs + 1):
        run = run_process([HOST, "retrieve", "how do we ship a new version"], env=run_env, timeout=900)
        if run.returncode != 0 or "release" not in run.stdout:
            raise RuntimeError(f"retrieve {label}: {run.stdout[-300:]} {run.stderr[-300:]}")
        if i:
            samples.append(run.seconds)
            peak = max(peak, run.peak_rss_mb)
    cell = Stats(samples, peak_rss_mb=peak).cell()
    return f"| host retrieve, hybrid, 11 files, no server, {label} | {cell} | {peak:.0f} MB | |"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--only", default="", help="comma-separated row keys (retrieve-onnx, onnx-warm, ...)")
    args = parser.parse_args()
    from memu_core.settings import models_dir

    root = Path(tempfile.mkdtemp(prefix="mwb", dir="/tmp"))
    try:
        base = {k: v for k, v in os.environ.items() if not k.startswith("MEMU_")}
        base.update(
            HOME=str(root),
            HF_HUB_OFFLINE="1",
            MEMU_SERVE_AUTOSTART="0",
            MEMU_MODELS_DIR=os.environ.get("MEMU_MODELS_DIR") or str(models_dir()),
        )
        onnx = {**base, "MEMU_EMBED_PROVIDER": "local"}
        torch = {**onnx, "MEMU_EMBED_RUNTIME": "torch"}
        print("| what | median (min-max) | peak RSS | note |\n|---|---|---|---|", flush=True)
        only = set(args.only.split(",")) if args.only else None

        def row(key: str, make: Callable[[], str]) -> None:
            if only is None or key in only:
                print(make(), flush=True)

        row("retrieve-onnx", lambda: retrieve_row("onnx", onnx, root, args.runs))
        row("retrieve-torch", lambda: retrieve_row("torch", torch, root, args.runs))
        row("floor-onnx", lambda: floor_row(onnx, args.runs))
        row("onnx-warm", lambda: commit_row("onnx, warm server", onnx, root, args.runs, warm=True))
        row("onnx-cold", lambda: commit_row("onnx, no server", onnx, root, args.runs, warm=False))
        row("torch-cold", lambda: commit_row("torch, no server", torch, root, args.runs, warm=False))
        from memu_core.testing.embedding_server import EmbeddingServer

        with EmbeddingServer(dimension=384, latency=0.02) as server:
            lite = {
                **base,
                "MEMU_EMBED_PROVIDER": "openai-compatible",
                "MEMU_BASE_URL": server.base_url,
                "MEMU_EMBED_MODEL": "bench-embed",
                "MEMU_API_KEY": "x",
            }
            label = "litellm 20 ms/request"

            def requests() -> str:
                # The requests' own share: their count and how many ran at once (the latency floor
                # is about ceil(count / in flight) x 20 ms).
                note = f"{server.request_count} requests, up to {server.max_in_flight} in flight"
                server.reset_counts()
                return note

            row(
                "litellm-warm",
                lambda: commit_row(f"{label}, warm server", lite, root, args.runs, warm=True, on_run=requests),
            )
            row("litellm-cold", lambda: commit_row(f"{label}, no server", lite, root, args.runs, warm=False))
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
