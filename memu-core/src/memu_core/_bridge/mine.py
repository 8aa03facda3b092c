"""Reading candidate sessions into redacted transcript slices, in parallel when there is a lot.

A first run can face months of sessions; reading, classifying and redacting them is CPU-bound,
so big batches are spread over worker processes (``fork`` only: workers inherit the source and
need no pickling; elsewhere, or for small batches, the work stays in this process). Workers
write their slices into a staging folder and return only counts and cursor entries.
"""

from __future__ import annotations

import gc
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from memu_core._bridge import _prefilter
from memu_core._bridge.redact import Redactor
from memu_core._layout import PRIVATE_FILE
from memu_core._transcript_types import SessionFile
from memu_core._value import Value
from memu_core.errors import TranscriptReadError
from memu_core.interfaces import TranscriptSource

PARALLEL_MIN_BYTES = 24 * 1024 * 1024
"""Below this much new data a pool costs more than it saves."""
PREFILTER_MIN_BYTES = 2 * 1024 * 1024
"""From this much new data on, the redaction prefilter is loaded (its import costs about as much
as redacting a dozen ordinary sessions without it)."""
MAX_WORKERS = 8
MIN_POOL_WORKERS = 3
"""The fewest workers a pool starts with. Two do not pay for themselves: on two idle cores a pool
of two took 14-56% more user CPU and more system time than one process, for 4-21% less wall
time in three of four pairs and 84% more in the fourth (ADR 0026, second pass); with fewer idle
cores than this, one process mines."""


class Mined(Value):
    """What reading one session produced."""

    __slots__ = ("corrupt", "entry", "error", "key", "records", "redacted", "session", "stem")
    _fields = ("key", "session", "stem", "entry", "records", "corrupt", "redacted", "error")

    def __init__(
        self,
        key: str,
        session: SessionFile,
        stem: str,
        entry: dict[str, Any] | None = None,
        records: int = 0,
        corrupt: int = 0,
        redacted: int = 0,
        error: str = "",
    ) -> None:
        self.key = key
        self.session = session
        self.stem = stem
        self.entry = entry
        """The session's new cursor entry (``None`` when it could not be read)."""
        self.records = records
        self.corrupt = corrupt
        self.redacted = redacted
        self.error = error
        """Why the session could not be read (``entry`` is then ``None``)."""


Task = tuple[str, SessionFile, "dict[str, Any] | None", str]
_WORKER: tuple[TranscriptSource, Path] | None = None


def mine_one(source: TranscriptSource, stage: Path, task: Task) -> Mined:
    """Read one session's new records; stage ``<stem>.jsonl`` and ``<stem>_full.jsonl`` if any."""
    key, session, previous, stem = task
    out = Mined(key, session, stem)
    try:
        read = source.read_kept(session, previous)
    except TranscriptReadError as exc:
        out.error = str(exc)
        return out
    except Exception as exc:  # a hostile file or a source bug costs this session, never the run
        out.error = f"could not read {session.path}: {type(exc).__name__}: {exc}"
        return out
    last = read.last_timestamp or (previous.get("last_timestamp") if previous else None)
    out.entry = {**read.cursor, "last_timestamp": last}
    out.corrupt = read.corrupt
    out.records = read.records
    if read.records:
        redactor = Redactor()
        # One pass over the session: each record comes back as one line, still valid JSON.
        lines, full = redactor.slice(read.lines)
        conv = [lines[i] for i in read.messages]
        if conv:
            conv.append("")  # the file's last newline, without copying the joined text again
        data = "\n".join(conv).encode("utf-8", "surrogatepass")
        write_private(stage / f"{stem}.jsonl", data)
        write_private(stage / f"{stem}_full.jsonl", full)
        out.redacted = redactor.count
    return out


