"""memu as a Python library: :func:`open_memory` and the :class:`Memory` it returns.

The same composition root and settings as the ``memu`` command build the backend, so a
program and the CLI on one machine share one store in one embedding space: with no arguments
:func:`open_memory` opens what ``memu retrieve`` would (``MEMU_DB``, ``MEMU_EMBED_PROVIDER``,
``~/.memu/config.env``…); keyword arguments override single settings for this object only.

Results are typed, frozen dataclasses. The work happens in this process (the warm server is
the CLI's shortcut, not the library's): the first hybrid retrieve or commit loads the
embedding model here. Nothing heavy is imported until :func:`open_memory` is called.
"""

from __future__ import annotations

import datetime as _dt
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from types import TracebackType

    from memu_core._engine.history import HistoryOps
    from memu_core.interfaces import AgenticMemoryBackend
    from memu_core.types import FileVersion

__all__ = [
    "CommitResult",
    "FileHit",
    "Memory",
    "NewFile",
    "NewResource",
    "RecallFileRecord",
    "ResourceHit",
    "ResourceRecord",
    "Retrieval",
    "SegmentHit",
    "open_memory",
]


# -- what goes in ------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class NewFile:
    """A Markdown memory or skill file to commit; (track, name) is its key within the scope."""

    name: str
    content: str
    description: str = ""
    track: str = "memory"

    def as_payload(self) -> dict[str, str]:
        """The file as an item of memU's ``recall_files`` list."""
        return {"name": self.name, "description": self.description, "content": self.content, "track": self.track}


@dataclass(frozen=True, slots=True)
class NewResource:
    """A workspace file (by path) and what it holds, to commit beside the recall files."""

    path: str
    description: str | None = None

    def as_payload(self) -> dict[str, str | None]:
        """The resource as an item of memU's ``resource`` list."""
        return {"path": self.path, "description": self.description}


# -- what comes out ----------------------------------------------------------------------------
def _time(value: Any) -> _dt.datetime | None:
    return _dt.datetime.fromisoformat(value) if isinstance(value, str) and value else None


@dataclass(frozen=True, slots=True)
class RecallFileRecord:
    """A stored memory or skill file."""

    id: str
    name: str
    track: str
    description: str
    content: str
    user_id: str
    agent_id: str
    created_at: _dt.datetime | None
    updated_at: _dt.datetime | None

    @classmethod
    def from_json(cls, item: Mapping[str, Any]) -> RecallFileRecord:
        """From memU's file dict (what the CLI prints)."""
        return cls(
            id=str(item.get("id", "")),
            name=str(item["name"]),
            track=str(item.get("track", "memory")),
            description=str(item.get("description") or ""),
            content=str(item.get("content") or ""),
            user_id=str(item.get("user_id", "default")),
            agent_id=str(item.get("agent_id", "default")),
            created_at=_time(item.get("created_at")),
            updated_at=_time(item.get("updated_at")),
        )


@dataclass(frozen=True, slots=True)
class ResourceRecord:
    """A stored workspace resource."""

    id: str
    path: str
    description: str | None
    user_id: str
    agent_id: str

    @classmethod
    def from_json(cls, item: Mapping[str, Any]) -> ResourceRecord:
        """From memU's resource dict (``local_path``/``url`` carry the path, ``caption`` the description)."""
        return cls(
            id=str(item.get("id", "")),
            path=str(item.get("local_path") or item.get("url") or ""),
            description=item.get("caption"),
            user_id=str(item.get("user_id", "default")),
            agent_id=str(item.get("agent_id", "default")),
        )


@dataclass(frozen=True, slots=True)
class SegmentHit:
    """One matching line (or a file's ``name: description`` header) and its score."""

    text: str
    score: float
    kind: str
    track: str
    file_id: str
    id: str


@dataclass(frozen=True, slots=True)
class FileHit:
    """A file that holds matching segments, with the best score among them."""

    file: RecallFileRecord
    score: float


@dataclass(frozen=True, slots=True)
class ResourceHit:
    """A matching workspace resource and its score."""

    resource: ResourceRecord
    score: float


