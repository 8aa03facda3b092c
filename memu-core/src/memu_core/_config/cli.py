"""typer wiring of ``init`` and ``config`` (imported only when a CLI is being built).

No ``from __future__ import annotations`` here: typer reads the option types at runtime.
"""

import sys
from collections.abc import Callable
from typing import Annotated

import typer


def _run(action: Callable[[], int]) -> None:
    # A MemuError propagates to the CLI shell, which prints it as one line with its exit code.
    raise typer.Exit(action())


def mount(app: typer.Typer, binary: str, *, after_init: Callable[[], None] | None = None) -> None:
    """Register ``init`` and ``config`` on ``app``."""

    @app.command("init")
    def init_command(
        cloud_api_key: Annotated[
            str,
            typer.Option("--cloud-api-key", help="memU Cloud (or memu-server) key: switch to cloud mode."),
        ] = "",
    ) -> None:
        """Record this machine's memory mode and client id in config.env (never refuses)."""
        from memu_core._config import commands

        _run(lambda: commands.run_init(binary, cloud_api_key or None, sys.stdout, sys.stderr, after_write=after_init))

    @app.command("config")
    def config_command(
        action: Annotated[str | None, typer.Argument(metavar="show", help="`show`: print, write nothing.")] = None,
        local: Annotated[bool, typer.Option("--local", help="Use the local engine.")] = False,
        cloud: Annotated[bool, typer.Option("--cloud", help="Use a v4 memory API.")] = False,
        cloud_api_key: Annotated[str, typer.Option("--cloud-api-key", help="Cloud key (--cloud).")] = "",
        cloud_base_url: Annotated[str, typer.Option("--cloud-base-url", help="v4 API base URL (--cloud).")] = "",
        db: Annotated[str, typer.Option("--db", help="Store path, sqlite URL or Postgres DSN (--local).")] = "",
        embed_provider: Annotated[str, typer.Option("--embed-provider", help="Embedding provider (--local).")] = "",
        embed_model: Annotated[str, typer.Option("--embed-model", help="Embedding model (--local).")] = "",
        embed_api_key: Annotated[str, typer.Option("--embed-api-key", help="Embedding key (--local).")] = "",
        embed_base_url: Annotated[str, typer.Option("--embed-base-url", help="Embedding endpoint (--local).")] = "",
        force: Annotated[bool, typer.Option("--force", help="Skip the mode and identity guards.")] = False,
        telemetry: Annotated[
            str, typer.Option("--telemetry", metavar="on|off", help="Turn telemetry on or off (alone or with a mode).")
        ] = "",
    ) -> None:
        """Show or change config.env: `config show`, `config --local|--cloud` with options, or
        `config --telemetry on|off`."""
        if action is not None and action != "show":
            raise typer.BadParameter(f"{action!r} is not a subcommand; the only one is `show`", param_hint="[show]")
        from memu_core._config import commands

        if action == "show":
            _run(lambda: commands.run_config_show(binary, sys.stdout, sys.stderr))
        if local and cloud:
            raise typer.BadParameter("pass either --local or --cloud, not both", param_hint="--local/--cloud")
        if telemetry and telemetry.strip().lower() not in commands.TELEMETRY_SWITCH:
            raise typer.BadParameter(f"{telemetry!r}: use on or off", param_hint="--telemetry")
        target = "local" if local else "cloud" if cloud else None
        values = {
            "cloud_api_key": cloud_api_key,
            "cloud_base_url": cloud_base_url,
            "db": db,
            "embed_provider": embed_provider,
            "embed_model": embed_model,
            "embed_api_key": embed_api_key,
            "embed_base_url": embed_base_url,
        }
        _run(
            lambda: commands.run_config(
                binary, target, values, force, sys.stdout, sys.stderr, telemetry=telemetry or None
            )
        )
