"""``HostSpec``: everything the shared host CLI needs to know about one host, as data.

It was a frozen dataclass and still is one to its users, the :mod:`dataclasses` functions
included, as a value class (:mod:`memu_core._value`) that imports no ``dataclasses`` until one of
them is used: every host process builds a spec at start-up (ADR 0026's fifth amendment).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from memu_core._layout import host_tree
from memu_core._value import DataclassAPI, Frozen

if TYPE_CHECKING:
    import typer

    from memu_core.interfaces import TranscriptSource

GUIDES = {"install": "INSTALL.md", "task": "BRIDGING_TASK.md", "uninstall": "UNINSTALL.md"}
"""``docs <topic>`` → the guide's file name inside the host package's ``guides/`` folder."""


class HostSpec(Frozen, DataclassAPI):
    """A host, declared. Registered through ``memu_register_hosts``; no I/O, nothing heavy.

    ``source`` names the host's :class:`~memu_core.interfaces.TranscriptSource` factory as
    ``"package.module:Name"``; it is imported only when a command needs transcripts.
    """

    # No __slots__: instances keep a __dict__, as the dataclass's did.
    __match_args__ = (
        "id",
        "display",
        "source",
        "package",
        "session_dir",
        "instruction_path",
        "skills_dir",
        "session_id_env",
        "base_dir",
        "former_task_names",
        "schedule_command",
        "schedule_backend",
        "extra_commands",
    )
    _fields: ClassVar[tuple[str, ...]] = __match_args__  # declared wide: a subclass may add some
    _compare = _fields[:-1]  # extra_commands is left out of equality and the hash

    id: str
    """The host id (``claude-code``, ``codex``); scopes the working tree and the markers."""
    display: str
    """The host's name for people (``Claude Code``)."""
    source: str
    """``"module:callable"`` building the source from an optional ``--session-dir``."""
    package: str
    """The import package holding the ``guides/`` folder."""
    session_dir: str
    """The default session log location, shown in help (``""``: ``--session-dir`` is required)."""
    instruction_path: str
    """The host's global instruction file (``~/.claude/CLAUDE.md``)."""
    skills_dir: str
    """Where the host loads skills from; empty for hosts that take the instruction inline."""
    session_id_env: str
    """The variable the host exports with the current session id (self-skip), if any."""
    base_dir: str
    """The working tree; empty means ``~/.memu/hosts/<id>``."""
    former_task_names: tuple[str, ...]
    """Scheduled-task names earlier releases used (guides remove them on upgrade)."""
    schedule_command: str
    """How a scheduler launches the host headless (``claude -p {prompt}``); empty for native."""
    schedule_backend: str
    """``os`` when ``schedule install`` registers the run with the platform's scheduler,
    ``native`` when the agent schedules it itself (the verb then prints the steps); empty means
    ``os`` with a ``schedule_command`` and ``native`` without."""
    extra_commands: Callable[[typer.Typer, HostSpec], None] | None
    """Deprecated, still honoured for one release: add host-only verbs by implementing
    ``memu_register_host_commands(spec, app)`` in the host's plugin module instead. Not compared."""

    def __init__(
        self,
        id: str,
        display: str,
        source: str,
        package: str,
        session_dir: str = "",
        instruction_path: str = "",
        skills_dir: str = "",
        session_id_env: str = "",
        base_dir: str = "",
        former_task_names: tuple[str, ...] = (),
        schedule_command: str = "",
        schedule_backend: str = "",
        extra_commands: Callable[[typer.Typer, HostSpec], None] | None = None,
    ) -> None:
        self._init(
            id,
            display,
            source,
            package,
            session_dir,
            instruction_path,
            skills_dir,
            session_id_env,
            base_dir,
            former_task_names,
            schedule_command,
            schedule_backend,
            extra_commands,
        )

    @property
    def binary(self) -> str:
        """``memu-<id>``."""
        return f"memu-{self.id}"

    @property
    def task_name(self) -> str:
        """The scheduled bridging task's name."""
        return f"memu-bridging-{self.id}"

    @property
    def all_task_names(self) -> tuple[str, ...]:
        """The current task name followed by the former ones."""
        return (self.task_name, *self.former_task_names)

    @property
    def scheduled_by_os(self) -> bool:
        """Whether ``schedule install`` registers this host's run with the OS scheduler."""
        if self.schedule_backend:
            return self.schedule_backend == "os"
        return bool(self.schedule_command)

    @property
    def verify_command(self) -> str:
        """What the resource job runs (a PATH command, never a script path)."""
        return f"{self.binary} verify-resources"

    def default_base(self) -> Path:
        """The working tree, ``~`` expanded."""
        return Path(self.base_dir).expanduser() if self.base_dir else host_tree(self.id)

    def make_source(self, session_dir: str | Path | None = None) -> TranscriptSource:
        """Import and build the host's transcript source."""
        module_name, _, attr = self.source.partition(":")
        factory: Any = getattr(importlib.import_module(module_name), attr)
        source: TranscriptSource = factory(session_dir or None)
        return source
