"""Deprecated: ``memu_core.hosting.selfskip`` moved; import from :mod:`memu_core.host`.

Kept for one release so hosts written against it keep working; importing it warns.
"""

from __future__ import annotations

from memu_core._bridge.selfskip import BRIDGING_RUN_ENV, MAX_REMEMBERED, is_bridging_run, load, own_session, remember
from memu_core.hosting import warn_moved

__all__ = ["BRIDGING_RUN_ENV", "MAX_REMEMBERED", "is_bridging_run", "load", "own_session", "remember"]

warn_moved(__name__, "memu_core.host (load_self_sessions)")
