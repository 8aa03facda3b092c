"""The bodies of ``memu memorize prepare|commit|verify-resources|discard``."""

from __future__ import annotations

import functools
import json
import shutil
from pathlib import Path
from typing import Any

from memu_core._hostkit.spec import HostSpec
from memu_core._layout import Layout, private_opener
from memu_core._memorize import workspace
from memu_core._memorize.source import CanonicalSource, classify
from memu_core.errors import MemuError, UsageError
from memu_core.types import RecordKind

HOST = "developer"
MAX_SESSIONS = 10


class RunSpec(HostSpec):
    """The developer CLI's stand-in for a host: its commands are ``memu memorize …`` and its
    working tree is the run's own directory.

    A value class over :class:`HostSpec` with two more fields, as the frozen dataclass it was
    (``HostSpec`` is no dataclass to a ``@dataclass`` subclass's type checker any more).
    """

    __match_args__ = (*HostSpec.__match_args__, "run_id", "run_dir")
    _fields = __match_args__
    _compare = (*HostSpec._fields[:-1], "run_id", "run_dir")  # HostSpec leaves out extra_commands

    run_id: str
    run_dir: str

    def __init__(self, *args: Any, run_id: str = "", run_dir: str = "", **spec: Any) -> None:
        # HostSpec's fields go through HostSpec's own signature (its defaults, its errors).
        self._init(*HostSpec(*args, **spec)._values(), run_id, run_dir)

    def __reduce__(self) -> tuple[Any, ...]:
        # A value class pickles through ``__init__`` positionally; the run's fields are keywords here.
        *spec, run_id, run_dir = self._values()
        return functools.partial(RunSpec, run_id=run_id, run_dir=run_dir), tuple(spec)

    @property
    def binary(self) -> str:
        return "memu memorize"

    @property
    def verify_command(self) -> str:
        return f"memu memorize verify-resources {self.run_id}"

    def default_base(self) -> Path:
        return Path(self.run_dir)


def _spec(run_id: str, run_dir: Path) -> RunSpec:
    return RunSpec(
        id=HOST,
        display="developer",
        source="memu_core._memorize.source:CanonicalSource",
        package="memu_core",
        run_id=run_id,
        run_dir=str(run_dir),
    )


def _check_session(name: str, text: str) -> None:
    """At least one conversation turn, every line a JSON object; else a one-line refusal."""
    turns = 0
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            raise UsageError(f"{name}: line {number} is not JSON; each line must be one JSON object") from None
        if not isinstance(obj, dict):
            raise UsageError(f"{name}: line {number} is not a JSON object")
        turns += classify(obj) is RecordKind.MESSAGE
    if not turns:
        raise UsageError(
            f'{name}: no user or assistant turn with text; lines look like {{"role": "user", "content": "…"}}'
        )


def _read_inputs(paths: list[str], stdin_text: str | None) -> list[tuple[str, str]]:
    if not 1 <= len(paths) <= MAX_SESSIONS:
        raise UsageError(f"memorize prepare takes 1 to {MAX_SESSIONS} sessions; got {len(paths)}")
    sessions: list[tuple[str, str]] = []
    for raw in paths:
        if raw == "-":
            if stdin_text is None:
                raise UsageError("'-' reads one session from stdin, but stdin is empty")
            sessions.append(("stdin", stdin_text))
            continue
        path = Path(raw).expanduser()
        try:
            sessions.append((raw, path.read_text(encoding="utf-8")))
        except IsADirectoryError:
            raise UsageError(f"{raw} is a folder; pass session files (JSONL)") from None
        except FileNotFoundError:
            raise UsageError(f"{raw} does not exist; pass a session file (JSONL)") from None
        except UnicodeDecodeError:
            raise UsageError(f"{raw} is not UTF-8 text; save the session as UTF-8 JSONL") from None
        except OSError as exc:
            raise UsageError(f"{raw} cannot be read ({exc.strerror}); check its permissions") from None
    for name, text in sessions:
        _check_session(name, text)
    return sessions


