"""The installed version of memu-core, read from the install's metadata on demand.

The per-turn ``retrieve`` asks when telemetry is on (each event carries ``client_version``), and
``importlib.metadata`` costs ~100 ms to import there; the ``memu_core-<version>.dist-info``
folder's name on ``sys.path`` says the same (the first one found, as ``importlib.metadata``
searches), so that is read first.
"""

from __future__ import annotations

import functools
import os
import sys

_PREFIX = "memu_core-"
_SUFFIX = ".dist-info"


def _from_path() -> str | None:
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for name in names:
            if name.startswith(_PREFIX) and name.endswith(_SUFFIX):
                return name[len(_PREFIX) : -len(_SUFFIX)] or None
    return None


@functools.cache
def version() -> str:
    """memu-core's version, or ``0+unknown`` in a source tree that was never installed."""
    found = _from_path()
    if found:
        return found
    from importlib import metadata

    try:
        return metadata.version("memu-core")
    except metadata.PackageNotFoundError:
        return "0+unknown"
