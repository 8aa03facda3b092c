"""The hot-path resolver for ``MEMU_*`` settings: process environment > config file > default.

Stdlib only (plus the stdlib-only dotenv reader), because ``retrieve`` runs as a fresh process on
every agent turn and must not pay for pydantic. Everything richer (types, validation) lives in
:mod:`memu_core.settings`, which reads the same file through the same reader.

The parsed file is cached per path for the life of the process; :func:`reload` drops the cache
(the writers call it after a write, tests after rewriting the file).
"""

from __future__ import annotations

import os
from pathlib import Path

from memu_core import _layout
from memu_core._config import dotenv

# Keys that are not MEMU_* settings but that a scheduled run (which has no login shell) still needs
# in its environment; copied from the file into os.environ unless the process already has them.
PASSTHROUGH_KEYS = ("NO_PROXY", "no_proxy")

_cache: dict[str, tuple[dict[str, str], list[dotenv.Problem]]] = {}


def config_path() -> Path:
    """The config file: ``$MEMU_CONFIG_ENV`` if set and non-empty, else ``~/.memu/config.env``."""
    return _layout.config_file()


def _parsed() -> tuple[dict[str, str], list[dotenv.Problem]]:
    path = config_path()
    key = str(path)
    hit = _cache.get(key)
    if hit is None:
        hit = dotenv.read_file(path)
        _cache[key] = hit
        for name in PASSTHROUGH_KEYS:
            if name in hit[0] and name not in os.environ:
                os.environ[name] = hit[0][name]
    return hit


def file_values() -> dict[str, str]:
    """A copy of the config file's assignments (cached parse; ``{}`` when the file is missing)."""
    return dict(_parsed()[0])


def file_problems() -> list[dotenv.Problem]:
    """The config file's skipped lines as ``(line_no, message)``."""
    return list(_parsed()[1])


def lookup(name: str, default: str | None = None) -> str | None:
    """Resolve ``name``: a non-empty process value, else a non-empty file value, else ``default``.

    An empty value counts as unset on both levels, so ``MEMU_DB=`` exported by a shell profile
    cannot hide the store the file names.
    """
    value = os.environ.get(name)
    if value:
        return value
    value = _parsed()[0].get(name)
    if value:
        return value
    return default


def lookup_declared(name: str, default: str = "") -> str:
    """Resolve ``name`` where a declared empty value counts (an empty value means "off").

    Process environment (even ``""``) > file (even ``""``) > ``default``.
    """
    if name in os.environ:
        return os.environ[name]
    values = _parsed()[0]
    if name in values:
        return values[name]
    return default


def reload() -> None:
    """Forget every cached parse; the next lookup re-reads the file (and re-applies passthrough)."""
    _cache.clear()
