"""``memu ui``: open the local page that shows, searches and edits memory."""

# No ``from __future__ import annotations``: typer reads the annotations at definition time.

from typing import TYPE_CHECKING, Annotated

if TYPE_CHECKING:
    import typer


def register(app: "typer.Typer") -> None:
    """Add ``ui`` to the ``memu`` typer app (the body imports what it uses when it runs)."""
    import typer

    @app.command()
    def ui(
        port: Annotated[int, typer.Option("--port", help="Port on 127.0.0.1 (default: any free port).")] = 0,
        no_browser: Annotated[
            bool, typer.Option("--no-browser", help="Print the address instead of opening the browser.")
        ] = False,
    ) -> None:
        """Browse, search, edit, restore and forget memory in a local web page (until Ctrl-C)."""
        from memu_core._ui.server import run

        raise typer.Exit(run(port=port, open_browser=not no_browser))
