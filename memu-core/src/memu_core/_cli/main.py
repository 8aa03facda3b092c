"""Entry point of the ``memu`` command: the shared shell with memu's app and fast paths.

The per-turn commands (``retrieve``/``search`` and ``commit``) in their plain forms skip typer:
they are fresh processes, and typer's parameter handling imports pydantic. Their arguments are
parsed from the same flag table the typer commands are built from.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any

from memu_core._cli import flags
from memu_core._cli.shell import Binary, run


def fast(args: Sequence[str]) -> Callable[[], Any] | None:
    """A ready-to-run ``retrieve``/``search``/``commit`` for a plain argument list, else ``None``."""
    command = {"retrieve": flags.RETRIEVE, "search": flags.RETRIEVE, "commit": flags.COMMIT}.get(
        args[0] if args else ""
    )
    if command is None:
        return None
    values = command.parse(args[1:])
    if values is None:
        return None
    from memu_core._cli import memory_cmds

    body = memory_cmds.retrieve if command is flags.RETRIEVE else memory_cmds.commit
    return lambda: body(**values)


def wants_plugin_commands(first: str | None) -> bool:
    """Whether the command line may name a plugin's command: only an unknown first word does.

    ``memu --help`` lists the built-in commands (and ``memu plugins`` what plugins add), so
    neither help nor any built-in command pays for importing every installed plugin, and the
    commands that repair an install (``init``, ``config``) never run third-party code.
    """
    from memu_core._cli.app import BUILTIN_COMMANDS

    return first is not None and first not in BUILTIN_COMMANDS


def build(args: Sequence[str]) -> Any:
    """The ``memu`` typer app for ``args`` (plugin commands only when they may be named)."""
    from memu_core._cli.app import build_app

    first = next((a for a in args if not a.startswith("-")), None)
    return build_app(with_plugins=wants_plugin_commands(first))


MEMU = Binary("memu", build, fast=fast)
"""The ``memu`` binary as the shell runs it."""


def run_app(app_factory: Callable[[], Any], argv: Sequence[str] | None = None, *, prog: str = "memu") -> int:
    """Run the typer app ``app_factory`` builds through the shell (no fast path); for tests and tools."""
    return run(Binary(prog, lambda _args: app_factory()), argv)


def main(argv: Sequence[str] | None = None) -> None:
    """``memu`` console script."""
    sys.exit(run(MEMU, argv))


if __name__ == "__main__":  # pragma: no cover
    main()
