"""The interfaces a plugin implements. Each has a contract-test base class in ``memu_core.testing``.

Registration hooks return the *classes* below (each with a ``name``); memu builds instances
later, from validated settings. Nothing here imports a heavy library.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from memu_core._jsonl import (
    MAX_LINE_CHARS,
    cheap_timestamp,
    jsonl_files,
    load_line,
    parse_object,
    relative_key,
    relative_text,
)
from memu_core._transcript_types import KeptRead, Record, RecordKind, SelfSessions, SessionFile, TranscriptRead
from memu_core.errors import TranscriptReadError, Unsupported

if TYPE_CHECKING:
    # Annotations only: a transcript source's path (a steady ``prepare``) then never builds the
    # store and engine dataclasses (ADR 0026's third amendment).
    from memu_core.types import (
        ChangeSet,
        Event,
        FileVersion,
        Fingerprint,
        HistoryNote,
        Hit,
        RecallFile,
        Resource,
        Scope,
        Segment,
        StoredFile,
        StoreStats,
        Where,
    )

__all__ = [
    "AgenticMemoryBackend",
    "Embedder",
    "EventSink",
    "MemoryStore",
    "TemplateResolver",
    "TranscriptSource",
]


class Embedder(ABC):
    """Turns texts into vectors in one stable embedding space.

    Implementations import their SDK inside ``__init__`` or ``embed``, never at module top.
    """

    name: ClassVar[str]
    """The value of ``MEMU_EMBED_PROVIDER`` that selects this embedder (``local``, ``litellm``…)."""

    @classmethod
    @abstractmethod
    def from_settings(cls, settings: Any) -> Embedder:
        """Build an instance from :class:`memu_core.settings.Settings`; raise ``ConfigError``
        naming the variable to set when something required is missing."""

    @property
    @abstractmethod
    def fingerprint(self) -> Fingerprint:
        """(provider, model, dimension) of the vectors this embedder returns."""

    @abstractmethod
    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, in order, each of ``fingerprint.dimension`` floats and L2-normalised.

        An empty input returns ``[]`` without any call. Failures raise ``EmbeddingError``.
        """

    def prepare_to_serve(self) -> None:  # noqa: B027 - optional hook, nothing to prepare by default
        """Get ready to embed one query at a time for a long time: a warm server calls this once,
        before its first request.

        The default does nothing. An embedder whose fastest per-call set-up costs more to build
        than a one-off process should pay (the local model's pre-packed weights) builds it here.
        Failures raise ``EmbeddingError``; the server then carries on without it.
        """


