"""The installed version of memu-core, read from package metadata without importing anything heavy."""

from __future__ import annotations

from importlib import metadata

try:
    __version__: str = metadata.version("memu-core")
except metadata.PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0+unknown"
