"""A host binary's own doctor checks, run after the core ones (:mod:`memu_core._cli.doctor`):
where the sessions are, whether the agent is told to retrieve, how the bridging run knows itself,
whether a bridging run was left unfinished, whether the working tree is private, and whether an
installed schedule is still in place."""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterator
from pathlib import Path

from memu_core import _layout
from memu_core._cli.doctor import CORE, Check, Context, Row
from memu_core._hostkit.spec import HostSpec
from memu_core._layout import Layout
from memu_core.interfaces import TranscriptSource


def checks(spec: HostSpec) -> tuple[Check, ...]:
    """The core checks, then ``spec``'s: sessions, instruction, own runs."""

    def check_sessions(ctx: Context) -> Iterator[Row]:
        if not spec.session_dir:
            yield Row("sessions", "no default folder; `prepare` is given --session-dir")
            return
        source = spec.make_source(None)
        if source.exists():
            yield Row("sessions", str(source.root()))
            return
        yield Row(
            "sessions",
            f"no {spec.display} session log at {source.root()}",
            "warn",
            f"pass --session-dir to `{spec.binary} prepare` with the folder that holds the sessions",
        )

    def check_instruction(ctx: Context) -> Iterator[Row]:
        yield from _instruction_rows(spec)

    def check_own_runs(ctx: Context) -> Iterator[Row]:
        if not spec.session_dir:
            return
        yield from _own_run_rows(spec, spec.make_source(None))

    def check_bridging_run(ctx: Context) -> Iterator[Row]:
        yield from _bridging_run_rows(spec, Layout.at(spec.default_base(), spec.id))

    def check_tree(ctx: Context) -> Iterator[Row]:
        yield from _tree_rows(spec.default_base())

    def check_schedule(ctx: Context) -> Iterator[Row]:
        yield from _schedule_rows(spec, spec.default_base())

    return (*CORE, check_sessions, check_instruction, check_own_runs, check_bridging_run, check_tree, check_schedule)


def _instruction_rows(spec: HostSpec) -> Iterator[Row]:
    from memu_core._bridge.instruction import SKILL_NAME, begin_marker

    if not spec.instruction_path:
        return
    path = Path(spec.instruction_path).expanduser()
    if not path.is_absolute():
        # Per-project instruction files (./AGENTS.md) live wherever the user works.
        yield Row("instruction", f"{spec.instruction_path} in each project (`{spec.binary} install-instruction` there)")
        return
    try:
        installed = begin_marker(spec.binary) in path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        installed = False
    if not installed:
        yield Row(
            "instruction",
            f"no memu block in {path}: the agent is not told to retrieve",
            "warn",
            f"run `{spec.binary} install-instruction`",
        )
        return
    yield Row("instruction", f"{path}: memu block installed")
    if spec.skills_dir and not (Path(spec.skills_dir).expanduser() / SKILL_NAME / "SKILL.md").is_file():
        yield Row(
            "skill",
            f"the block points at a {SKILL_NAME} skill missing from {spec.skills_dir}",
            "warn",
            f"run `{spec.binary} install-instruction`",
        )


def _own_run_rows(spec: HostSpec, source: TranscriptSource) -> Iterator[Row]:
    """How the scheduled bridging run is kept out of its own mining (memu's rule, the source's)."""
    if not source.exists():
        return
    own = source.self_sessions(spec.default_base())
    for warning in own.warnings:
        yield Row("own runs", warning, "warn")
    if own.ids:
        yield Row("own runs", f"{len(own.ids)} bridging run(s) recognised in {spec.display}'s records")
    if spec.session_id_env:
        yield Row("own runs", f"a scheduled run names its session through {spec.session_id_env}")


def _bridging_run_rows(spec: HostSpec, layout: Layout) -> Iterator[Row]:
    """An unfinished run in the tree: fine while its agent works, a warning once it is stale."""
    from memu_core._bridge import run
    from memu_core.errors import UsageError

    marker = run.read(layout.run_marker)
    if marker is None:
        if layout.base.is_dir():
            yield Row("bridging", "no unfinished run")
        return
    age = run.shown_age(marker.age())
    try:
        stale = run.stale_after(os.environ)
    except UsageError as exc:
        yield Row("bridging", str(exc), "fail", f"fix {run.STALE_ENV} in the environment or config.env")
        return
    what = f"run {marker.run}, prepared {age} ago, {marker.jobs} job(s) in {layout.jobs}"
    if marker.age() <= stale:
        yield Row("bridging", f"{what}: in progress (its agent runs `{spec.binary} commit` when done)")
        return
    yield Row(
        "bridging",
        f"{what}: unfinished for longer than {run.STALE_ENV}={stale:.0f} s (its agent probably died)",
        "warn",
        f"run `{spec.binary} prepare --abandon-unfinished` (or let the next run drop it); "
        "its sessions are offered again and the mirror's edits are kept",
    )


TREE_EXAMPLES = 3
"""How many offending paths a tree row names."""


def _tree_rows(base: Path) -> Iterator[Row]:
    """The working tree holds transcripts and memories: owned by this user, folders 0700, files
    0600."""
    if not base.is_dir():
        return
    foreign, loose = _layout.exposure(base)
    quoted = shlex.quote(str(base))
    if foreign:
        shown = ", ".join(f"{p} (uid {uid})" for p, uid in foreign[:TREE_EXAMPLES])
        yield Row(
            "tree",
            f"{len(foreign)} path(s) in {base} belong to another user: {shown}",
            "fail",
            f"as their owner or root, run `chown -R {os.geteuid()} {quoted}` (memu cannot rewrite them)",
        )
    if loose:
        shown = ", ".join(f"{p} ({mode:o})" for p, mode in loose[:TREE_EXAMPLES])
        yield Row(
            "tree",
            f"{len(loose)} path(s) in {base} are open to other users: {shown}",
            "warn",
            f"run `chmod -R go-rwx {quoted}`",
        )
    if not foreign and not loose:
        yield Row("tree", f"{base} private (yours; folders 0700, files 0600)")


def _schedule_rows(spec: HostSpec, base: Path) -> Iterator[Row]:
    """An installed schedule: still registered with the scheduler, wrapper as installed."""
    from memu_core._schedule import backends, wrapper
    from memu_core._schedule import plan as plans

    plan = plans.load(base, spec.id)
    if plan is None:
        return
    reinstall = (
        f"run `{spec.binary} schedule install --interval {plan.interval}` (it writes the entry and wrapper again)"
    )
    try:
        registered = backends.get(plan.backend).installed(plan)
    except Exception as exc:  # a scheduler tool that cannot be asked is a finding, not a crash
        yield Row("schedule", f"cannot ask {plan.backend} about {plan.task_name} ({exc})", "warn", reinstall)
        registered = True
    else:
        if not registered:
            yield Row(
                "schedule", f"{plan.backend} no longer holds {plan.task_name}: no run will start", "fail", reinstall
            )
    current = wrapper.current_digest(Path(plan.wrapper))
    if current is None:
        yield Row(
            "schedule", f"the wrapper {plan.wrapper} is gone: the scheduler has nothing to start", "fail", reinstall
        )
        return
    if plan.wrapper_sha256 and current != plan.wrapper_sha256:
        yield Row(
            "schedule",
            f"the wrapper {plan.wrapper} was edited since install",
            "warn",
            f"{reinstall}, then `{spec.binary} schedule verify`",
        )
        return
    if registered:
        yield Row("schedule", f"{plan.task_name} in {plan.backend}, every {plan.interval} min, wrapper as installed")
