"""The one CLI shell every memu binary runs in: ``memu``, each ``memu-<host>`` and ``memu-server``.

:func:`run` does the same things in the same order for all of them, and the order is the point:

1. stdout and stderr become UTF-8 before anything can print (a console or ``PYTHONIOENCODING``
   set to another codec must not turn a memory with an accent into a crash);
2. ``-v``/``--verbose`` (anywhere before ``--``) or ``MEMU_DEBUG=1`` switch on debug logs and
   tracebacks, for the fast paths too;
3. ``--version`` answers without building an app;
4. a binary's fast path (no typer, for the per-turn commands) or its typer app runs;
5. whatever escapes becomes one line on stderr and an exit code: a
   :class:`~memu_core.errors.MemuError` its message and its code, a usage mistake typer caught
   the mistake and 2, anything else ``internal error`` and 1 with a hint to rerun with ``-v``.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import typer

VERBOSE_FLAGS = ("-v", "--verbose")
INTERRUPTED = 130


class Binary:
    """One console script: its name, whose version it reports, its app and its fast path.

    A plain class, not a dataclass: a dataclass compiles its methods at import, and every memu
    process imports this module before it does anything.
    """

    __slots__ = ("build", "distribution", "fast", "host", "prog", "session_env")

    prog: str
    """The command name (``memu-codex``), used in usage lines and completion."""
    build: Callable[[Sequence[str]], typer.Typer]
    """Builds the typer app; receives the arguments (``memu`` loads plugin commands only when
    the first word is not a built-in)."""
    distribution: str
    """The distribution whose version ``--version`` prints (default ``memu-core``)."""
    fast: Callable[[Sequence[str]], Callable[[], Any] | None] | None
    """Returns a ready-to-run action for the plain forms of the per-turn commands, else ``None``."""
    host: str
    """The host id of a ``memu-<host>`` binary (its events name it); empty for the others."""
    session_env: str
    """The variable the host exports its session id in (events carry it when set)."""

    def __init__(
        self,
        prog: str,
        build: Callable[[Sequence[str]], typer.Typer],
        distribution: str = "memu-core",
        fast: Callable[[Sequence[str]], Callable[[], Any] | None] | None = None,
        host: str = "",
        session_env: str = "",
    ) -> None:
        self.prog = prog
        self.build = build
        self.distribution = distribution
        self.fast = fast
        self.host = host
        self.session_env = session_env

    def __repr__(self) -> str:
        return f"Binary({self.prog!r}, distribution={self.distribution!r})"


def utf8_streams() -> None:
    """Make stdin, stdout and stderr UTF-8; unencodable text (lone surrogates) is escaped."""
    for stream, errors in ((sys.stdin, "strict"), (sys.stdout, "backslashreplace"), (sys.stderr, "backslashreplace")):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            with contextlib.suppress(OSError, ValueError):  # detached or already read from
                reconfigure(encoding="utf-8", errors=errors)


def split_verbose(args: Sequence[str]) -> tuple[bool, list[str]]:
    """Whether debug output is on (``-v``/``--verbose`` before ``--``, or ``MEMU_DEBUG=1``), and
    ``args`` without those flags: they may stand anywhere, so the fast paths honour them too."""
    from memu_core._log import debug_from_env

    args = list(args)
    end = args.index("--") if "--" in args else len(args)
    head = [a for a in args[:end] if a not in VERBOSE_FLAGS]
    return (len(head) < end or debug_from_env()), head + args[end:]


def distribution_version(distribution: str) -> str:
    """The installed version of ``distribution`` (or of the distribution that ships the import
    package of that name), or ``0+unknown`` in a never-installed tree."""
    from importlib import metadata

    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        pass
    # A host plugin names its import package; its distribution may be spelled differently.
    for name in metadata.packages_distributions().get(distribution, []):
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return "0+unknown"


def version_line(prog: str, distribution: str) -> str:
    """``memu 0.1.0``; a binary from another distribution also names the memu-core it runs on."""
    line = f"{prog} {distribution_version(distribution)}"
    if distribution != "memu-core":
        line += f" (memu-core {distribution_version('memu-core')})"
    return line


def run(binary: Binary, argv: Sequence[str] | None = None) -> int:
    """Run ``binary`` with ``argv`` (default ``sys.argv[1:]``); return its exit code."""
    utf8_streams()
    verbose, args = split_verbose(sys.argv[1:] if argv is None else argv)
    from memu_core import _log

    _log.configure(verbose=verbose)
    if args[:1] == ["--version"]:
        sys.stdout.write(version_line(binary.prog, binary.distribution) + "\n")
        return 0
    command = next((a for a in args if not a.startswith("-")), "")
    from memu_core._engine.actor import set_actor

    # What this command writes is stamped "memu edit", "codex commit"… in the files' history.
    set_actor(f"{binary.host or binary.prog} {command}")

    def report(exc: BaseException) -> None:
        from memu_core import _events

        _events.cli_error(exc, command, host=binary.host, session_env=binary.session_env)

    return handled(lambda: _dispatch(binary, args), verbose=verbose, prog=binary.prog, report=report)


def _dispatch(binary: Binary, args: list[str]) -> Any:
    action = binary.fast(args) if binary.fast is not None else None
    if action is not None:
        return action()
    from memu_core._cli.apps import invoke

    return invoke(binary.build(args), args, binary.prog)


def handled(
    call: Callable[[], Any],
    *,
    verbose: bool,
    prog: str = "memu",
    report: Callable[[BaseException], None] | None = None,
) -> int:
    """Run ``call`` and turn its outcome into an exit code; every failure is one stderr line.

    ``report`` hears of each failure that is not a usage mistake (the ``cli_error`` event: the
    exception's class and reduced frames, never its message); it must not raise.
    """
    from memu_core.errors import MemuError, UsageError

    try:
        result = call()
    except MemuError as exc:
        if report is not None and (type(exc) is not UsageError):  # a typo is not a failure of memu
            report(exc)
        return _fail(str(exc), exc.exit_code, verbose)
    except KeyboardInterrupt:
        return INTERRUPTED
    except BrokenPipeError:
        _silence_stdout()  # the reader went away (``| head``): not an error, and no noise at exit
        return 0
    except SystemExit as exc:  # ``--install-completion`` and friends exit by themselves
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else _fail(str(exc.code), 1, False))
    except Exception as exc:
        if "typer" in sys.modules:  # only a command that went through typer can raise its exits
            from memu_core._cli.apps import framework_exit

            code = framework_exit(exc, prog)
            if code is not None:
                return code
        if report is not None:
            report(exc)
        return _fail(
            f"internal error: {type(exc).__name__}: {exc} (rerun with -v for the traceback, and report it)", 1, verbose
        )
    return result if isinstance(result, int) else 0


def _fail(message: str, code: int, verbose: bool) -> int:
    if verbose:
        import traceback

        traceback.print_exc()
    sys.stderr.write(f"error: {one_line(message)}\n")
    return code


def one_line(message: str) -> str:
    """``message`` on one line: continuation lines are joined with ``; ``."""
    return "; ".join(part.strip() for part in message.splitlines() if part.strip()) or "unknown error"


def _silence_stdout() -> None:
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
