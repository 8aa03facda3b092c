"""Deprecated: ``memu_core.hosting.sqlite_ro`` moved; import from :mod:`memu_core.host`.

Kept for one release so hosts written against it keep working; importing it warns.
"""

from __future__ import annotations

from memu_core._hostkit.sqlite_ro import BUSY_TIMEOUT_S, columns, connect_readonly, query, readonly_uri
from memu_core.hosting import warn_moved

__all__ = ["BUSY_TIMEOUT_S", "columns", "connect_readonly", "query", "readonly_uri"]

warn_moved(__name__, "memu_core.host (connect_readonly, readonly_uri, readonly_query, readonly_columns)")
