"""The CLI shell for binaries built on memu-core outside it (``memu-server``, a third-party tool).

Every memu binary runs in the same shell: UTF-8 streams before anything prints, ``-v``/``--verbose``
and ``MEMU_DEBUG=1``, ``--version``, plain help with shell completion, and one stderr line with an
exit code per failure (a :class:`~memu_core.errors.MemuError` keeps its own code)::

    from memu_core.cli import Binary, new_app, run

    app = new_app("memu-hello", "Say hello.", distribution="memu-hello")

    def main() -> None:
        raise SystemExit(run(Binary("memu-hello", lambda args: app, distribution="memu-hello")))

Host binaries get all of this through :func:`memu_core.host.run_host`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memu_core._cli.shell import Binary, run, version_line

if TYPE_CHECKING:
    import typer

__all__ = ["Binary", "new_app", "run", "sub_app", "version_line"]


def new_app(prog: str, help: str, *, distribution: str = "memu-core", epilog: str | None = None) -> typer.Typer:
    """A root typer app in memu's style: plain help, completion, ``--version`` and ``-v``."""
    from memu_core._cli.apps import new_app as build

    return build(prog, help, distribution=distribution, epilog=epilog)


def sub_app(help: str, **options: Any) -> typer.Typer:
    """A command group in the same style (``typer.Typer`` options pass through)."""
    from memu_core._cli.apps import sub_app as build

    return build(help, **options)
