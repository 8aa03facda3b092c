"""Deprecated: ``memu_core.hosting.atomic`` moved; import from :mod:`memu_core.host`.

Kept for one release so hosts written against it keep working; importing it warns.
"""

from __future__ import annotations

from memu_core._atomic import read_json, write_bytes, write_json, write_text
from memu_core.hosting import warn_moved

__all__ = ["read_json", "write_bytes", "write_json", "write_text"]

warn_moved(__name__, "memu_core.host (read_json, write_json_atomic, write_text_atomic)")
