"""Entry point of the ``memu`` command: one handled-error type, one line per failure.

A :class:`~memu_core.errors.MemuError` prints ``error: <message>`` on stderr and exits with its
code (2 usage/config, 1 runtime, 3 busy); ``-v`` adds the traceback and debug logs. Anything else
is a bug: it keeps its traceback.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

VERBOSE_FLAGS = ("-v", "--verbose")


def run_app(app_factory, argv: Sequence[str] | None = None, *, prog: str = "memu") -> int:  # type: ignore[no-untyped-def]
    """Run a typer app built by ``app_factory`` and turn handled errors into exit codes."""
    args = list(sys.argv[1:] if argv is None else argv)
    verbose = any(flag in args for flag in VERBOSE_FLAGS)
    args = [a for a in args if a not in VERBOSE_FLAGS]
    from memu_core._cli.output import configure_logging

    configure_logging(verbose)
    from memu_core.errors import MemuError

    try:
        app = app_factory()
        result = app(args=args, prog_name=prog, standalone_mode=False)
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


REPAIR_COMMANDS = frozenset({"init", "config"})
"""Commands that fix an install: they never load third-party plugin code."""


def main(argv: Sequence[str] | None = None) -> None:
    """``memu`` console script."""
    from functools import partial

    from memu_core._cli.app import build_app

    args = list(sys.argv[1:] if argv is None else argv)
    first = next((a for a in args if not a.startswith("-")), None)
    sys.exit(run_app(partial(build_app, with_plugins=first not in REPAIR_COMMANDS), args))


if __name__ == "__main__":  # pragma: no cover
    main()
