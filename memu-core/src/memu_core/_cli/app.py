"""The ``memu`` typer app. Command bodies import what they need when they run, so ``memu --help``
pays only for typer and the code it actually uses. The memory commands are built from the flag
table their fast paths parse (:mod:`memu_core._cli.flags`)."""

# No ``from __future__ import annotations``: typer reads the commands' annotations, and string
# annotations would be compiled and evaluated on every start-up (twice per command).

from collections.abc import Callable
from typing import Annotated, Any

import typer

BUILTIN_COMMANDS = frozenset(
    {"commit", "retrieve", "search", "list-files", "forget", "plugins", "doctor", "reindex", "db", "init", "config"}
    | {"serve", "mcp", "templates", "memorize"}
    | {"show", "edit", "history", "diff", "restore", "stats"}
    | {"ui"}
    | {"export", "import"}
)
"""Every built-in command (a test keeps this in step with the app). Plugin commands load only
when the command line names none of these: a built-in never waits for third-party imports."""


def build_app(*, with_plugins: bool = True) -> typer.Typer:
    """The ``memu`` command. Every command comes through ``memu_register_commands``: memu-core's
    own plugin adds the built-ins (:func:`add_builtin_commands`), other plugins theirs, and only
    ``with_plugins`` loads those other plugins."""
    from memu_core._cli.apps import new_app
    from memu_core._plugins.manager import get_plugins

    app = new_app(
        "memu",
        "memu: local-first memory for coding agents. Store Markdown memory and skills, retrieve them per turn.",
        epilog="Plugins may add commands; `memu plugins` lists what is installed.",
    )
    get_plugins().add_commands(app, third_party=with_plugins)
    return app


def add_builtin_commands(app: typer.Typer) -> None:
    """memu-core's commands, added through ``memu_register_commands`` like a plugin's."""
    from memu_core._cli import flags
    from memu_core._cli.apps import sub_app

    flags.typer_command(app, flags.COMMIT, _memory_command("commit"))
    flags.typer_command(app, flags.RETRIEVE, _memory_command("retrieve"))
    flags.typer_command(app, flags.RETRIEVE, _memory_command("retrieve"), name="search", help="Alias of retrieve.")
    flags.typer_command(app, flags.LIST_FILES, _memory_command("list_files"))
    flags.typer_command(app, flags.FORGET, _memory_command("forget"))

    from memu_core._cli.history_cmds import register as register_history

    register_history(app)

    _add_plugins_commands(app)

    @app.command()
    def doctor(as_json: Annotated[bool, JSON_OPTION] = False) -> None:
        """Check configuration, plugins, store, embedder and a live retrieval; one row per check."""
        import sys

        from memu_core._cli import doctor as checkup

        code = checkup.run(checkup.CORE, checkup.Context("memu"), sys.stdout, sys.stderr, as_json=as_json)
        raise typer.Exit(code)

    @app.command()
    def reindex(as_json: Annotated[bool, JSON_OPTION] = False) -> None:
        """Re-embed every segment and resource under the configured embedder (resumable)."""
        import sys

        from memu_core import _compose
        from memu_core._cli.progress import Progress
        from memu_core._engine.reindex import run_reindex
        from memu_core._serve.embedding import route_through_warm_server
        from memu_core.settings import load_settings

        # No autostart: a reindex follows a configuration change, and is rare.
        with route_through_warm_server(autostart=False), Progress("reindex", unit="rows") as bar:
            store, embedder, chunk = _compose.reindex_inputs(load_settings())
            code = run_reindex(
                store,
                embedder,
                sys.stdout,
                sys.stderr,
                batch_size=chunk,
                progress=lambda p: bar.update(p.done, p.total),
                as_json=as_json,
            )
        raise typer.Exit(code)

    _add_transfer_commands(app)

    db = sub_app("Schema migrations of the configured store.")

    @db.command("upgrade")
    def db_upgrade(as_json: Annotated[bool, JSON_OPTION] = False) -> None:
        """Migrate the store's schema to the newest revision."""
        from memu_core._cli.admin_cmds import run_db

        run_db("upgrade", as_json)

    @db.command("current")
    def db_current(as_json: Annotated[bool, JSON_OPTION] = False) -> None:
        """Print the store's schema revision."""
        from memu_core._cli.admin_cmds import run_db

        run_db("current", as_json)

    app.add_typer(db, name="db")

    from memu_core._config.cli import mount as add_config_commands

    add_config_commands(app, "memu", after_init=_install_started)

    from memu_core._mcp.commands import register as register_mcp
    from memu_core._serve.commands import register as register_serve

    register_serve(app)
    register_mcp(app)

    from memu_core._cli.templates_cmds import register as register_templates

    register_templates(app)

    from memu_core._ui.commands import register as register_ui

    register_ui(app)


JSON_OPTION = typer.Option("--json", help="Machine-readable.")