def prepare(paths: list[str], stdin_text: str | None = None) -> dict[str, Any]:
    """Allocate a run, stage the sessions and their jobs; what the caller needs to go on."""
    sessions = _read_inputs(paths, stdin_text)
    run_id, run_dir = workspace.allocate()
    try:
        return _prepare(run_id, run_dir, sessions)
    except BaseException:
        shutil.rmtree(run_dir, ignore_errors=True)  # a failed prepare leaves no directory behind
        raise


def _prepare(run_id: str, run_dir: Path, sessions: list[tuple[str, str]]) -> dict[str, Any]:
    from memu_core._bridge import pipeline
    from memu_core._bridge.backend import open_backend

    transcripts = run_dir / "transcripts"
    transcripts.mkdir(mode=0o700)
    for index, (_, text) in enumerate(sessions, 1):
        with open(transcripts / f"{index:02d}.jsonl", "w", encoding="utf-8", opener=private_opener) as fh:
            fh.write(text if text.endswith("\n") else text + "\n")
    spec = _spec(run_id, run_dir)
    layout = Layout.at(run_dir, HOST)
    source = CanonicalSource(transcripts)
    report = pipeline.prepare(spec, source, layout, open_backend, max_jobs=MAX_SESSIONS, environ={}, cwd=run_dir)
    jobs = sorted(layout.jobs.glob("*.txt"), key=lambda p: int(p.stem))
    slices = sorted(p for p in layout.sessions.glob("*.jsonl") if not p.stem.endswith("_full"))
    return {
        "run": run_id,
        "workspace": str(run_dir),
        "sessions": report.sessions,
        "transcripts": [str(p) for p in slices],
        "jobs": [str(p) for p in jobs],
        "prompt": executor_prompt(run_id, jobs),
        "next": f"memu memorize commit {run_id}",
        "warnings": list(report.warnings),
    }


def executor_prompt(run_id: str, jobs: list[Path]) -> str:
    """What the application's executor is told to do with the jobs."""
    listed = ", ".join(str(p) for p in jobs)
    return (
        f"Work these memu job files one after another, in this order: {listed}. Each says what to "
        "read and where to write; follow it to the letter, and writing nothing is a valid outcome. "
        f"When all are done, the caller runs `memu memorize commit {run_id}`."
    )


def commit(run_id: str) -> tuple[dict[str, Any], str | None]:
    """Store the run's changes; on success remove the run. Returns the report and, when the
    cleanup failed, the line telling the caller to discard the run (the commit still counts)."""
    from memu_core._bridge import pipeline
    from memu_core._bridge.backend import open_backend

    run_dir = workspace.resolve(run_id)
    layout = Layout.at(run_dir, HOST)
    try:
        report = pipeline.commit(layout, open_backend, HOST, binary="memu memorize")
    except MemuError as exc:
        raise type(exc)(f"{exc} (the run is kept at {run_dir}; fix and commit again, or discard it)") from exc
    summary = {
        "run": run_id,
        "committed": [f"{track}/{name}" for track, name in report.files],
        "forgotten": [f"{track}/{name}" for track, name in report.forgotten],
        "resources": report.resources,
    }
    try:
        workspace.remove(run_dir)
    except OSError as exc:
        return summary, (
            f"committed, but the run folder could not be removed ({exc.strerror}); do not commit it "
            f"again: run `memu memorize discard {run_id}`"
        )
    return summary, None


def verify_resources(run_id: str) -> int:
    """The run's resource job: keep the touched files that exist."""
    from memu_core._bridge import pipeline

    return pipeline.verify_resources(Layout.at(workspace.resolve(run_id), HOST), HOST)


def discard(run_id: str) -> Path:
    """Remove a run without asking the backend anything (it does not undo a commit)."""
    path = workspace.resolve(run_id)
    workspace.remove(path)
    return path