@dataclass(frozen=True, slots=True)
class Retrieval:
    """What :meth:`Memory.retrieve` found, best first in each list."""

    segments: list[SegmentHit]
    files: list[FileHit]
    resources: list[ResourceHit]
    mode: str
    """``hybrid`` (lexical and dense) or ``lexical`` (no embedder configured)."""
    raw: dict[str, Any] = field(repr=False)
    """The same answer as memU's JSON, exactly as ``memu retrieve`` would print it."""

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Retrieval:
        """From the backend's ``progressive_retrieve`` answer."""
        return cls(
            segments=[
                SegmentHit(
                    text=str(s["text"]),
                    score=float(s["score"]),
                    kind=str(s.get("kind", "line")),
                    track=str(s.get("track", "memory")),
                    file_id=str(s.get("recall_file_id", "")),
                    id=str(s.get("id", "")),
                )
                for s in data.get("segments", [])
            ],
            files=[FileHit(RecallFileRecord.from_json(f), float(f["score"])) for f in data.get("files", [])],
            resources=[ResourceHit(ResourceRecord.from_json(r), float(r["score"])) for r in data.get("resources", [])],
            mode=str(data.get("mode", "")),
            raw=dict(data),
        )


@dataclass(frozen=True, slots=True)
class CommitResult:
    """What :meth:`Memory.commit` stored. Unchanged files are listed too but cost no write."""

    files: list[RecallFileRecord]
    resources: list[ResourceRecord]
    files_written: int | None
    """How many files were actually written (``None`` when the backend does not say)."""
    texts_embedded: int | None
    """How many new texts were embedded (``0`` when lexical-only or nothing changed)."""


