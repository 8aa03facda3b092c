"""memu-core's own plugins: the built-in stores and backend here, the template resolvers and
the commands in the rooms they belong to, all registered through the same hooks as any
third-party plugin.

:data:`BUILTIN_PLUGINS` names them the way pytest lists its default plugins: the manager imports
each by name when it starts, so this package depends on none of those rooms. They are registered
in every process that asks the plugin manager anything, the per-turn ``retrieve`` included, so
each imports nothing at module level beyond the marker; a hook imports what it registers when it
fires. None registers an event sink (the manager relies on that to answer "is anyone
listening?" without importing a plugin).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memu_core import hookimpl

if TYPE_CHECKING:
    from memu_core.interfaces import AgenticMemoryBackend, MemoryStore

BUILTIN_PLUGINS = (
    "memu_core._plugins.builtin",
    "memu_core._bridge.plugin",
    "memu_core._cli.plugin",
)
"""memu-core's plugin modules, registered first and in this order."""


@hookimpl
def memu_register_stores() -> list[type[MemoryStore]]:
    """The default ``sqlite`` store and the ``memory`` store (tests, ``MEMU_DB=:memory:``)."""
    from memu_core._stores.memory import InMemoryStore
    from memu_core._stores.sqlite import SqliteStore

    return [InMemoryStore, SqliteStore]


@hookimpl
def memu_register_backends() -> list[type[AgenticMemoryBackend]]:
    """The ``local`` backend: memu's engine over the configured store."""
    from memu_core._engine.engine import LocalEngine

    return [LocalEngine]
