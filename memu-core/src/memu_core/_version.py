"""The installed version of memu-core, read from package metadata on demand."""

from __future__ import annotations

import functools


@functools.cache
def version() -> str:
    """memu-core's version, or ``0+unknown`` in a source tree that was never installed."""
    from importlib import metadata

    try:
        return metadata.version("memu-core")
    except metadata.PackageNotFoundError:
        return "0+unknown"
