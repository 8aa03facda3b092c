"""Deprecated: ``memu_core.hosting.worktree`` moved; import from :mod:`memu_core.host`.

Kept for one release so hosts written against it keep working; importing it warns.
"""

from __future__ import annotations

from memu_core._hostkit.worktree import (
    HEADER_BYTES,
    HEADER_RECORDS,
    SkipRunsInTree,
    cwd_in_tree,
    escaped_in_tree,
    flatten,
    header_cwd,
    record_cwd,
)
from memu_core._layout import hosts_root
from memu_core.hosting import warn_moved

__all__ = [
    "HEADER_BYTES",
    "HEADER_RECORDS",
    "SkipRunsInTree",
    "cwd_in_tree",
    "escaped_in_tree",
    "flatten",
    "header_cwd",
    "hosts_root",
    "record_cwd",
]

warn_moved(__name__, "memu_core.host")
