"""The Claude Code host, declared."""

from __future__ import annotations

from typing import Any

from memu_core.host import HostSpec


def _extra(app: Any, spec: HostSpec) -> None:
    from memu_host_claude_code.cowork_cli import add_cowork_commands

    add_cowork_commands(app, spec)


SPEC = HostSpec(
    id="claude-code",
    display="Claude Code",
    source="memu_host_claude_code.source:ClaudeDesktopSource",
    package="memu_host_claude_code",
    session_dir="~/.claude/projects",
    instruction_path="~/.claude/CLAUDE.md",
    skills_dir="~/.claude/skills",
    session_id_env="CLAUDE_CODE_SESSION_ID",
    former_task_names=("memu-remember-claude-code",),
    schedule_command="claude -p {prompt}",
    extra_commands=_extra,
)
"""``memu-claude-code``: Claude Code + Cowork sessions, a skill plus a pointer in ``CLAUDE.md``."""
