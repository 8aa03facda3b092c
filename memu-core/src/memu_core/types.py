"""Plain data types shared by the engine, the stores and every plugin.

They are stdlib dataclasses on purpose: this module sits on the per-turn ``retrieve`` path and
must import in microseconds. Validation of user input happens in the engine, not here. The
transcript types re-exported here (``SessionFile``, ``TranscriptRead``, ``KeptRead``,
``SelfSessions``) are value classes the :mod:`dataclasses` functions accept as dataclasses
(:mod:`memu_core._transcript_types`).
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field
from typing import Literal

from memu_core._transcript_types import KeptRead as KeptRead
from memu_core._transcript_types import Record as Record
from memu_core._transcript_types import RecordKind as RecordKind
from memu_core._transcript_types import SelfSessions as SelfSessions
from memu_core._transcript_types import SessionFile as SessionFile
from memu_core._transcript_types import TranscriptRead as TranscriptRead

DEFAULT_SCOPE_VALUE = "default"
"""The value a scope field takes when the caller does not give one (memU's cloud rule)."""

SCOPE_FIELDS: tuple[str, ...] = ("user_id", "agent_id")
"""The fields a ``where`` filter and a commit's ``user`` may carry."""

SegmentKind = Literal["header", "line", "body"]
"""``header``: the file's ``name: description``; ``line``: one memory line; ``body``: a skill line."""

Where = dict[str, str | list[str]]
"""A validated scope filter: ``{"user_id": "u1"}`` or ``{"agent_id": ["a", "b"]}``; missing = any."""


def utcnow() -> _dt.datetime:
    """The current time, timezone-aware in UTC (every timestamp memu writes)."""
    return _dt.datetime.now(_dt.UTC)


@dataclass(frozen=True, slots=True)
class Scope:
    """Who a record belongs to. Unset fields are ``"default"``, never a wildcard."""

    user_id: str = DEFAULT_SCOPE_VALUE
    agent_id: str = DEFAULT_SCOPE_VALUE

    def as_dict(self) -> dict[str, str]:
        """The scope as the ``user_id``/``agent_id`` keys of memU's JSON."""
        return {"user_id": self.user_id, "agent_id": self.agent_id}


@dataclass(frozen=True, slots=True)
class Fingerprint:
    """The identity of an embedding space: vectors from two fingerprints never mix."""

    provider: str
    model: str
    dimension: int

    def describe(self) -> str:
        """Human form used in errors: ``local/all-MiniLM-L6-v2 (384 dims)``."""
        return f"{self.provider}/{self.model} ({self.dimension} dims)"


@dataclass(slots=True)
class RecallFile:
    """A Markdown memory or skill file as stored (without vectors)."""

    id: str
    scope: Scope
    track: str
    name: str
    description: str
    content: str
    content_hash: str
    revision: int
    created_at: _dt.datetime
    updated_at: _dt.datetime

    def to_json(self) -> dict[str, object]:
        """memU's file dict: id, timestamps, name, track, description, content and the scope."""
        return {
            "id": self.id,
            "created_at": self.created_at.isoformat(),
            "updated_at": self.updated_at.isoformat(),
            "name": self.name,
            "track": self.track,
            "description": self.description,
            "content": self.content,
            **self.scope.as_dict(),
        }


@dataclass(slots=True)
class Segment:
    """The unit of search: one line of a file (or its header), with the text around it."""

    id: str
    file_id: str
    scope: Scope
    track: str
    kind: SegmentKind
    ordinal: int
    text: str
    context: str = ""
    """Text indexed lexically beside ``text`` (heading and previous line); never embedded."""


@dataclass(slots=True)
class Resource:
    """A workspace file the agent described, keyed by its path within a scope."""

    id: str
    scope: Scope
    path: str
    description: str | None
    created_at: _dt.datetime
    updated_at: _dt.datetime

    def to_json(self) -> dict[str, object]:
        """memU's resource dict (``url`` and ``local_path`` both carry the path)."""
        return {
            "id": self.id,
            "created_at": self.created_at.isoformat(),
            "updated_at": self.updated_at.isoformat(),
            "url": self.path,
            "local_path": self.path,
            "caption": self.description,
            "track": "workspace",
            **self.scope.as_dict(),
        }


@dataclass(slots=True)
class SegmentDraft:
    """A segment the engine wants stored. ``vector`` is ``None`` when the store keeps its own
    vector for the same text, or when memu runs lexical-only."""

    kind: SegmentKind
    ordinal: int
    text: str
    context: str = ""
    vector: list[float] | None = None


@dataclass(slots=True)
class FileWrite:
    """Create or replace one recall file and its whole segment list, in one transaction.

    ``expected_revision`` is the revision the engine planned against (``None`` for a file it
    believed new); a store raises :class:`memu_core.errors.WriteConflict` when the stored row
    moved on, and the engine re-plans.
    """

    scope: Scope
    track: str
    name: str
    description: str
    content: str
    content_hash: str
    expected_revision: int | None
    segments: list[SegmentDraft]


@dataclass(slots=True)
class ResourceWrite:
    """Create or replace one resource. ``vector`` ``None`` keeps the stored one when the
    description is unchanged, and clears it otherwise."""

    scope: Scope
    path: str
    description: str | None
    vector: list[float] | None = None


HistoryAction = Literal["commit", "edit", "forget", "restore", "import"]
"""What made a version of a recall file (see :class:`FileVersion`)."""

HISTORY_ACTIONS: tuple[str, ...] = ("commit", "edit", "forget", "restore", "import")


@dataclass(frozen=True, slots=True)
class HistoryNote:
    """Who writes a change and how much history the store keeps (docs/adr/0023-file-history.md).

    The store stamps ``action`` and ``actor`` on the version it writes; before it overwrites or
    forgets a file it keeps the file's previous version, then drops all but the newest ``keep``
    past versions of that file. ``keep`` 0 keeps none (history off).
    """

    action: HistoryAction = "commit"
    actor: str = ""
    """``claude-code run 20261203T2210Z-4f2a``, ``memu edit``, ``memu import``…"""
    keep: int = 20


@dataclass(frozen=True, slots=True)
class FileVersion:
    """One version of a recall file: the current one, a past one, or a forget's tombstone.

    Versions are numbered per (scope, track, name) from 1 and never reused, across forgets and
    re-creations. A tombstone (``action == "forget"``) holds the content that was forgotten, so
    a forget can be undone even when it is the only version left.
    """

    version: int
    scope: Scope
    track: str
    name: str
    action: str
    actor: str
    created_at: _dt.datetime
    """When this version was written."""
    description: str
    content: str
    hash: str
    current: bool = False
    """True for the version the store holds now (the newest, unless the file was forgotten)."""

    @property
    def size(self) -> int:
        """The content's length in UTF-8 bytes."""
        return len(self.content.encode("utf-8"))

    @property
    def deleted(self) -> bool:
        """True for a forget's tombstone: the file did not exist after this version."""
        return self.action == "forget"

    def to_json(self) -> dict[str, object]:
        """The version as JSON: what ``memu history --json`` and ``memu show --json`` print."""
        return {
            "version": self.version,
            "name": self.name,
            "track": self.track,
            "action": self.action,
            "actor": self.actor,
            "created_at": self.created_at.isoformat(),
            "description": self.description,
            "content": self.content,
            "hash": self.hash,
            "size": self.size,
            "current": self.current,
            **self.scope.as_dict(),
        }


@dataclass(frozen=True, slots=True)
class StoreStats:
    """What a store holds, for ``memu stats`` (within one scope filter)."""

    files: list[tuple[str, str, int]]
    """``(track, actor, count)``: files by track and by who wrote their current version."""
    segments: int
    vectors: int
    """Segment vectors under the live fingerprint."""
    resources: int
    versions: int
    """Past versions kept (history)."""
    size_bytes: int | None
    """The store's size on disk (``None`` when the store cannot tell)."""
    fingerprint: Fingerprint | None


@dataclass(slots=True)
class ChangeSet:
    """Everything one commit writes. A store applies it all or nothing."""

    files: list[FileWrite] = field(default_factory=list)
    resources: list[ResourceWrite] = field(default_factory=list)
    fingerprint: Fingerprint | None = None
    """Set when the change carries vectors: the store records it, or refuses a different one."""
    note: HistoryNote | None = None
    """Who writes it and how much history to keep; ``None`` records no history."""


@dataclass(slots=True)
class StoredFile:
    """What planning needs to know about a stored file."""

    file: RecallFile
    segment_texts: frozenset[str]
    """Texts of its segments that already hold a vector (or all texts when lexical-only)."""


@dataclass(slots=True)
class Hit:
    """One ranked search result from a store: the row id and its raw score (higher is better)."""

    id: str
    score: float


# -- transcripts: what a TranscriptSource (memu_core.interfaces) reads from a host's logs -----------
# KeptRead, Record, RecordKind, SelfSessions, SessionFile and TranscriptRead are defined in
# memu_core._transcript_types (imported above): the path that needs only them, a steady
# ``prepare``, then does not build every dataclass here.

EventValue = str | int | float | bool | None
"""What an event property may hold: counts, durations, short labels; never content."""


@dataclass(frozen=True, slots=True)
class Event:
    """One lifecycle event, as every :class:`~memu_core.interfaces.EventSink` receives it.

    Later releases may add fields (always with a default); a sink should read the ones it knows.
    """

    name: str
    """What happened (``memory_commit_succeeded``, ``memory_search_succeeded``…)."""
    occurred_at: _dt.datetime
    """When, timezone-aware in UTC."""
    properties: dict[str, EventValue] = field(default_factory=dict)
    """Counts and durations of the step (``latency_ms``, ``recall_file_count``…)."""
    host: str = ""
    """The host id of the binary that emitted it (``codex``); empty for ``memu`` itself."""
    event_id: str = ""
    """A fresh random UUID per event: the idempotency key a receiving server deduplicates by."""
    client_instance_id: str = ""
    """``MEMU_CLIENT_ID``: an opaque random id per machine and OS user (empty when none exists)."""
    context: dict[str, str] = field(default_factory=dict)
    """Who reported it: ``client_version``, ``agent_platform``, ``os``, ``deployment_mode``,
    ``reported_by`` and, only when the host exported one, ``session_id``."""

    def envelope(self) -> dict[str, object]:
        """The event as memU's ingest route takes it: one JSON object per event."""
        at = self.occurred_at.astimezone(_dt.UTC)
        return {
            "event_id": self.event_id,
            "event_name": self.name,
            "client_type": "memu_cli",
            "client_instance_id": self.client_instance_id,
            "occurred_at": at.strftime("%Y-%m-%dT%H:%M:%S.") + f"{at.microsecond // 1000:03d}Z",
            "context": dict(self.context),
            "properties": dict(self.properties),
        }
