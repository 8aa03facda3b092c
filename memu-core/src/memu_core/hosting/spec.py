"""Deprecated: ``memu_core.hosting.spec`` moved; import from :mod:`memu_core.host`.

Kept for one release so hosts written against it keep working; importing it warns.
"""

from __future__ import annotations

from memu_core._hostkit.spec import GUIDES, HostSpec
from memu_core.hosting import warn_moved

__all__ = ["GUIDES", "HostSpec"]

warn_moved(__name__, "memu_core.host")
