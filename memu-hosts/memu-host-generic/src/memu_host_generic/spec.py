"""The generic host, declared."""

from __future__ import annotations

from memu_core.host import HostSpec

SPEC = HostSpec(
    id="agent",
    display="agent",
    source="memu_host_generic.source:GenericSource",
    package="memu_host_generic",
    session_dir="",  # no default: --session-dir is required
    instruction_path="./AGENTS.md",
    # Scheduled by the OS like Claude Code, with the agent's command given at install time.
    schedule_backend="os",
)
"""``memu-agent``: any JSONL-logging agent, sniffed per record; ``detect`` finds agents."""
