"""The Cola host, declared."""

from __future__ import annotations

from memu_core.host import HostSpec

SPEC = HostSpec(
    id="cola",
    display="Cola",
    source="memu_host_cola.source:ColaSource",
    package="memu_host_cola",
    session_dir="~/.cola/sessions",
    instruction_path="~/.cola/memory-bank/MEMORY.md",
    skills_dir="~/.cola/resources/skills",
    former_task_names=("memu-bridging", "memU 记忆桥接"),
)
"""``memu-cola``: Cola sessions, a skill plus a pointer in ``memory-bank/MEMORY.md``. No session
id is exported; bridging runs are recognised by the working directory in their session header."""
