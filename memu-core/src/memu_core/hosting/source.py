"""Deprecated: ``memu_core.hosting.source`` moved; import from :mod:`memu_core.host`.

Kept for one release so hosts written against it keep working; importing it warns.
"""

from __future__ import annotations

from memu_core.host import (
    Record,
    RecordKind,
    SessionFile,
    TranscriptRead,
    TranscriptReadError,
    TranscriptSource,
    relative_key,
    top_level_value,
)
from memu_core.hosting import warn_moved

__all__ = [
    "Record",
    "RecordKind",
    "SessionFile",
    "TranscriptRead",
    "TranscriptReadError",
    "TranscriptSource",
    "relative_key",
    "top_level_value",
]

warn_moved(__name__, "memu_core.host")
