"""memu core: a local-first memory sidecar for coding agents.

The public surface is small on purpose: ``hookimpl`` and ``hookspec`` for plugin authors, the
interfaces in :mod:`memu_core.interfaces`, the data types in :mod:`memu_core.types` and the
error family in :mod:`memu_core.errors`. Everything in a module whose name starts with ``_``
is private.
"""

from __future__ import annotations

from typing import Any

import pluggy

PROJECT_NAME = "memu"
"""pluggy project name; also the entry-point group plugins register under."""

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
"""Marks a ``memu_*`` hook specification (used by :mod:`memu_core.hookspecs`)."""

hookimpl = pluggy.HookimplMarker(PROJECT_NAME)
"""Marks a plugin's implementation of a ``memu_*`` hook."""

__all__ = ["PROJECT_NAME", "__version__", "hookimpl", "hookspec"]


def __getattr__(name: str) -> Any:
    # The version is read from package metadata only when asked: importlib.metadata costs tens
    # of milliseconds, and every memu command imports this package.
    if name == "__version__":
        from memu_core._version import version

        return version()
    raise AttributeError(name)