class MemoryStore(ABC):
    """Persistence and raw search under the local engine.

    The engine plans, embeds and fuses; a store keeps rows and answers ranked lists. Every method
    that writes is one transaction: all of it or none of it.
    """

    name: ClassVar[str]
    """The store's registry key (``sqlite``, ``memory``, ``postgres``)."""

    url_schemes: ClassVar[tuple[str, ...]] = ()
    """``MEMU_DB`` prefixes this store claims (``postgresql://``…). A bare path means ``sqlite``."""

    @classmethod
    @abstractmethod
    def open(cls, url: str) -> MemoryStore:
        """Open (and create or migrate when needed) the store at ``url``."""

    # -- metadata -------------------------------------------------------------------------
    @abstractmethod
    def fingerprint(self) -> Fingerprint | None:
        """The embedding fingerprint recorded with the store's first vector, or ``None``."""

    @abstractmethod
    def generation(self) -> int:
        """A number that grows with every committed write (lets caches know they are stale)."""

    # -- planning reads -------------------------------------------------------------------
    @abstractmethod
    def get_files(self, scope: Scope, keys: Iterable[tuple[str, str]]) -> dict[tuple[str, str], StoredFile]:
        """The stored files among ``(track, name)`` keys in exactly ``scope``."""

    @abstractmethod
    def get_resources(self, scope: Scope, paths: Iterable[str]) -> dict[str, Resource]:
        """The stored resources among ``paths`` in exactly ``scope``."""

    # -- writes ---------------------------------------------------------------------------
    @abstractmethod
    def apply(self, changes: ChangeSet) -> None:
        """Write a whole commit in one transaction.

        Raises ``WriteConflict`` when a file's revision moved since planning (nothing written),
        and ``FingerprintMismatch`` when ``changes.fingerprint`` differs from the stored one.
        Unchanged segment texts keep their rows and vectors.
        """

    @abstractmethod
    def delete_file(self, scope: Scope, track: str, name: str, *, note: HistoryNote | None = None) -> RecallFile | None:
        """Delete a file and its segments; return what was deleted, ``None`` if absent.

        A store that keeps history and gets a ``note`` with ``keep > 0`` keeps the file as a past
        version and adds a ``forget`` tombstone (see :meth:`file_history`); others ignore it.
        """

    # -- history (docs/adr/0023-file-history.md) --------------------------------------------
    def file_history(self, scope: Scope, track: str, name: str) -> list[FileVersion]:
        """Every kept version of ``track/name`` in ``scope``, newest first; the stored file, if
        any, first (``current=True``). A store without history raises ``Unsupported``."""
        raise Unsupported(f"the {self.name} store keeps no file history; use the sqlite or postgres store")

    def file_version(self, scope: Scope, track: str, name: str, version: int) -> FileVersion | None:
        """Version ``version`` of ``track/name`` (``None`` when never kept or pruned)."""
        raise Unsupported(f"the {self.name} store keeps no file history; use the sqlite or postgres store")

    def recent_versions(self, where: Where, limit: int) -> list[FileVersion]:
        """The newest ``limit`` versions across every file matching ``where``, newest first."""
        raise Unsupported(f"the {self.name} store keeps no file history; use the sqlite or postgres store")

    def stats(self, where: Where) -> StoreStats:
        """File, segment, vector and version counts and the size on disk, for ``memu stats``."""
        raise Unsupported(f"the {self.name} store cannot report statistics")

    # -- listing and search ---------------------------------------------------------------
    @abstractmethod
    def list_files(
        self, where: Where, after: tuple[str, str, str] | None, limit: int
    ) -> tuple[list[RecallFile], tuple[str, str, str] | None]:
        """One keyset page ordered by ``(track, name, id)`` strictly after ``after``."""

    @abstractmethod
    def search_segments_lexical(self, query: str, where: Where, tracks: Sequence[str] | None, limit: int) -> list[Hit]:
        """Best-first segment ids for a free-text query (BM25-style); ``[]`` when nothing matches."""

    @abstractmethod
    def search_segments_dense(
        self, vector: Sequence[float], where: Where, tracks: Sequence[str] | None, limit: int
    ) -> list[Hit]:
        """Best-first segment ids by cosine similarity; segments without vectors never appear."""

    @abstractmethod
    def search_resources_lexical(self, query: str, where: Where, limit: int) -> list[Hit]:
        """Best-first resource ids for a free-text query over path and description."""

    @abstractmethod
    def search_resources_dense(self, vector: Sequence[float], where: Where, limit: int) -> list[Hit]:
        """Best-first resource ids by cosine similarity of their description vectors."""

    @abstractmethod
    def fetch_segments(self, ids: Sequence[str]) -> dict[str, Segment]:
        """Segments by id (missing ids are absent from the result)."""

    @abstractmethod
    def fetch_files(self, ids: Sequence[str]) -> dict[str, RecallFile]:
        """Files by id."""

    @abstractmethod
    def fetch_resources(self, ids: Sequence[str]) -> dict[str, Resource]:
        """Resources by id."""

    # -- re-embedding (``memu reindex``) --------------------------------------------------
    @abstractmethod
    def texts_to_embed(self, fingerprint: Fingerprint, limit: int) -> list[tuple[str, str, str]]:
        """Up to ``limit`` ``(kind, id, text)`` rows (kind ``segment`` or ``resource``) whose vector
        is missing or was not made under ``fingerprint``."""

    @abstractmethod
    def store_vectors(self, fingerprint: Fingerprint, rows: Sequence[tuple[str, str, list[float]]]) -> None:
        """Stage ``(kind, id, vector)`` rows for ``fingerprint`` in one transaction. Staged vectors
        are not searched until :meth:`switch_fingerprint`."""

    @abstractmethod
    def switch_fingerprint(self, fingerprint: Fingerprint) -> None:
        """Atomically make the staged vectors of ``fingerprint`` the live ones and record it."""

    @classmethod
    def upgrade_schema(cls, url: str) -> str | None:
        """Migrate the schema at ``url`` to the newest revision and return it (``memu db upgrade``).

        Stores without migrations return ``None``.
        """
        return None

    @classmethod
    def schema_revision(cls, url: str) -> str | None:
        """The schema revision at ``url`` (``memu db current``), ``None`` when not created yet."""
        return None

    def close(self) -> None:  # noqa: B027 - optional hook, nothing to release by default
        """Release connections and files."""


