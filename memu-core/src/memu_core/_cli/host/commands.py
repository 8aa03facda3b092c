"""The bodies of ``prepare`` and ``commit``, shared by the typer CLI and its fast path.

A scheduled run calls these two verbs in their plain forms; :func:`fast_command` recognises
exactly those forms (``--base-dir``, ``--session-dir``, ``--max-jobs``, as ``--x v`` or
``--x=v``) and anything else (``--help``, a typo) goes to typer, which owns the messages.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from memu_core._hostkit.spec import HostSpec

_FLAGS = {
    "prepare": {"--base-dir": "base_dir", "--session-dir": "session_dir", "--max-jobs": "max_jobs"},
    "commit": {"--base-dir": "base_dir"},
}


def _say(text: str) -> None:
    sys.stdout.write(text + "\n")


def _warn(text: str) -> None:
    sys.stderr.write(text + "\n")


def _layout(spec: HostSpec, base_dir: str | None):  # type: ignore[no-untyped-def]
    from memu_core._hostkit.layout import Layout

    return Layout.at(base_dir or spec.default_base(), spec.id)


def run_prepare(spec: HostSpec, base_dir: str | None, session_dir: str, max_jobs: int) -> None:
    """``prepare``: mine, stage, print the report lines."""
    from memu_core._bridge import instruction, pipeline
    from memu_core._bridge.backend import open_backend
    from memu_core.errors import UsageError

    if not session_dir and not spec.session_dir:
        raise UsageError(f"{spec.binary} has no default session folder; pass --session-dir <folder>")
    layout = _layout(spec, base_dir)
    source = spec.make_source(session_dir or None)
    report = pipeline.prepare(spec, source, layout, open_backend, max_jobs=max_jobs)
    for w in report.warnings:
        _warn(f"warning: {w}")
    for n in report.notes:
        _say(n)
    _say(f"prepared {report.sessions} session(s) -> {report.jobs} job(s) in {layout.jobs}")
    if report.sessions == 0:
        _say("no new session turns since the last run; nothing to mine")
    if report.remaining:
        _say(f"{report.remaining} more session(s) with new turns remain; later runs take them")
    if report.redacted:
        _say(f"redacted {report.redacted} secret value(s) from the transcripts")
    if report.corrupt:
        _say(f"skipped {report.corrupt} unreadable line(s)")
    if report.unreadable:
        _warn(f"warning: {report.unreadable} session file(s) could not be read; they are retried next run")
    if report.kept_edits:
        _say(f"kept {report.kept_edits} uncommitted edit(s) in the mirror; the next commit stores them")
    try:
        skills = Path(spec.skills_dir).expanduser() if spec.skills_dir else None
        if spec.instruction_path:
            for change in instruction.refresh(Path(spec.instruction_path).expanduser(), spec.binary, skills):
                _say(f"refreshed the retrieval procedure at {change.path}")
    except OSError as exc:
        _warn(f"note: could not refresh the retrieval procedure ({exc})")


def run_commit(spec: HostSpec, base_dir: str | None) -> None:
    """``commit``: store the agent's changes, print what was stored and forgotten."""
    from memu_core._bridge import pipeline
    from memu_core._bridge.backend import open_backend

    report = pipeline.commit(_layout(spec, base_dir), open_backend, spec.id)
    if not report.files and not report.resources and not report.forgotten:
        _say("nothing to commit")
        return
    _say(f"committed {len(report.files)} recall file(s) and {report.resources} resource(s)")
    for track, name in report.files:
        _say(f"  - {track}/{name}")
    for track, name in report.forgotten:
        _say(f"  - forgot {track}/{name}")


def fast_command(spec: HostSpec, args: Sequence[str]) -> Callable[[], None] | None:
    """A ready-to-run ``prepare``/``commit`` for plain argument lists, else ``None``."""
    if not args or args[0] not in _FLAGS:
        return None
    verb, flags = args[0], _FLAGS[args[0]]
    values: dict[str, str] = {}
    rest = list(args[1:])
    while rest:
        flag, eq, inline = rest.pop(0).partition("=")
        if flag not in flags or flags[flag] in values:
            return None
        if not eq:
            if not rest:
                return None
            inline = rest.pop(0)
        values[flags[flag]] = inline
    if verb == "commit":
        return lambda: run_commit(spec, values.get("base_dir") or None)
    raw_jobs = values.get("max_jobs", "10")
    if not raw_jobs.strip().isdigit():
        return None  # typer explains the bad value
    return lambda: run_prepare(
        spec, values.get("base_dir") or None, values.get("session_dir", ""), int(raw_jobs)
    )