def _add_transfer_commands(app: typer.Typer) -> None:
    """``memu export`` and ``memu import``: memory out to files and back, and in from memU."""
    from pathlib import Path

    user_option = typer.Option("--user-id", help="The scope's user (default: the configured one).")
    agent_option = typer.Option("--agent-id", help="The scope's agent (default: the configured one).")

    @app.command("export")
    def export(
        target: Annotated[Path, typer.Argument(help="A new or empty folder, or a file ending in .json.")],
        track: Annotated[
            list[str] | None, typer.Option("--track", help="Only this track (memory or skill); repeatable.")
        ] = None,
        name: Annotated[list[str] | None, typer.Option("--name", help="Only this recall file; repeatable.")] = None,
        force: Annotated[bool, typer.Option("--force", help="Replace TARGET when it exists and is not empty.")] = False,
        user_id: Annotated[str | None, user_option] = None,
        agent_id: Annotated[str | None, agent_option] = None,
        as_json: Annotated[bool, JSON_OPTION] = False,
    ) -> None:
        """Write the scope's recall files as a Markdown folder (frontmatter) or one JSON commit payload."""
        from memu_core._cli.export_cmd import run_export

        where = {k: v for k, v in (("user_id", user_id), ("agent_id", agent_id)) if v}
        run_export(target, tracks=track, names=name, where=where, force=force, as_json=as_json)

    @app.command("import")
    def import_(
        source: Annotated[
            Path | None, typer.Argument(help="A folder or .json file `memu export` wrote (or any Markdown folder).")
        ] = None,
        from_memu: Annotated[
            Path | None, typer.Option("--from-memu", help="A memU 0.10 SQLite store (memU's MEMU_DB) to bring over.")
        ] = None,
        memu_home: Annotated[
            Path | None,
            typer.Option("--memu-home", help="memU's folder holding hosts/<id> cursors (default: ~/.memu)."),
        ] = None,
        prune: Annotated[
            bool, typer.Option("--prune", help="Forget the scope's files on the exported tracks that SOURCE lacks.")
        ] = False,
        user_id: Annotated[str | None, user_option] = None,
        agent_id: Annotated[str | None, agent_option] = None,
        as_json: Annotated[bool, JSON_OPTION] = False,
    ) -> None:
        """Commit an export back (all or nothing; a re-import changes nothing), or migrate a memU store."""
        from memu_core._cli.import_cmd import run_import

        where = {k: v for k, v in (("user_id", user_id), ("agent_id", agent_id)) if v}
        if prune and from_memu is not None:
            from memu_core.errors import UsageError

            raise UsageError("--prune goes with SOURCE, not --from-memu: a migration only adds")
        run_import(source, from_memu=from_memu, memu_home=memu_home, prune=prune, where=where, as_json=as_json)


def _add_plugins_commands(app: typer.Typer) -> None:
    """``memu plugins`` lists what is installed; ``install``, ``uninstall`` and ``available``
    manage it with memu's own pip and never import a plugin in this process."""
    from memu_core._cli.apps import sub_app

    group = sub_app(
        "List loaded plugins and their load errors; install, uninstall, list what memu offers.",
        no_args_is_help=False,
        invoke_without_command=True,
    )

    @group.callback()
    def plugins(ctx: typer.Context, as_json: Annotated[bool, JSON_OPTION] = False) -> None:
        """List loaded plugins, their hooks and load errors (the same as `memu plugins list`)."""
        if ctx.invoked_subcommand is None:
            from memu_core._cli.admin_cmds import run_plugins

            run_plugins(as_json)

    @group.command("list")
    def plugins_list(as_json: Annotated[bool, JSON_OPTION] = False) -> None:
        """List loaded plugins, their hooks and load errors."""
        from memu_core._cli.admin_cmds import run_plugins

        run_plugins(as_json)

    @group.command("available")
    def plugins_available(as_json: Annotated[bool, JSON_OPTION] = False) -> None:
        """Every memu distribution, marked installed (with its version) or not."""
        from memu_core._cli.plugins_cmds import run_available

        run_available(as_json)

    @group.command("install")
    def plugins_install(
        specs: Annotated[list[str], typer.Argument(help="Distribution names, project folders or wheels.")],
        upgrade: Annotated[bool, typer.Option("--upgrade", "-U", help="Upgrade what is installed.")] = False,
        editable: Annotated[bool, typer.Option("--editable", "-e", help="Install a project folder editable.")] = False,
        as_json: Annotated[bool, JSON_OPTION] = False,
    ) -> None:
        """Install plugins with memu's own pip; print the plugins and names that registered."""
        from memu_core._cli.plugins_cmds import run_install

        raise typer.Exit(run_install(specs, upgrade=upgrade, editable=editable, as_json=as_json))

    @group.command("uninstall")
    def plugins_uninstall(
        names: Annotated[list[str], typer.Argument(help="Distribution names.")],
        as_json: Annotated[bool, JSON_OPTION] = False,
    ) -> None:
        """Uninstall plugins with memu's own pip; print the plugins and names that went."""
        from memu_core._cli.plugins_cmds import run_uninstall

        raise typer.Exit(run_uninstall(names, as_json=as_json))

    app.add_typer(group, name="plugins")


def _memory_command(name: str) -> Callable[..., None]:
    """The body of a memory command, imported when the command runs: ``memu --help`` and the
    other commands never load :mod:`memu_core._cli.memory_cmds`."""

    def body(**values: Any) -> None:
        from memu_core._cli import memory_cmds

        getattr(memory_cmds, name)(**values)

    return body


def _install_started() -> None:
    from memu_core import _events

    _events.emit("cli_install_started")
    _events.flush()
