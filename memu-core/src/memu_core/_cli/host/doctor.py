"""A host binary's own doctor checks, run after the core ones (:mod:`memu_core._cli.doctor`):
where the sessions are, whether the agent is told to retrieve, how the bridging run knows itself."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from memu_core._cli.doctor import CORE, Check, Context, Row
from memu_core._hostkit.spec import HostSpec
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

    return (*CORE, check_sessions, check_instruction, check_own_runs)


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
