"""The Claude Code host, declared."""

from __future__ import annotations

from memu_core.host import HostSpec

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
)
"""``memu-claude-code``: Claude Code + Cowork sessions, a skill plus a pointer in ``CLAUDE.md``."""
