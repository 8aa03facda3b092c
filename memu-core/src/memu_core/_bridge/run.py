"""The run marker: which bridging run owns a tree's jobs, slices and staged cursor.

``prepare`` and ``commit`` are separate processes with an agent working in between, so the host
lock (held only while one of them runs) cannot keep two runs apart. The marker can: ``prepare``
writes it last, once the run's jobs and staged cursor are in place, and ``commit`` removes it.

Rules (docs/adr/0014-bridging-run-marker.md):

* ``prepare`` finding an unfinished run with jobs refuses, unless the run is its own (same agent
  session), stale (older than ``MEMU_RUN_STALE_AFTER`` seconds) or ``--abandon-unfinished`` is
  given; then the unfinished run is dropped, and that is said. Dropping loses nothing: its
  cursor was never promoted, so its sessions are offered again, and the agent's mirror edits
  stay until a commit stores them.
* ``commit`` promotes and deletes only the prepared run: a ``--run`` id that is not the marker's,
  or the agent session of a run that was dropped, is refused before anything is written. Any
  other agent may finish the run (the task guide has the next scheduled run work leftover jobs
  and commit them).

The pid of ``prepare`` is recorded for people, not for the rule: ``prepare`` exits before the
agent works the jobs, so its pid is gone in every healthy run too.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping
from pathlib import Path

from memu_core._atomic import write_json
from memu_core._value import Frozen
from memu_core.errors import LockBusy, UsageError

STALE_ENV = "MEMU_RUN_STALE_AFTER"
"""Seconds after which an unfinished run is taken to be dead and is dropped by the next prepare."""
DEFAULT_STALE = 3 * 3600.0
"""Longer than any healthy run (ten sessions' jobs), short enough that a crashed run blocks a
scheduled task for a few hours at most."""


class RunMarker(Frozen):
    """One prepared, not yet committed bridging run."""

    __slots__ = ("jobs", "owner", "pid", "replaced", "run", "started_at")
    _fields = ("run", "started_at", "pid", "jobs", "owner", "replaced")
    run: str
    """The run's id, printed by ``prepare`` and accepted by ``commit --run``."""
    started_at: float
    """When ``prepare`` staged it (epoch seconds)."""
    pid: int
    """The ``prepare`` process (long gone once the agent works; shown to people only)."""
    jobs: int
    """How many job files it wrote (0: nothing to lose by replacing it)."""
    owner: str
    """The agent session that prepared it, when the host names one (``session_id_env``)."""
    replaced: tuple[str, ...]
    """Agent sessions whose runs this one dropped: their late commits are refused."""

    def __init__(
        self, run: str, started_at: float, pid: int, jobs: int, owner: str = "", replaced: tuple[str, ...] = ()
    ) -> None:
        self._init(run, started_at, pid, jobs, owner, replaced)

    def age(self, now: float | None = None) -> float:
        """Seconds since the run was prepared (never negative)."""
        return max(0.0, (time.time() if now is None else now) - self.started_at)


KEEP_REPLACED = 20
"""How many dropped runs' sessions a marker remembers (a late commit comes within a few runs)."""


def new(jobs: int, owner: str, replacing: RunMarker | None = None) -> RunMarker:
    """A marker for a run staged now (the id sorts by time and is unique per run); ``replacing``
    is the unfinished run it drops, whose session then may no longer commit."""
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    replaced: tuple[str, ...] = ()
    if replacing is not None:
        # A run without jobs loses nothing by being replaced: its session may still commit.
        dropped = replacing.owner if replacing.owner and replacing.jobs else ""
        replaced = (*replacing.replaced, dropped) if dropped else replacing.replaced
        replaced = tuple(r for r in replaced if r != owner)[-KEEP_REPLACED:]
    # os.urandom, not secrets: the suffix only tells runs of one second apart, and secrets imports
    # hmac and OpenSSL's hashes, a few milliseconds of every prepare.
    return RunMarker(f"{stamp}-{os.urandom(3).hex()}", time.time(), os.getpid(), jobs, owner, replaced)


def read(path: Path) -> RunMarker | None:
    """The marker at ``path``; ``None`` when there is none. An unreadable one (written by hand, or
    by a version that stored only ``started_at``/``pid``) reads as an unnamed run of its age."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        raw = {}
    if not isinstance(raw, dict):
        raw = {}
    started = raw.get("started_at")
    jobs = raw.get("jobs")
    pid = raw.get("pid")
    return RunMarker(
        run=str(raw.get("run") or "unnamed"),
        started_at=float(started) if isinstance(started, int | float) and not isinstance(started, bool) else 0.0,
        pid=pid if isinstance(pid, int) and not isinstance(pid, bool) else 0,
        # An old marker does not say: assume it has work, so it is never replaced silently.
        jobs=jobs if isinstance(jobs, int) and not isinstance(jobs, bool) else 1,
        owner=str(raw.get("owner") or ""),
        replaced=tuple(str(r) for r in raw.get("replaced") or () if isinstance(r, str)),
    )


def write(path: Path, marker: RunMarker) -> None:
    """Store ``marker`` atomically (0600, as every memu file)."""
    write_json(path, marker.as_dict())


def owner_of(session_env: str | None, environ: Mapping[str, str]) -> str:
    """The agent session running this command, or ``""`` when the host names none."""
    return (environ.get(session_env) or "").strip() if session_env else ""


def stale_after(environ: Mapping[str, str]) -> float:
    """``MEMU_RUN_STALE_AFTER`` in seconds (default :data:`DEFAULT_STALE`)."""
    raw = (environ.get(STALE_ENV) or "").strip()
    if not raw:
        return DEFAULT_STALE
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not value > 0 or value == float("inf"):
        raise UsageError(f"{STALE_ENV}={raw!r} is not a number of seconds; set it to e.g. 10800 (three hours)")
    return value


def shown_age(seconds: float) -> str:
    """``42 s``, ``12 min``, ``3.5 h``: an age as people read it."""
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def may_replace(
    unfinished: RunMarker,
    *,
    owner: str,
    abandon: bool,
    stale: float,
    binary: str,
    jobs_dir: Path,
) -> str | None:
    """Whether ``prepare`` may replace ``unfinished``: ``None`` (silently: it had no jobs), a note
    saying why it is dropped, or :class:`LockBusy` naming the run and the ways out."""
    if unfinished.jobs == 0:
        return None
    age = unfinished.age()
    if owner and unfinished.owner == owner:
        reason = "prepared earlier by this same agent session"
    elif abandon:
        reason = "--abandon-unfinished"
    elif age > stale:
        reason = f"prepared {shown_age(age)} ago, longer than {STALE_ENV}={stale:.0f} s"
    else:
        raise LockBusy(
            f"an unfinished bridging run ({unfinished.run}, prepared {shown_age(age)} ago, "
            f"{unfinished.jobs} job(s) in {jobs_dir}) has not been committed; let its agent finish "
            f"and run `{binary} commit`, or pass --abandon-unfinished if that run is dead "
            f"(runs older than {STALE_ENV}={stale:.0f} s are dropped by themselves)"
        )
    return (
        f"note: dropped the unfinished bridging run {unfinished.run} ({reason}); its sessions are "
        "offered again and its edits in the mirror are kept"
    )


def check_commit(marker: RunMarker | None, *, run_id: str | None, owner: str, binary: str) -> None:
    """Refuse a ``commit`` that is not the current run's, before anything is written."""
    if run_id and (marker is None or marker.run != run_id):
        now = f"run {marker.run} is the current one" if marker is not None else "no run is prepared"
        raise UsageError(
            f"--run {run_id} is not the prepared run ({now}); nothing was committed, and edits in the "
            f"mirror stay for the current run's `{binary} commit`"
        )
    if marker is not None and owner and owner != marker.owner and owner in marker.replaced:
        raise UsageError(
            f"this agent session's run was dropped for run {marker.run} (it ran too long or was "
            f"abandoned); nothing was committed: that run's `{binary} commit` stores the edits left "
            "in the mirror, and the dropped sessions are mined again"
        )
