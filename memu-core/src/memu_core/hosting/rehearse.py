"""Deprecated: ``memu_core.hosting.rehearse`` moved; import from :mod:`memu_core.testing.rehearse`.

Kept for one release so hosts written against it keep working; importing it warns.
"""

from __future__ import annotations

from memu_core.hosting import warn_moved
from memu_core.testing.rehearse import Cycle, call, must, run_cycle

__all__ = ["Cycle", "call", "must", "run_cycle"]

warn_moved(__name__, "memu_core.testing.rehearse")
