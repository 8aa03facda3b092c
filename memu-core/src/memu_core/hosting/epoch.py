"""Deprecated: ``memu_core.hosting.epoch`` moved; import from :mod:`memu_core.host`.

Kept for one release so hosts written against it keep working; importing it warns.
"""

from __future__ import annotations

from memu_core._hostkit.epoch import MS_THRESHOLD, EpochTimestamps, iso_utc
from memu_core.hosting import warn_moved

__all__ = ["MS_THRESHOLD", "EpochTimestamps", "iso_utc"]

warn_moved(__name__, "memu_core.host")