class AgenticMemoryBackend(ABC):
    """memU's three operations (plus ``forget``): the surface every host and the server call.

    The local engine and the cloud client implement it; results are JSON-ready dicts in memU's
    shapes so agent instructions written for memU keep working.
    """

    name: ClassVar[str]

    @classmethod
    @abstractmethod
    def from_settings(cls, settings: Any) -> AgenticMemoryBackend:
        """Build the backend from :class:`memu_core.settings.Settings` (``MEMU_MEMORY_MODE`` picks it)."""

    @abstractmethod
    def list_all_recall_files(
        self, where: Mapping[str, Any] | None = None, *, cursor: str | None = None, limit: int = 50
    ) -> dict[str, Any]:
        """One page ``{"recall_files": [...], "next_cursor": str | None}``; ``limit >= 1``."""

    @abstractmethod
    def progressive_retrieve(
        self,
        query: str,
        where: Mapping[str, Any] | None = None,
        *,
        top_k: int | None = None,
        tracks: Sequence[str] | None = None,
    ) -> dict[str, Any]:
        """``{"segments", "files", "resources", "mode", ...}``, each hit carrying a ``score``."""

    @abstractmethod
    def commit_results(
        self,
        *,
        recall_files: Sequence[Mapping[str, Any]] | None = None,
        resource: Sequence[Mapping[str, Any]] | None = None,
        user: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Store files and resources; ``{"recall_files": [...], "resources": [...]}``."""

    @abstractmethod
    def forget(self, name: str, *, track: str = "memory", user: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Delete one file and its segments; ``{"forgotten": [file dict]}`` (empty when absent)."""

    def close(self) -> None:  # noqa: B027 - optional
        """Release the store or the HTTP client."""


class EventSink(ABC):
    """Receives lifecycle events (``init``, ``prepare``, ``commit``, ``retrieve``…).

    Registered through ``memu_register_event_sinks``; memu builds one instance per process with
    no argument and calls :meth:`emit` after each step. A sink that raises is skipped.
    """

    name: ClassVar[str]

    @abstractmethod
    def emit(self, event: Event) -> None:
        """Record one event. Called synchronously on the command's path; keep it cheap (spool,
        do not send) and never raise."""

    def flush(self) -> tuple[int, int]:
        """Deliver what :meth:`emit` kept, bounded by timeouts; return ``(accepted, rejected)``.

        Called where memU flushes: the end of ``prepare``, a successful ``commit``, ``init``,
        ``docs install|uninstall``, the ``report`` verbs, and a failed command other than
        ``retrieve`` (never on the per-turn path). The default keeps nothing and sends nothing.
        """
        return (0, 0)


class TemplateResolver(ABC):
    """Finds a template by name: a job template (``memory-job``, ``skill-job``,
    ``resource-job``), the retrieval skill (``retrieval-skill``) or a host guide
    (``docs/<host>/INSTALL.md``…).

    Registered through ``memu_register_template_resolvers``; built with no argument. Every
    resolver is asked by ascending ``priority``; among the valid answers the newest version
    header (``<!-- memu-template <name> v<N> -->`` on the first line) wins, ties going to the
    one asked first. An answer without a header is version 0.
    """

    name: ClassVar[str]
    priority: ClassVar[int] = 100
    """Lower is asked first; memu-core's ``embedded`` resolver (1000) always answers."""

    @abstractmethod
    def resolve(self, name: str) -> str | None:
        """The text of template ``name``, or ``None`` to let the next resolver answer."""


class TranscriptSource(ABC):
    """Where a host keeps its sessions and how to read them.

    Subclasses set ``name`` and implement :meth:`default_root` and :meth:`classify_record`; the
    defaults read
    ``<root>/**/*.jsonl`` incrementally by byte offset.
    """

    name: ClassVar[str]
    """The host id this source belongs to (scopes cursors and working trees)."""

    def __init__(self, session_dir: str | Path | None = None) -> None:
        self._session_dir = Path(session_dir).expanduser() if session_dir else None

    # -- where ------------------------------------------------------------------------------
    @abstractmethod
    def default_root(self) -> Path:
        """The host's conventional session directory (used when no ``--session-dir`` is given)."""

    def root(self) -> Path:
        """The directory holding the raw logs."""
        return self._session_dir if self._session_dir is not None else self.default_root()

    def exists(self) -> bool:
        """Whether there is anything to mine at all (the ``prepare`` gate)."""
        return self.root().is_dir()

    def discover(self) -> list[SessionFile]:
        """Every session file, newest first by modification time.

        A file that vanishes between listing and ``stat`` is left out, never an error.
        """
        found = list(jsonl_files(self.root()))
        found.sort(key=lambda s: s.mtime_ns, reverse=True)
        return found

    # -- identity ---------------------------------------------------------------------------
    def key(self, path: Path) -> str:
        """The cursor key of a session file: its path relative to the root, POSIX style."""
        return relative_key(path, self.root())

    def _cursor_keys(self) -> Callable[[SessionFile], str]:
        """For one scan: the cursor key of a discovered session, as ``key(session.path)``.

        With the default :meth:`key`, it is read off the session's path string against the
        root's, taken once, so a session the scan finds unchanged never gets a ``Path`` (ADR
        0026's seventh pass); a source that overrides :meth:`key` is asked through it.
        """
        key = self.key
        if type(self).key is not TranscriptSource.key:
            return lambda session: key(session.path)
        base = str(self.root())

        def cursor_key(session: SessionFile) -> str:
            rel = relative_text(session.__fspath__(), base)
            return key(session.path) if rel is None else rel

        return cursor_key

    def session_id(self, path: Path) -> str:
        """The host's id for the session in ``path`` (must match the host's session env var)."""
        return path.stem

    def scan_region(self, path: Path) -> str:
        """A label grouping sessions that share one root (composite sources have several)."""
        return "default"

    def self_sessions(self, worktree: Path) -> SelfSessions:
        """The sessions that are bridging runs working in ``worktree`` (memu's working tree for
        this host), so ``prepare`` never mines them; the default is none.

        Override when the host's own records identify its scheduled runs (OpenClaw names each
        cron run's session). Called once per ``prepare``, under the host's lock, before
        :meth:`discover`. It reads and never writes: not the host's logs, not the working tree,
        not the terminal; whatever the user should hear goes in ``warnings``, which the prepare
        report carries. memu's own rule (a scheduled run whose host exports its session id)
        applies on top of this.
        """
        return SelfSessions()

    def owns(self, path: Path) -> bool:
        """Whether ``path`` lies under this source's root (composites route paths by it)."""
        try:
            path.relative_to(self.root())
        except ValueError:
            return False
        return True

    # -- records ----------------------------------------------------------------------------
    @abstractmethod
    def classify_record(self, obj: dict[str, Any]) -> RecordKind:
        """Classify one parsed record (a JSON object). Must never raise: unknown shapes are ``OTHER``."""

    def classify(self, record: str) -> RecordKind:
        """Classify one raw line. Never raises: a line that is not a JSON object is ``OTHER``."""
        obj = parse_object(record)
        if obj is None:
            return RecordKind.OTHER
        try:
            return self.classify_record(obj)
        except Exception:  # the contract says never raise; a buggy adapter must not stop a scan
            return RecordKind.OTHER

    def timestamp(self, record: str) -> str | None:
        """The record's top-level ``timestamp`` string, if it carries one (informational only)."""
        obj = parse_object(record)
        ts = obj.get("timestamp") if obj is not None else None
        return ts if isinstance(ts, str) else None

    def quick_kind(self, line: str) -> RecordKind | None:
        """Classify a raw line without parsing it, when its text makes the answer certain.

        ``None`` (the default) means "parse it". Sources whose logs carry large tool outputs
        override this so a first run over months of sessions does not decode every byte.
        Only consulted when :meth:`normalise` is the default (the line is kept as written).
        """
        return None

    def normalise(self, obj: dict[str, Any]) -> dict[str, Any] | None:
        """Rewrite one parsed record, or return ``None`` to drop it as not part of the session.

        The default keeps the record as written. Sources whose raw lines need reshaping
        (Cowork's audit log) override this; a record returned as a new object is re-serialised.
        """
        return obj

    def read_incremental(self, session: SessionFile, previous: dict[str, Any] | None) -> TranscriptRead:
        """Read the complete lines added since ``previous`` (a cursor from an earlier read).

        The cursor keeps the byte offset just past the last complete line, so a line still being
        written (no newline yet) is read whole on a later run instead of being lost. A file that
        became shorter than the cursor was rewritten, and is read again from the start. A line
        that is not a JSON object is skipped and counted in ``corrupt``.
        """
        text, start, prev_lines, end = self._new_text(session, previous)
        if text is None:
            return TranscriptRead([], _cursor(start, prev_lines, session))
        records, corrupt = self.parse_lines(text)
        return TranscriptRead(records, _cursor(end, prev_lines + len(records), session), corrupt)

    def read_kept(self, session: SessionFile, previous: dict[str, Any] | None) -> KeptRead:
        """What mining needs of :meth:`read_incremental`: the new message and tool lines, no
        :class:`Record` per line, the last timestamp read once at the end.

        Same lines, kinds, cursor and last timestamp as :meth:`read_incremental` gives; a source
        that overrides it or :meth:`parse_lines` is read through them.
        """
        cls = type(self)
        if cls.read_incremental is not TranscriptSource.read_incremental or cls.parse_lines is not (
            TranscriptSource.parse_lines
        ):
            return KeptRead.of(self.read_incremental(session, previous))
        text, start, prev_lines, end = self._new_text(session, previous)
        if text is None:
            return KeptRead([], [], _cursor(start, prev_lines, session), None, 0, 0)
        lines = text.split("\n")
        kept: list[str] = []
        messages: list[int] = []
        count = corrupt = 0
        quick = self.quick_kind if type(self).normalise is TranscriptSource.normalise else None
        message, tool = RecordKind.MESSAGE, RecordKind.TOOL
        for raw in lines:
            line = raw.strip()
            if not line:
                continue
            if len(line) > MAX_LINE_CHARS:
                corrupt += 1
                continue
            kind: RecordKind | None = None
            if quick is not None and line[0] == "{" and line[-1] == "}":
                kind = quick(line)
            if kind is None:
                parsed = self._parsed_kind(line)
                if parsed is None:
                    corrupt += 1
                    continue
                if parsed is _DROPPED:
                    continue
                kind, line = parsed  # type: ignore[misc]
            count += 1
            if kind is message:
                messages.append(len(kept))
                kept.append(line)
            elif kind is tool:
                kept.append(line)
        stamp = self._last_stamp(lines)
        return KeptRead(kept, messages, _cursor(end, prev_lines + count, session), stamp, count, corrupt)

    def _parsed_kind(self, line: str) -> tuple[RecordKind, str] | object | None:
        """One line parsed as :meth:`parse_lines` parses it: ``(kind, record text)``, ``None``
        when it is corrupt, ``_DROPPED`` when :meth:`normalise` drops it."""
        try:
            obj = load_line(line)
        except ValueError:
            return None
        if not isinstance(obj, dict):
            return None
        try:
            norm = self.normalise(obj)
            if norm is None:
                return _DROPPED
            kind = self.classify_record(norm)
        except Exception:  # never let one odd record stop the scan
            return None
        return kind, line if norm is obj else json.dumps(norm, ensure_ascii=False)

    def _last_stamp(self, lines: list[str]) -> str | None:
        """The timestamp :attr:`TranscriptRead.last_timestamp` gives for these lines: the last
        record's that has one, each read the way :meth:`parse_lines` reads it."""
        quick_ok = type(self).normalise is TranscriptSource.normalise
        for raw in reversed(lines):
            line = raw.strip()
            if not line or len(line) > MAX_LINE_CHARS:
                continue
            if quick_ok and line[0] == "{" and line[-1] == "}" and self.quick_kind(line) is not None:
                stamp = cheap_timestamp(line)
            else:
                try:
                    obj = load_line(line)
                    norm = self.normalise(obj) if isinstance(obj, dict) else None
                    if norm is not None:
                        self.classify_record(norm)
                except Exception:  # corrupt or dropped here as in parse_lines: not a record
                    continue
                stamp = norm.get("timestamp") if norm is not None else None
                stamp = stamp if isinstance(stamp, str) else None
            if stamp:
                return stamp
        return None

    def _new_text(self, session: SessionFile, previous: dict[str, Any] | None) -> tuple[str | None, int, int, int]:
        """``(text of the new complete lines or None, start offset, lines before, end offset)``."""
        prev_offset = 0
        prev_lines = 0
        if previous:
            off = previous.get("offset")
            lines = previous.get("lines")
            if isinstance(off, int) and off >= 0:
                prev_offset = off
            if isinstance(lines, int) and lines >= 0:
                prev_lines = lines
        if prev_offset > session.size:
            prev_offset, prev_lines = 0, 0
        # memU's cursor is a count of non-blank lines and nothing else: a session it already
        # mined resumes after those lines instead of being mined a second time.
        memu_lines = prev_lines if previous and "offset" not in previous and prev_lines else 0
        try:
            with open(session.path, "rb") as fh:
                fh.seek(prev_offset)
                data = fh.read()
        except OSError as exc:
            raise TranscriptReadError(session.path, exc) from exc
        if memu_lines:
            skipped = _after_lines(data, memu_lines)
            prev_offset, data = skipped, data[skipped:]
        end = data.rfind(b"\n")
        if end < 0:
            return None, prev_offset, prev_lines, prev_offset
        body = data if end == len(data) - 1 else data[: end + 1]
        return body.decode("utf-8", errors="replace"), prev_offset, prev_lines, prev_offset + end + 1

    def parse_lines(self, text: str) -> tuple[list[Record], int]:
        """Parse, normalise and classify every non-blank line of ``text``; count the corrupt ones.

        A line that is not a JSON object, or is over the limits of :func:`memu_core._jsonl.load_line`
        (too long, nested too deep), is corrupt: skipped and counted, never fatal.
        """
        loads = load_line
        classify = self.classify_record
        normalise = self.normalise
        quick = self.quick_kind if type(self).normalise is TranscriptSource.normalise else None
        records: list[Record] = []
        corrupt = 0
        for raw in text.split("\n"):
            line = raw.strip()
            if not line:
                continue
            if len(line) > MAX_LINE_CHARS:
                corrupt += 1
                continue
            if quick is not None and line[0] == "{" and line[-1] == "}":
                kind = quick(line)
                if kind is not None:
                    records.append(Record(line, kind, cheap_timestamp(line)))
                    continue
            try:
                obj = loads(line)
            except ValueError:
                corrupt += 1
                continue
            if not isinstance(obj, dict):
                corrupt += 1
                continue
            try:
                norm = normalise(obj)
                if norm is None:
                    continue
                kind = classify(norm)
            except Exception:  # never let one odd record stop the scan
                corrupt += 1
                continue
            if norm is not obj:
                line = json.dumps(norm, ensure_ascii=False)
            ts = norm.get("timestamp")
            records.append(Record(line, kind, ts if isinstance(ts, str) else None))
        return records, corrupt


_DROPPED = object()
"""A line :meth:`TranscriptSource.normalise` dropped: not part of the session, not corrupt."""


def _after_lines(data: bytes, count: int) -> int:
    """The byte offset just past the ``count``-th non-blank complete line of ``data`` (or the end
    of its last complete line, when it has fewer)."""
    pos = 0
    seen = 0
    while seen < count:
        nl = data.find(b"\n", pos)
        if nl < 0:
            break
        if data[pos:nl].strip():
            seen += 1
        pos = nl + 1
    return pos


def _cursor(offset: int, lines: int, session: SessionFile) -> dict[str, Any]:
    """The cursor after a read: where to resume, how many records so far, the stat seen."""
    return {"offset": offset, "lines": lines, "size": session.size, "mtime_ns": session.mtime_ns}
