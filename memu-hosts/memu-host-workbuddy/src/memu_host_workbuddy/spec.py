"""The WorkBuddy host, declared."""

from __future__ import annotations

from memu_core.host import HostSpec

SPEC = HostSpec(
    id="workbuddy",
    display="WorkBuddy",
    source="memu_host_workbuddy.source:WorkBuddySource",
    package="memu_host_workbuddy",
    session_dir="~/.workbuddy/projects",
    instruction_path="~/.workbuddy/SOUL.md",
)
"""``memu-workbuddy``: WorkBuddy sessions, the procedure inline in ``SOUL.md``. No session id is
exported; bridging runs are recognised by their project folder (memu's working tree)."""