# -- the entry point ---------------------------------------------------------------------------
class Memory:
    """An open memu store. Build it with :func:`open_memory`; close it (or use ``with``) when done."""

    def __init__(self, backend: AgenticMemoryBackend) -> None:
        self.backend = backend
        """The :class:`~memu_core.interfaces.AgenticMemoryBackend` underneath (memU's dict API)."""

    def commit(
        self,
        files: Iterable[NewFile | Mapping[str, Any]] = (),
        resources: Iterable[NewResource | Mapping[str, Any]] = (),
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> CommitResult:
        """Store (create or replace) recall files and resources in one transaction.

        Names are checked by the rules every memu door applies; a bad one raises
        :class:`memu_core.errors.UsageError` before anything is written.
        """
        from memu_core.names import check_recall_files

        payload = [f.as_payload() if isinstance(f, NewFile) else dict(f) for f in files]
        items = [r.as_payload() if isinstance(r, NewResource) else dict(r) for r in resources]
        check_recall_files(payload)
        result = self.backend.commit_results(
            recall_files=payload, resource=items, user=_where(user_id, agent_id) or None
        )
        stats = result.get("stats") or {}
        return CommitResult(
            files=[RecallFileRecord.from_json(f) for f in result.get("recall_files", [])],
            resources=[ResourceRecord.from_json(r) for r in result.get("resources", [])],
            files_written=stats.get("files_written"),
            texts_embedded=stats.get("texts_embedded"),
        )

    def retrieve(
        self,
        query: str,
        *,
        top_k: int | None = None,
        tracks: Sequence[str] | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> Retrieval:
        """Search memory as ``memu retrieve`` does (hybrid when an embedder is configured)."""
        where = _where(user_id, agent_id)
        return Retrieval.from_json(
            self.backend.progressive_retrieve(
                query, where or None, top_k=top_k, tracks=list(tracks) if tracks else None
            )
        )

    def iter_files(self, *, user_id: str | None = None, agent_id: str | None = None) -> Iterator[RecallFileRecord]:
        """Every stored file, page by page (follows the cursor)."""
        where = _where(user_id, agent_id) or None
        cursor: str | None = None
        while True:
            page = self.backend.list_all_recall_files(where, cursor=cursor, limit=200)
            yield from (RecallFileRecord.from_json(item) for item in page["recall_files"])
            cursor = page.get("next_cursor")
            if not cursor:
                return

    def list_files(
        self, *, track: str | None = None, user_id: str | None = None, agent_id: str | None = None
    ) -> list[RecallFileRecord]:
        """Every stored file (of one ``track`` when given), as ``memu list-files`` lists them."""
        return [f for f in self.iter_files(user_id=user_id, agent_id=agent_id) if track is None or f.track == track]

    def forget(
        self, name: str, *, track: str = "memory", user_id: str | None = None, agent_id: str | None = None
    ) -> RecallFileRecord | None:
        """Delete one file and everything indexed from it; the deleted file, or ``None`` if absent."""
        result = self.backend.forget(name, track=track, user=_where(user_id, agent_id) or None)
        gone = result.get("forgotten") or []
        return RecallFileRecord.from_json(gone[0]) if gone else None

    # -- history (docs/adr/0023-file-history.md) -------------------------------------------------
    def history(
        self, name: str, track: str | None = None, *, user_id: str | None = None, agent_id: str | None = None
    ) -> list[FileVersion]:
        """Every kept version of a file, newest first (the stored one first); ``[]`` when none.

        ``track`` ``None`` looks among memory and skill files. Needs the local engine (a
        ``cloud`` backend raises :class:`memu_core.errors.Unsupported`).
        """
        return self._history().history(name, track, user=_where(user_id, agent_id) or None)

    def version(
        self,
        name: str,
        version: int,
        track: str | None = None,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> FileVersion:
        """One version of a file; :class:`memu_core.errors.UsageError` naming the kept ones if absent."""
        return self._history().version(name, version, track, user=_where(user_id, agent_id) or None)

    def restore(
        self,
        name: str,
        version: int,
        track: str | None = None,
        *,
        actor: str | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> FileVersion:
        """Store version ``version``'s content again (a new ``restore`` version); returns it."""
        return self._history().restore(name, version, track, user=_where(user_id, agent_id) or None, actor=actor)

    def undo_forget(
        self,
        name: str,
        track: str | None = None,
        *,
        actor: str | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> FileVersion:
        """Bring back a forgotten file from its tombstone; returns the restored version."""
        return self._history().undo_forget(name, track, user=_where(user_id, agent_id) or None, actor=actor)

    def edit(
        self,
        name: str,
        content: str,
        *,
        base_hash: str | None,
        description: str = "",
        track: str = "memory",
        actor: str | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> FileVersion:
        """Store an edit made from the version whose hash is ``base_hash`` (``None``: a new file).

        If the stored file's hash differs (someone else wrote it meanwhile),
        :class:`memu_core.errors.ConflictError` is raised and nothing is written.
        """
        return self._history().edit(
            name,
            content,
            description=description,
            track=track,
            base_hash=base_hash,
            user=_where(user_id, agent_id) or None,
            actor=actor,
        )

    def _history(self) -> HistoryOps:
        from memu_core._engine.history import HistoryOps
        from memu_core.errors import Unsupported

        if not isinstance(self.backend, HistoryOps):
            raise Unsupported(
                f"file history needs the local engine, but the {self.backend.name!r} backend is configured; "
                "set MEMU_MEMORY_MODE=local (a memu-server keeps history on its own store)"
            )
        return self.backend

    def close(self) -> None:
        """Release the store (or the HTTP client in cloud mode)."""
        self.backend.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()


def _where(user_id: str | None, agent_id: str | None) -> dict[str, str]:
    return {k: v for k, v in (("user_id", user_id), ("agent_id", agent_id)) if v}


def open_memory(db: str | os.PathLike[str] | None = None, **settings: Any) -> Memory:
    """Open the store memu is configured with, the way the ``memu`` command opens it.

    ``db`` and the other keywords are :class:`memu_core.settings.Settings` fields
    (``embed_provider="none"``, ``user_id="me"``, ``memory_mode="cloud"``…) and win over the
    environment and ``~/.memu/config.env`` for this object only. A bad value raises
    :class:`memu_core.errors.ConfigError` with the fix.
    """
    from memu_core._compose import open_backend
    from memu_core.settings import Settings, load_settings

    unknown = sorted(set(settings) - set(Settings.model_fields))
    if unknown:
        raise TypeError(f"open_memory() got unknown setting(s) {', '.join(unknown)}; see memu_core.settings.Settings")
    overrides = {key: value for key, value in settings.items() if value is not None}
    if db is not None:
        overrides["db"] = os.fspath(db)
    return Memory(open_backend(load_settings(**overrides)))
