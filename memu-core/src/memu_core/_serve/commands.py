"""``memu serve``: run, start in the background, inspect or stop the warm server."""

# No ``from __future__ import annotations``: typer reads the annotations at definition time.

from typing import TYPE_CHECKING, Annotated, Optional

if TYPE_CHECKING:
    import typer


def register(app: "typer.Typer") -> None:
    """Add ``serve`` to the ``memu`` typer app (command bodies import what they use)."""
    import typer

    @app.command()
    def serve(
        stop: Annotated[bool, typer.Option("--stop", help="Stop the running server and exit.")] = False,
        status: Annotated[bool, typer.Option("--status", help="Print the running server's status as JSON.")] = False,
        background: Annotated[
            bool, typer.Option("--background", help="Start it detached and return (no-op if one is up).")
        ] = False,
        idle: Annotated[
            Optional[float],  # noqa: UP045 - typer needs Optional on 3.11
            typer.Option(
                "--idle", help="Exit after this many idle seconds (default MEMU_SERVE_IDLE, 1800; 0 = never)."
            ),
        ] = None,
    ) -> None:
        """Keep the store, index and embedder warm behind a socket in ~/.memu/run/ for per-turn retrieve."""
        import json
        import sys

        from memu_core import _layout
        from memu_core._serve import client

        if stop:
            pid = client.stop()
            print(f"stopped memu serve (pid {pid})" if pid else "memu serve is not running")
            return
        if status:
            info = client.status()
            if info is None:
                print("memu serve is not running", file=sys.stderr)
                raise typer.Exit(1)
            print(json.dumps(info, indent=2))
            return
        if background:
            if client.server_starting_or_running():
                print("memu serve is already running")
                return
            pid = client.spawn()
            print(f"started memu serve in the background (pid {pid}); log: {_layout.serve_log()}")
            return
        from memu_core._serve.server import run

        raise typer.Exit(run(idle=idle))
