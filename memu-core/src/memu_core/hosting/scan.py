"""Incremental discovery: which sessions have new records since the promoted cursor.

memU walks sessions newest first and stops at the first one it has already seen, so sessions
beyond its per-run cap on a first install are never looked at again. Here every session's
``(size, mtime)`` is compared with its cursor entry (a ``stat`` per file, no reads), so nothing
is hidden behind an unchanged newer session; and each run splits its slots between the newest
changed sessions (fresh work is mined promptly) and the oldest (the backlog drains), so every
changed session is mined within a bounded number of runs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from memu_core.hosting.source import SessionFile, TranscriptRead, TranscriptReadError, TranscriptSource


@dataclass(slots=True)
class Picked:
    """A session chosen for this run."""

    key: str
    session: SessionFile
    read: TranscriptRead


@dataclass(slots=True)
class ScanResult:
    """What one scan found. ``cursor`` is the full pending cursor (old entries + this run's)."""

    picked: list[Picked] = field(default_factory=list)
    remaining: int = 0
    """Changed sessions left for later runs."""
    corrupt: int = 0
    """Lines skipped because they were not JSON objects."""
    unreadable: int = 0
    """Sessions skipped because they could not be read (they are retried next run)."""
    skipped_self: int = 0
    """Sessions skipped because they were bridging runs."""
    cursor: dict[str, Any] = field(default_factory=dict)


def _unchanged(entry: Any, session: SessionFile) -> bool:
    if not isinstance(entry, dict):
        return False
    if entry.get("size") == session.size and entry.get("mtime_ns") == session.mtime_ns:
        return True
    # Touched but not grown: nothing new past the offset we stopped at.
    return entry.get("offset") == session.size and isinstance(entry.get("lines"), int)


def scan(source: TranscriptSource, cursor: dict[str, Any], skip: set[str], max_jobs: int) -> ScanResult:
    """Pick up to ``max_jobs`` sessions with new records and stage their cursors.

    Half the slots (rounded down) go to the newest changed sessions, the rest to the oldest; a
    changed session that turns out to hold no new record (only a half-written line, say) has its
    cursor refreshed and takes no slot. Sessions listed in ``skip`` are passed over (``continue``,
    never ``break``): they are this host's own bridging runs.
    """
    result = ScanResult(cursor=dict(cursor))
    candidates: list[tuple[str, SessionFile]] = []
    for session in source.discover():
        if source.session_id(session.path) in skip:
            result.skipped_self += 1
            continue
        key = source.key(session.path)
        if not _unchanged(cursor.get(key), session):
            candidates.append((key, session))

    want_newest = max_jobs // 2
    newest_taken = 0
    lo, hi = 0, len(candidates) - 1
    while len(result.picked) < max_jobs and lo <= hi:
        if newest_taken < want_newest:
            key, session = candidates[lo]
            lo += 1
            from_front = True
        else:
            key, session = candidates[hi]
            hi -= 1
            from_front = False
        previous = cursor.get(key)
        try:
            read = source.read_incremental(session, previous if isinstance(previous, dict) else None)
        except TranscriptReadError:
            result.unreadable += 1
            continue
        result.corrupt += read.corrupt
        entry = dict(read.cursor)
        last = read.last_timestamp or (previous.get("last_timestamp") if isinstance(previous, dict) else None)
        entry["last_timestamp"] = last
        result.cursor[key] = entry
        if read.changed:
            result.picked.append(Picked(key, session, read))
            newest_taken += from_front
    result.remaining = max(0, hi - lo + 1)
    # Emit oldest first so job numbers follow the order things happened in.
    result.picked.sort(key=lambda p: p.session.mtime_ns)
    return result
