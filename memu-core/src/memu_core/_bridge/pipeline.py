"""The two coded steps of a bridging run: ``prepare`` (mine → slices → jobs, cursor staged) and
``commit`` (diff → store → cursor promoted). Both run under the host's lock.

Crash safety: ``prepare`` deletes the staged cursor before it rewrites slices and jobs and writes
the new one last, and ``commit`` promotes it with one ``os.replace`` after the store accepted the
changes. A crash anywhere leaves the old or the new cursor, never a mix; at worst a session is
offered again (at-least-once), never skipped.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Mapping
from pathlib import Path

from memu_core import _events as events
from memu_core._atomic import read_json, write_json
from memu_core._bridge import jobs, mirrorstamp, run, scan, selfskip, snapshot, sync
from memu_core._bridge.lock import host_lock
from memu_core._bridge.mine import Mined
from memu_core._hostkit.spec import HostSpec
from memu_core._layout import Layout, ensure_private_dir, remove_tree
from memu_core._log import get_logger
from memu_core._value import Value
from memu_core.errors import Unsupported, UsageError
from memu_core.interfaces import AgenticMemoryBackend, TranscriptSource

DEFAULT_MAX_JOBS = 0
"""``--max-jobs`` when not given: no fixed count, as many sessions as fit the budget."""
AUTO_MAX_SESSIONS = 250
"""The most sessions one run takes when no ``--max-jobs`` is given."""
DEFAULT_BUDGET_KB = 12288
"""Conversation text (KiB of staged slices) one run takes by default: a 1,000-session backlog of
ordinary sessions drains in a handful of runs instead of a hundred."""
log = get_logger("memu.bridge")


class PrepareReport(Value):
    """What ``prepare`` did, for the CLI to print."""

    __slots__ = (
        "corrupt",
        "jobs",
        "kept_edits",
        "notes",
        "redacted",
        "remaining",
        "run",
        "sessions",
        "skipped_names",
        "skipped_self",
        "unreadable",
        "warnings",
    )
    _fields = (
        "sessions",
        "jobs",
        "remaining",
        "redacted",
        "corrupt",
        "unreadable",
        "kept_edits",
        "skipped_names",
        "skipped_self",
        "run",
        "notes",
        "warnings",
    )

    def __init__(
        self,
        sessions: int = 0,
        jobs: int = 0,
        remaining: int = 0,
        redacted: int = 0,
        corrupt: int = 0,
        unreadable: int = 0,
        kept_edits: int = 0,
        skipped_names: int = 0,
        skipped_self: int = 0,
        run: str = "",
        notes: list[str] | None = None,
        warnings: list[str] | None = None,
    ) -> None:
        self.sessions = sessions
        self.jobs = jobs
        self.remaining = remaining
        self.redacted = redacted
        self.corrupt = corrupt
        self.unreadable = unreadable
        self.kept_edits = kept_edits
        self.skipped_names = skipped_names
        """Stored files left out of the mirror: a name that breaks the naming rules or two scopes share."""
        self.skipped_self = skipped_self
        """Sessions with new records passed over as bridging runs (memu's rule and the source's own)."""
        self.run = run
        """The id of the run this prepare staged (``commit --run`` takes it)."""
        self.notes: list[str] = [] if notes is None else notes
        self.warnings: list[str] = [] if warnings is None else warnings


class CommitReport(Value):
    """What ``commit`` did, for the CLI to print."""

    __slots__ = ("files", "forgotten", "promoted", "resources", "warnings")
    _fields = ("files", "resources", "forgotten", "promoted", "warnings")

    def __init__(
        self,
        files: list[tuple[str, str]] | None = None,
        resources: int = 0,
        forgotten: list[tuple[str, str]] | None = None,
        promoted: bool = False,
        warnings: list[str] | None = None,
    ) -> None:
        self.files: list[tuple[str, str]] = [] if files is None else files
        self.resources = resources
        self.forgotten: list[tuple[str, str]] = [] if forgotten is None else forgotten
        self.promoted = promoted
        self.warnings: list[str] = [] if warnings is None else warnings


def mirror_scope() -> dict[str, str]:
    """The scope the mirror shows: the user and agent this machine commits as (``MEMU_USER_ID``,
    ``MEMU_AGENT_ID``, default ``default``), never every scope of a shared store."""
    from memu_core._config import resolve

    return {
        key: (resolve.lookup(var) or "default").strip() or "default"
        for key, var in (("user_id", "MEMU_USER_ID"), ("agent_id", "MEMU_AGENT_ID"))
    }


def verify_command(spec: HostSpec, layout: Layout) -> str:
    """The resource job's command; names the tree when it is not the host's default."""
    if layout.base == spec.default_base().absolute():
        return spec.verify_command
    return f"{spec.verify_command} --base-dir {layout.base}"


def _source_self_sessions(source: TranscriptSource, layout: Layout, report: PrepareReport) -> set[str]:
    """The runs the source recognises as its own in this tree; its warnings go to the report."""
    try:
        own = source.self_sessions(layout.base)
    except Exception as exc:  # a source bug must not stop mining; the user hears what it costs
        report.warnings.append(
            f"{type(source).__name__}.self_sessions failed ({type(exc).__name__}: {exc}); "
            "this host's own bridging runs may be mined"
        )
        return set()
    report.warnings.extend(own.warnings)
    return set(own.ids)


def _self_skip(
    spec: HostSpec,
    source: TranscriptSource,
    layout: Layout,
    environ: Mapping[str, str],
    cwd: Path,
    report: PrepareReport,
) -> set[str]:
    skip = set(selfskip.load(layout.self_sessions)) | _source_self_sessions(source, layout, report)
    if not spec.session_id_env or not selfskip.is_bridging_run(cwd, layout.base, environ):
        return skip
    own = selfskip.own_session(spec.session_id_env, environ)
    if not own:
        report.warnings.append(
            f"{spec.session_id_env} is unset, so this bridging run cannot recognise its own session; "
            "it will be mined like any other"
        )
    elif own not in skip:
        skip |= set(selfskip.remember(layout.self_sessions, own))
        report.notes.append(
            f"note: this session ({own}) is a bridging run; its transcript will not be mined "
            f"(undo by removing it from {layout.self_sessions})"
        )
    return skip


def prepare(
    spec: HostSpec,
    source: TranscriptSource,
    layout: Layout,
    backend: Callable[[], AgenticMemoryBackend],
    *,
    max_jobs: int = DEFAULT_MAX_JOBS,
    budget_kb: int | None = None,
    environ: Mapping[str, str] = os.environ,
    cwd: Path | None = None,
    abandon_unfinished: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> PrepareReport:
    """Mine new session turns into slices and job files; stage the cursor; mirror the store.

    An unfinished run in the tree is refused or dropped by the rules of :mod:`._bridge.run`
    (``abandon_unfinished`` drops it). Emits ``memory_list_succeeded`` (or ``_failed``) around
    the store listing and, once the run marker is written, ``memory_update_started``.
    """
    report = _prepare(spec, source, layout, backend, (max_jobs, budget_kb), environ, cwd, abandon_unfinished, progress)
    # memU's update starts where the run marker is written (or the launch says bridging run).
    if layout.run_marker.exists() or environ.get(selfskip.BRIDGING_RUN_ENV, "").strip():
        events.update_started(host=spec.id, session_env=spec.session_id_env)
    return report


def _prepare(
    spec: HostSpec,
    source: TranscriptSource,
    layout: Layout,
    backend: Callable[[], AgenticMemoryBackend],
    limits: tuple[int, int | None],
    environ: Mapping[str, str],
    cwd: Path | None,
    abandon_unfinished: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> PrepareReport:
    max_jobs, budget = _limits(*limits)
    if not source.exists():
        raise UsageError(
            f"no {spec.display} session log at {source.root()}; "
            "pass --session-dir with the folder that holds the host's sessions"
        )
    report = PrepareReport()
    stale = run.stale_after(environ)
    owner = run.owner_of(spec.session_id_env, environ)
    with host_lock(layout.lock, spec.id):
        unfinished = run.read(layout.run_marker)
        if unfinished is not None:
            note = run.may_replace(
                unfinished,
                owner=owner,
                abandon=abandon_unfinished,
                stale=stale,
                binary=spec.binary,
                jobs_dir=layout.jobs,
            )
            if note:
                report.notes.append(note)
        skip = _self_skip(spec, source, layout, environ, cwd or Path.cwd(), report)
        cursor = read_json(layout.cursor, {})
        stage = layout.base / ".sessions.staging"
        remove_tree(stage)
        ensure_private_dir(stage)
        try:
            found = scan.scan(
                source, cursor if isinstance(cursor, dict) else {}, skip, max_jobs, stage, budget, progress=progress
            )
            # Mirror before touching this run's files: if the store is unreachable, the previous
            # run's jobs, slices and staged cursor are all still as they were.
            with events.step("memory_list", host=spec.id, session_env=spec.session_id_env) as listed:
                mirrored = _mirror(layout, backend)
                listed["result_count"] = mirrored.listed
            report.kept_edits, report.skipped_names = mirrored.kept, len(mirrored.skipped)
            report.warnings.extend(mirrored.skipped)
            log.debug("mirror synced", base=str(layout.base), kept_edits=report.kept_edits)
            # From here the tree belongs to no run until this one's marker is written last: a
            # crash in between leaves nothing a late commit of the replaced run could promote.
            layout.run_marker.unlink(missing_ok=True)
            layout.cursor_pending.unlink(missing_ok=True)
            _place_slices(layout, stage, found.picked)
        finally:
            remove_tree(stage)
        report.redacted = found.redacted
        report.jobs = jobs.write_jobs(layout, len(found.picked), verify_command(spec, layout))
        layout.resource_log.unlink(missing_ok=True)
        write_json(layout.cursor_pending, found.cursor, compact=True)
        marker = run.new(report.jobs, owner, replacing=unfinished)
        run.write(layout.run_marker, marker)
        report.run = marker.run
        report.sessions = len(found.picked)
        report.remaining = found.remaining
        # A count the next run recomputes, read only to schedule sooner: atomic, not durable.
        write_json(layout.backlog, {"remaining": found.remaining, "sessions": report.sessions}, fsync=False)
        report.corrupt = found.corrupt
        report.unreadable = found.unreadable
        report.warnings.extend(_line_warnings(found))
        report.skipped_self = found.skipped_self
    log.debug("prepare staged", host=spec.id, sessions=report.sessions, jobs=report.jobs, jobs_dir=str(layout.jobs))
    return report


def _mirror(layout: Layout, backend: Callable[[], AgenticMemoryBackend]) -> sync.SyncResult:
    """Mirror the store into the tree, or, when neither the store (its stamp) nor the tree changed
    since a sync that changed nothing, skip opening the backend: the result would be the same."""
    where = mirror_scope()
    recorded = mirrorstamp.load(layout.mirror_stamp)
    # Read before listing: a write during it changes the next stamp (and the files' signature).
    stamp, files = mirrorstamp.current(where, recorded)
    if recorded is not None and stamp is not None and recorded["store"] == stamp:
        kept = sync.unchanged(layout, recorded["baseline"], recorded["listed"])
        if kept is not None:
            if files is not None and files != recorded.get("files"):  # the files vouch for it now
                mirrorstamp.record(layout.mirror_stamp, stamp, recorded["listed"], recorded["baseline"], files)
            return kept
    mirrored = sync.sync(layout, backend(), where=where)
    baseline = {rel: entry.to_json() for rel, entry in mirrored.baseline.items()}
    settled = mirrored.settled
    mirrorstamp.record(layout.mirror_stamp, stamp if settled else None, mirrored.listed, baseline, files)
    return mirrored


def _limits(max_jobs: int, budget_kb: int | None) -> tuple[int, int | None]:
    """``(session cap, byte budget or None)`` from ``--max-jobs`` and ``--budget-kb``.

    A given ``--max-jobs`` is a fixed count (memU's behaviour) unless a budget is given too; with
    neither, a run takes as many sessions as fit :data:`DEFAULT_BUDGET_KB`, at most
    :data:`AUTO_MAX_SESSIONS`.
    """
    if max_jobs < 0:
        raise UsageError(f"--max-jobs {max_jobs} is negative; pass 0 (as many as fit the budget) or more")
    if budget_kb is not None and budget_kb < 1:
        raise UsageError(f"--budget-kb {budget_kb} is not a positive number; pass 1 or more")
    if max_jobs == 0:
        return AUTO_MAX_SESSIONS, (budget_kb or DEFAULT_BUDGET_KB) * 1024
    return max_jobs, budget_kb * 1024 if budget_kb else None


NAMED_FILES = 5
"""Files named one by one in the warnings; more are summed up in one line."""


def _line_warnings(found: scan.ScanResult) -> list[str]:
    """One warning per session file with skipped lines or that could not be read, naming it."""
    out = [
        f"{path}: skipped {count} line(s) that are not JSON objects or are over the limits "
        "(too long or nested too deep); the rest of the session is mined"
        for path, count in found.corrupt_files[:NAMED_FILES]
    ]
    out += [f"{error}; skipped, retried next run" for error in found.errors[:NAMED_FILES]]
    more = max(0, len(found.corrupt_files) - NAMED_FILES) + max(0, len(found.errors) - NAMED_FILES)
    if more:
        out.append(f"{more} more session file(s) had skipped lines or could not be read (run with -v for each)")
    for path, count in found.corrupt_files[NAMED_FILES:]:
        log.debug("lines skipped", path=path, count=count)
    for error in found.errors[NAMED_FILES:]:
        log.debug("session unreadable", error=error)
    return out


def _place_slices(layout: Layout, stage: Path, picked: list[Mined]) -> None:
    """Replace ``sessions/`` with the staged slices, numbered oldest first."""
    jobs.clear(layout.sessions, "*.jsonl")
    ensure_private_dir(layout.sessions)
    for idx, mined in enumerate(picked, 1):
        os.replace(stage / f"{mined.stem}.jsonl", layout.sessions / f"{idx}.jsonl")
        os.replace(stage / f"{mined.stem}_full.jsonl", layout.sessions / f"{idx}_full.jsonl")


def commit(
    layout: Layout,
    backend: Callable[[], AgenticMemoryBackend],
    host: str,
    *,
    run_id: str | None = None,
    owner: str = "",
    binary: str = "",
    session_env: str = "",
) -> CommitReport:
    """Store what the agent changed in the mirror, forget what it deleted, promote the cursor.

    Only the prepared run's own commit promotes its cursor and clears its jobs: ``run_id`` (from
    ``--run``) or ``owner`` (the agent session) naming another run is refused before anything is
    written. With no run prepared, the mirror's edits are stored and nothing else moves. Emits
    ``memory_commit_succeeded`` (or ``_failed``) with the file, resource and session counts, and
    ``memory_update_succeeded`` when it closes a prepared run.
    """
    marker = read_json(layout.run_marker, None)  # read before the commit removes it
    sessions = sum(1 for p in layout.sessions.glob("*.jsonl") if not p.stem.endswith("_full"))
    with events.step("memory_commit", host=host, session_env=session_env) as properties:
        properties["session_count"] = sessions
        report = _commit(layout, backend, host, run_id, owner, binary or f"memu-{host}")
        counts = {"recall_file_count": len(report.files), "resource_count": report.resources, "session_count": sessions}
        properties.update(counts)
    if isinstance(marker, dict) and isinstance(marker.get("run"), str):  # a prepared run, now finished
        from memu_core._bridge import runlog

        stored, forgotten = len(report.files), len(report.forgotten)
        runlog.record(layout, run=marker["run"], sessions=sessions, stored=stored, forgotten=forgotten)
    bridging = bool(os.environ.get(selfskip.BRIDGING_RUN_ENV, "").strip())
    events.update_succeeded(marker, counts, bridging=bridging, host=host, session_env=session_env)
    return report


def _commit(
    layout: Layout,
    backend: Callable[[], AgenticMemoryBackend],
    host: str,
    run_id: str | None,
    owner: str,
    binary: str,
) -> CommitReport:
    # The commit's own modules: a prepare (the scheduled run's other half) never needs them.
    from memu_core._bridge import resources
    from memu_core._engine.actor import acting_as

    report = CommitReport()
    with host_lock(layout.lock, host), contextlib.ExitStack() as stack:
        marker = run.read(layout.run_marker)
        run.check_commit(marker, run_id=run_id, owner=owner, binary=binary)
        baseline = snapshot.load(layout.snapshot)
        if baseline is None:
            baseline = {}
        change = snapshot.diff(layout.base, baseline)  # raises before anything is written
        described = resources.read_described(layout.resources)
        log.debug(
            "mirror diffed", changed=len(change.changed), forgotten=len(change.forgotten), resources=len(described)
        )
        if change.changed or described or change.forgotten:
            be = backend()
            # The versions this run writes name it: `memu history` shows which run changed what.
            actor = f"{host} run {marker.run}" if marker is not None else f"{host} commit"
            stack.enter_context(acting_as(actor))
            if change.changed or described:
                be.commit_results(
                    recall_files=[doc.as_commit() for doc in change.changed.values()],
                    resource=described,
                )
            report.forgotten, unsupported = _forget(be, change.forgotten)
            if unsupported:
                report.warnings.append(unsupported)
        report.files = [(d.track, d.name) for d in change.changed.values()]
        report.resources = len(described)
        snapshot.save(layout.snapshot, snapshot.of(change.current))
        layout.resources.unlink(missing_ok=True)  # stored: describing it again would duplicate it
        if marker is not None:  # the run's own files; without a marker they belong to no run
            if layout.cursor_pending.exists():
                os.replace(layout.cursor_pending, layout.cursor)
                report.promoted = True
            jobs.clear(layout.jobs, "*.txt")
            jobs.clear(layout.sessions, "*.jsonl")
            layout.resource_log.unlink(missing_ok=True)
            layout.run_marker.unlink(missing_ok=True)
    log.debug(
        "commit stored",
        host=host,
        files=len(report.files),
        resources=report.resources,
        forgotten=len(report.forgotten),
        cursor_promoted=report.promoted,
    )
    return report


def _forget(be: AgenticMemoryBackend, deleted: list[tuple[str, str]]) -> tuple[list[tuple[str, str]], str]:
    """Forget the files deleted from the mirror; ``(forgotten, warning)``.

    A backend that cannot forget at all (memU's hosted API has no such route) leaves the rest
    stored: one warning, and the baseline still drops them, so the next run does not try again
    and fail the same way. Every other error fails the commit as before.
    """
    done: list[tuple[str, str]] = []
    for index, (track, name) in enumerate(deleted):
        try:
            be.forget(name, track=track)
        except Unsupported as exc:
            kept = ", ".join(f"{t}/{n}" for t, n in deleted[index:])
            return (
                done,
                f"{kept} deleted from the mirror but still stored, and will come back with the next prepare: {exc}",
            )
        done.append((track, name))
    return done, ""


def verify_resources(layout: Layout, host: str) -> int:
    """Turn the touched-file log into ``resources.md``; return how many paths were kept."""
    from memu_core._bridge import resources

    with host_lock(layout.lock, host):
        return resources.verify_log(layout.resource_log, layout.resources)
