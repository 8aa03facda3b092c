"""The bridging run's own sessions, recognised by the OpenClaw cron job that launches it.

OpenClaw runs the scheduled task as a cron job and names each run's session window
``agent:<agentId>:cron:<jobId>:run:<sessionId>``. Once the user registers the job id
(``memu-openclaw register-cron-job --job-id <id>``), every discovery looks those windows up in
each store and leaves the runs ``<agentId>/<sessionId>`` out (and records them in the host's
self-session list, for people to see). No prompt text is
matched (it could be forged by a recalled memory); the agent segment is ignored because a job can
change owner; a sub-agent spawned by a run (``…:run:<id>:subagent:…``) is not the run itself.
"""

from __future__ import annotations

import logging
import re
import sqlite3
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from memu_core.errors import UsageError
from memu_core.host import (
    Layout,
    load_self_sessions,
    read_json,
    readonly_columns,
    readonly_query,
    write_json_atomic,
    write_text_atomic,
)

if TYPE_CHECKING:
    from memu_host_openclaw.source import OpenClawSource

REGISTRATION = ".cron_job.openclaw.json"
WARNING_STATE = ".cron_identity_warning.openclaw"
_JOB_ID = re.compile(r"[A-Za-z0-9._-]+")
_RUN_SQL = (
    "SELECT session_id, session_key FROM session_windows "
    "WHERE session_key GLOB 'agent:*:cron:' || ? || ':run:*' ORDER BY session_id"
)


@dataclass(frozen=True)
class Resolution:
    """The self-session ids to skip and, when identity could not be established, why."""

    ids: list[str]
    problem: str = ""
    """``""``, ``unsupported-store``, ``missing-registration`` or ``no-matching-sessions``."""
    message: str = ""


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


def resolve(source: OpenClawSource, layout: Layout) -> Resolution:
    """The remembered self sessions plus every run of the registered job found in the stores."""
    remembered = load_self_sessions(layout.self_sessions)
    capable = []
    for store in source.stores():
        try:
            if {"session_id", "session_key"} <= readonly_columns(store, "session_windows"):
                capable.append(store)
        except sqlite3.Error:
            continue
    if not capable:
        return Resolution(
            remembered,
            "unsupported-store",
            "structured cron session exclusion requires OpenClaw v2026.7.2-beta.4 or newer "
            "(session_windows.session_key); until then the bridging runs' sessions are mined",
        )
    job = registered_job(layout.base)
    if job is None:
        return Resolution(
            remembered,
            "missing-registration",
            "the bridging task's cron job is not registered, so its runs are mined like other sessions; "
            "run `memu-openclaw register-cron-job --job-id <jobId>` (the id from `openclaw cron list`)",
        )
    ids: list[str] = []
    for store in capable:
        try:
            ids.extend(i for i in _run_ids(store, job) if i not in ids)
        except sqlite3.Error:
            continue
    if not ids:
        return Resolution(remembered, "no-matching-sessions", f"no session of cron job {job} found yet")
    merged = remembered + [i for i in ids if i not in remembered]
    if merged != remembered:
        # Uncapped on purpose: these ids come from the host's own records, not from an env var.
        write_json_atomic(layout.self_sessions, merged)
    return Resolution(merged)


log = logging.getLogger(__name__)


def runs_to_skip(source: OpenClawSource, layout: Layout) -> set[str]:
    """The ids to leave out of discovery; logs a warning when identity is missing (once per kind)."""
    try:
        resolution = resolve(source, layout)
        message = warn_once(layout, resolution)
    except OSError as exc:  # an unwritable tree must not stop mining
        log.warning("could not record OpenClaw cron runs under %s: %s", layout.base, exc)
        return set()
    if message:
        # Straight to stderr: the pipeline's report has no channel for a source, and this is
        # the one thing the user must act on.
        sys.stderr.write(f"warning: {message}\n")
    return set(resolution.ids)


def warn_once(layout: Layout, resolution: Resolution) -> str | None:
    """The warning to show, only when its kind differs from the last one shown (re-armed on success)."""
    state = layout.base / WARNING_STATE
    last = state.read_text(encoding="utf-8").strip() if state.is_file() else ""
    if not resolution.problem:
        state.unlink(missing_ok=True)
        return None
    if resolution.problem == last:
        return None
    write_text_atomic(state, resolution.problem + "\n")
    return resolution.message
