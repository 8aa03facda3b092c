"""Entry point (group ``memu``): registers the OpenClaw host."""

from __future__ import annotations

from typing import TYPE_CHECKING

import memu_core
from memu_host_openclaw.spec import SPEC

if TYPE_CHECKING:
    import typer

    from memu_core.host import HostSpec


@memu_core.hookimpl
def memu_register_hosts() -> list[HostSpec]:
    """The OpenClaw host spec."""
    return [SPEC]


@memu_core.hookimpl
def memu_register_host_commands(spec: HostSpec, app: typer.Typer) -> None:
    """``register-cron-job`` on ``memu-openclaw``."""
    if spec.id != SPEC.id:
        return
    from memu_host_openclaw.commands import add_openclaw_commands

    add_openclaw_commands(app, spec)
