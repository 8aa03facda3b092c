"""Entry point of the ``memu`` command: one handled-error type, one line per failure.

A :class:`~memu_core.errors.MemuError` prints ``error: <message>`` on stderr and exits with its
code (2 usage/config, 1 runtime, 3 busy); ``-v`` adds the traceback and debug logs. Anything else
is a bug: it keeps its traceback.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any

VERBOSE_FLAGS = ("-v", "--verbose")


def _handled(call: Callable[[], Any], verbose: bool) -> int:
    """Run ``call``; a MemuError becomes one stderr line and its exit code."""
    from memu_core.errors import MemuError

    try:
        result = call()
    except MemuError as exc:
        if verbose:
            import traceback

            traceback.print_exc()
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:
        import typer
        from typer._click.exceptions import ClickException, NoArgsIsHelpError

        if isinstance(exc, typer.Exit):
            return int(exc.exit_code)
        if isinstance(exc, typer.Abort):
            return 130
        if isinstance(exc, NoArgsIsHelpError):
            exc.show()
            return 0
        if isinstance(exc, ClickException):
            exc.show()
            return exc.exit_code
        raise
    return result if isinstance(result, int) else 0


def run_app(app_factory: Callable[[], Any], argv: Sequence[str] | None = None, *, prog: str = "memu") -> int:
    """Run a typer app built by ``app_factory`` and turn handled errors into exit codes."""
    args = list(sys.argv[1:] if argv is None else argv)
    verbose = any(flag in args for flag in VERBOSE_FLAGS)
    args = [a for a in args if a not in VERBOSE_FLAGS]
    from memu_core._cli.output import configure_logging

    configure_logging(verbose)
    return _handled(lambda: app_factory()(args=args, prog_name=prog, standalone_mode=False), verbose)


def fast_retrieve(args: Sequence[str]) -> int | None:
    """``memu retrieve QUERY [options]`` without the CLI framework: the warm server when one is up,
    else the engine in process. ``None`` for anything unusual (``--help``, ``-v``, a typo), which
    the typer CLI then handles with its own messages."""
    from memu_core._serve.fastpath import memu_retrieve, parse_memu_retrieve

    parsed = parse_memu_retrieve(args)
    if parsed is None:
        return None
    code = memu_retrieve(args)
    if code is not None:
        return code
    from memu_core._cli.memory_cmds import run_retrieve

    return _handled(
        lambda: run_retrieve(
            parsed["query"], top_k=parsed["top_k"], tracks=parsed["tracks"], where=parsed["where"] or {}
        ),
        verbose=False,
    )


def fast_commit(args: Sequence[str]) -> int | None:
    """``memu commit PAYLOAD|--from-dir DIR [--json]`` without the CLI framework (typer's
    parameter handling imports pydantic and costs a quarter of a second); ``None`` otherwise."""
    from pathlib import Path

    from memu_core._cli.memory_cmds import run_commit

    rest = list(args)
    as_json = "--json" in rest
    rest = [a for a in rest if a != "--json"]
    if len(rest) == 2 and rest[0] == "--from-dir" and rest[1].strip():
        payload, from_dir = None, Path(rest[1])
    elif len(rest) == 1 and rest[0] and (rest[0] == "-" or not rest[0].startswith("-")):
        payload, from_dir = rest[0], None
    else:
        return None
    return _handled(lambda: run_commit(payload, from_dir, as_json), verbose=False)


def wants_plugin_commands(first: str | None) -> bool:
    """Whether the command line may name a plugin's command: only an unknown first word does.

    ``memu --help`` lists the built-in commands (and ``memu plugins`` what plugins add), so
    neither help nor any built-in command pays for importing every installed plugin, and the
    commands that repair an install (``init``, ``config``) never run third-party code.
    """
    from memu_core._cli.app import BUILTIN_COMMANDS

    return first is not None and first not in BUILTIN_COMMANDS


def main(argv: Sequence[str] | None = None) -> None:
    """``memu`` console script."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] in (["retrieve"], ["search"]):  # the per-turn command: no framework unless needed
        code = fast_retrieve(args[1:])
        if code is not None:
            sys.exit(code)
    if args[:1] == ["commit"] and (code := fast_commit(args[1:])) is not None:
        sys.exit(code)
    from functools import partial

    from memu_core._cli.app import build_app

    first = next((a for a in args if not a.startswith("-")), None)
    sys.exit(run_app(partial(build_app, with_plugins=wants_plugin_commands(first)), args))


if __name__ == "__main__":  # pragma: no cover
    main()
