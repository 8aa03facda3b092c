"""memu core: a local-first memory sidecar for coding agents.

The public surface is small on purpose: ``hookimpl`` and ``hookspec`` here, and the modules
:mod:`~memu_core.hookspecs`, :mod:`~memu_core.interfaces`, :mod:`~memu_core.types`,
:mod:`~memu_core.errors`, :mod:`~memu_core.settings`, :mod:`~memu_core.text`,
:mod:`~memu_core.v4`, :mod:`~memu_core.host` (the host SDK), :mod:`~memu_core.cli`,
:mod:`~memu_core.serving`, :mod:`~memu_core.testing` and :mod:`~memu_core.memory` (the
Python API: :func:`open_memory`, also importable from here). Everything in a module whose name
starts with ``_`` is private; plugin distributions never import it
(docs/adr/0008-module-map.md, checked by import-linter).
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing costs every memu process several milliseconds

PROJECT_NAME = "memu"
"""pluggy project name; also the entry-point group plugins register under."""

if TYPE_CHECKING:
    from typing import Any

    import pluggy

    hookspec: pluggy.HookspecMarker
    """Marks a ``memu_*`` hook specification (used by :mod:`memu_core.hookspecs`)."""
    hookimpl: pluggy.HookimplMarker
    """Marks a plugin's implementation of a ``memu_*`` hook."""
    __version__: str

__all__ = ["PROJECT_NAME", "Memory", "__version__", "hookimpl", "hookspec", "open_memory"]


def __getattr__(name: str) -> Any:
    # Resolved on first use: every memu process imports this package, but only plugin loading
    # needs pluggy's markers and only `--version` needs package metadata (each costs tens of ms).
    if name in ("hookspec", "hookimpl"):
        import pluggy

        marker = (pluggy.HookspecMarker if name == "hookspec" else pluggy.HookimplMarker)(PROJECT_NAME)
        globals()[name] = marker
        return marker
    if name in ("open_memory", "Memory"):
        # The library entry point (memu_core.memory): imported only when a program asks for it,
        # by name, since the package itself sits below every layer it builds on.
        import importlib

        return getattr(importlib.import_module("memu_core.memory"), name)
    if name == "__version__":
        from memu_core._version import version

        return version()
    raise AttributeError(name)
