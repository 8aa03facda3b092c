"""memu's one atomic file writer: a temp file in the same directory, fsync, mode, ``os.replace``,
then an fsync of the directory.

A reader (or a crash) sees the old file or the new one, never half of either; the directory
fsync makes the rename itself survive a power cut. Every file memu writes whole goes through here
(config, cursors, baselines, the mirror, instruction blocks, MCP configuration, the warm
server's pid file).
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any

from memu_core import _layout

PRIVATE = 0o600
"""The mode of a new file when the caller names none: memu's files hold memories and settings."""


def write_bytes(path: Path, data: bytes, *, mode: int | None = None, fsync: bool = True) -> None:
    """Replace ``path`` with ``data`` atomically; parents are created, the temp file never outlives
    a failure.

    ``mode`` sets the permission bits; without it a new file is :data:`PRIVATE` and a replaced one
    keeps its own, less any group and other access under ``~/.memu`` (where the folders it
    creates are 0700 too). ``fsync=False`` keeps the atomicity but skips both fsyncs, for files that
    can be rebuilt (the mirror is a copy of the store) and are written by the thousand.
    """
    private = _layout.within_home(path)
    if private:
        _layout.ensure_private_dir(path.parent)  # folders 0700, as everything under ~/.memu
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
    if mode is None:
        try:
            mode = path.stat().st_mode & (0o700 if private else 0o777)
        except OSError:
            mode = PRIVATE
    fd, tmp = _temp_beside(path)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            if fsync:
                fh.flush()
                os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    if fsync:
        _fsync_dir(path.parent)


def _temp_beside(path: Path) -> tuple[int, str]:
    """A new, empty, private temp file next to ``path``: ``(fd, its path)``.

    What ``tempfile.mkstemp`` does, without importing ``tempfile`` (with ``random``, ``shutil``
    and its compression modules: about 1.5 ms of every writing command, ADR 0026).
    """
    flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
    for _ in range(100):
        tmp = os.path.join(path.parent, f".{path.name}.{os.urandom(6).hex()}.tmp")
        try:
            return os.open(tmp, flags, PRIVATE), tmp
        except FileExistsError:
            continue  # 48 random bits taken: try another name
    raise FileExistsError(f"no free temp name beside {path}; remove the stale .{path.name}.*.tmp files there")


def write_text(path: Path, text: str, *, mode: int | None = None, fsync: bool = True) -> None:
    """Replace ``path`` with UTF-8 ``text`` atomically (see :func:`write_bytes`)."""
    write_bytes(path, text.encode("utf-8"), mode=mode, fsync=fsync)


def write_json(path: Path, value: Any, *, compact: bool = False, mode: int | None = None, fsync: bool = True) -> None:
    """Replace ``path`` with ``value`` as JSON, atomically (``fsync`` as in :func:`write_bytes`).

    ``compact`` writes one line: the C encoder only runs without indentation, which matters for
    a cursor with thousands of sessions.
    """
    if compact:
        text = json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    else:
        text = json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True)
    write_text(path, text + "\n", mode=mode, fsync=fsync)


def scratch_file(text: str, *, prefix: str, suffix: str) -> Path:
    """A new private (0600) file in the system temp folder holding ``text``, for a person to edit.

    Not durable and not atomic on purpose: it is a draft, and the caller deletes it. It lives here
    so that this module stays the only one that makes temp files.
    """
    import tempfile

    fd, raw = tempfile.mkstemp(prefix=prefix, suffix=suffix)
    with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
        handle.write(text)
    return Path(raw)


def read_json(path: Path, default: Any) -> Any:
    """The JSON in ``path``, or ``default`` when it is missing or unreadable (fail open)."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return default


def _fsync_dir(directory: Path) -> None:
    # Best effort: Windows cannot open a directory, and some filesystems refuse to sync one; the
    # file itself is already on disk by then.
    if os.name != "posix":
        return
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
