"""Deprecated: ``memu_core.hosting.walk`` moved; import from :mod:`memu_core.host`.

Kept for one release so hosts written against it keep working; importing it warns.
"""

from __future__ import annotations

from memu_core._jsonl import jsonl_files, newest_first
from memu_core.hosting import warn_moved

__all__ = ["jsonl_files", "newest_first"]

warn_moved(__name__, "memu_core.host")
