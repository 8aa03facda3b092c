"""The OpenClaw host, declared."""

from __future__ import annotations

from typing import Any

from memu_core.host import HostSpec


def _extra(app: Any, spec: HostSpec) -> None:
    from memu_host_openclaw.commands import add_openclaw_commands

    add_openclaw_commands(app, spec)


SPEC = HostSpec(
    id="openclaw",
    display="OpenClaw",
    source="memu_host_openclaw.source:OpenClawSource",
    package="memu_host_openclaw",
    session_dir="~/.openclaw/agents",
    instruction_path="~/.openclaw/workspace/AGENTS.md",
    skills_dir="~/.openclaw/skills",
    former_task_names=("memu-remember", "memu-bridging"),
    extra_commands=_extra,
)
"""``memu-openclaw``: SQLite stores + legacy JSONL, a skill plus a pointer in the workspace
``AGENTS.md``; bridging runs recognised by their registered cron job (``register-cron-job``)."""
