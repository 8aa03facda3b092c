"""What the pages show and change, read from the local engine within one session's grant.

Every call takes the :class:`~memu_core._ui.gate.Grant` of the session, so a page behind
memu-server's keys can never read or write another user's files. The engine does the work
(history, restore, hash-checked edits: docs/adr/0023-file-history.md); this module only shapes
it for pages and keeps the engine's import out of the page code.
"""

from __future__ import annotations

import difflib
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from memu_core import _markdown
from memu_core.errors import UsageError
from memu_core.names import check_recall_files

if TYPE_CHECKING:
    from memu_core._engine.engine import LocalEngine
    from memu_core._ui.gate import Grant
    from memu_core.types import FileVersion

ACTOR = "memu ui"
"""The actor the page's writes are stamped with (shown in every file's history)."""
WARM_WAIT = 300.0
"""Seconds a search waits for the model the page is loading (then it loads its own)."""
LIST_PAGE = 200
"""Files per page of the listing."""
EDIT_KEYS = frozenset({"name", "description", "track", "version"})
"""Frontmatter keys an edit may hold: ``memu edit``'s (``version`` is ignored here: the form
carries the content hash it was opened with)."""
RECENT_LIMIT = 2000
"""Versions read to assemble the bridging runs and the host filter (newest first)."""


@dataclass(frozen=True, slots=True)
class FileKey:
    """Which file a page is about: its scope, track and name."""

    track: str
    name: str
    user_id: str = "default"
    agent_id: str = "default"

    def user(self) -> dict[str, str]:
        """The engine's ``user`` mapping for this file's scope."""
        return {"user_id": self.user_id, "agent_id": self.agent_id}


@dataclass(frozen=True, slots=True)
class Run:
    """What one writer (a bridging run, or a command) changed, assembled from file history."""

    actor: str
    host: str
    when: str
    added: list[str]
    changed: list[str]
    forgotten: list[str]
    sessions: int | None = None
    """Sessions the run mined (from the host's run log; ``None`` when not recorded)."""


def host_of(actor: str) -> str:
    """The host id in a host's actor (``claude-code run 2026…`` or ``codex commit``), else ``""``."""
    head, _, rest = actor.partition(" ")
    if head == "memu" or not head:  # memu's own commands: `memu edit`, `memu import`…
        return ""
    return head if rest == "commit" or rest.startswith("run ") else ""


