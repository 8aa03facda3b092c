"""The Cursor host, declared."""

from __future__ import annotations

from memu_core.host import HostSpec

SPEC = HostSpec(
    id="cursor",
    display="Cursor",
    source="memu_host_cursor.source:CursorSource",
    package="memu_host_cursor",
    session_dir="~/.cursor/projects",
    # Cursor's CLI reads no global instruction file: the block goes into each project's AGENTS.md.
    instruction_path="./AGENTS.md",
    session_id_env="CURSOR_CONVERSATION_ID",
    schedule_command="cursor-agent --trust -p {prompt}",
)
"""``memu-cursor``: Cursor Agent transcripts, an inline block in each project's ``AGENTS.md``.
The Agent exports ``CURSOR_CONVERSATION_ID`` to its shell tools, so a bridging run skips itself."""
