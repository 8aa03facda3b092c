"""``memu mcp`` (run the stdio server) and ``memu mcp install --host H [--remove]``."""

# No ``from __future__ import annotations``: typer reads the annotations at definition time.

from typing import TYPE_CHECKING, Annotated

if TYPE_CHECKING:
    import typer


def register(app: "typer.Typer") -> None:
    """Add the ``mcp`` group to the ``memu`` typer app."""
    import typer

    mcp = typer.Typer(
        help="Serve memu's memory to MCP clients over stdio (no subcommand), or register it with a host.",
        rich_markup_mode=None,
        invoke_without_command=True,
    )

    @mcp.callback()
    def _run(ctx: typer.Context) -> None:
        """Run the MCP server on stdin/stdout (what an MCP client launches)."""
        if ctx.invoked_subcommand is not None:
            return
        from memu_core._mcp.server import run_stdio

        run_stdio()

    @mcp.command("install")
    def install(
        host: Annotated[str, typer.Option("--host", help="claude-code, cursor or codex.")],
        remove: Annotated[bool, typer.Option("--remove", help="Remove memu's entry instead.")] = False,
    ) -> None:
        """Add (or remove) memu in HOST's MCP configuration, keeping everything else as it was."""
        from memu_core._mcp.install import install_for_host

        print(install_for_host(host, remove=remove))

    app.add_typer(mcp, name="mcp")
