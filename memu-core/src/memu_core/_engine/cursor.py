"""The opaque listing cursor: URL-safe base64 of the JSON ``[track, name, id]`` (memU's format)."""

from __future__ import annotations

import base64
import binascii
import json

from memu_core.errors import UsageError


def encode_cursor(key: tuple[str, str, str]) -> str:
    """Cursor for the page after ``key``; byte-compatible with memU's cursors."""
    return base64.urlsafe_b64encode(json.dumps(list(key)).encode()).decode()


def decode_cursor(cursor: str) -> tuple[str, str, str]:
    """The ``(track, name, id)`` a cursor points after; a malformed one is a UsageError."""
    try:
        value = json.loads(base64.urlsafe_b64decode(cursor.encode()))
    except (binascii.Error, ValueError, UnicodeError):
        value = None
    if not (isinstance(value, list) and len(value) == 3 and all(isinstance(v, str) for v in value)):
        raise UsageError(
            f"malformed cursor {cursor[:40]!r}: pass back the next_cursor of the previous page unchanged, "
            "or omit it to start from the first page"
        )
    return (value[0], value[1], value[2])
