"""Deprecated: ``memu_core.hosting.layout`` moved; import from :mod:`memu_core.host`.

Kept for one release so hosts written against it keep working; importing it warns.
"""

from __future__ import annotations

from memu_core._layout import TRACKS, Layout
from memu_core.hosting import warn_moved

__all__ = ["TRACKS", "Layout"]

warn_moved(__name__, "memu_core.host")
