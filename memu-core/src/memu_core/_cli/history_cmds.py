"""Register ``memu show``, ``edit``, ``history``, ``diff``, ``restore`` and ``stats``.

The bodies live in :mod:`memu_core._cli.history_run`, :mod:`memu_core._cli.edit_cmd` and
:mod:`memu_core._cli.stats_cmd` and are imported only when the command runs.
"""

# No ``from __future__ import annotations``: typer reads the commands' annotations.

from pathlib import Path
from typing import Annotated, Optional

import typer

COMMANDS = frozenset({"show", "edit", "history", "diff", "restore", "stats"})
"""The command names this module adds (``memu_core._cli.app.BUILTIN_COMMANDS`` holds them)."""

_TRACK = typer.Option("--track", help="memory or skill (default: whichever holds NAME).")
_USER = typer.Option("--user-id", help="The scope's user (default: the configured one).")
_AGENT = typer.Option("--agent-id", help="The scope's agent (default: the configured one).")
_JSON = typer.Option("--json", help="Print the result as JSON.")
_NAME = typer.Argument(help="The recall file's name.")


def _user(user_id: Optional[str], agent_id: Optional[str]) -> dict[str, str]:  # noqa: UP045
    return {k: v for k, v in (("user_id", user_id), ("agent_id", agent_id)) if v}


def register(app: typer.Typer) -> None:
    """Add the history commands to ``app``."""

    @app.command()
    def show(
        name: Annotated[str, _NAME],
        version: Annotated[Optional[int], typer.Option("--version", help="An older version (see history).")] = None,  # noqa: UP045
        track: Annotated[Optional[str], _TRACK] = None,  # noqa: UP045
        user_id: Annotated[Optional[str], _USER] = None,  # noqa: UP045
        agent_id: Annotated[Optional[str], _AGENT] = None,  # noqa: UP045
        as_json: Annotated[bool, _JSON] = False,
    ) -> None:
        """Print a recall file as Markdown with its frontmatter (or one version of it)."""
        from memu_core._cli.history_run import run_show

        run_show(name, track, version, _user(user_id, agent_id), as_json)

    @app.command()
    def edit(
        name: Annotated[str, _NAME],
        from_file: Annotated[
            Optional[Path],  # noqa: UP045
            typer.Option("--from", help="Carry on from a kept edit (the path a refused edit printed)."),
        ] = None,
        track: Annotated[Optional[str], _TRACK] = None,  # noqa: UP045
        user_id: Annotated[Optional[str], _USER] = None,  # noqa: UP045
        agent_id: Annotated[Optional[str], _AGENT] = None,  # noqa: UP045
        as_json: Annotated[bool, _JSON] = False,
    ) -> None:
        """Open a recall file in $EDITOR and store it on save (refused if it changed meanwhile)."""
        from memu_core._cli.edit_cmd import run_edit

        run_edit(name, track, from_file, _user(user_id, agent_id), as_json)

    @app.command()
    def history(
        name: Annotated[str, _NAME],
        track: Annotated[Optional[str], _TRACK] = None,  # noqa: UP045
        user_id: Annotated[Optional[str], _USER] = None,  # noqa: UP045
        agent_id: Annotated[Optional[str], _AGENT] = None,  # noqa: UP045
        as_json: Annotated[bool, _JSON] = False,
    ) -> None:
        """List a recall file's versions, newest first: who, when, what, size change."""
        from memu_core._cli.history_run import run_history

        run_history(name, track, _user(user_id, agent_id), as_json)

    @app.command()
    def diff(
        name: Annotated[str, _NAME],
        v1: Annotated[Optional[int], typer.Argument(help="The older version (default: the previous one).")] = None,  # noqa: UP045
        v2: Annotated[Optional[int], typer.Argument(help="The newer version (default: the newest).")] = None,  # noqa: UP045
        track: Annotated[Optional[str], _TRACK] = None,  # noqa: UP045
        user_id: Annotated[Optional[str], _USER] = None,  # noqa: UP045
        agent_id: Annotated[Optional[str], _AGENT] = None,  # noqa: UP045
        as_json: Annotated[bool, _JSON] = False,
    ) -> None:
        """Unified diff between two versions of a recall file (default: previous → newest)."""
        from memu_core._cli.history_run import run_diff

        run_diff(name, v1, v2, track, _user(user_id, agent_id), as_json)

    @app.command()
    def restore(
        name: Annotated[str, _NAME],
        version: Annotated[Optional[int], typer.Argument(help="The version to bring back.")] = None,  # noqa: UP045
        undo_forget: Annotated[
            bool, typer.Option("--undo-forget", help="Bring back a forgotten file as it was.")
        ] = False,
        track: Annotated[Optional[str], _TRACK] = None,  # noqa: UP045
        user_id: Annotated[Optional[str], _USER] = None,  # noqa: UP045
        agent_id: Annotated[Optional[str], _AGENT] = None,  # noqa: UP045
        as_json: Annotated[bool, _JSON] = False,
    ) -> None:
        """Store an earlier version of a recall file again (as a new version), or undo a forget."""
        from memu_core._cli.history_run import run_restore

        run_restore(name, version, undo_forget, track, _user(user_id, agent_id), as_json)

    @app.command()
    def stats(
        user_id: Annotated[Optional[str], _USER] = None,  # noqa: UP045
        agent_id: Annotated[Optional[str], _AGENT] = None,  # noqa: UP045
        as_json: Annotated[bool, _JSON] = False,
    ) -> None:
        """Files, segments, vectors, kept versions, size and embedder of the store, per track and host."""
        from memu_core._cli.stats_cmd import run_stats

        run_stats(_user(user_id, agent_id), as_json)
