"""The generic host, declared."""

from __future__ import annotations

from typing import Any

from memu_core.host import HostSpec


def _extra(app: Any, spec: HostSpec) -> None:
    from memu_host_generic.commands import add_detect

    add_detect(app, spec)


SPEC = HostSpec(
    id="agent",
    display="agent",
    source="memu_host_generic.source:GenericSource",
    package="memu_host_generic",
    session_dir="",  # no default: --session-dir is required
    instruction_path="./AGENTS.md",
    extra_commands=_extra,
)
"""``memu-agent``: any JSONL-logging agent, sniffed per record; ``detect`` finds agents."""