def write_private(path: str | os.PathLike[str], data: bytes) -> None:
    """Create (or truncate) ``path`` as a 0600 file holding ``data``: a slice is a redacted
    transcript, still private to the user. One ``open`` and ``write`` at the OS level, no text
    layer and no terminal check: a first run writes thousands of these into a staging folder,
    and the run marker written last (ADR 0014) is what makes a run whole, not each file."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_BINARY", 0), PRIVATE_FILE)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


def _work(task: Task) -> Mined:
    assert _WORKER is not None
    return mine_one(_WORKER[0], _WORKER[1], task)


def _workers() -> int:
    import multiprocessing

    if "fork" not in multiprocessing.get_all_start_methods():
        return 1
    return max(1, min(MAX_WORKERS, os.cpu_count() or 1))


PROBE_SECONDS = 0.15
"""How long a big batch's first sessions are mined in this process while the other cores' idle
time is measured, before a pool is started for the rest (if they are idle)."""


def _cpu_ticks() -> tuple[int, int] | None:
    """``(idle, total)`` clock ticks of all cores since boot, where the system reports them
    (Linux's ``/proc/stat``), else ``None``."""
    try:
        with open("/proc/stat", "rb") as fh:
            fields = fh.readline().split()
    except OSError:
        return None
    if len(fields) < 5 or fields[0] != b"cpu":
        return None
    try:
        ticks = [int(f) for f in fields[1:9]]  # user nice system idle iowait irq softirq steal
    except ValueError:
        return None
    return ticks[3] + ticks[4], sum(ticks)


def _busy_cores(since: tuple[int, int] | None = None) -> float:
    """Cores kept busy by other work: measured from ``since`` (:func:`_cpu_ticks` taken while
    this process mined on one core, which is taken off) where the system reports ticks, else the
    one-minute load average (0 where there is none either)."""
    now = _cpu_ticks() if since is not None else None
    if since is not None and now is not None and now[1] > since[1]:
        idle = (now[0] - since[0]) / (now[1] - since[1])
        return max(0.0, (os.cpu_count() or 1) * (1.0 - idle) - 1.0)
    try:
        return os.getloadavg()[0]
    except (OSError, AttributeError):
        return 0.0


def _idle_cores(since: tuple[int, int] | None = None) -> int:
    """Cores no other process is using, at least one. A worker per busy core only shares that
    core with its owner and adds the pool's own cost: measured on two cores at a load average
    of 3-4, a pool of two took 20% more CPU than one process and no less wall time (ADR 0026).
    The load average lags by a minute (a program that just ended still counts), so where the
    system reports CPU ticks they are measured over the batch's first sessions instead."""
    cores = os.cpu_count() or 1
    return max(1, round(cores - _busy_cores(since)))


def mine_batch(source: TranscriptSource, stage: Path, tasks: list[Task]) -> Iterator[Mined]:
    """``mine_one`` over ``tasks``, in worker processes when worth it. Each result comes out (in
    task order) as soon as it is mined, so the caller's progress moves while a backlog is read."""
    new_bytes = sum(max(0, s.size - int((p or {}).get("offset") or 0)) for _, s, p, _ in tasks)
    if new_bytes >= PREFILTER_MIN_BYTES:
        _prefilter.load()  # before the fork: the workers inherit it
    pool = new_bytes >= PARALLEL_MIN_BYTES and len(tasks) > 1 and _workers() >= MIN_POOL_WORKERS
    # Mining makes no reference cycles (lines, lists, parsed records), so the cycle collector
    # only walks the young objects again and again: 10-15% of a first run's CPU, measured.
    collecting = gc.isenabled()
    gc.disable()
    try:
        if not pool:
            for task in tasks:
                yield mine_one(source, stage, task)
            return
        # Mine here while measuring how idle the other cores are; then a pool for the rest.
        since, started = _cpu_ticks(), time.monotonic()
        done = 0
        for task in tasks:
            yield mine_one(source, stage, task)
            done += 1
            if time.monotonic() - started >= PROBE_SECONDS:
                break
        rest = tasks[done:]
        workers = min(_workers(), _idle_cores(since), len(rest))
        yield from _mine(source, stage, rest, workers if workers >= MIN_POOL_WORKERS else 1)
    finally:
        if collecting:
            gc.enable()


def _mine(source: TranscriptSource, stage: Path, tasks: list[Task], workers: int) -> Iterator[Mined]:
    if workers < 2:
        for task in tasks:
            yield mine_one(source, stage, task)
        return
    import multiprocessing

    global _WORKER
    _WORKER = (source, stage)
    try:
        with multiprocessing.get_context("fork").Pool(workers) as pool:
            # Small chunks keep the workers evenly loaded when session sizes differ a lot.
            yield from pool.imap(_work, tasks, chunksize=max(1, len(tasks) // (workers * 8)))
    finally:
        _WORKER = None
