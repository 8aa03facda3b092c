"""Entry point (group ``memu``): registers the WorkBuddy host."""

from __future__ import annotations

from typing import TYPE_CHECKING

import memu_core
from memu_host_workbuddy.spec import SPEC

if TYPE_CHECKING:
    import typer

    from memu_core.host import HostSpec


@memu_core.hookimpl
def memu_register_hosts() -> list[HostSpec]:
    """The WorkBuddy host spec."""
    return [SPEC]


@memu_core.hookimpl
def memu_register_host_commands(spec: HostSpec, app: typer.Typer) -> None:
    """On ``memu-workbuddy``, ``install-instruction``/``remove-instruction`` also clean the legacy ``MEMORY.md``."""
    if spec.id != SPEC.id:
        return
    from memu_host_workbuddy.commands import add_workbuddy_commands

    add_workbuddy_commands(app, spec)
