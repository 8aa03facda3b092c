"""Atomic file writes: a temp file in the same directory, fsync, then ``os.replace``.

A reader (or a crash) sees the old file or the new one, never half of either.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any


def write_bytes(path: Path, data: bytes, *, mode: int | None = None, fsync: bool = True) -> None:
    """Replace ``path`` with ``data`` atomically (parents created; temp removed on failure)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=path.suffix)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            if fsync:
                fh.flush()
                os.fsync(fh.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_text(path: Path, text: str, *, mode: int | None = None, fsync: bool = True) -> None:
    """Replace ``path`` with UTF-8 ``text`` atomically."""
    write_bytes(path, text.encode("utf-8"), mode=mode, fsync=fsync)


def write_json(path: Path, value: Any, *, compact: bool = False) -> None:
    """Replace ``path`` with ``value`` as JSON, atomically.

    ``compact`` writes one line: the C encoder only runs without indentation, which matters for
    a cursor with thousands of sessions.
    """
    if compact:
        text = json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    else:
        text = json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True)
    write_text(path, text + "\n")


def read_json(path: Path, default: Any) -> Any:
    """The JSON in ``path``, or ``default`` when it is missing or unreadable (fail open)."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return default
