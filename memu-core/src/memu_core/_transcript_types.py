"""The transcript types a :class:`~memu_core.interfaces.TranscriptSource` returns, apart from the
rest of :mod:`memu_core.types` and re-exported there (the same classes).

A steady ``prepare`` mines a few records and needs only these: importing the thirteen store and
engine dataclasses beside them (their methods are generated at import) cost it about 10 ms
(ADR 0026's third amendment). Import them from :mod:`memu_core.types`.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple


class RecordKind(enum.Enum):
    """What a record is to the pipeline."""

    MESSAGE = "message"
    """A user or assistant turn: goes to the conversation and the full transcript."""
    TOOL = "tool"
    """A tool call or its output: goes to the full transcript only."""
    OTHER = "other"
    """Metadata, reasoning, injected context: dropped."""


@dataclass(frozen=True, slots=True)
class SessionFile:
    """One discovered session file with the stat facts the scan needs (taken once)."""

    path: Path
    mtime_ns: int
    size: int


class Record(NamedTuple):
    """One record of a session: its text (one JSON line), kind and timestamp.

    A named tuple rather than a dataclass: a first run creates hundreds of thousands of them.
    """

    text: str
    kind: RecordKind
    timestamp: str | None = None


@dataclass(frozen=True, slots=True)
class TranscriptRead:
    """The records of a session that are new since the previous cursor.

    ``records`` holds only the new records; ``cursor`` is what to store once they are mined;
    ``corrupt`` counts lines that were not JSON objects and were skipped.
    """

    records: list[Record]
    cursor: dict[str, Any]
    corrupt: int = 0

    @property
    def changed(self) -> bool:
        """True when there is at least one new record."""
        return bool(self.records)

    @property
    def last_timestamp(self) -> str | None:
        """The last timestamp among the new records (``None`` when none carries one)."""
        for rec in reversed(self.records):
            if rec.timestamp:
                return rec.timestamp
        return None


@dataclass(frozen=True, slots=True)
class KeptRead:
    """What mining keeps of a :class:`TranscriptRead`: the message and tool records' lines, in
    order, with where the messages are, and no object per record (a first run reads hundreds of
    thousands of lines and drops the rest)."""

    lines: list[str]
    """The text of every ``MESSAGE`` and ``TOOL`` record."""
    messages: list[int]
    """Indices into ``lines`` of the ``MESSAGE`` records."""
    cursor: dict[str, Any]
    last_timestamp: str | None
    """As :attr:`TranscriptRead.last_timestamp`."""
    records: int
    """How many records were read, of every kind."""
    corrupt: int = 0

    @classmethod
    def of(cls, read: TranscriptRead) -> KeptRead:
        """The kept part of a full read."""
        lines: list[str] = []
        messages: list[int] = []
        for rec in read.records:
            if rec.kind is RecordKind.MESSAGE:
                messages.append(len(lines))
                lines.append(rec.text)
            elif rec.kind is RecordKind.TOOL:
                lines.append(rec.text)
        return cls(lines, messages, read.cursor, read.last_timestamp, len(read.records), read.corrupt)


@dataclass(frozen=True, slots=True)
class SelfSessions:
    """Which sessions are the bridging run's own, as a source tells from the working tree.

    A scheduled bridging run is a host session too; mined, it would feed memu's own job prompts
    back into memory. ``prepare`` never mines these and carries ``warnings`` in its report.
    """

    ids: frozenset[str] = frozenset()
    """Session ids, as :meth:`~memu_core.interfaces.TranscriptSource.session_id` names them."""
    warnings: tuple[str, ...] = ()
    """Why some runs could not be recognised: one sentence each, naming the fix."""


for _cls in (RecordKind, SessionFile, Record, TranscriptRead, KeptRead, SelfSessions):
    _cls.__module__ = "memu_core.types"  # where they are documented, pickled and shown
del _cls
