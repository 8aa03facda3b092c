"""The Codex host, declared."""

from __future__ import annotations

from memu_core.host import HostSpec

SPEC = HostSpec(
    id="codex",
    display="Codex",
    source="memu_host_codex.source:CodexSource",
    package="memu_host_codex",
    session_dir="~/.codex/sessions",
    instruction_path="~/.codex/AGENTS.md",
    skills_dir="~/.codex/skills",
    former_task_names=("memu-remember", "memu-bridging"),
)
"""``memu-codex``: Codex rollouts, a skill plus a pointer in ``AGENTS.md``. Codex exports no
session id, so its scheduled runs cannot be told apart from other sessions (they are mined)."""
