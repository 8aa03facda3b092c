"""The WorkBuddy host, declared."""

from __future__ import annotations

from typing import Any

from memu_core.host import HostSpec


def _extra(app: Any, spec: HostSpec) -> None:
    from memu_host_workbuddy.commands import add_workbuddy_commands

    add_workbuddy_commands(app, spec)


SPEC = HostSpec(
    id="workbuddy",
    display="WorkBuddy",
    source="memu_host_workbuddy.source:WorkBuddySource",
    package="memu_host_workbuddy",
    session_dir="~/.workbuddy/projects",
    instruction_path="~/.workbuddy/SOUL.md",
    extra_commands=_extra,
)
"""``memu-workbuddy``: WorkBuddy sessions, the procedure inline in ``SOUL.md``. No session id is
exported; bridging runs are recognised by their project folder (memu's working tree)."""