class Library:
    """The engine seen through one grant."""

    def __init__(self, engine: LocalEngine) -> None:
        self.engine = engine
        self.warm = threading.Event()
        """Set once the embedder is built: a search waits for the warm-up rather than build a
        second model beside it. Set from the start unless a warm-up is running."""
        self.warm.set()

    # -- reading -------------------------------------------------------------------------------
    def files(
        self, grant: Grant, *, track: str = "", host: str = "", text: str = "", after: str = ""
    ) -> tuple[list[dict[str, Any]], str]:
        """One page of the grant's files (of ``track``, last written by ``host``, ``text`` in the
        name or description), in the store's order after the cursor ``after``: at most
        :data:`LIST_PAGE` files, and the cursor of the next page (``""`` at the end)."""
        from memu_core._engine.cursor import encode_cursor

        wanted = text.casefold()
        by_host = self._current_actors(grant) if host else {}
        out: list[dict[str, Any]] = []
        cursor: str | None = after or None
        while True:
            page = self.engine.list_all_recall_files(grant.where() or None, cursor=cursor, limit=200)
            for item in page["recall_files"]:
                if len(out) == LIST_PAGE:  # the page is full and more files follow
                    last = out[-1]
                    return out, encode_cursor((last["track"], last["name"], last["id"]))
                if track and item["track"] != track:
                    continue
                if wanted and wanted not in f"{item['name']} {item.get('description') or ''}".casefold():
                    continue
                if host and host_of(by_host.get(_key(item), "")) != host:
                    continue
                out.append(item)
            cursor = page.get("next_cursor")
            if not cursor:
                return out, ""

    def hosts(self, grant: Grant) -> list[tuple[str, int]]:
        """Hosts whose bridging runs last wrote files here, with how many files each."""
        counts: dict[str, int] = {}
        for _track, actor, count in self.engine.store.stats(grant.where()).files:
            host = host_of(actor)
            if host:
                counts[host] = counts.get(host, 0) + count
        return sorted(counts.items())

    def history(self, grant: Grant, key: FileKey) -> list[FileVersion]:
        """Every kept version of the file, newest first."""
        self._allowed(grant, key)
        return self.engine.history(key.name, key.track, user=key.user())

    def version(self, grant: Grant, key: FileKey, number: int) -> FileVersion:
        """One version of the file (a ``UsageError`` naming the kept ones when absent)."""
        self._allowed(grant, key)
        return self.engine.version(key.name, number, key.track, user=key.user())

    def search(self, grant: Grant, query: str, *, mode: str, track: str = "", top_k: int = 20) -> dict[str, Any]:
        """The engine's retrieve with each line's ``why``; ``mode`` ``lexical`` (full text) or
        ``hybrid`` (falls back to lexical when the store holds no vectors)."""
        self.warm.wait(WARM_WAIT)
        return self.engine.progressive_retrieve(
            query, grant.where() or None, top_k=top_k, tracks=[track] if track else None, mode=mode, explain=True
        )

    def runs(self, grant: Grant) -> list[Run]:
        """Each writer's changes, newest first: one row per bridging run or command.

        Files come from history (who wrote which version); the sessions a run mined from the
        hosts' run logs on this machine, shown only to a session over the whole store (the logs
        are not scoped by user).
        """
        versions = self.engine.store.recent_versions(grant.where(), RECENT_LIMIT)
        grouped: dict[str, list[FileVersion]] = {}
        for version in versions:
            grouped.setdefault(version.actor, []).append(version)
        logged = {f"{e.get('host')} run {e['run']}": e for e in self._run_log()} if not grant.where() else {}
        runs = []
        for actor, items in grouped.items():
            added = sorted({f"{v.track}/{v.name}" for v in items if v.version == 1 and not v.deleted})
            forgotten = sorted({f"{v.track}/{v.name}" for v in items if v.deleted})
            changed = sorted({f"{v.track}/{v.name}" for v in items if v.version > 1 and not v.deleted} - set(added))
            when = max(v.created_at for v in items).strftime("%Y-%m-%dT%H:%M:%SZ")
            entry = logged.pop(actor, None)
            sessions = int(entry["sessions"]) if entry and isinstance(entry.get("sessions"), int) else None
            runs.append(Run(actor, host_of(actor), when, added, changed, forgotten, sessions))
        for actor, entry in logged.items():  # runs that stored nothing still mined sessions
            sessions = entry.get("sessions") if isinstance(entry.get("sessions"), int) else None
            runs.append(Run(actor, str(entry.get("host", "")), str(entry.get("at", "")), [], [], [], sessions))
        return sorted(runs, key=lambda r: r.when, reverse=True)

    @staticmethod
    def _run_log() -> list[dict[str, Any]]:
        from memu_core import _layout
        from memu_core._bridge import runlog

        return runlog.read(runlog.all_logs(_layout.hosts_root()))

    # -- writing -------------------------------------------------------------------------------
    def edit(self, grant: Grant, key: FileKey, text: str, base_hash: str) -> FileVersion:
        """Store the edited Markdown (frontmatter and body) if the file still has ``base_hash``.

        The rules are ``memu edit``'s: the text goes through the one Markdown parser, keeps its
        frontmatter with only ``name``, ``description``, ``track`` (and ``version``), keeps its
        name and track, and has a body. A conflict raises :class:`memu_core.errors.ConflictError`.
        """
        self._allowed(grant, key)
        where = f"{key.track}/{key.name}"
        doc = _markdown.parse(text, source=where)
        if not doc.meta:
            raise UsageError(f"{where}: the frontmatter block is gone; start with '---', name/description lines, '---'")
        unknown = sorted(set(doc.meta) - EDIT_KEYS)
        if unknown:
            raise UsageError(f"{where}: unknown frontmatter key(s) {', '.join(unknown)}; keep only name, description")
        if doc.meta.get("name", key.name) != key.name:
            raise UsageError(
                f"{where}: the name was changed to {doc.meta['name']!r}; set it back to {key.name!r} "
                "(to rename, create a file under the new name and forget this one)"
            )
        if doc.meta.get("track", key.track) != key.track:
            raise UsageError(f"{where}: the track was changed to {doc.meta['track']!r}; set it back to {key.track!r}")
        if not doc.body.strip():
            raise UsageError(f"{where}: the body is empty; write the content, or forget the file")
        description = doc.meta.get("description", "").strip()
        check_recall_files([{"name": key.name, "track": key.track, "description": description, "content": doc.body}])
        return self.engine.edit(
            key.name,
            doc.body,
            description=description,
            track=key.track,
            base_hash=base_hash or None,
            user=key.user(),
            actor=ACTOR,
        )

    def forget(self, grant: Grant, key: FileKey) -> bool:
        """Forget the file (history keeps a tombstone, so it can be undone); ``False`` if absent."""
        self._allowed(grant, key)
        return bool(self.engine.forget(key.name, track=key.track, user=key.user(), actor=ACTOR)["forgotten"])

    def undo_forget(self, grant: Grant, key: FileKey) -> FileVersion:
        """Bring a forgotten file back from its tombstone."""
        self._allowed(grant, key)
        return self.engine.undo_forget(key.name, key.track, user=key.user(), actor=ACTOR)

    def restore(self, grant: Grant, key: FileKey, number: int) -> FileVersion:
        """Make version ``number`` the file's content again."""
        self._allowed(grant, key)
        return self.engine.restore(key.name, number, key.track, user=key.user(), actor=ACTOR)

    # -- helpers -------------------------------------------------------------------------------
    @staticmethod
    def _allowed(grant: Grant, key: FileKey) -> None:
        if (grant.user_id and key.user_id != grant.user_id) or (grant.agent_id and key.agent_id != grant.agent_id):
            raise UsageError(f"{key.track}/{key.name} belongs to another scope than this session's key")

    def _current_actors(self, grant: Grant) -> dict[tuple[str, str, str, str], str]:
        return {
            (v.scope.user_id, v.scope.agent_id, v.track, v.name): v.actor
            for v in self.engine.store.recent_versions(grant.where(), RECENT_LIMIT * 10)
            if v.current
        }


def _key(item: Mapping[str, Any]) -> tuple[str, str, str, str]:
    return (item.get("user_id", "default"), item.get("agent_id", "default"), item["track"], item["name"])


def markdown_of(version: FileVersion) -> str:
    """The version as the Markdown file the mirror and ``memu show`` write."""
    return _markdown.render({"name": version.name, "description": version.description}, version.content)


def unified_diff(old: FileVersion | None, new: FileVersion) -> list[str]:
    """``old`` → ``new`` as unified diff lines of their Markdown (``old`` ``None``: all added)."""
    before = markdown_of(old).splitlines() if old is not None else []
    label_old = f"v{old.version}" if old is not None else "(none)"
    return list(difflib.unified_diff(before, markdown_of(new).splitlines(), label_old, f"v{new.version}", lineterm=""))
