"""One bridging cycle driven through a host's CLI, with the agent's part played by code.

For host tests and smoke checks: ``prepare`` → read the job files and write a memory and a
skill file where they say → ``commit`` → ``retrieve``. The agent's part is the only thing not
real; every command is the one a scheduled run executes.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memu_core._hostkit.spec import HostSpec

_TRACK_DIR = re.compile(r"^\s+(\S.*[/\\](memory|skill))\s*$", re.M)


@dataclass
class Cycle:
    """What one cycle produced, for assertions."""

    prepare_out: str = ""
    conversation: list[dict[str, Any]] = field(default_factory=list)
    """Every record of every conversation slice (``sessions/<i>.jsonl``), in job order."""
    full: list[dict[str, Any]] = field(default_factory=list)
    """Every record of every full slice (``sessions/<i>_full.jsonl``)."""
    commit_out: str = ""
    retrieved: dict[str, Any] = field(default_factory=dict)


def call(spec: HostSpec, *args: str) -> tuple[int, str, str]:
    """Run the host binary in this process; return exit code, stdout and stderr."""
    from memu_core._cli.host.app import run_host

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = run_host(spec, list(args))
    return code, out.getvalue(), err.getvalue()


def must(spec: HostSpec, *args: str) -> str:
    """``call`` that raises with the output when the command fails."""
    code, out, err = call(spec, *args)
    if code != 0:
        raise AssertionError(f"{spec.binary} {' '.join(args)} exited {code}\n{out}\n{err}")
    return out


def _records(paths: list[Path]) -> list[dict[str, Any]]:
    return [json.loads(line) for p in paths for line in p.read_text(encoding="utf-8").splitlines() if line]


def _doc(name: str, description: str, body: str) -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\n{body.rstrip()}\n"


def run_cycle(
    spec: HostSpec,
    *,
    memory: tuple[str, str, str],
    skill: tuple[str, str, str],
    query: str,
    prepare_args: tuple[str, ...] = (),
    base_dir: Path | None = None,
) -> Cycle:
    """prepare → write ``memory`` and ``skill`` (name, description, body) → commit → retrieve."""
    cycle = Cycle()
    base_args = ("--base-dir", str(base_dir)) if base_dir else ()
    cycle.prepare_out = must(spec, "prepare", *base_args, *prepare_args)
    base = base_dir or spec.default_base()
    sessions = base / "sessions"
    numbered = sorted((p for p in sessions.glob("*.jsonl") if "_" not in p.stem), key=lambda p: int(p.stem))
    cycle.conversation = _records(numbered)
    cycle.full = _records([p.with_name(f"{p.stem}_full.jsonl") for p in numbered])
    dirs: dict[str, Path] = {}
    for job in sorted((base / "jobs").glob("*.txt")):
        for m in _TRACK_DIR.finditer(job.read_text(encoding="utf-8")):
            dirs.setdefault(m.group(2), Path(m.group(1)))
    if numbered and set(dirs) != {"memory", "skill"}:
        raise AssertionError(f"the job files under {base / 'jobs'} name no memory/skill folder")
    for track, (name, description, body) in (("memory", memory), ("skill", skill)):
        folder = dirs.get(track, base / track)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{name}.md").write_text(_doc(name, description, body), encoding="utf-8")
    cycle.commit_out = must(spec, "commit", *base_args)
    cycle.retrieved = json.loads(must(spec, "retrieve", query))
    return cycle
