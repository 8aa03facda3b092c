"""Entry point of the ``memu`` command: the shared shell with memu's app and fast paths.

The per-turn commands (``retrieve``/``search`` and ``commit``) in their plain forms skip typer:
they are fresh processes, and typer's parameter handling imports pydantic. Their arguments are
parsed from the same flag table the typer commands are built from.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # the per-turn ``memu retrieve`` must not pay for typing
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

    from memu_core._cli.shell import Binary


def fast(args: Sequence[str]) -> Callable[[], Any] | None:
    """A ready-to-run ``retrieve``/``search``/``commit`` for a plain argument list, else ``None``."""
    from memu_core._cli import flags

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


def __getattr__(name: str) -> Binary:
    # ``MEMU`` is built on first use: the warm ``memu retrieve`` answers without the shell.
    if name != "MEMU":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from memu_core._cli.shell import Binary

    binary = Binary("memu", build, fast=fast)
    globals()["MEMU"] = binary
    return binary


def run_app(app_factory: Callable[[], Any], argv: Sequence[str] | None = None, *, prog: str = "memu") -> int:
    """Run the typer app ``app_factory`` builds through the shell (no fast path); for tests and tools."""
    from memu_core._cli.shell import Binary, run

    return run(Binary(prog, lambda _args: app_factory()), argv)


def main(argv: Sequence[str] | None = None) -> None:
    """``memu`` console script: a warm ``retrieve`` straight from the server, else the shell."""
    if argv is None:
        from memu_core._serve.turn import memu_answer

        code = memu_answer(sys.argv[1:])
        if code is not None:
            sys.exit(code)
    from memu_core._cli.shell import run

    sys.exit(run(__getattr__("MEMU"), argv))


if __name__ == "__main__":  # pragma: no cover
    main()
