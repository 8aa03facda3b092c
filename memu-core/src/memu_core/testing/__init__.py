"""Test helpers for memu and its plugins: contract kits, fixtures, strategies.

The pytest plugin is opt-in: installing memu-core changes nothing in another project's test
run. A project that wants the fixtures loads it from its root ``conftest.py``::

    pytest_plugins = ["memu_core.testing.plugin"]

(pytest honours ``pytest_plugins`` only in the rootdir's conftest). It then turns off
hypothesis' per-example deadline and sets ``MEMU_SERVE_AUTOSTART=0`` for that run.

- fixtures (from the plugin): ``fresh_plugins`` (a new plugin manager), ``memu_home`` (an
  isolated ``HOME``/``~/.memu`` with ``MEMU_*`` cleared);
- :func:`registered` installs given plugin objects as the process plugin manager;
- :func:`fake_entry_point` builds an entry point for a module or object, as if installed, and
  :func:`fake_declaration` one declaring a name that plugin registers (``memu.stores``, …);
- :mod:`memu_core.testing.store_contract`: the suite every ``MemoryStore`` passes;
- :mod:`memu_core.testing.source_contract`: the suite every ``TranscriptSource`` passes;
- :mod:`memu_core.testing.rehearse`: one bridging cycle through a host's CLI;
- :mod:`memu_core.testing.strategies`: hypothesis strategies.
- :mod:`memu_core.testing.secrets`: a generated redaction corpus (secrets and near-misses).
"""

from __future__ import annotations

import contextlib
import sys
import types
from collections.abc import Iterator
from importlib import metadata
from typing import Any

from memu_core._plugins.manager import Plugins, get_plugins, set_plugins

__all__ = ["fake_declaration", "fake_entry_point", "registered"]


class _FakeDist:
    def __init__(self, name: str, version: str) -> None:
        self.name = name
        self.version = version


def fake_entry_point(
    name: str, target: Any, *, dist: str = "memu-fake-plugin", version: str = "0.0.1", group: str = "memu"
) -> metadata.EntryPoint:
    """An entry point in ``group`` (default ``memu``) that loads ``target`` (a module object, or
    any object). A plugin registering event sinks also needs one in ``memu.event_sinks``.

    ``target`` may also be an exception instance: loading the entry point then raises it, which
    is how tests simulate a plugin that fails to import.
    """
    module_name = f"_memu_fake_ep_{name.replace('-', '_')}"
    module = types.ModuleType(module_name)
    if isinstance(target, BaseException):
        error = target

        def __getattr__(attr: str) -> Any:
            # Fail only where the entry point looks: tools that scan sys.modules must not trip.
            if attr == "plugin":
                raise error
            raise AttributeError(attr)

        module.__getattr__ = __getattr__  # type: ignore[method-assign]
        value = f"{module_name}:plugin"
    else:
        module.plugin = target  # type: ignore[attr-defined]
        value = f"{module_name}:plugin"
    sys.modules[module_name] = module
    ep = metadata.EntryPoint(name=name, value=value, group=group)
    # EntryPoint is immutable; attach a distribution the way importlib does for installed ones.
    object.__setattr__(ep, "dist", _FakeDist(dist, version))
    return ep


def fake_declaration(plugin: metadata.EntryPoint, group: str, name: str) -> metadata.EntryPoint:
    """An entry point in the declaration ``group`` (``memu.stores``, ``memu.hosts``, …) saying
    that ``plugin`` (a :func:`fake_entry_point` in ``memu``) registers ``name``, as a plugin's
    ``pyproject.toml`` declares it: same distribution, same object."""
    ep = metadata.EntryPoint(name=name, value=plugin.value, group=group)
    object.__setattr__(ep, "dist", getattr(plugin, "dist", None))
    return ep


@contextlib.contextmanager
def registered(
    *plugins: Any, entry_points: list[metadata.EntryPoint] | None = None, environ: dict[str, str] | None = None
) -> Iterator[Plugins]:
    """Install a fresh process plugin manager: memu-core's plugin, ``plugins`` registered in
    process (asked like built-ins, sinks included), and ``entry_points`` as if installed."""
    previous = get_plugins()
    fresh = Plugins(entry_points=lambda: list(entry_points or []), environ=environ or {})
    for plugin in plugins:
        fresh.register(plugin)
    set_plugins(fresh)
    try:
        yield fresh
    finally:
        set_plugins(previous)
