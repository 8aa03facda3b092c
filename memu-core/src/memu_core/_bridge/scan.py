"""Incremental discovery: which sessions have new records since the promoted cursor.

memU walks sessions newest first and stops at the first one it has already seen, so sessions
beyond its per-run cap on a first install are never looked at again. Here every session's
``(size, mtime)`` is compared with its cursor entry (a ``stat`` per file, no reads), so nothing
is hidden behind an unchanged newer session; and each run splits its slots between the newest
changed sessions (fresh work is mined promptly) and the oldest (the backlog drains), so every
changed session is mined within a bounded number of runs.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from memu_core._bridge.mine import Mined, mine_batch
from memu_core._log import get_logger
from memu_core._transcript_types import SessionFile
from memu_core._value import Value
from memu_core.interfaces import TranscriptSource

log = get_logger("memu.bridge")


class ScanResult(Value):
    """What one scan found. ``cursor`` is the full pending cursor (old entries + this run's)."""

    __slots__ = (
        "corrupt",
        "corrupt_files",
        "cursor",
        "errors",
        "picked",
        "redacted",
        "remaining",
        "skipped_self",
        "unreadable",
    )
    _fields = (
        "picked",
        "remaining",
        "corrupt",
        "corrupt_files",
        "errors",
        "unreadable",
        "skipped_self",
        "redacted",
        "cursor",
    )

    def __init__(
        self,
        picked: list[Mined] | None = None,
        remaining: int = 0,
        corrupt: int = 0,
        corrupt_files: list[tuple[str, int]] | None = None,
        errors: list[str] | None = None,
        unreadable: int = 0,
        skipped_self: int = 0,
        redacted: int = 0,
        cursor: dict[str, Any] | None = None,
    ) -> None:
        self.picked: list[Mined] = [] if picked is None else picked
        """Sessions with new records, oldest first; their slices are staged under their ``stem``."""
        self.remaining = remaining
        """Changed sessions left for later runs."""
        self.corrupt = corrupt
        """Lines skipped because they were not JSON objects (or were over the line limits)."""
        self.corrupt_files: list[tuple[str, int]] = [] if corrupt_files is None else corrupt_files
        """``(path, lines skipped)`` for each session that had such lines."""
        self.errors: list[str] = [] if errors is None else errors
        """One line per session that could not be read, naming its file."""
        self.unreadable = unreadable
        """Sessions skipped because they could not be read (they are retried next run)."""
        self.skipped_self = skipped_self
        """Sessions with new records passed over because they are bridging runs."""
        self.redacted = redacted
        """Secret values replaced in the staged slices."""
        self.cursor: dict[str, Any] = {} if cursor is None else cursor


def _staged_size(stage: Path, stem: str) -> int:
    """Bytes of the conversation slice the memory job reads for one staged session."""
    try:
        return (stage / f"{stem}.jsonl").stat().st_size
    except OSError:
        return 0


def _unstage(stage: Path, stem: str) -> None:
    for suffix in (".jsonl", "_full.jsonl"):
        (stage / f"{stem}{suffix}").unlink(missing_ok=True)


def _unchanged(entry: Any, session: SessionFile) -> bool:
    if not isinstance(entry, dict):
        return False
    if entry.get("size") == session.size and entry.get("mtime_ns") == session.mtime_ns:
        return True
    # Touched but not grown: nothing new past the offset we stopped at.
    return entry.get("offset") == session.size and isinstance(entry.get("lines"), int)


BUDGET_CHUNK = 32
"""Sessions mined at a time while a size budget is being filled: at most one chunk is read
beyond the budget, and what was read past it is left for the next run, cursor untouched."""


def scan(
    source: TranscriptSource,
    cursor: dict[str, Any],
    skip: set[str],
    max_jobs: int,
    stage: Path,
    budget_bytes: int | None = None,
    *,
    progress: Callable[[int, int], None] | None = None,
) -> ScanResult:
    """Pick up to ``max_jobs`` sessions with new records, stage their slices and cursors.

    Half the slots (rounded down) go to the newest changed sessions, the rest to the oldest; a
    changed session that turns out to hold no new record (only a half-written line, say) has its
    cursor refreshed and takes no slot. Changed sessions listed in ``skip`` are passed over
    (``continue``, never ``break``): they are this host's own bridging runs. With
    ``budget_bytes`` the run also stops once the staged conversation slices reach that size (the
    first session always fits). ``progress`` is told ``(sessions read, sessions this run may
    read)`` after each one (a backlog of large sessions takes minutes).
    """
    result = ScanResult(cursor=dict(cursor))
    candidates: list[tuple[str, SessionFile]] = []
    seen = 0
    cursor_key = source._cursor_keys()
    for session in source.discover():
        seen += 1
        key = cursor_key(session)
        if _unchanged(cursor.get(key), session):
            continue
        # Asked only of a changed session: the id may need the session's Path, and the sessions
        # a steady run finds unchanged are thousands (ADR 0026's seventh pass).
        if skip and source.session_id(session.path) in skip:
            result.skipped_self += 1
            continue
        candidates.append((key, session))
    newest = max_jobs // 2
    order = candidates[:newest] + candidates[newest:][::-1]
    planned = min(max_jobs, len(order))
    if progress is not None:
        progress(0, planned)
    done = 0
    used = 0
    full = False
    while len(result.picked) < max_jobs and done < len(order) and not full:
        room = max_jobs - len(result.picked)
        batch = order[done : done + (room if budget_bytes is None else min(room, BUDGET_CHUNK))]
        tasks = []
        for n, (key, session) in enumerate(batch, done):
            previous = cursor.get(key)
            tasks.append((key, session, previous if isinstance(previous, dict) else None, f"c{n}"))
        for mined in mine_batch(source, stage, tasks):
            if full:
                _unstage(stage, mined.stem)  # read past the budget: the next run mines it again
                continue
            done += 1
            if progress is not None:
                progress(min(done, planned), planned)
            if mined.entry is None:
                result.unreadable += 1
                if mined.error:
                    result.errors.append(mined.error)
                continue
            result.cursor[mined.key] = mined.entry
            result.corrupt += mined.corrupt
            if mined.corrupt:
                result.corrupt_files.append((str(mined.session.path), mined.corrupt))
            if mined.records:
                result.picked.append(mined)
                result.redacted += mined.redacted
                if budget_bytes is not None:
                    used += _staged_size(stage, mined.stem)
                    full = used >= budget_bytes
    result.remaining = len(order) - done
    log.debug(
        "sessions scanned",
        sessions=seen,
        changed=len(candidates),
        skipped_self=result.skipped_self,
        picked=len(result.picked),
        remaining=result.remaining,
        unreadable=result.unreadable,
    )
    # Emit oldest first so job numbers follow the order things happened in.
    result.picked.sort(key=lambda m: m.session.mtime_ns)
    return result
