"""The bridging run's own sessions, recognised by the OpenClaw cron job that launches it.

OpenClaw runs the scheduled task as a cron job and names each run's session window
``agent:<agentId>:cron:<jobId>:run:<sessionId>``. Once the user registers the job id
(``memu-openclaw register-cron-job --job-id <id>``), ``prepare`` asks the source for its own
sessions (:meth:`OpenClawSource.self_sessions`), which looks those windows up in each store and
names the runs ``<agentId>/<sessionId>``; the pipeline leaves them out. No prompt text is matched
(it could be forged by a recalled memory); the agent segment is ignored because a job can change
owner; a sub-agent spawned by a run (``…:run:<id>:subagent:…``) is not the run itself. Nothing
here writes, except :func:`register` when the user asks for it.
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING

from memu_core.errors import UsageError
from memu_core.host import SelfSessions, hosts_root, read_json, readonly_columns, readonly_query, write_json_atomic

if TYPE_CHECKING:
    from memu_host_openclaw.source import OpenClawSource

REGISTRATION = ".cron_job.openclaw.json"
_JOB_ID = re.compile(r"[A-Za-z0-9._-]+")
_RUN_SQL = (
    "SELECT session_id, session_key FROM session_windows "
    "WHERE session_key GLOB 'agent:*:cron:' || ? || ':run:*' ORDER BY session_id"
)
UNSUPPORTED_STORE = (
    "structured cron session exclusion requires OpenClaw v2026.7.2-beta.4 or newer "
    "(session_windows.session_key); until then the bridging runs' sessions are mined"
)
MISSING_REGISTRATION = (
    "the bridging task's cron job is not registered, so its runs are mined like other sessions; "
    "run `memu-openclaw register-cron-job --job-id <jobId>` (the id from `openclaw cron list`)"
)


def valid_job_id(job_id: str) -> str:
    """``job_id`` stripped, or a ``UsageError`` naming the allowed characters."""
    job = job_id.strip()
    if not _JOB_ID.fullmatch(job):
        raise UsageError(
            f"cron job id {job_id!r} is not valid; use the id `openclaw cron list` shows "
            "(letters, digits, '.', '_' and '-')"
        )
    return job


def register(base: Path, job_id: str) -> Path:
    """Record the bridging task's cron job id in the working tree; return the file written."""
    path = base / REGISTRATION
    write_json_atomic(path, {"job_id": valid_job_id(job_id)})
    return path


def registered_job(base: Path) -> str | None:
    """The registered job id (``None`` when missing or invalid)."""
    raw = read_json(base / REGISTRATION, None)
    job = raw.get("job_id") if isinstance(raw, dict) else None
    if not isinstance(job, str):
        return None
    try:
        return valid_job_id(job)
    except UsageError:
        return None


def _run_ids(store: Path, job: str) -> list[str]:
    agent = store.parent.parent.name
    found = []
    for sid, key in readonly_query(store, _RUN_SQL, (job,)):
        # GLOB's ``*`` also matches descendants and other ids: keep only the run's own window.
        if re.fullmatch(rf"agent:[^:]+:cron:{re.escape(job)}:run:{re.escape(str(sid))}", str(key)):
            found.append(f"{agent}/{sid}")
    return found


def registered_jobs(worktree: Path) -> list[str]:
    """The job ids registered in ``worktree`` and in every other tree under ``~/.memu/hosts``.

    A run of any memu bridging job is a bridging run, whichever tree it works in: with two trees
    (two stores, say), each tree's run must be left out of the other's mining too. Read only.
    """
    trees = {worktree, *(p.parent for p in hosts_root().glob(f"*/{REGISTRATION}"))}
    jobs = {registered_job(tree) for tree in trees}
    return sorted(job for job in jobs if job is not None)


def self_sessions(source: OpenClawSource, worktree: Path) -> SelfSessions:
    """Every run of a registered bridging job found in the stores, and why none could be found."""
    stores = source.stores()
    if not stores:
        return SelfSessions()  # legacy JSONL only: nothing names a cron run
    capable = []
    for store in stores:
        try:
            if {"session_id", "session_key"} <= readonly_columns(store, "session_windows"):
                capable.append(store)
        except sqlite3.Error:
            continue
    if not capable:
        return SelfSessions(warnings=(UNSUPPORTED_STORE,))
    jobs = registered_jobs(worktree)
    if not jobs:
        return SelfSessions(warnings=(MISSING_REGISTRATION,))
    ids: set[str] = set()
    for store in capable:
        for job in jobs:
            try:
                ids.update(_run_ids(store, job))
            except sqlite3.Error:
                continue
    if not ids:
        named = ", ".join(jobs)
        return SelfSessions(
            warnings=(
                f"no session of cron job {named} found yet; if the bridging task runs "
                "under another job, register that one with `memu-openclaw register-cron-job`",
            )
        )
    return SelfSessions(frozenset(ids))
