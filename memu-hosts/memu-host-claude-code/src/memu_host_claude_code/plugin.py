"""Entry point (group ``memu``): registers the Claude Code host."""

from __future__ import annotations

from typing import TYPE_CHECKING

import memu_core
from memu_host_claude_code.spec import SPEC

if TYPE_CHECKING:
    import typer

    from memu_core.host import HostSpec


@memu_core.hookimpl
def memu_register_hosts() -> list[HostSpec]:
    """The Claude Code host spec."""
    return [SPEC]


@memu_core.hookimpl
def memu_register_host_commands(spec: HostSpec, app: typer.Typer) -> None:
    """``cowork`` (Claude Desktop Cowork diagnostics) on ``memu-claude-code``."""
    if spec.id != SPEC.id:
        return
    from memu_host_claude_code.cowork_cli import add_cowork_commands

    add_cowork_commands(app, spec)
