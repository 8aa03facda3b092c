"""The OpenClaw host, declared."""

from __future__ import annotations

from memu_core.host import HostSpec

SPEC = HostSpec(
    id="openclaw",
    display="OpenClaw",
    source="memu_host_openclaw.source:OpenClawSource",
    package="memu_host_openclaw",
    session_dir="~/.openclaw/agents",
    instruction_path="~/.openclaw/workspace/AGENTS.md",
    skills_dir="~/.openclaw/skills",
    former_task_names=("memu-remember", "memu-bridging"),
)
"""``memu-openclaw``: SQLite stores + legacy JSONL, a skill plus a pointer in the workspace
``AGENTS.md``; bridging runs recognised by their registered cron job (``register-cron-job``)."""
