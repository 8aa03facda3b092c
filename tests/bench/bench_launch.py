"""The per-turn client as it is installed: pip's launcher, a launcher without ``re``, an editable tree.

Run: ``python tests/bench/bench_launch.py [--runs 15]``

A warm ``memu-claude-code retrieve`` spends most of its client time starting Python, and how
much depends on how memu was installed (ADR 0020). This benchmark builds the wheels of memu-core,
memu-host-claude-code and memu-embed-local from this checkout (``tests/dists.py``, offline),
installs them with pip into a fresh venv made with pip (as a user's: pip compiles the modules'
bytecode at install time, and Python 3.11's venv brings setuptools and its ``.pth`` file), and
starts a warm server from that venv (its third-party packages are this environment's, put on the
server's ``PYTHONPATH`` only: the clients see nothing but the new venv). A second warm server
runs from this environment, whose memu is an editable install (one ``.pth`` line per
distribution, so every module not found yet is looked for in each source folder). Both serve
``bench_core.py``'s 10,000-file store (hybrid, MiniLM query embedding through ONNX).

Every round runs, in an order that rotates, as fresh processes (wall, client CPU user + system,
peak RSS): the floor ``python -c pass``; ``python -c "import re"`` (what pip's launcher imports
before memu's code); the client through pip's launcher; the same client through a launcher
without ``re`` (as uv's launcher is: ``argv[0]`` trimmed with ``str.endswith``), written here; the
editable install's launcher with its bytecode cached (a private ``PYTHONPYCACHEPREFIX``) and
with ``PYTHONDONTWRITEBYTECODE=1`` (every memu module compiled on every run). Every printed answer
is checked (hybrid, the query's planted file among the first 5), which also proves the minimal
client answered: the venv has no third-party packages, so the full command could not run. Every
question is new to the server that answers it, so no row finds its query vector kept.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

import _harness as h
import bench_serve as bs
from bench_warm_scale import timed

REPO = Path(__file__).resolve().parents[2]
MEMBERS = ("memu-core", "memu-hosts/memu-host-claude-code", "memu-backends/memu-embed-local")
OURS = ("memu", "_memu", "__editable__", "_editable_impl_memu")
NO_PYC = "PYTHONDONTWRITEBYTECODE"
MAX_RUNS = 24
"""Rounds the 50 planted queries allow when each server is asked two new questions a round."""
NO_RE_LAUNCHER = (
    "#!{python}\n"
    "import sys\n"
    "from memu_host_claude_code.cli import main\n"
    "\n"
    "# An installer's launcher without importing re: drop a Windows wrapper's suffix from argv[0].\n"
    "name = sys.argv[0]\n"
    "for suffix in ('-script.pyw', '.exe'):\n"
    "    if name.endswith(suffix):\n"
    "        sys.argv[0] = name[: -len(suffix)]\n"
    "        break\n"
    "sys.exit(main())\n"
)


def wheel_venv(tmp: Path) -> Path:
    """A fresh venv (with pip) holding memu's wheels, bytecode compiled by pip; its root."""
    wheels = tmp / "wheels"
    built = subprocess.run(
        [sys.executable, str(REPO / "tests" / "dists.py"), "wheels", str(wheels), *MEMBERS],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if built.returncode != 0:
        raise RuntimeError(f"building the wheels failed: {built.stderr[-400:]}")
    root = tmp / "venv"
    env = {k: v for k, v in os.environ.items() if k != NO_PYC and not k.startswith("PIP_")}
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", str(root)], check=True, env=env, timeout=600)
    pip = [str(root / "bin" / "python"), "-m", "pip", "install", "-q", "--no-index", "--no-deps"]
    subprocess.run([*pip, *map(str, sorted(wheels.glob("*.whl")))], check=True, env=env, timeout=600)
    return root


def third_party(into: Path) -> Path:
    """A folder of links to this environment's site-packages entries except memu's own."""
    into.mkdir()
    for entry in Path(sysconfig.get_paths()["purelib"]).iterdir():
        if not entry.name.lower().startswith(OURS):
            (into / entry.name).symlink_to(entry)
    return into


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    if not 1 <= args.runs <= MAX_RUNS:
        parser.error(f"--runs {args.runs}: use 1 to {MAX_RUNS}, so every question asked is new to its server")

    print(h.machine_line())
    db = h.store_path(10_000, vectors=True)
    queries = h.queries(h.PLANTED_QUERIES)
    tmp = Path(tempfile.mkdtemp(prefix="mul", dir="/tmp"))  # short: Unix socket paths are capped
    servers: list[subprocess.Popen[bytes]] = []
    try:
        venv = wheel_venv(tmp)
        overlay = third_party(tmp / "third-party")
        envs: dict[str, dict[str, str]] = {}
        for name in ("wheel", "editable"):
            home = tmp / name
            home.mkdir()
            envs[name] = {
                **{k: v for k, v in h.isolated_env(home, MEMU_DB=str(db), MEMU_SERVE_IDLE="0").items() if k != NO_PYC},
                "MEMU_EMBED_PROVIDER": "local",
                "MEMU_MODELS_DIR": os.environ.get("MEMU_MODELS_DIR") or str(Path.home() / ".memu" / "models"),
            }
        wheel_python = str(venv / "bin" / "python")
        started = time.perf_counter()
        server_env = {**envs["wheel"], "PYTHONPATH": str(overlay)}
        servers.append(subprocess.Popen([wheel_python, "-m", "memu_core._serve"], env=server_env))
        servers.append(bs.start_warm(envs["editable"]))
        deadline = time.monotonic() + 600
        while not (tmp / "wheel" / ".memu" / "run" / "memu.sock").exists():
            if servers[0].poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the wheel venv's memu serve did not start")
            time.sleep(0.5)
        print(f"  servers warm after {time.perf_counter() - started:.0f} s", file=sys.stderr)
        launcher = tmp / "memu-claude-code-no-re"
        launcher.write_text(NO_RE_LAUNCHER.format(python=wheel_python))
        launcher.chmod(0o755)
        editable = {**envs["editable"], "PYTHONPYCACHEPREFIX": str(tmp / "pyc")}
        # The slot picks each round's question: the two rows sharing a server ask different new
        # questions, so neither finds the other's query vector kept (ADR 0030's amendment).
        rows: dict[str, tuple[list[str], dict[str, str], int]] = {
            "`python -c pass` (floor, the wheel venv)": ([wheel_python, "-c", "pass"], envs["wheel"], 0),
            '`python -c "import re"` (the wheel venv)': ([wheel_python, "-c", "import re"], envs["wheel"], 0),
            "wheel, pip's launcher": ([str(venv / "bin" / "memu-claude-code"), "retrieve"], envs["wheel"], 0),
            "wheel, a launcher without `re` (uv's)": ([str(launcher), "retrieve"], envs["wheel"], 1),
            "editable, bytecode cached": ([bs.binary("memu-claude-code"), "retrieve"], editable, 0),
            "editable, `PYTHONDONTWRITEBYTECODE=1`": (
                [bs.binary("memu-claude-code"), "retrieve"],
                {**envs["editable"], NO_PYC: "1"},
                1,
            ),
        }
        labels = list(rows)
        wall: dict[str, list[float]] = {label: [] for label in labels}
        cpu: dict[str, list[float]] = {label: [] for label in labels}
        rss: dict[str, float] = dict.fromkeys(labels, 0.0)
        for n in range(args.runs + 1):  # round 0 warms up (and fills the editable bytecode cache)
            shift = n % len(labels)
            for label in labels[shift:] + labels[:shift]:
                cmd, env, slot = rows[label]
                query = queries[2 * n + slot]
                retrieve = cmd[-1] == "retrieve"
                seconds, peak, used, out = timed([*cmd, query] if retrieve else cmd, env)
                if retrieve:
                    h.check_output(out, query, bs.TOP_K, mode="hybrid")
                if n:
                    wall[label].append(seconds)
                    cpu[label].append(used)
                    rss[label] = max(rss[label], peak)
        floor, floor_cpu = statistics.median(wall[labels[0]]), statistics.median(cpu[labels[0]])
        table = [
            [
                label,
                h.Stats(wall[label]).cell(),
                f"{statistics.median(wall[label]) / floor:.2f}",
                h.Stats(cpu[label]).cell(),
                f"{(statistics.median(cpu[label]) - floor_cpu) * 1000:+.1f} ms",
                f"{rss[label]:.0f} MiB",
            ]
            for label in labels
        ]
        header = ["client", "wall median (min-max)", "× floor", "CPU median (min-max)", "CPU over the floor's"]
        print()
        print(h.table([*header, "peak RSS"], table))
        print(
            f"\nAgainst two warm servers on the 10,000-file store (hybrid); every answer checked; {args.runs} "
            f"rounds after 1 warm-up, the order rotating each round; load average at the end "
            f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}."
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
