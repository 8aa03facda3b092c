"""Entry point (group ``memu``): registers the any agent host."""

from __future__ import annotations

from typing import TYPE_CHECKING

import memu_core
from memu_host_generic.spec import SPEC

if TYPE_CHECKING:
    import typer

    from memu_core.host import HostSpec


@memu_core.hookimpl
def memu_register_hosts() -> list[HostSpec]:
    """The any agent host spec."""
    return [SPEC]


@memu_core.hookimpl
def memu_register_host_commands(spec: HostSpec, app: typer.Typer) -> None:
    """``detect`` (which agents log where) on ``memu-agent``."""
    if spec.id != SPEC.id:
        return
    from memu_host_generic.commands import add_detect

    add_detect(app, spec)
