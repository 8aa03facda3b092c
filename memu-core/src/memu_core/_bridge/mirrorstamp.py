"""Whether the store changed since the mirror last matched it, read without opening the engine.

A steady ``prepare`` (nothing stored since the last run) used to open the local engine and the
SQLite store only to list the same files again: about a third of its run after imports (ADR
0026's third amendment). The SQLite store's *generation* grows with every committed write from
any process (the word-hits cache relies on it too), so a plain ``sqlite3`` read of it, with a
few other cheap facts that tell one store file from another, says whether a listing could
differ from the last one. The stamp is read *before* the listing, so a write landing during it
leaves a stamp no later run matches: that run lists again.

Only the built-in SQLite store in local mode has a stamp; every other backend (Postgres, the
cloud API, a store plugin) is listed every run, as before.

Reading the generation costs ``sqlite3`` (with ``datetime``, about 3 ms to import) and a
connection. So the stamp is recorded with the *files* it was read from: the device, inode, size
and modification time of the store file and its write-ahead log, taken before the generation is
read. A committed write reaches one of the two files through ``write()``, which moves its
modification time; when both are as recorded, the recorded stamp is the current one and SQLite is
not asked. A file modified less than :data:`QUIET_NS` before its stat is not vouched for (a file
system stamps times with a coarse clock, so a second write could leave the same time): then the
generation is read, as before (ADR 0026's sixth pass).
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from memu_core._atomic import read_json, write_json

PROBE = (
    "SELECT (SELECT value FROM meta WHERE key = 'generation'), "
    "(SELECT max(seq) FROM segments), (SELECT max(seq) FROM file_versions)"
)
"""The write counter, then two rowid maxima (index lookups, not scans): a different store file
that happens to have reached the same generation differs in them, as in its inode."""


QUIET_NS = 3_000_000_000
"""A store file modified less than this long (ns) before its stat is not vouched for by it: file
systems stamp times with a coarse clock (a timer tick; two seconds on FAT), so a write right after
the stat could leave the same time. After this long, any write moves it."""


def current(where: Mapping[str, str], recorded: Mapping[str, Any] | None = None) -> tuple[str | None, str | None]:
    """``(stamp, files)``: the stamp of the store the mirror lists in scope ``where`` (``None``
    when it cannot be read cheaply: not local mode, not a SQLite file, no store yet, unreadable),
    and the signature of its files to record with it (``None`` when they cannot vouch for it).

    When ``recorded`` (what :func:`load` read) holds the same file signature, its stamp is
    returned without opening SQLite: nothing was written to the store since it was read.
    """
    from memu_core._config.light import light_settings

    light = light_settings()
    if light is None:
        return None, None
    path = _sqlite_path(light.db)
    if path is None:
        return None, None
    scope = "|".join(f"{key}={where[key]}" for key in sorted(where))
    files = store_files(path, scope)  # before the generation: a write after it moves a file
    if files is not None and recorded is not None and recorded.get("files") == files:
        return str(recorded["store"]), files
    stamp = _probe(path, scope)
    return stamp, files if stamp is not None else None


def store_files(path: Path, scope: str) -> str | None:
    """The signature of the store file and its write-ahead log (device, inode, size, modification
    time; ``-`` for a missing or empty log), or ``None`` when one was modified within
    :data:`QUIET_NS` or cannot be read.

    An empty log holds nothing (every open of the store may create a new one): the store is then
    the main file alone, and emptying a log that held a commit (a checkpoint) writes the main file.
    """
    now = time.time_ns()
    parts = [str(path), scope]
    for name in (str(path), f"{path}-wal"):
        try:
            info = os.stat(name)
        except FileNotFoundError:
            if name == str(path):
                return None
            parts.append("-")
            continue
        except OSError:
            return None
        if info.st_size == 0 and name != str(path):
            parts.append("-")
        elif info.st_mtime_ns > now - QUIET_NS:
            return None
        else:
            parts.append(f"{info.st_dev}:{info.st_ino}:{info.st_size}:{info.st_mtime_ns}")
    return "|".join(parts)


def _probe(path: Path, scope: str) -> str | None:
    """The stamp read from the store itself (its generation and rowid maxima)."""
    import sqlite3  # only when the files cannot vouch for the last stamp

    try:
        info = os.stat(path)
        # Read-only and never creating the file: a missing store is the full path's to report.
        conn = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, timeout=5.0)
        try:
            row = conn.execute(PROBE).fetchone()
        finally:
            conn.close()
    except (OSError, ValueError, sqlite3.Error):
        return None
    if row is None or row[0] is None:
        return None
    return f"sqlite:{path}:{info.st_dev}:{info.st_ino}:{row[0]}:{row[1]}:{row[2]}:{scope}"


def _sqlite_path(db: str) -> Path | None:
    """The file of a bare path or ``sqlite:////abs`` ``MEMU_DB`` (already normalised)."""
    if db.lower().startswith("sqlite:///"):
        rest = db[len("sqlite:///") :]
        return Path(rest) if rest.startswith("/") else None
    if "://" in db or not os.path.isabs(db):
        return None
    return Path(db)


def load(path: Path) -> dict[str, Any] | None:
    """The recorded stamp: ``{"store", "listed", "baseline"}`` and, when its files could vouch
    for it, ``"files"``; or ``None``."""
    raw = read_json(path, None)
    if not isinstance(raw, dict) or not isinstance(raw.get("store"), str) or not isinstance(raw.get("listed"), int):
        return None
    return raw if isinstance(raw.get("baseline"), dict) else None


def record(path: Path, stamp: str | None, listed: int, baseline: Mapping[str, Any], files: str | None = None) -> None:
    """Remember that the mirror matched the store ``stamp`` with ``baseline``; ``None`` forgets.
    ``files`` is the signature :func:`current` took before reading ``stamp``.

    A cache the next run checks before trusting: written atomically, never fsynced.
    """
    if stamp is None:
        path.unlink(missing_ok=True)
        return
    kept: dict[str, Any] = {"store": stamp, "listed": listed, "baseline": baseline}
    if files is not None:
        kept["files"] = files
    write_json(path, kept, compact=True, fsync=False)
