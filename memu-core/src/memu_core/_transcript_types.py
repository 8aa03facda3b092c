"""The transcript types a :class:`~memu_core.interfaces.TranscriptSource` returns, apart from the
rest of :mod:`memu_core.types` and re-exported there (the same classes).

A steady ``prepare`` mines a few records and needs only these: importing the thirteen store and
engine dataclasses beside them (their methods are generated at import) cost it about 10 ms
(ADR 0026's third amendment). Import them from :mod:`memu_core.types`.

``SessionFile``, ``TranscriptRead``, ``KeptRead`` and ``SelfSessions`` were frozen dataclasses;
they are value classes now (:mod:`memu_core._value`), the same to their users, the
:mod:`dataclasses` functions included, without importing that module (ADR 0026's fifth
amendment).
"""

from __future__ import annotations

import enum
from pathlib import Path
from typing import Any, NamedTuple

from memu_core._value import DataclassAPI, Frozen

_set = object.__setattr__  # how a frozen value sets its fields in ``__init__``


class RecordKind(enum.Enum):
    """What a record is to the pipeline."""

    MESSAGE = "message"
    """A user or assistant turn: goes to the conversation and the full transcript."""
    TOOL = "tool"
    """A tool call or its output: goes to the full transcript only."""
    OTHER = "other"
    """Metadata, reasoning, injected context: dropped."""


class SessionFile(Frozen, DataclassAPI):
    """One discovered session file with the stat facts the scan needs (taken once)."""

    __slots__ = ("mtime_ns", "path", "size")
    __match_args__ = _fields = ("path", "mtime_ns", "size")

    path: Path
    mtime_ns: int
    size: int

    def __init__(self, path: Path, mtime_ns: int, size: int) -> None:
        _set(self, "path", path)
        _set(self, "mtime_ns", mtime_ns)
        _set(self, "size", size)


class Record(NamedTuple):
    """One record of a session: its text (one JSON line), kind and timestamp.

    A named tuple rather than a dataclass: a first run creates hundreds of thousands of them.
    """

    text: str
    kind: RecordKind
    timestamp: str | None = None


class TranscriptRead(Frozen, DataclassAPI):
    """The records of a session that are new since the previous cursor.

    ``records`` holds only the new records; ``cursor`` is what to store once they are mined;
    ``corrupt`` counts lines that were not JSON objects and were skipped.
    """

    __slots__ = ("corrupt", "cursor", "records")
    __match_args__ = _fields = ("records", "cursor", "corrupt")

    records: list[Record]
    cursor: dict[str, Any]
    corrupt: int

    def __init__(self, records: list[Record], cursor: dict[str, Any], corrupt: int = 0) -> None:
        _set(self, "records", records)
        _set(self, "cursor", cursor)
        _set(self, "corrupt", corrupt)

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


class KeptRead(Frozen, DataclassAPI):
    """What mining keeps of a :class:`TranscriptRead`: the message and tool records' lines, in
    order, with where the messages are, and no object per record (a first run reads hundreds of
    thousands of lines and drops the rest)."""

    __slots__ = ("corrupt", "cursor", "last_timestamp", "lines", "messages", "records")
    __match_args__ = _fields = ("lines", "messages", "cursor", "last_timestamp", "records", "corrupt")

    lines: list[str]
    """The text of every ``MESSAGE`` and ``TOOL`` record."""
    messages: list[int]
    """Indices into ``lines`` of the ``MESSAGE`` records."""
    cursor: dict[str, Any]
    last_timestamp: str | None
    """As :attr:`TranscriptRead.last_timestamp`."""
    records: int
    """How many records were read, of every kind."""
    corrupt: int

    def __init__(
        self,
        lines: list[str],
        messages: list[int],
        cursor: dict[str, Any],
        last_timestamp: str | None,
        records: int,
        corrupt: int = 0,
    ) -> None:
        self._init(lines, messages, cursor, last_timestamp, records, corrupt)

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


class SelfSessions(Frozen, DataclassAPI):
    """Which sessions are the bridging run's own, as a source tells from the working tree.

    A scheduled bridging run is a host session too; mined, it would feed memu's own job prompts
    back into memory. ``prepare`` never mines these and carries ``warnings`` in its report.
    """

    __slots__ = ("ids", "warnings")
    __match_args__ = _fields = ("ids", "warnings")

    ids: frozenset[str]
    """Session ids, as :meth:`~memu_core.interfaces.TranscriptSource.session_id` names them."""
    warnings: tuple[str, ...]
    """Why some runs could not be recognised: one sentence each, naming the fix."""

    def __init__(self, ids: frozenset[str] = frozenset(), warnings: tuple[str, ...] = ()) -> None:
        self._init(ids, warnings)


for _cls in (RecordKind, SessionFile, Record, TranscriptRead, KeptRead, SelfSessions):
    _cls.__module__ = "memu_core.types"  # where they are documented, pickled and shown
del _cls
