"""The typer side of the CLI shell: one app style for every binary, and typer's exits as codes.

Only imported once a command goes through typer; the per-turn fast paths never load it.
Every binary's app comes from :func:`new_app` (plain help, shell completion, ``--version``,
``-v``); :func:`invoke` also strips rich formatting from groups that plugins built themselves,
so help looks the same whichever distribution added a command.
"""

# No ``from __future__ import annotations``: typer reads the callback's annotations at runtime.

import sys
from collections.abc import Sequence
from typing import Annotated, Any

import typer

VERSION_HELP = "Print the version and exit."
VERBOSE_HELP = "Debug logs and tracebacks on stderr (also MEMU_DEBUG=1)."


def new_app(prog: str, help: str, *, distribution: str = "memu-core", epilog: str | None = None) -> typer.Typer:
    """A binary's root app: plain help, completion, ``--version`` and ``-v`` on the root."""
    app = typer.Typer(
        name=prog,
        help=help,
        epilog=epilog,
        rich_markup_mode=None,
        no_args_is_help=True,
        add_completion=True,
        pretty_exceptions_enable=False,
    )

    def show_version(value: bool) -> None:
        if value:
            from memu_core._cli.shell import version_line

            typer.echo(version_line(prog, distribution))
            raise typer.Exit()

    # The shell answers ``--version`` and strips ``-v`` before typer runs; declaring them here
    # puts them in every binary's help and accepts them in any position typer parses.
    @app.callback()
    def root(
        version: Annotated[
            bool, typer.Option("--version", callback=show_version, is_eager=True, help=VERSION_HELP)
        ] = False,
        verbose: Annotated[bool, typer.Option("-v", "--verbose", help=VERBOSE_HELP)] = False,
    ) -> None:
        del version, verbose

    return app


def sub_app(help: str, **options: Any) -> typer.Typer:
    """A command group (``memu db``, ``memu-server keys``) in the same style."""
    options.setdefault("no_args_is_help", True)
    return typer.Typer(help=help, rich_markup_mode=None, add_completion=False, **options)


def _plain(command: Any) -> None:
    if hasattr(command, "rich_markup_mode"):
        command.rich_markup_mode = None
    for sub in getattr(command, "commands", {}).values():
        _plain(sub)


def invoke(app: typer.Typer, args: Sequence[str], prog: str) -> Any:
    """Run ``app`` on ``args`` without typer's own exit handling (the shell does that)."""
    from typer.main import get_command

    command = get_command(app)
    _plain(command)
    return command.main(args=list(args), prog_name=prog, standalone_mode=False)


def framework_exit(exc: BaseException, prog: str) -> int | None:
    """The exit code for an exception typer (or a plugin's click) raised, after its one line;
    ``None`` when ``exc`` is not one of theirs."""
    from typer._click import exceptions as typer_click

    errors: list[tuple[type[BaseException], ...]] = [
        (typer.Exit, typer.Abort, typer_click.NoArgsIsHelpError, typer_click.ClickException)
    ]
    if "click" in sys.modules:  # a plugin may build its command with the real click
        import click

        errors.append((click.exceptions.Exit, click.Abort, click.exceptions.NoArgsIsHelpError, click.ClickException))
    for exit_, abort, no_args, click_error in errors:
        if isinstance(exc, exit_):
            return int(getattr(exc, "exit_code", 0))
        if isinstance(exc, abort):
            return 130
        if isinstance(exc, no_args):
            exc.show()  # type: ignore[attr-defined]
            return 0
        if isinstance(exc, click_error):
            ctx = getattr(exc, "ctx", None)
            where = ctx.command_path if ctx is not None else prog
            from memu_core._cli.shell import one_line

            sys.stderr.write(f"error: {one_line(exc.format_message())} (see `{where} --help`)\n")  # type: ignore[attr-defined]
            return int(getattr(exc, "exit_code", 2))
    return None
