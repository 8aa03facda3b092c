"""memu-core's own plugin: the built-in stores and the local engine, registered through the same
hooks as any third-party plugin. Imports here stay light (the classes' heavy parts load later)."""

from __future__ import annotations

from typing import Any

from memu_core import hookimpl


@hookimpl
def memu_register_stores() -> list[type[Any]]:
    """The ``memory`` store (tests, ``MEMU_DB=:memory:``) and the default ``sqlite`` store."""
    from memu_core._stores.memory import InMemoryStore
    from memu_core._stores.sqlite import SqliteStore

    return [InMemoryStore, SqliteStore]


@hookimpl
def memu_register_backends() -> list[type[Any]]:
    """The ``local`` backend: memu's engine over the configured store."""
    from memu_core._engine.engine import LocalEngine

    return [LocalEngine]
