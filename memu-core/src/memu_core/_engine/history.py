"""File history at the engine: list, read, restore, undo a forget, and hash-checked edits.

The stores keep the versions (``MemoryStore.file_history``); this layer resolves a name to its
track, turns missing versions into messages that say what exists, and writes restores through
the engine's ordinary commit, so a restored file is segmented and embedded like any other
(docs/adr/0023-file-history.md).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from memu_core._engine.actor import current_actor
from memu_core._engine.inputs import parse_scope
from memu_core.errors import Unsupported, UsageError
from memu_core.names import TRACKS, check_name, check_track, show
from memu_core.types import FileVersion, HistoryAction, Scope

if TYPE_CHECKING:
    from memu_core.interfaces import MemoryStore

DEFAULT_KEEP = 20
"""Past versions kept per file unless ``MEMU_HISTORY_KEEP`` says otherwise."""


class HistoryOps:
    """The history half of :class:`~memu_core._engine.engine.LocalEngine` (a mixin)."""

    store: MemoryStore
    default_scope: Scope
    commit_results: Callable[..., dict[str, Any]]

    # -- reading ------------------------------------------------------------------------------
    def history(
        self, name: str, track: str | None = None, *, user: Mapping[str, Any] | None = None
    ) -> list[FileVersion]:
        """Every kept version of ``name``, newest first (``[]`` when it has none).

        ``track`` ``None`` finds the name among memory and skill files; a name in both asks
        for ``--track``.
        """
        scope = parse_scope(user, self.default_scope)
        name = check_name(name)
        if track is not None:
            return self.store.file_history(scope, check_track(track), name)
        found = [(t, v) for t in TRACKS if (v := self.store.file_history(scope, t, name))]
        if len(found) > 1:
            raise UsageError(f"{show(name)} is both a memory and a skill file; pass --track memory or --track skill")
        return found[0][1] if found else []

    def version(
        self, name: str, version: int, track: str | None = None, *, user: Mapping[str, Any] | None = None
    ) -> FileVersion:
        """Version ``version`` of ``name``; a ``UsageError`` saying which versions are kept otherwise."""
        if isinstance(version, bool) or not isinstance(version, int) or version < 1:
            raise UsageError(f"a version is a whole number >= 1 (see `memu history {name}`), got {version!r}")
        versions = self.history(name, track, user=user)
        for item in versions:
            if item.version == version:
                return item
        raise UsageError(f"{show(name)} has no version {version}; {_kept(name, versions)}")

    # -- writing ------------------------------------------------------------------------------
    def restore(
        self,
        name: str,
        version: int,
        track: str | None = None,
        *,
        user: Mapping[str, Any] | None = None,
        actor: str | None = None,
    ) -> FileVersion:
        """Make version ``version`` the file's content again, as a new ``restore`` version.

        Restoring what is already stored writes nothing and returns the current version.
        """
        old = self.version(name, version, track, user=user)
        return self._write_back(old, "restore", user, actor)

    def undo_forget(
        self, name: str, track: str | None = None, *, user: Mapping[str, Any] | None = None, actor: str | None = None
    ) -> FileVersion:
        """Bring back a forgotten file from its tombstone, as a new ``restore`` version."""
        versions = self.history(name, track, user=user)
        if not versions:
            raise UsageError(f"{show(name)} has no history, so there is no forget to undo; check the name")
        newest = versions[0]
        if newest.current:
            raise UsageError(f"{newest.track}/{name} is stored (version {newest.version}); there is no forget to undo")
        if not newest.deleted:
            raise UsageError(f"{newest.track}/{name} was not forgotten last; restore a version with `memu restore`")
        return self._write_back(newest, "restore", user, actor)

    def edit(
        self,
        name: str,
        content: str,
        *,
        description: str = "",
        track: str = "memory",
        base_hash: str | None,
        user: Mapping[str, Any] | None = None,
        actor: str | None = None,
    ) -> FileVersion:
        """Store an edited file if nobody changed it since the editor read it.

        ``base_hash`` is the :attr:`FileVersion.hash` the edit started from (``None`` for a new
        file). When the stored hash differs, :class:`~memu_core.errors.ConflictError` is raised
        and nothing is written. An edit that changes nothing writes nothing.
        """
        item = {"name": name, "track": track, "description": description, "content": content}
        return self._commit_one(item, "edit", user, actor, {(track, name): base_hash})

    def _write_back(
        self, old: FileVersion, action: HistoryAction, user: Mapping[str, Any] | None, actor: str | None
    ) -> FileVersion:
        item = {"name": old.name, "track": old.track, "description": old.description, "content": old.content}
        return self._commit_one(item, action, user, actor, None)

    def _commit_one(
        self,
        item: dict[str, str],
        action: HistoryAction,
        user: Mapping[str, Any] | None,
        actor: str | None,
        expect: dict[tuple[str, str], str | None] | None,
    ) -> FileVersion:
        result = self.commit_results(
            recall_files=[item], user=user, action=action, actor=actor or current_actor(), expect_hashes=expect
        )
        stored = result["recall_files"][0]
        scope = parse_scope(user, self.default_scope)
        try:
            versions = self.store.file_history(scope, stored["track"], stored["name"])
        except Unsupported:
            versions = []
        if versions and versions[0].current:
            return versions[0]
        # A store without history: the file as stored, numbered by its revision.
        files = self.store.get_files(scope, [(stored["track"], stored["name"])])
        rf = files[(stored["track"], stored["name"])].file
        return FileVersion(
            version=rf.revision,
            scope=rf.scope,
            track=rf.track,
            name=rf.name,
            action=action,
            actor=actor or current_actor(),
            created_at=rf.updated_at,
            description=rf.description,
            content=rf.content,
            hash=rf.content_hash,
            current=True,
        )


def _kept(name: str, versions: list[FileVersion]) -> str:
    if not versions:
        return "it has no kept versions (check the name, or it predates history)"
    numbers = sorted(v.version for v in versions)
    return f"kept are {', '.join(map(str, numbers))} (see `memu history {name}`)"
