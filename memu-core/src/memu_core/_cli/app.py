"""The ``memu`` typer app. Command bodies import what they need when they run, so ``memu --help``
and the per-turn ``memu retrieve`` pay only for typer and the code they actually use."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

TrackOpt = Annotated[Optional[list[str]], typer.Option("--track", help="Only this track (repeatable).")]  # noqa: UP045
UserOpt = Annotated[Optional[str], typer.Option("--user-id", help="Only this user's memory.")]  # noqa: UP045
AgentOpt = Annotated[Optional[str], typer.Option("--agent-id", help="Only this agent's memory.")]  # noqa: UP045


def _where(user_id: str | None, agent_id: str | None) -> dict[str, str]:
    return {k: v for k, v in (("user_id", user_id), ("agent_id", agent_id)) if v}


def _version_callback(value: bool) -> None:
    if value:
        from memu_core._version import version

        typer.echo(f"memu {version()}")
        raise typer.Exit()


BUILTIN_COMMANDS = frozenset(
    {"commit", "retrieve", "search", "list-files", "forget", "plugins", "doctor", "reindex", "db", "init", "config"}
    | {"serve", "mcp"}
)
"""Every built-in command (a test keeps this in step with the app). Plugin commands load only
when the command line names none of these: a built-in never waits for third-party imports."""


def build_app(*, with_plugins: bool = True) -> typer.Typer:
    """The ``memu`` command with every built-in verb, plus commands plugins add."""
    app = typer.Typer(
        name="memu",
        help="memu: local-first memory for coding agents. Store Markdown memory and skills, retrieve them per turn.",
        rich_markup_mode=None,
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        epilog="Plugins may add commands; `memu plugins` lists what is installed.",
    )

    @app.callback()
    def _root(
        version: Annotated[
            bool, typer.Option("--version", callback=_version_callback, is_eager=True, help="Print the version.")
        ] = False,
        verbose: Annotated[bool, typer.Option("-v", "--verbose", help="Debug logs and tracebacks.")] = False,
    ) -> None:
        """memu: local-first memory for coding agents."""

    @app.command()
    def commit(
        payload: Annotated[
            Optional[str],  # noqa: UP045
            typer.Argument(help="JSON file in commit_results' shape, or - for stdin."),
        ] = None,
        from_dir: Annotated[
            Optional[Path],  # noqa: UP045
            typer.Option("--from-dir", help="Commit every *.md file under DIR (frontmatter name/description/track)."),
        ] = None,
        as_json: Annotated[bool, typer.Option("--json", help="Print the full result as JSON.")] = False,
    ) -> None:
        """Store recall files and resources (unchanged ones cost nothing)."""
        from memu_core._cli.memory_cmds import run_commit

        run_commit(payload, from_dir, as_json)

    def retrieve(
        query: Annotated[str, typer.Argument(help="What to look for, in plain words.")],
        top_k: Annotated[Optional[int], typer.Option("--top-k", help="How many segments (default 5).")] = None,  # noqa: UP045
        track: TrackOpt = None,
        user_id: UserOpt = None,
        agent_id: AgentOpt = None,
    ) -> None:
        """Search memory; prints segments, files and resources as JSON."""
        from memu_core._cli.memory_cmds import run_retrieve

        run_retrieve(query, top_k=top_k, tracks=track, where=_where(user_id, agent_id))

    app.command("retrieve")(retrieve)
    app.command("search", help="Alias of retrieve.")(retrieve)

    @app.command("list-files")
    def list_files(
        as_json: Annotated[bool, typer.Option("--json", help='Print {"recall_files": [...]} as JSON.')] = False,
        user_id: UserOpt = None,
        agent_id: AgentOpt = None,
    ) -> None:
        """List every recall file (follows the cursor to the end)."""
        from memu_core._cli.memory_cmds import run_list_files

        run_list_files(as_json, _where(user_id, agent_id))

    @app.command()
    def forget(
        name: Annotated[str, typer.Argument(help="Name of the recall file to delete.")],
        track: Annotated[str, typer.Option("--track", help="Its track.")] = "memory",
        user_id: UserOpt = None,
        agent_id: AgentOpt = None,
    ) -> None:
        """Delete a recall file and everything indexed from it."""
        from memu_core._cli.memory_cmds import run_forget

        run_forget(name, track, _where(user_id, agent_id))

    @app.command()
    def plugins(as_json: Annotated[bool, typer.Option("--json", help="Machine-readable.")] = False) -> None:
        """List loaded plugins, their hooks and load errors."""
        from memu_core._cli.admin_cmds import run_plugins

        run_plugins(as_json)

    @app.command()
    def doctor() -> None:
        """Check configuration, store, embedder and a live retrieval; one line per problem."""
        from memu_core._cli.admin_cmds import run_doctor

        raise typer.Exit(run_doctor())

    @app.command()
    def reindex() -> None:
        """Re-embed every segment and resource under the configured embedder (resumable)."""
        import sys

        from memu_core._engine.reindex import run_reindex
        from memu_core.settings import load_settings

        raise typer.Exit(run_reindex(load_settings(), sys.stdout, sys.stderr))

    db = typer.Typer(help="Schema migrations of the configured store.", rich_markup_mode=None, no_args_is_help=True)

    @db.command("upgrade")
    def db_upgrade() -> None:
        """Migrate the store's schema to the newest revision."""
        from memu_core._cli.admin_cmds import run_db

        run_db("upgrade")

    @db.command("current")
    def db_current() -> None:
        """Print the store's schema revision."""
        from memu_core._cli.admin_cmds import run_db

        run_db("current")

    app.add_typer(db, name="db")

    from memu_core._config.commands import build_config_commands

    build_config_commands(app, "memu")

    from memu_core._mcp.commands import register as register_mcp
    from memu_core._serve.commands import register as register_serve

    register_serve(app)
    register_mcp(app)

    if with_plugins:
        from memu_core._plugins.manager import get_plugins

        get_plugins().add_commands(app)
    return app
