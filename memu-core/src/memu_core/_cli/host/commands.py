"""The bodies of a host binary's per-turn verbs, shared by the typer CLI and its fast path.

``retrieve`` runs every turn and ``prepare``/``commit`` on every scheduled run, each as a fresh
process. :func:`fast` recognises their plain forms from the flag table (:mod:`memu_core._cli.flags`)
and runs them without typer, whose parameter machinery imports pydantic; anything else
(``--help``, a typo) goes to the typer command built from the same table, which owns the messages.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memu_core._hostkit.spec import HostSpec

if TYPE_CHECKING:
    from memu_core._bridge.pipeline import PrepareReport


def _say(text: str) -> None:
    sys.stdout.write(text + "\n")


def _warn(text: str) -> None:
    sys.stderr.write(text + "\n")


def _layout(spec: HostSpec, base_dir: str | None):  # type: ignore[no-untyped-def]
    from memu_core._layout import Layout

    return Layout.at(base_dir or spec.default_base(), spec.id)


def run_prepare(
    spec: HostSpec,
    base_dir: str | None,
    session_dir: str,
    max_jobs: int,
    budget_kb: int | None = None,
    as_json: bool = False,
    abandon_unfinished: bool = False,
) -> None:
    """``prepare``: mine, stage, print the report (lines, or one JSON object with ``--json``)."""
    from memu_core._bridge import pipeline
    from memu_core.errors import UsageError

    if not session_dir and not spec.session_dir:
        raise UsageError(f"{spec.binary} has no default session folder; pass --session-dir <folder>")
    from memu_core._bridge.backend import open_backend
    from memu_core._cli.progress import Progress

    layout = _layout(spec, base_dir)
    source = spec.make_source(session_dir or None)
    # A backlog of long sessions takes minutes to read: a bar (or count lines) past a second.
    with Progress("prepare", unit="sessions") as bar:
        report = pipeline.prepare(
            spec,
            source,
            layout,
            open_backend,
            max_jobs=max_jobs,
            budget_kb=budget_kb,
            abandon_unfinished=abandon_unfinished,
            progress=lambda done, total: bar.update(done, total),
        )
    _refresh_instruction(spec, report)
    try:
        _print_prepare(spec, layout, report, as_json)
    finally:
        _flush_events()  # memU's flush point: the end of prepare (bounded; never fails it)


def _flush_events() -> None:
    from memu_core import _events

    _events.flush()


def _print_prepare(spec: HostSpec, layout: Any, report: PrepareReport, as_json: bool) -> None:
    if as_json:
        import json

        # The form of ``_retrieve_output.render`` (indented, UTF-8 kept), without importing the
        # answer formatter a prepare has no other use for.
        _say(json.dumps({**report.as_dict(), "jobs_dir": str(layout.jobs)}, indent=2, ensure_ascii=False, default=str))
        return
    for w in report.warnings:
        _warn(f"warning: {w}")
    for n in report.notes:
        _say(n)
    _say(f"prepared {report.sessions} session(s) -> {report.jobs} job(s) in {layout.jobs} (run {report.run})")
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


def _refresh_instruction(spec: HostSpec, report: PrepareReport) -> None:
    """Bring the installed retrieval procedure up to date; what happened goes in the report."""
    from memu_core._bridge import instruction

    try:
        skills = Path(spec.skills_dir).expanduser() if spec.skills_dir else None
        if spec.instruction_path:
            for change in instruction.refresh(Path(spec.instruction_path).expanduser(), spec.binary, skills):
                report.notes.append(f"refreshed the retrieval procedure at {change.path}")
    except OSError as exc:
        report.warnings.append(f"could not refresh the retrieval procedure ({exc})")


def run_commit(spec: HostSpec, base_dir: str | None, run_id: str | None = None) -> None:
    """``commit``: store the agent's changes, print what was stored and forgotten."""
    import os

    from memu_core._bridge import pipeline, run
    from memu_core._bridge.backend import open_backend
    from memu_core._serve.embedding import route_through_warm_server

    owner = run.owner_of(spec.session_id_env, os.environ)
    layout = _layout(spec, base_dir)
    with route_through_warm_server(autostart=True):  # a bridging run borrows the warm model
        report = pipeline.commit(
            layout,
            open_backend,
            spec.id,
            run_id=run_id,
            owner=owner,
            binary=spec.binary,
            session_env=spec.session_id_env,
        )
    _flush_events()  # memU's flush point: a successful commit (a failed one flushes in the shell)
    for w in report.warnings:
        _warn(f"warning: {w}")
    if not report.files and not report.resources and not report.forgotten:
        _say("nothing to commit")
        return
    _say(f"committed {len(report.files)} recall file(s) and {report.resources} resource(s)")
    for track, name in report.files:
        _say(f"  - {track}/{name}")
    for track, name in report.forgotten:
        _say(f"  - forgot {track}/{name}")


def run_verify_resources(spec: HostSpec, base_dir: str | None) -> None:
    """``verify-resources``: keep the touched files that exist, write them to resources.md."""
    from memu_core._bridge import pipeline

    layout = _layout(spec, base_dir)
    count = pipeline.verify_resources(layout, spec.id)
    _say(f"{count} resource(s) written to {layout.resources}")


def run_retrieve(spec: HostSpec, query: str, max_bytes: int | None = None) -> None:
    """``retrieve``: the warm server's answer when one is up, else the engine in this process."""
    from memu_core.errors import UsageError

    if not query.strip():
        raise UsageError("the query is empty; pass the user's request or a few keywords in quotes")
    from memu_core import _events as events
    from memu_core._serve.fastpath import host_retrieve

    # One event per turn, spooled by the sink and never flushed here: the turn stays O(1).
    with events.step("memory_search", host=spec.id, session_env=spec.session_id_env) as properties:
        properties["result_count"] = 0
        warm = host_retrieve(spec, query, max_bytes)
        if warm is not None:
            properties["result_count"] = events.result_count(warm)
            return
        from memu_core._bridge.backend import open_backend
        from memu_core._retrieve_output import agent_answer, budget, locate_in_mirror

        result = open_backend().progressive_retrieve(query)
        properties["result_count"] = events.result_count(result)
        _say(agent_answer(result, locate_in_mirror(spec.default_base()), budget(max_bytes)))


_BODIES: dict[str, Callable[..., None]] = {"retrieve": run_retrieve, "prepare": run_prepare, "commit": run_commit}


def fast(spec: HostSpec, args: Sequence[str]) -> Callable[[], Any] | None:
    """A ready-to-run ``retrieve``/``prepare``/``commit`` for a plain argument list, else ``None``."""
    from memu_core._cli import flags

    table = {"retrieve": flags.HOST_RETRIEVE, "prepare": flags.HOST_PREPARE, "commit": flags.HOST_COMMIT}
    command = table.get(args[0]) if args else None
    values = command.parse(args[1:]) if command is not None else None
    if command is None or values is None:
        return None
    body = _BODIES[command.name]
    return lambda: body(spec, **values)
