"""The spool on disk: one JSON envelope per line, a size cap, a drop counter, ``.sending`` batches.

Layout (``memu_core.events`` names the files; ``MEMU_EVENTS_SPOOL`` moves them together)::

    events.jsonl                 appended by each event (never read on the command's path)
    events.<hex>.sending         a batch a flush took; deleted once every line was settled
    events.dropped               how many events were lost (spool at its cap, a failed write,
                                 a line cut short): reported as ``cli_events_dropped``
    events.retry_after           epoch seconds before which a flush does not send (HTTP 429)
    events.flush.lock            one flush at a time on this machine

Appending is O(1): one ``open``, one ``fstat``, one one-byte ``pread`` (to heal a line a full
disk cut short), one ``write`` (:func:`memu_core.events.append_line`, shared with the warm
per-turn ``retrieve``, which spools its event without loading this plugin).
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from pathlib import Path

from memu_core import events

MAX_SPOOL_BYTES = events.MAX_SPOOL_BYTES
"""The live spool takes no line once it holds this much (the line that crosses it is kept)."""
MAX_SENDING_FILES = 20
"""A flush leaves the live spool in place once this many batches wait (offline for long)."""


def spool() -> Path:
    """The live spool file."""
    return events.spool_path()


def dropped_file() -> Path:
    """The drop counter."""
    return events.companion("dropped")


def retry_after_file() -> Path:
    """When the server last asked to wait (HTTP 429 ``Retry-After``)."""
    return events.companion("retry_after")


def lock_file() -> Path:
    """Held by the flush that is sending."""
    return events.companion("flush.lock")


def sending_files() -> list[Path]:
    """The batches waiting to be sent (left by failed or killed flushes), oldest name first."""
    path = spool()
    with contextlib.suppress(OSError):
        return sorted(path.parent.glob(f"{path.stem}.*.sending"))
    return []


def append(envelope: dict[str, object]) -> bool:
    """Add one envelope to the spool; ``False`` (and the drop counter raised) when it was lost.

    The O(1) append itself is memu-core's (:func:`memu_core.events.append_line`), which the warm
    per-turn ``retrieve`` also writes through without loading this plugin."""
    line = (json.dumps(envelope, ensure_ascii=False, default=str, separators=(",", ":")) + "\n").encode()
    return events.append_line(line)


def read_dropped() -> int:
    """The drop counter (0 when absent or unreadable)."""
    try:
        return max(0, int(dropped_file().read_text().strip() or 0))
    except (OSError, ValueError):
        return 0


def count_dropped(n: int) -> None:
    """Raise the drop counter by ``n``; best effort (a disk too full for a few bytes loses it)."""
    if n <= 0:
        return
    path = dropped_file()
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        path.write_text(str(read_dropped() + n))


def take_dropped() -> int:
    """Read and reset the drop counter."""
    n = read_dropped()
    if n:
        with contextlib.suppress(OSError):
            dropped_file().unlink()
    return n


def parse(path: Path) -> tuple[list[dict[str, object]], int]:
    """The envelopes in ``path`` in file order, and how many lines were not envelopes (cut short
    by a crash or a full disk). An unreadable file is empty."""
    try:
        data = path.read_bytes()
    except OSError:
        return [], 0
    found: list[dict[str, object]] = []
    bad = 0
    for raw in data.split(b"\n"):
        if not raw.strip():
            continue
        try:
            item = json.loads(raw)
        except ValueError:
            bad += 1
            continue
        if isinstance(item, dict) and item.get("event_id") and item.get("event_name"):
            found.append(item)
        else:
            bad += 1
    return found, bad


def rotate() -> Path | None:
    """Move the live spool aside as a new ``.sending`` batch (appenders start a fresh spool);
    ``None`` when it is empty or too many batches already wait."""
    path = spool()
    try:
        if path.stat().st_size == 0 or len(sending_files()) >= MAX_SENDING_FILES:
            return None
    except OSError:
        return None
    target = path.with_name(f"{path.stem}.{os.urandom(8).hex()}.sending")
    try:
        os.replace(path, target)
    except OSError:
        return None
    return target


def new_batch(envelopes: list[dict[str, object]]) -> bool:
    """Write ``envelopes`` as a batch of their own (not subject to the spool's cap)."""
    path = spool()
    target = path.with_name(f"{path.stem}.{os.urandom(8).hex()}.sending")
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        retain(target, envelopes, strict=True)
    except OSError:
        return False
    return True


def retain(path: Path, rest: list[dict[str, object]], *, strict: bool = False) -> None:
    """Rewrite batch ``path`` to hold only ``rest`` (atomic); on failure it stays whole, and the
    next flush re-sends what was already accepted, which the server's event_id dedup absorbs.
    ``strict`` raises the failure instead."""
    partial = path.with_name(path.name + ".partial")
    try:
        partial.write_text("".join(json.dumps(e, ensure_ascii=False) + "\n" for e in rest), encoding="utf-8")
        os.replace(partial, path)
    except OSError:
        with contextlib.suppress(OSError):
            partial.unlink()
        if strict:
            raise


@contextlib.contextmanager
def flush_lock() -> Iterator[bool]:
    """Yield whether this process may flush: ``False`` while another flush holds the lock."""
    try:
        import fcntl
    except ImportError:  # no flock: the server's event_id dedup covers overlapping flushes
        yield True
        return
    path = lock_file()
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError:
        yield True
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            yield False
            return
        yield True
    finally:
        os.close(fd)


def pending() -> list[dict[str, object]]:
    """Every envelope not yet delivered: the waiting batches, then the live spool."""
    found: list[dict[str, object]] = []
    for path in [*sending_files(), spool()]:
        found.extend(parse(path)[0])
    return found


def clear() -> int:
    """Delete the spool, the batches and the drop counter; return how many events were deleted."""
    count = len(pending())
    for path in [*sending_files(), spool(), dropped_file(), retry_after_file()]:
        with contextlib.suppress(OSError):
            path.unlink()
    return count
