"""memu-core's plugin for the command lines: the built-in ``memu`` commands and the verbs every
host binary shares, added through the same hooks as a third party's.

Registered by name with memu-core's other built-ins (see ``memu_core._plugins.builtin``); it
imports nothing at module level beyond the marker, so the per-turn ``retrieve``, which registers
the built-ins, pays nothing for it. Its implementations are ``tryfirst`` so the built-in
commands are on the app before any plugin's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memu_core import hookimpl

if TYPE_CHECKING:
    import typer

    from memu_core._hostkit.spec import HostSpec


@hookimpl(tryfirst=True)
def memu_register_commands(app: typer.Typer) -> None:
    """``commit``, ``retrieve``, ``list-files``, ``forget``, ``plugins``, ``doctor``, ``db``,
    ``init``, ``config``, ``serve``, ``mcp``…"""
    from memu_core._cli.app import add_builtin_commands
    from memu_core._memorize.commands import add_memorize_commands

    add_builtin_commands(app)
    add_memorize_commands(app)


@hookimpl(tryfirst=True)
def memu_register_host_commands(spec: HostSpec, app: typer.Typer) -> None:
    """``retrieve``, ``install-instruction``, ``prepare``, ``commit``, ``docs``, ``init``…"""
    from memu_core._cli.host.app import add_shared_commands

    add_shared_commands(spec, app)
